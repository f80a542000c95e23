package acp

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
)

// watchedLog is the agent's log, which a test waits on: every write leaves a token in changed.
type watchedLog struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func (w *watchedLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *watchedLog) count(s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Count(w.b.String(), s)
}

// await waits until ok holds of the log.
func (w *watchedLog) await(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !ok() {
		select {
		case <-w.changed:
		case <-deadline:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("the log never said %s:\n%s", what, w.b.String())
		}
	}
}

// TestACPIdleSessionReopens: a session closed while idle answers its next prompt as if it had
// stayed open: it reopens from its log with its history, and its own MCP servers, closed with it,
// are started anew: the model's call of their tool is answered.
func TestACPIdleSessionReopens(t *testing.T) {
	model := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{text("kiwi noted"), call("docs__leak", map[string]any{}), text("kiwi")}})
	t.Cleanup(model.Close)
	logs := &watchedLog{changed: make(chan struct{}, 1)}
	e := startModel(t, model, t.TempDir(), t.TempDir(), true, "gemini-3.8-flash", func(o *Options) {
		o.IdleAfter = time.Millisecond // a session is closed at the first tick it is idle
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	id := e.open(sdk.ClientCapabilities{}, sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "docs", Command: os.Args[0], Args: []string{},
		Env: []sdk.EnvVariable{{Name: mcptest.Env, Value: "stdio"}, {Name: mcptest.LeakEnv, Value: "v1"}}}})
	ctx := t.Context()
	if _, err := e.conn.Prompt(ctx, prompt(id, "remember the word kiwi")); err != nil {
		t.Fatal(err)
	}
	// Closed and reopened as often as the ticks found it idle: it is closed now when the log
	// says so once more than it says it reopened.
	closed := `msg="session closed after being idle; using it reopens it" session=` + string(id)
	reopened := `msg="session reopened from its log" session=` + string(id)
	logs.await(t, "that the session was closed", func() bool { return logs.count(closed) > logs.count(reopened) })
	before := logs.count(reopened)

	e.c.answers = []string{optionAllowOnce}
	res, err := e.conn.Prompt(ctx, prompt(id, "which word? ask docs"))
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the prompt to the closed session: %+v %v", res, err)
	}
	if logs.count(reopened) != before+1 {
		t.Errorf("the prompt did not reopen the session")
	}
	up := e.c.waitFor(t, "the tool's result", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted
	})
	if out, _ := up.ToolCallUpdate.RawOutput.(map[string]any); out["output"] != "the token is v1" {
		t.Errorf("the MCP tool after the reopening: %v", up.ToolCallUpdate.RawOutput)
	}
	reqs := model.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "remember the word kiwi") || !strings.Contains(last, "the token is v1") {
		t.Errorf("the last model call lacks the history: %s", last)
	}
	if got := messageText(e.c.all(), 0); !strings.HasSuffix(got, "kiwi") {
		t.Errorf("the agent said %q", got)
	}
}
