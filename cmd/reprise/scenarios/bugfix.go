package scenarios

import (
	"fmt"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

const bugfixTask = "Orders over the limit are accepted by the ledger service. Find where the limit check goes wrong and fix it."

var bugfixFiles = []string{"orders", "stock", "pricing", "billing", "returns", "shipping", "audit", "limits"}

// bugfixWorkspace is a Go module of eight packages whose files are each about 4,500 bytes: every
// read returns a truncated output of about 4,000 characters.
func bugfixWorkspace(dir string) error {
	files := map[string]string{
		"go.mod":    "module example.com/ledger\n\ngo 1.22\n",
		"README.md": "# Ledger\n\nEach package checks one kind of record against its limit. `go vet ./...` must stay clean.\n",
	}
	for _, name := range bugfixFiles {
		files[name+"/"+name+".go"] = goSource(name, name, 4500)
		files[name+"/types.go"] = fmt.Sprintf("package %s\n\n// Record is one line of the ledger.\ntype Record struct{ Qty, Base int }\n", name)
	}
	return writeFiles(dir, files)
}

func bugfixScript() geminitest.Script {
	turns := []geminitest.Turn{call("Look at the layout first.", "list_files", map[string]any{})}
	for i, name := range bugfixFiles {
		thought := ""
		if i == 0 {
			thought = "The limit check should live in one of the packages; read them in turn."
		}
		turns = append(turns, call(thought, "read_file", map[string]any{"path": name + "/" + name + ".go"}))
	}
	turns = append(turns,
		call("Every package compares the total with its limit; find the comparisons.", "search", map[string]any{"pattern": `total > \d+`}),
		call("Limits0 must refuse a total equal to the limit too.", "edit_file", map[string]any{"path": "limits/limits.go", "old": "if total > 1000 {", "new": "if total >= 1000 {"}),
		call("", "run_command", map[string]any{"command": "go vet ./..."}),
		answer("Fixed: `limits/limits.go` accepted a total equal to the limit (`total > 1000`); it is now `total >= 1000`, and `go vet ./...` is clean."),
	)
	return withSummaries(turns, "**Objective:**\nFind why orders over the limit are accepted and fix it.\n"+
		"**Files read and what mattered:**\n- `orders/orders.go`, `stock/stock.go`, `pricing/pricing.go`, `billing/billing.go`: each `NameN(r Record)` returns `r.Qty*k + r.Base` and refuses `total > limit`.\n"+
		"**Modifications made:**\nnone\n**Last tests:**\nnone run\n**Hypotheses ruled out:**\n- the limit checks in orders, stock, pricing and billing are consistent\n"+
		"**Remaining work:**\nread the remaining packages (returns, shipping, audit, limits), find the off-by-one, fix it, run `go vet ./...`.")
}
