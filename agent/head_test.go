package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// headFiles is a Go module big enough for the head to reach the 4,096-token cache minimum.
func headFiles(packages int) map[string]string {
	files := map[string]string{"go.mod": "module example.com/shop\n\ngo 1.22\n"}
	for p := range packages {
		var src strings.Builder
		fmt.Fprintf(&src, "package pkg%d\n\n", p)
		for i := range 12 {
			fmt.Fprintf(&src, "// Handle%d handles the %d-th case.\nfunc Handle%d(orderID string, qty int) (total int, err error) {\n\treturn qty * %d, nil\n}\n\n", i, i, i, i)
		}
		files[fmt.Sprintf("pkg%d/handlers.go", p)] = src.String()
	}
	return files
}

func systemText(r geminitest.Request) string {
	if r.SystemInstruction == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range r.SystemInstruction.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// The head fills the fixed part to the cache minimum: from the second call on, the fake bills the
// head as cached though the conversation is far under the minimum; it is the same on every call,
// a compaction and a reload of the instructions included, and /context shows the map apart.
func TestHeadIsCachedFromTheSecondCall(t *testing.T) {
	f := newFixture(t, fixtureOpts{head: true, files: headFiles(12)},
		callTurn("read_file", map[string]any{"path": "go.mod"}, ""),
		textTurn("read"),
		summaryTurn("## Task\nread go.mod"),
		textTurn("again"),
	)
	if _, err := f.run(t.Context(), "read go.mod"); err != nil {
		t.Fatal(err)
	}
	reqs := mainRequests(f.srv)
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	sys := systemText(reqs[0])
	for _, want := range []string{"# Guide to the tools", "# Workspace map", "pkg3/", "func Handle11(orderID string, qty int) (total int, err error)"} {
		contains(t, sys, want)
	}
	fixed := f.s.conv.prompt.estimate()
	least := f.s.opts.Catalog.CacheMin(f.s.opts.ModelName)
	if fixed < float64(least) || fixed > float64(least+least/4) {
		t.Errorf("fixed part %.0f tokens, want from the minimum %d to a quarter above it", fixed, least)
	}
	u := reqs[1].Usage
	if u == nil || u.Cached < least || u.Prompt-u.Cached > 200 {
		t.Errorf("second call's usage %+v: want the head cached (at least %d tokens)", u, least)
	}
	if bd := f.s.Context().Breakdown; bd.WorkspaceMap == 0 || bd.SystemPrompt < 1000 {
		t.Errorf("breakdown %+v: want the map apart and the guide in the system prompt", bd)
	}
	// A file added, instructions changed and reloaded: the guide and the map stay as they were.
	if err := os.WriteFile(filepath.Join(f.ws, "late.go"), []byte("package late\nfunc Late() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "AGENTS.md"), []byte("Answer in French.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.s.Conversation().ReloadInstructions()
	if _, err := f.s.Compact(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	reqs = mainRequests(f.srv)
	last := systemText(reqs[len(reqs)-1])
	if strings.Contains(last, "Late") || !strings.Contains(last, "Answer in French.") {
		t.Errorf("after a reload: map rebuilt or instructions not reloaded:\n%s", last)
	}
	if !strings.HasPrefix(last, sys[:strings.Index(sys, "# Workspace map")-2]) || !strings.HasSuffix(last, sys[strings.Index(sys, "\n\n# Workspace map"):]) {
		t.Error("the head changed after a reload and a compaction")
	}
}

// Without subagents the guide says nothing of task, which is not declared.
func TestGuideFollowsTheTools(t *testing.T) {
	if !strings.Contains(guideFor(&Options{}), "\n- task hands") {
		t.Fatal("the guide does not describe task")
	}
	off := guideFor(&Options{Config: Config{Subagents: SubagentSettings{Off: true}}})
	if strings.Contains(off, "\n- task ") || strings.Contains(off, "subagent") || !strings.Contains(off, "## Plans and notes\n- write_todos") {
		t.Errorf("guide without subagents:\n%s", off)
	}
}

// No head where it would not pay or fit: a workspace too small for it to reach the minimum, a
// budget under four times its size, the user's plainHead.
func TestNoHeadWhereItDoesNotPay(t *testing.T) {
	small := contextwin.DefaultPolicy()
	small.ContextBudget = 16_000
	plain := contextwin.DefaultPolicy()
	plain.PlainHead = true
	for _, tt := range []struct {
		name   string
		files  map[string]string
		policy contextwin.Policy
	}{
		{"a small workspace", map[string]string{"main.go": "package main\nfunc main() {}\n"}, contextwin.Policy{}},
		{"a small budget", headFiles(12), small},
		{"plainHead", headFiles(12), plain},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{head: true, clearing: true, files: tt.files, policy: tt.policy}, textTurn("hi"))
			if _, err := f.run(t.Context(), "hi"); err != nil {
				t.Fatal(err)
			}
			if sys := systemText(mainRequests(f.srv)[0]); strings.Contains(sys, "# Guide to the tools") || strings.Contains(sys, "# Workspace map") {
				t.Errorf("a head:\n%s", sys)
			}
			if bd := f.s.Context().Breakdown; bd.WorkspaceMap != 0 {
				t.Errorf("breakdown %+v", bd)
			}
		})
	}
}

// A file named after a secret is named in the map with the secret redacted; a name with a newline
// cannot start a line of the system instruction.
func TestHeadKeepsSecretsOut(t *testing.T) {
	const key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	files := headFiles(12)
	files["creds/"+key+".go"] = "package creds\nfunc Token() string { return \"\" }\n"
	f := newFixture(t, fixtureOpts{head: true, files: files, secrets: secret.New(map[string]string{"SHOP_KEY": key})}, textTurn("hi"))
	if _, err := f.run(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	body := string(mainRequests(f.srv)[0].Body)
	if strings.Contains(body, key) {
		t.Error("the secret reached the model through the map")
	}
	contains(t, systemText(mainRequests(f.srv)[0]), "creds/")
}

// Under misses, explicit caching holds the head alone: one cache, of no message, created once and
// read across the clearings that rewrite the messages, for less than implicit caching alone.
func TestHeadInAnExplicitCache(t *testing.T) {
	run := func(explicit bool) (*fixture, TurnEnd) {
		files := headFiles(12)
		var turns []geminitest.Turn
		for i := range 14 {
			name := fmt.Sprintf("notes/n%02d.txt", i)
			files[name] = strings.Repeat(fmt.Sprintf("note %d: a line of the log\n", i), 90)
			turns = append(turns, callTurn("read_file", map[string]any{"path": name}, ""))
		}
		turns = append(turns, textTurn("read"))
		p := contextwin.DefaultPolicy()
		p.ContextBudget = 20_000
		p.ExplicitCache = explicit
		f := newFixture(t, fixtureOpts{head: true, clearing: true, files: files, policy: p, script: geminitest.Script{Cache: geminitest.Cache{MissRate: 1}}}, turns...)
		evs, err := f.run(t.Context(), "read the notes")
		if err != nil {
			t.Fatal(err)
		}
		end := lastEnd(t, evs)
		if end.StopReason != StopEndTurn {
			t.Fatalf("stopped with %s", end.StopReason)
		}
		return f, *end
	}
	_, without := run(false)
	f, with := run(true)
	st := f.srv.ExplicitCaches()
	t.Logf("implicit alone $%.5f; explicit $%.5f, %d cached, %d written, %d checkpoints; fake %+v", without.Totals.Cost, with.Totals.Cost, with.Totals.CachedTokens, with.Totals.CacheWriteTokens, len(f.s.conv.checkpoints), st)
	if st.Created != 1 {
		t.Errorf("%d caches created, want one of the head", st.Created)
	}
	head := f.s.conv.ledger.Estimator.Tokens(f.s.conv.prompt.estimate())
	if w := with.Totals.CacheWriteTokens; w < head*9/10 || w > head*11/10 {
		t.Errorf("%d tokens written to the cache, want the head's %d", w, head)
	}
	// Reads after a clearing: the request over the cache sends every message.
	cleared := false
	for _, r := range f.srv.Requests() {
		body := string(r.Body)
		if strings.Contains(body, `"cachedContent"`) && strings.Contains(body, contextwin.ClearedMarker) {
			cleared = true
			if len(r.Contents) == 0 || firstText(r.Contents[0]) != "read the notes" {
				t.Errorf("a read of the head's cache left out messages")
			}
		}
	}
	if !cleared {
		t.Error("no request read the cache after a clearing")
	}
	if with.Totals.Cost >= without.Totals.Cost {
		t.Errorf("explicit $%.5f, implicit alone $%.5f", with.Totals.Cost, without.Totals.Cost)
	}
}

// A retired model's requests are answered by the one the API routes them to: the head is sized
// to that model's cache minimum (gemini-2.5-pro's 2,048 would leave gemini-3.8-flash's 4,096
// unreached, and no call cached).
func TestHeadFollowsTheRoute(t *testing.T) {
	c := catalog.Builtin()
	old, ok := c.Lookup("gemini-2.5-pro")
	if !ok || old.RoutedTo == "" || c.CacheMin(old.RoutedTo) <= c.CacheMin("gemini-2.5-pro") {
		t.Fatalf("the test wants a retired model routed to one with a larger cache minimum: %+v", old)
	}
	now := func() time.Time { return c.AsOf() }
	for model, want := range map[string]string{"gemini-2.5-pro": old.RoutedTo, "gemini-3.8-flash": "gemini-3.8-flash"} {
		if got := servedBy(&Options{Config: Config{Catalog: c}, ModelName: model, Now: now}); got != want {
			t.Errorf("%s: served by %s, want %s", model, got, want)
		}
	}
	// Before its shutdown, the model itself answers.
	if d, err := time.Parse(time.DateOnly, old.Shutdown); err == nil {
		early := func() time.Time { return d.AddDate(0, 0, -1) }
		if got := servedBy(&Options{Config: Config{Catalog: c}, ModelName: "gemini-2.5-pro", Now: early}); got != "gemini-2.5-pro" {
			t.Errorf("the day before its shutdown: served by %s", got)
		}
	}
}
