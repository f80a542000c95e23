package scenarios

import (
	"fmt"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

const investigationTask = "Map how a record flows through the service, package by package, and list every place that refuses a negative quantity. Do not change anything."

var investigationPackages = []string{"intake", "parse", "validate", "enrich", "route", "store", "report", "export"}

// investigationWorkspace has 8 packages of 5 files, from 2,500 to 6,000 bytes each.
func investigationWorkspace(dir string) error {
	files := map[string]string{"go.mod": "module example.com/flow\n\ngo 1.22\n"}
	for i, pkg := range investigationPackages {
		for j := range 5 {
			files[fmt.Sprintf("%s/%s_%d.go", pkg, pkg, j)] = goSource(pkg, fmt.Sprintf("%s%c", pkg, 'a'+j), 2500+((i*5+j)*733)%3500)
		}
	}
	return writeFiles(dir, files)
}

func investigationScript() geminitest.Script {
	turns := investigationReads()
	turns = append(turns, answer("Records flow intake → parse → validate → enrich → route → store → report → export. "+
		"Every exported function refuses a negative quantity with `<pkg>: negative quantity in <Func>` before computing its total; none is missing."))
	return withSummaries(turns, "**Objective:**\nMap how a record flows through the service and list every place that refuses a negative quantity; change nothing.\n"+
		"**Files read and what mattered:**\n- `intake/*.go`, `parse/*.go`: every function starts with `if r.Qty < 0` and returns `<pkg>: negative quantity in <Func>`.\n"+
		"- each function computes `r.Qty*k + r.Base` and refuses a total over its limit.\n"+
		"**Modifications made:**\nnone (read-only task)\n**Last tests:**\nnone run\n**Hypotheses ruled out:**\n- no package skips the negative-quantity check so far\n"+
		"**Remaining work:**\nread the packages not yet read, in the order intake → parse → validate → enrich → route → store → report → export, then answer.")
}
