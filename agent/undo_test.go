package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
)

func TestUndoCompaction(t *testing.T) {
	turns := append(readTurns(6), textTurn("done"), summaryTurn(summaryText))
	f, st, log := saved(t, fixtureOpts{files: notes(6, 300)}, turns...)
	if _, err := f.run(t.Context(), "Read every note."); err != nil {
		t.Fatal(err)
	}
	before := f.s.Conversation().History()
	if _, err := f.s.Compact(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	cp, err := f.s.UndoCompaction()
	if err != nil {
		t.Fatal(err)
	}
	if cp.N != 1 || len(f.s.Conversation().Checkpoints()) != 0 {
		t.Errorf("undone %+v, checkpoints left %d", cp, len(f.s.Conversation().Checkpoints()))
	}
	if diff := cmp.Diff(before, f.s.Conversation().History()); diff != "" {
		t.Errorf("history after undo (-want +got):\n%s", diff)
	}
	if _, err := f.s.UndoCompaction(); !errors.Is(err, ErrCannotUndo) {
		t.Errorf("second undo: %v", err)
	}
	// The undo is in the log.
	s := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(before, s.Conversation().History()); diff != "" {
		t.Errorf("resumed after undo (-want +got):\n%s", diff)
	}
}

func TestUndoRefusedOverBudget(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 2
	turns := append(readTurns(8), textTurn("read them all"), summaryTurn(summaryText), summaryTurn(summaryText))
	f, _, _ := saved(t, fixtureOpts{policy: p, files: notes(8, 2000)}, turns...)
	f.run(t.Context(), "Read every note.")
	if len(f.s.Conversation().Checkpoints()) == 0 {
		t.Fatal("no compaction")
	}
	_, err := f.s.UndoCompaction()
	if !errors.Is(err, ErrCannotUndo) || !strings.Contains(err.Error(), "over compactAt × budget") {
		t.Errorf("undo over budget: %v", err)
	}
}
