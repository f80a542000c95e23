package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// rootQuestions answers window/showMessageRequest with what the test sends on answers, after
// passing the question on asked.
type rootQuestions struct {
	asked   chan string
	answers chan any
}

func newRootQuestions() *rootQuestions {
	return &rootQuestions{asked: make(chan string, 8), answers: make(chan any, 8)}
}

func (q *rootQuestions) approve(raw json.RawMessage) any {
	var p struct {
		Message string `json:"message"`
	}
	json.Unmarshal(raw, &p)
	q.asked <- p.Message
	return <-q.answers
}

// question waits for the next question.
func (e *env) question(q *rootQuestions) string {
	e.t.Helper()
	select {
	case m := <-q.asked:
		return m
	case <-e.ctx.Done():
		e.t.Fatal("no question asked")
		return ""
	}
}

// awaitLog waits for a window/logMessage containing text.
func (e *env) awaitLog(text string) {
	e.t.Helper()
	if _, err := e.ed.AwaitNotification(e.ctx, "window/logMessage", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), text)
	}); err != nil {
		e.t.Fatal(err)
	}
}

// TestAttackBroadRoot: initialize with root file:/// made the whole disk the workspace, with no
// warning. The agent now works there only once the user confirms it: until then, and after a
// refusal, its commands answer an error that says so, while the server stays usable.
func TestAttackBroadRoot(t *testing.T) {
	q := newRootQuestions()
	e := newEnv(t, envOpts{root: "/", editor: lsptest.Options{Approve: q.approve}})
	if msg := e.question(q); !strings.Contains(msg, "the workspace is /, the root of the file system") || !strings.Contains(msg, "Use / as Reprise's workspace?") {
		t.Errorf("the question: %q", msg)
	}
	// While the question is out.
	code, msg := rpcError(t, e.ed.Execute(e.ctx, CommandNewSession, nil, nil))
	if code != -32600 || !strings.Contains(msg, "only once you confirm it") || !strings.Contains(msg, ActionUseWorkspace) {
		t.Errorf("newSession before an answer: %d %q", code, msg)
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Errorf("reprise.sessions needs no workspace: %v", err)
	}
	// No answer: the next command asks again.
	q.answers <- nil
	e.awaitLog("no answer about the workspace /")
	code, _ = rpcError(t, e.ed.Execute(e.ctx, CommandAsk, AskArgs{Text: "list every file"}, nil))
	if code != -32600 {
		t.Errorf("ask after no answer: %d", code)
	}
	e.question(q)
	// No: the agent does not run there, and nobody asks again.
	q.answers <- map[string]string{"title": ActionRefuseWorkspace}
	e.awaitLog("will not work in /")
	for _, c := range []string{CommandAsk, CommandNewSession, CommandContext} {
		var arg any
		if c == CommandAsk {
			arg = AskArgs{Text: "list every file"}
		}
		code, msg := rpcError(t, e.ed.Execute(e.ctx, c, arg, nil))
		if code != -32600 || !strings.Contains(msg, "you chose not to let the agent work there") || !strings.Contains(msg, "Open a project folder") {
			t.Errorf("%s after the refusal: %d %q", c, code, msg)
		}
	}
	if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil {
		t.Errorf("the server after the refusal: %v", err)
	}
	if len(q.asked) != 0 {
		t.Errorf("asked again after the refusal: %q", <-q.asked)
	}
	if len(e.srv.Requests()) != 0 {
		t.Error("the model was called")
	}
}

// TestBroadRootConfirmed: the home directory as the workspace, confirmed, works as any other; a
// project under it is not asked about.
func TestBroadRootConfirmed(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	q := newRootQuestions()
	q.answers <- map[string]string{"title": ActionUseWorkspace}
	e := newEnv(t, envOpts{root: home, editor: lsptest.Options{Approve: q.approve, Experimental: true}}, text("hello"))
	if msg := e.question(q); !strings.Contains(msg, "your home directory") {
		t.Errorf("the question: %q", msg)
	}
	e.awaitLog("the agent works in " + home)
	id := e.ask("hi", "")
	if end := e.turnEnd(id); end.Update.StopReason != StopEndTurn {
		t.Errorf("turn in the confirmed home directory: %+v", end.Update)
	}

	project := filepath.Join(home, "project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(t, envOpts{root: project, editor: lsptest.Options{Approve: q.approve, Experimental: true}}, text("hello"))
	e2.turnEnd(e2.ask("hi", ""))
	if len(q.asked) != 0 {
		t.Errorf("a project under the home directory was asked about: %q", <-q.asked)
	}
}
