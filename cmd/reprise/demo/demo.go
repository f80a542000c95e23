// Package demo holds the offline demonstration: a small Go workspace with two real bugs, and the
// scripted model session that fixes them through the real agent loop and the real genai client,
// against the fake Gemini server.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

//go:embed all:_workspace
var files embed.FS

// Task is the request the demo gives the agent.
const Task = "The invoicing tests fail. Fix the quantity discount and the rounding so that `go test ./...` passes, following the business rules in README.md."

// Budget is the demo's context budget: small, so that a short task needs a compaction, as in the
// harness lesson's run (CONTEXT_BUDGET=5000, KEEP_RECENT_TURNS=3).
const Budget = 4000

// CopyWorkspace writes the sample workspace into dir. It lives in _workspace so that the go tool
// does not build or test it as part of this module (its tests fail until the agent fixes it). go.mod is stored as go.mod.txt: a go.mod
// inside this module's tree would make the directory a module of its own and hide it from embed.
func CopyWorkspace(dir string) error {
	return fs.WalkDir(files, "_workspace", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, "_workspace"), "/")
		if rel == "go.mod.txt" {
			rel = "go.mod"
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("copy demo workspace: %w", err)
		}
		return nil
	})
}

// Script is the scripted model: what a capable model did on this task, call by call. The tool
// results, the token counts and the compaction are real: the tools run on the copied workspace and
// the fake server counts the tokens of what it is actually sent.
func Script() geminitest.Script {
	call := func(thought, text, name string, args map[string]any) geminitest.Turn {
		var parts []geminitest.Part
		if thought != "" {
			parts = append(parts, geminitest.Part{Text: thought, Thought: true})
		}
		if text != "" {
			parts = append(parts, geminitest.Part{Text: text})
		}
		parts = append(parts, geminitest.Part{
			FunctionCall:     &geminitest.FunctionCall{Name: name, Args: args},
			ThoughtSignature: "c2lnbmF0dXJl", // "signature": the loop must send it back untouched
		})
		return geminitest.Turn{Parts: parts, Chunks: 3}
	}
	turns := []geminitest.Turn{
		call("Start by looking at the workspace layout.", "Let me look at the project first.", "list_files", map[string]any{}),
		call("The README should state the business rules.", "", "read_file", map[string]any{"path": "README.md"}),
		call("Check which quantities the real orders have around the thresholds.", "", "read_file", map[string]any{"path": "donnees/ventes.csv"}),
		call("", "", "read_file", map[string]any{"path": "facturation/remises.go"}),
		call("", "", "read_file", map[string]any{"path": "facturation/montants.go"}),
		call("Run the tests to see the failures.", "", "run_command", map[string]any{"command": "go test ./..."}),
		call("", "", "search", map[string]any{"pattern": `TauxRemise\(|Arrondir\(`}),
		call("The README says discounts apply from 50 units included: the comparison must be >=.",
			"`TauxRemise` uses `>`; the contract says the discount applies from 50 units included.",
			"edit_file", map[string]any{"path": "facturation/remises.go", "old": "if quantite > s.Quantite {", "new": "if quantite >= s.Quantite {"}),
		call("Floor always rounds down; commercial rounding rounds half a cent up. Round to the mill first to absorb float error.",
			"`Arrondir` truncates instead of rounding half up.",
			"edit_file", map[string]any{"path": "facturation/montants.go", "old": "return math.Floor(montant*100) / 100", "new": "return math.Round(math.Round(montant*1000)/10) / 100 // round to the mill first: 2.345*100 is 234.4999…"}),
		call("", "", "run_command", map[string]any{"command": "go test -v ./..."}),
		call("", "Let me review the whole change.", "run_command", map[string]any{"command": "git diff"}),
		call("git diff was refused; the test run is what matters.", "", "run_command", map[string]any{"command": "go test ./..."}),
		{Parts: []geminitest.Part{{Text: "Both bugs are fixed and `go test ./...` passes.\n\n" +
			"- `facturation/remises.go`: `TauxRemise` compared `quantite > s.Quantite`; the contract grants the discount from 50 units included, so it is now `>=`.\n" +
			"- `facturation/montants.go`: `Arrondir` used `math.Floor`, which always rounds down; it now rounds half a cent up (commercial rounding), after rounding to the mill to absorb float error (2.345 → 2.35).\n\n" +
			"Verdict: `ok example.com/boutique/facturation`."}}, Chunks: 4},
	}
	summary := "**Objective:**\nFix the quantity discount and the rounding in the invoicing package so that `go test ./...` passes.\n" +
		"**Files read and what mattered:**\n" +
		"- `README.md`: discount from 50 units included (5 %), 10 % from 100; commercial rounding, half a cent up (2.345 → 2.35).\n" +
		"- `facturation/remises.go`: `TauxRemise()` compares `quantite > s.Quantite` instead of `>=`.\n" +
		"- `facturation/montants.go`: `Arrondir()` uses `math.Floor(montant*100) / 100`, which rounds down.\n" +
		"- `donnees/ventes.csv`: sample orders, many at exactly 50 and 100 units.\n" +
		"**Modifications made:**\nNone.\n" +
		"**Last tests:**\n`go test ./...`: FAIL in `example.com/boutique/facturation` (TestTauxRemise, TestArrondir, TestTotalLigne).\n" +
		"**Hypotheses ruled out:**\nnone\n" +
		"**Remaining work:**\n1. Fix `facturation/remises.go` (`quantite >= s.Quantite`). 2. Fix `facturation/montants.go` (round half up). 3. Run `go test ./...`."
	// A compaction after the task (the demo's /compact) summarizes it done; it matches only a
	// history that holds the second fix.
	done := "**Objective:**\nFix the quantity discount and the rounding in the invoicing package so that `go test ./...` passes.\n" +
		"**Files read and what mattered:**\n" +
		"- `README.md`: discount from 50 units included (5 %), 10 % from 100; commercial rounding, half a cent up (2.345 → 2.35).\n" +
		"**Modifications made:**\n- `facturation/remises.go`: `TauxRemise()` compares `quantite >= s.Quantite`.\n" +
		"- `facturation/montants.go`: `Arrondir()` rounds half a cent up, after rounding to the mill.\n" +
		"**Last tests:**\n`go test ./...`: ok `example.com/boutique/facturation`.\n" +
		"**Hypotheses ruled out:**\nnone\n" +
		"**Remaining work:**\nnone: the task is done."
	turns = append(turns, geminitest.Turn{Match: contextwin.SummaryMarker, Also: []string{"math.Round(math.Round(montant*1000)/10)"}, Parts: []geminitest.Part{{Text: done}}})
	// One summary per compaction that may happen; an unused one is harmless.
	for range 12 {
		turns = append(turns, geminitest.Turn{Match: contextwin.SummaryMarker, Parts: []geminitest.Part{{Text: summary}}})
	}
	return geminitest.Script{Turns: turns}
}
