package agent

import (
	"errors"
	"testing"

	"github.com/reprise-dev/reprise/contextwin"
)

// TestForgetNote: the user deletes a note: the harness drops it, the model is told once of each key
// (two at once in one line), and a note not there is refused (TestForgetNoteOverLSP resumes).
func TestForgetNote(t *testing.T) {
	m := &Memo{opts: &Options{}}
	for _, n := range []contextwin.Note{{Key: "rule", Value: "dès 50 unités"}, {Key: "error", Value: "got 0"}, {Key: "id", Value: "X-1"}} {
		if _, err := m.SaveNote(n); err != nil {
			t.Fatal(err)
		}
	}
	var ne *NoteError
	if err := m.Forget("nope"); !errors.As(err, &ne) || ne.Key != "nope" {
		t.Fatalf("forget an unknown note: %v", err)
	}
	if got := m.announce(); got != "" {
		t.Errorf("nothing deleted, yet told %q", got)
	}
	if err := m.Forget("rule"); err != nil {
		t.Fatal(err)
	}
	if err := m.Forget("error"); err != nil {
		t.Fatal(err)
	}
	if got, want := m.announce(), `[The user deleted your notes "rule", "error": do not rely on their values.]`; got != want {
		t.Errorf("told %q, want %q", got, want)
	}
	if got := m.announce(); got != "" {
		t.Errorf("told again: %q", got)
	}
	if got := m.Notes(); len(got) != 1 || got[0].Key != "id" {
		t.Errorf("notes left %+v", got)
	}
}
