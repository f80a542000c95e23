package scenarios

import (
	"fmt"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

// The delegation pair: one task that needs a broad investigation (the investigation's 36 files,
// read once) before a small edit, played twice: in one context, and with the investigation handed
// to a subagent (the task tool) whose report is all the main context gets. Same workspace, same
// reads, same edit; only where the reads happen differs.

const delegationTask = "Every package refuses a negative quantity; make export's first refusal say which quantity it refused. " +
	"Check first that every package refuses it the same way."

// delegationPrompt is the subagent's task; its words mark its requests (Turn.Agent).
const delegationPrompt = "SUBAGENT-MAP: read every package of the service (intake, parse, validate, enrich, route, store, report, export) " +
	"and report, per package, how a negative quantity is refused: the exact error text and the functions that do it."

const delegationReport = "Every package refuses a negative quantity the same way: each exported function starts with `if r.Qty < 0` " +
	"and returns `errors.New(\"<pkg>: negative quantity in <Func>\")`. Packages read: intake, parse, validate, enrich, route, store, report, export " +
	"(36 files). export's first refusal is in `export/export_0.go`, `Exporta0`: `return 0, errors.New(\"export: negative quantity in Exporta0\")`."

const delegationEditOld = `return 0, errors.New("export: negative quantity in Exporta0")`
const delegationEditNew = `return 0, fmt.Errorf("export: negative quantity %d in Exporta0", r.Qty)`

// Delegation returns the task in one context, with a subagent on the catalogue's subagent
// model, and with a subagent on the session's own model (sameModel: what the separate context
// alone does, the cheaper model aside).
func Delegation(sessionModel string) (inline, delegated, sameModel Scenario) {
	base := Scenario{Task: delegationTask, Budgets: []int{24000}, Workspace: investigationWorkspace}
	inline, delegated = base, base
	inline.Name, inline.About = "one context", "the 36 reads in the main context, then the edit"
	inline.Script = delegationInline
	delegated.Name, delegated.About = "subagent", "the 36 reads in a subagent, its report, then the edit"
	delegated.Script = delegationDelegated
	sameModel = delegated
	sameModel.Name, sameModel.Subagents = "subagent, same model", agent.SubagentSettings{Model: sessionModel}
	return inline, delegated, sameModel
}

// investigationReads are the investigation's calls before its answer: the layout, a search, 36
// reads and two searches.
func investigationReads() []geminitest.Turn {
	turns := []geminitest.Turn{
		call("Start from the layout.", "list_files", map[string]any{}),
		call("Find where negative quantities are refused.", "search", map[string]any{"pattern": "negative quantity", "path": "intake"}),
	}
	for i, pkg := range investigationPackages {
		for j := range 5 {
			if j == 4 && i%2 == 1 {
				continue
			}
			turns = append(turns, call("", "read_file", map[string]any{"path": fmt.Sprintf("%s/%s_%d.go", pkg, pkg, j)}))
		}
		if i == 3 || i == 6 {
			turns = append(turns, call("Check the limits across packages.", "search", map[string]any{"pattern": `over limit`, "path": pkg}))
		}
	}
	return turns
}

func delegationEdit() []geminitest.Turn {
	return []geminitest.Turn{
		call("Make the refusal say the quantity.", "edit_file", map[string]any{"path": "export/export_0.go", "old": delegationEditOld, "new": delegationEditNew}),
		answer("Every package refuses a negative quantity the same way; `Exporta0` in `export/export_0.go` now says which quantity it refused."),
	}
}

const delegationSummary = "**Objective:**\nCheck that every package refuses a negative quantity the same way, then make export's first refusal say the quantity.\n" +
	"**Files read and what mattered:**\n- every package so far: each function starts with `if r.Qty < 0` and returns `<pkg>: negative quantity in <Func>`.\n" +
	"- `export/export_0.go`: `Exporta0` refuses with `errors.New(\"export: negative quantity in Exporta0\")`.\n" +
	"**Modifications made:**\nnone yet\n**Last tests:**\nnone run\n**Hypotheses ruled out:**\n- no package refuses it differently so far\n" +
	"**Remaining work:**\nread the packages not yet read, then edit `Exporta0`."

func delegationInline() geminitest.Script {
	return withSummaries(append(investigationReads(), delegationEdit()...), delegationSummary)
}

func delegationDelegated() geminitest.Script {
	turns := []geminitest.Turn{call("A broad read: a subagent keeps it out of this context.", "task",
		map[string]any{"description": "map the negative-quantity checks", "prompt": delegationPrompt})}
	for _, t := range investigationReads() {
		t.Agent = "SUBAGENT-MAP"
		turns = append(turns, t)
	}
	turns = append(turns, geminitest.Turn{Agent: "SUBAGENT-MAP", Parts: []geminitest.Part{{Text: delegationReport}}, Chunks: 2})
	turns = append(turns, call("Check the line before editing it.", "read_file", map[string]any{"path": "export/export_0.go"}))
	turns = append(turns, delegationEdit()...)
	for range 24 {
		turns = append(turns, geminitest.Turn{Agent: "SUBAGENT-MAP", Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: delegationSummary}}})
	}
	return withSummaries(turns, delegationSummary)
}
