package lsp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestForgetNoteOverLSP: the user deletes one of the agent's notes. reprise.forgetNote returns the
// notes left, reprise.context lists them, the next model call tells the model once, after the
// message it sends next, and a resumed session has it no more; a note that is not there, or no
// key, is InvalidParams and nothing changes.
func TestForgetNoteOverLSP(t *testing.T) {
	opts := envOpts{editor: lsptest.Options{Experimental: true}}
	e := newEnv(t, opts,
		call("save_note", map[string]any{"key": "rule", "value": "dès 50 unités"}),
		call("save_note", map[string]any{"key": "error", "value": "TestTauxRemise: got 0, want 0.05"}),
		text("Noted."),
		text("Done."),
		text("Still done."))
	id := e.ask("Keep the rule.", "")
	e.turnEnd(id)
	for _, tt := range []struct {
		arg  ForgetNoteArgs
		want string
	}{
		{ForgetNoteArgs{SessionID: id, Key: "nope"}, `reprise.forgetNote: there is no note "nope"`},
		{ForgetNoteArgs{SessionID: id}, "reprise.forgetNote: key is required"},
	} {
		err := e.ed.Execute(e.ctx, CommandForgetNote, tt.arg, nil)
		if code, msg := rpcError(t, err); code != -32602 || msg != tt.want {
			t.Errorf("forget %q: %d %q, want -32602 %q", tt.arg.Key, code, msg, tt.want)
		}
	}
	var left notesResult
	if err := e.ed.Execute(e.ctx, CommandForgetNote, ForgetNoteArgs{SessionID: id, Key: "rule"}, &left); err != nil {
		t.Fatal(err)
	}
	want := []contextwin.Note{{Key: "error", Value: "TestTauxRemise: got 0, want 0.05"}}
	if d := cmp.Diff(want, left.Notes); d != "" {
		t.Errorf("notes left (-want +got):\n%s", d)
	}
	var rep contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &rep); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, rep.State.Notes); d != "" {
		t.Errorf("reprise.context notes (-want +got):\n%s", d)
	}
	// The call that saved the deleted note is still in the history; the notes' rows do not list it.
	_, notes, _ := strings.Cut(rep.Text, "Notes: ")
	notes, _, _ = strings.Cut(notes, "Largest items")
	if !strings.HasPrefix(notes, "1, 37 characters") || !strings.Contains(notes, "\n  error  ") || strings.Contains(notes, "rule") {
		t.Errorf("the context view lists the notes so:\n%s", rep.Text)
	}
	told := `[The user deleted your note "rule": do not rely on its value.]`
	e.turnEnd(e.ask("Go on.", id))
	reqs := e.srv.Requests()
	last := requestText(reqs[len(reqs)-1])
	if !strings.Contains(last, "Go on.\n"+told) {
		t.Errorf("the next call does not tell the model after the question:\n%s", last)
	}
	e.turnEnd(e.ask("And now?", id))
	reqs = e.srv.Requests()
	if n := strings.Count(requestText(reqs[len(reqs)-1]), told); n != 1 {
		t.Errorf("the model is told %d times in the call after, want once (in the message already sent)", n)
	}
	// After a restart the resumed session has the note no more.
	e2 := e.restart(opts)
	if err := e2.ed.Execute(e2.ctx, CommandResume, SessionArgs{SessionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	var resumed contextResult
	if err := e2.ed.Execute(e2.ctx, CommandContext, SessionArgs{SessionID: id}, &resumed); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, resumed.State.Notes); d != "" {
		t.Errorf("the resumed session's notes (-want +got):\n%s", d)
	}
}
