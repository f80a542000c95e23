package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
)

// TestHalfTheHitsMissed plays every scenario without compaction, with every implicit hit landing
// and with half of them missed (halfMissed), through the real genai client: the agent's measure
// of the hits must tell the two apart, and the misses must show in the cost.
func TestHalfTheHitsMissed(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 4 scenarios twice")
	}
	for _, sc := range scenarios.All() {
		t.Run(sc.Name, func(t *testing.T) {
			lucky, err := playScenario(t.Context(), sc, noCompaction, t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			missed, err := playScenarioLuck(t.Context(), sc, noCompaction, t.TempDir(), 0, halfMissed)
			if err != nil {
				t.Fatal(err)
			}
			l, ok := lucky.Totals.Cache()
			m, ok2 := missed.Totals.Cache()
			if !ok || !ok2 {
				t.Fatalf("no hit expected: %+v, %+v", lucky.Totals, missed.Totals)
			}
			t.Logf("every hit: %s, $%.4f; half missed: %s, $%.4f (%.2f×)", l.Text(), lucky.Totals.Cost, m.Text(), missed.Totals.Cost, missed.Totals.Cost/lucky.Totals.Cost)
			if l.HitRate < 0.95 {
				t.Errorf("with every hit landing, the agent measured %s", l.Text())
			}
			// Half of the calls miss, drawn from the seed; weighted by their tokens, the misses of
			// a short session may land on its smaller prompts (bugfix measures 78 %).
			if m.HitRate < 0.25 || m.HitRate > 0.85 {
				t.Errorf("with half of the hits missed, the agent measured %s", m.Text())
			}
			if missed.Totals.Cost <= lucky.Totals.Cost {
				t.Errorf("half the hits missed cost $%.4f, every hit $%.4f", missed.Totals.Cost, lucky.Totals.Cost)
			}
		})
	}
}

// TestCostTableMissedColumn prints the bench's cost table, whose last column is the run with half
// of the implicit hits missed.
func TestCostTableMissedColumn(t *testing.T) {
	if testing.Short() {
		t.Skip("plays every scenario at every budget, twice")
	}
	var b bytes.Buffer
	if err := costTable(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	header, rows, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(header, "half the implicit hits missed") {
		t.Errorf("header %q has no missed column", header)
	}
	for row := range strings.Lines(rows) {
		if !strings.Contains(row, "% cached · ") {
			t.Errorf("row %q has no missed cell", row)
		}
	}
}
