// Package scenarios holds the scripted sessions that measure what compaction costs: each is a
// workspace, a task and the model's side of the session, call by call. The tools run for real on
// the workspace and the fake Gemini server counts and caches the tokens of what it is sent, so
// the figures are those the harness would be billed for that session.
package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/cmd/reprise/demo"
	"github.com/reprise-dev/reprise/contextwin"
)

// Scenario is one scripted session.
type Scenario struct {
	Name, About string
	Task        string
	// FollowUps are the user's next requests, each sent when the turn before ends.
	FollowUps []string
	// Budgets are the context budgets it is measured at, besides the run without compaction.
	Budgets []int
	// Workspace writes the files the session works on into dir.
	Workspace func(dir string) error
	Script    func() geminitest.Script
	// Subagents are the session's subagent settings (the defaults when zero).
	Subagents agent.SubagentSettings
}

// All returns the scenarios in the order the cost table shows them.
func All() []Scenario {
	return []Scenario{
		{
			Name: "demo", About: "the demo's bug fix: 13 calls, small files, three test runs",
			Task: demo.Task, Budgets: []int{4000, 6000},
			Workspace: demo.CopyWorkspace, Script: demo.Script,
		},
		{
			Name: "bugfix", About: "a 13-call bug fix whose every output is about 4,000 characters",
			Task: bugfixTask, Budgets: []int{6000, 8000, 16000},
			Workspace: bugfixWorkspace, Script: bugfixScript,
		},
		{
			Name: "investigation", About: "a 42-call investigation reading many mid-size files",
			Task: investigationTask, Budgets: []int{12000, 24000, 48000},
			Workspace: investigationWorkspace, Script: investigationScript,
		},
		{
			Name: "tests", About: "a 19-call task that runs the test suite after each of its edits",
			Task: testsTask, Budgets: []int{5000, 8000},
			Workspace: testsWorkspace, Script: testsScript,
		},
		{
			Name: "refactor", About: "a 67-call refactor of 7 packages: edit-and-test cycles, files read again, a long build log",
			Task: refactorTask, Budgets: []int{24000},
			Workspace: refactorWorkspace(7), Script: refactorScript(7),
		},
		{
			Name: "long-refactor", About: "the same refactor over 13 packages: one turn of 121 model calls",
			Task: refactorTask, Budgets: []int{24000},
			Workspace: refactorWorkspace(13), Script: refactorScript(13),
		},
	}
}

// signature is a thought signature ("signature"): the loop must send it back untouched.
const signature = "c2lnbmF0dXJl"

func call(thought, name string, args map[string]any) geminitest.Turn {
	var parts []geminitest.Part
	if thought != "" {
		parts = append(parts, geminitest.Part{Text: thought, Thought: true})
	}
	parts = append(parts, geminitest.Part{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}, ThoughtSignature: signature})
	return geminitest.Turn{Parts: parts, Chunks: 2}
}

func answer(text string) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{Text: text}}, Chunks: 2}
}

// withSummaries appends one summary reply per compaction that may happen: a side request picks
// its turn by the summary prompt's marker, wherever it comes; unused ones are harmless.
func withSummaries(turns []geminitest.Turn, summary string) geminitest.Script {
	for range 24 {
		turns = append(turns, geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: summary}}})
	}
	return geminitest.Script{Turns: turns}
}

// writeFiles writes name → content under dir.
func writeFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("scenario workspace: %w", err)
		}
	}
	return nil
}

// goSource is a plausible Go file of about size bytes: a package of small functions with doc
// comments, different for every seed so that no two files share a prefix.
func goSource(pkg, seed string, size int) string {
	return goFile(pkg, seed, "", size)
}

// goFile is goSource with extra code placed after the imports.
func goFile(pkg, seed, extra string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Package %s handles the %s part of the service.\npackage %s\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n", pkg, seed, pkg)
	b.WriteString(extra)
	for i := 0; b.Len() < size; i++ {
		name := fmt.Sprintf("%s%s%d", strings.ToUpper(seed[:1]), seed[1:], i)
		fmt.Fprintf(&b, "// %s checks record %d of the %s ledger and returns its adjusted total.\n", name, i, seed)
		fmt.Fprintf(&b, "func %s(r Record) (int, error) {\n\tif r.Qty < 0 {\n\t\treturn 0, errors.New(\"%s: negative quantity in %s\")\n\t}\n", name, pkg, name)
		fmt.Fprintf(&b, "\ttotal := r.Qty*%d + r.Base\n\tif total > %d {\n\t\treturn 0, fmt.Errorf(\"%s: total %%d over limit\", total)\n\t}\n\treturn total, nil\n}\n\n", i%7+2, 1000+i*37, name)
	}
	return b.String()
}
