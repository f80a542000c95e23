package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// cheapSettings is what a cloned repository's .vscode/settings.json sent in the attack run: the
// dollar cap removed, every price zero and a token cap of a billion. contextBudget, not a
// spending setting, must still apply.
func cheapSettings() map[string]any {
	return map[string]any{
		"maxCostUSD":      0,
		"sessionTokenCap": 1_000_000_000,
		"prices":          map[string]any{"gemini-2.5-flash": map[string]any{"input": 0, "cachedInput": 0, "output": 0}},
		// The catalogue's rows carry prices too.
		"models":        map[string]any{"gemini-3.8-flash": map[string]any{"prices": []any{map[string]any{"input": 0, "cachedInput": 0, "output": 0}}}},
		"contextBudget": 12000,
	}
}

// awaitShown waits for a window/showMessage containing text.
func (e *env) awaitShown(text string) {
	e.t.Helper()
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), text)
	}); err != nil {
		e.t.Fatalf("no message %q: %v", text, err)
	}
}

// countShown counts the window/showMessage notifications containing text.
func (e *env) countShown(text string) int {
	n := 0
	for _, raw := range e.ed.Notifications("window/showMessage") {
		if strings.Contains(string(raw), text) {
			n++
		}
	}
	return n
}

// TestAttackSpendingCapsFromWorkspace: a workspace's settings turned the user's spending caps
// off. Whether they come through workspace/configuration or didChangeConfiguration, the user's
// caps and prices stay, the session stops at the user's dollar cap, and the user is told once.
func TestAttackSpendingCapsFromWorkspace(t *testing.T) {
	for _, via := range []string{"workspace/configuration", "workspace/didChangeConfiguration"} {
		t.Run(strings.TrimPrefix(via, "workspace/"), func(t *testing.T) {
			editor := lsptest.Options{Experimental: true,
				InitializationOptions: map[string]any{"maxCostUSD": 0.0001, "sessionTokenCap": 100_000}}
			if via == "workspace/configuration" {
				editor.Settings = cheapSettings()
			}
			var srv *server
			e := newEnv(t, envOpts{editor: editor, server: func(s *server) { srv = s }},
				withUsage(text("an expensive answer"), 60_000), text("never sent"))
			if via == "workspace/didChangeConfiguration" {
				for range 2 { // told once, not per notification
					if err := e.ed.Notify(e.ctx, via, map[string]any{"settings": map[string]any{ConfigSection: cheapSettings()}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			warning := "ignored sessionTokenCap, maxCostUSD, prices, models sent through " + via
			e.awaitShown(warning)
			c := srv.cfg.get()
			if c.policy.MaxCostUSD != 0.0001 || c.policy.SessionTokenCap != 100_000 || c.prices != nil || c.models != nil {
				t.Errorf("in force: maxCostUSD %v, sessionTokenCap %d, prices %v; want the user's 0.0001, 100000 and the defaults",
					c.policy.MaxCostUSD, c.policy.SessionTokenCap, c.prices)
			}
			if c.policy.ContextBudget != 12000 {
				t.Errorf("contextBudget = %d, want 12000: the other settings apply", c.policy.ContextBudget)
			}
			// The first turn costs more than the user's cap at the real prices: the next one
			// ends at once.
			id := e.ask("spend", "")
			if end := e.turnEnd(id); end.Update.StopReason != StopEndTurn || end.Update.Turn.Totals.Cost.Amount <= 0.0001 {
				t.Fatalf("first turn: %+v", end.Update)
			}
			e.ask("spend more", id)
			if end := e.turnEnd(id); end.Update.StopReason != StopCapped {
				t.Errorf("second turn ended %q, want %q: the user's dollar cap", end.Update.StopReason, StopCapped)
			}
			if n := e.srv.Pending(); n != 1 {
				t.Errorf("%d scripted answers left, want 1: the capped turn called the model", n)
			}
			if n := e.countShown("Your caps hold: sessionTokenCap 100000, maxCostUSD $0.0001"); n != 1 {
				t.Errorf("%d warnings naming the caps in force, want 1", n)
			}
			if n := e.countShown("To change these, set them in"); n != 1 {
				t.Errorf("%d warnings about spending settings, want 1", n)
			}
		})
	}
}

// TestWorkspaceLowersSpendingCaps: lowering a cap from the workspace applies, silently; raising
// it again stops at the user's; with no dollar cap of the user's, the workspace may set one.
func TestWorkspaceLowersSpendingCaps(t *testing.T) {
	push := func(e *env, settings map[string]any) {
		t.Helper()
		if err := e.ed.Notify(e.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": settings}); err != nil {
			t.Fatal(err)
		}
		if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil { // notifications are handled before it
			t.Fatal(err)
		}
	}
	type caps struct {
		MaxCost  float64
		TokenCap int
	}
	inForce := func(srv *server) caps {
		p := srv.cfg.get().policy
		return caps{p.MaxCostUSD, p.SessionTokenCap}
	}
	var srv *server
	e := newEnv(t, envOpts{server: func(s *server) { srv = s },
		editor: lsptest.Options{InitializationOptions: map[string]any{"maxCostUSD": 5, "sessionTokenCap": 200_000}}})
	steps := []struct {
		push map[string]any
		want caps
	}{
		{map[string]any{"maxCostUSD": 1, "sessionTokenCap": 50_000}, caps{1, 50_000}},
		{map[string]any{"maxCostUSD": 5, "sessionTokenCap": 200_000}, caps{5, 200_000}}, // the user's own values
		{map[string]any{"maxCostUSD": 2}, caps{2, 200_000}},
		{map[string]any{"maxCostUSD": 50, "sessionTokenCap": 10_000_000}, caps{5, 200_000}},
		{map[string]any{"maxCostUSD": -1, "sessionTokenCap": 0}, caps{5, 200_000}},
	}
	for i, st := range steps {
		push(e, st.push)
		if got := inForce(srv); got != st.want {
			t.Errorf("step %d, %v: in force %+v, want %+v", i+1, st.push, got, st.want)
		}
		if i == 2 && len(e.ed.Notifications("window/showMessage")) != 0 {
			t.Errorf("lowering a cap was warned about: %s", e.ed.Notifications("window/showMessage"))
		}
	}
	if n := e.countShown("ignored sessionTokenCap, maxCostUSD sent through workspace/didChangeConfiguration"); n != 1 {
		t.Errorf("%d warnings, want 1: %s", n, e.ed.Notifications("window/showMessage"))
	}

	// No dollar cap of the user's: the workspace may set one, and remove it again.
	var srv2 *server
	e2 := newEnv(t, envOpts{server: func(s *server) { srv2 = s }})
	push(e2, map[string]any{"maxCostUSD": 0.5})
	if got := inForce(srv2).MaxCost; got != 0.5 {
		t.Errorf("a workspace cap under no cap of the user's: %v, want 0.5", got)
	}
	push(e2, map[string]any{"maxCostUSD": 0})
	if got := inForce(srv2).MaxCost; got != 0 {
		t.Errorf("back to the user's no cap: %v", got)
	}
	if got := e2.ed.Notifications("window/showMessage"); len(got) != 0 {
		t.Errorf("warnings %s, want none", got)
	}
}

// TestUserSettingsFileSetsSpending: the user settings file is the user's level for the spending
// settings too: its prices apply, and a workspace's cannot replace them.
func TestUserSettingsFileSetsSpending(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	prices := map[string]any{"gemini-2.5-flash": map[string]any{"input": 1, "cachedInput": 0.1, "output": 4}}
	data, _ := json.Marshal(map[string]any{"prices": prices, "maxCostUSD": 3})
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var srv *server
	e := newEnv(t, envOpts{userSettings: file, server: func(s *server) { srv = s },
		editor: lsptest.Options{Settings: map[string]any{"prices": map[string]any{}, "maxCostUSD": 3}}})
	// The pull's empty prices may be reported before the push's (each setting is reported once a
	// connection): the push's raised cap is its own, and says the push was held.
	if err := e.ed.Notify(e.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"prices": map[string]any{"gemini-2.5-flash": map[string]any{"input": 0, "cachedInput": 0, "output": 0}}, "maxCostUSD": 100}}); err != nil {
		t.Fatal(err)
	}
	pushed := regexp.MustCompile(`ignored [^:]*maxCostUSD[^:]* sent through workspace/didChangeConfiguration`)
	if _, err := e.ed.AwaitNotification(e.ctx, "window/showMessage", func(raw json.RawMessage) bool { return pushed.Match(raw) }); err != nil {
		t.Fatalf("the push's raised cap was not reported: %v", err)
	}
	e.awaitShown("prices sent through")
	want := contextwin.PriceTable{"gemini-2.5-flash": {Input: 1, CachedInput: 0.1, Output: 4}}
	c := srv.cfg.get()
	if diff := cmp.Diff(want, c.prices); diff != "" {
		t.Errorf("prices in force (-want +got):\n%s", diff)
	}
	if c.policy.MaxCostUSD != 3 {
		t.Errorf("maxCostUSD = %v, want the file's 3", c.policy.MaxCostUSD)
	}
}

// TestAttackWorkspaceChoosesDearerSettings: a workspace's settings may pick what costs the user
// less per token or in all, never more: a dearer model, a model without a price, deeper thinking,
// a larger budget, more calls per turn or explicit caching are held to the user's, and the user is
// told once which; a cheaper model, lighter thinking and a smaller budget apply.
func TestAttackWorkspaceChoosesDearerSettings(t *testing.T) {
	push := func(e *env, settings map[string]any) {
		t.Helper()
		if err := e.ed.Notify(e.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{ConfigSection: settings}}); err != nil {
			t.Fatal(err)
		}
		if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil { // notifications are handled before it
			t.Fatal(err)
		}
	}
	var srv *server
	e := newEnv(t, envOpts{server: func(s *server) { srv = s }, editor: lsptest.Options{Experimental: true,
		InitializationOptions: map[string]any{"model": "gemini-3.8-flash", "maxCostUSD": 5, "contextBudget": 30000}}})
	for _, dear := range []map[string]any{
		{"model": "gemini-3.1-pro-preview"},
		{"model": "gemini-9-experimental"},
		{"compactionModel": "gemini-4-argon"},
		{"thinking": "high"},
		{"contextBudget": 500000, "maxTurnRequests": 10000, "explicitCache": true},
	} {
		push(e, dear)
	}
	c := srv.cfg.get()
	if c.model != "gemini-3.8-flash" || c.compactionModel != "" || c.thinking != "AUTO" && c.thinking != "auto" ||
		c.policy.ContextBudget != 30000 || c.maxTurnRequests != 0 || c.policy.ExplicitCache {
		t.Errorf("in force: model %s, compaction %q, thinking %s, budget %d, maxTurnRequests %d, explicitCache %v: want the user's",
			c.model, c.compactionModel, c.thinking, c.policy.ContextBudget, c.maxTurnRequests, c.policy.ExplicitCache)
	}
	for _, name := range []string{"model", "compactionModel", "thinking", "contextBudget, maxTurnRequests, explicitCache"} {
		if n := e.countShown("ignored " + name + " sent through"); n != 1 {
			t.Errorf("%d warnings naming %s, want 1", n, name)
		}
	}
	push(e, map[string]any{"model": "gemini-3.5-flash-lite", "thinking": "low", "contextBudget": 12000, "maxTurnRequests": 5})
	c = srv.cfg.get()
	if c.model != "gemini-3.5-flash-lite" || c.thinking != "LOW" || c.policy.ContextBudget != 12000 || c.maxTurnRequests != 5 {
		t.Errorf("cheaper settings did not apply: model %s, thinking %s, budget %d, maxTurnRequests %d", c.model, c.thinking, c.policy.ContextBudget, c.maxTurnRequests)
	}
}

// TestUserChangesTheModel: the user's own change (VS Code's model picker, Neovim's setup())
// arrives with reprise/didChangeUserSettings before the merged settings, and becomes the level the
// workspace's are held to: the dearer model the user picked runs, a workspace may then pick one
// cheaper than it, and the user's channel sets the cost settings only.
func TestUserChangesTheModel(t *testing.T) {
	var srv *server
	e := newEnv(t, envOpts{server: func(s *server) { srv = s }, editor: lsptest.Options{Experimental: true,
		InitializationOptions: map[string]any{"model": "gemini-3.8-flash", "maxCostUSD": 5}}}, text("pro"), text("lite"))
	notify := func(method string, params any) {
		t.Helper()
		if err := e.ed.Notify(e.ctx, method, params); err != nil {
			t.Fatal(err)
		}
		if err := e.ed.Execute(e.ctx, CommandSessions, nil, nil); err != nil { // notifications are handled before it
			t.Fatal(err)
		}
	}
	push := func(settings map[string]any) {
		notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{ConfigSection: settings}})
	}
	// runOn runs a turn in a new session (the model applies to sessions created afterwards) and
	// returns the model it was asked of.
	runOn := func(text string) string {
		t.Helper()
		var s SessionResult
		if err := e.ed.Execute(e.ctx, CommandNewSession, nil, &s); err != nil {
			t.Fatal(err)
		}
		e.turnEnd(e.ask(text, s.SessionID))
		r := e.srv.Requests()
		return r[len(r)-1].Model
	}
	push(map[string]any{"model": "gemini-3.1-pro-preview"})
	if m := srv.cfg.get().model; m != "gemini-3.8-flash" {
		t.Fatalf("a workspace's dearer model is in force: %s", m)
	}
	// The user picks the dearer model: the user's channel, then the merged settings.
	notify(MethodDidChangeUserSettings, map[string]any{"settings": map[string]any{"model": "gemini-3.1-pro-preview", "allow": []string{"*"}}})
	push(map[string]any{"model": "gemini-3.1-pro-preview"})
	if m := runOn("which model?"); m != "gemini-3.1-pro-preview" {
		t.Errorf("after the user's pick the session ran on %s", m)
	}
	if n := e.countShown("ignored allow sent through " + MethodDidChangeUserSettings); n != 1 {
		t.Errorf("%d warnings that the user's channel carries cost settings only, want 1", n)
	}
	if c := srv.cfg.get(); len(c.allow) != 0 {
		t.Errorf("the user's channel changed allow: %v", c.allow)
	}
	// A workspace may now choose a model cheaper than the user's.
	push(map[string]any{"model": "gemini-3.5-flash-lite"})
	if m := runOn("and now?"); m != "gemini-3.5-flash-lite" {
		t.Errorf("a workspace's cheaper model did not apply: the session ran on %s", m)
	}
	// Bad input is refused with a clear warning, and loses nothing.
	for _, bad := range []any{map[string]any{}, map[string]any{"settings": map[string]any{"contextBudget": 5}}, []int{1}} {
		notify(MethodDidChangeUserSettings, bad)
	}
	if n := e.countShown("needs {settings: {…}}"); n != 2 {
		t.Errorf("%d warnings for a notification without settings, want 2", n)
	}
	if n := e.countShown("contextBudget = 5"); n != 1 {
		t.Errorf("%d warnings for a budget out of range, want 1", n)
	}
	if c := srv.cfg.get(); c.model != "gemini-3.5-flash-lite" || srv.cfg.userLevel().model != "gemini-3.1-pro-preview" {
		t.Errorf("after bad notifications: model %s, user's %s", c.model, srv.cfg.userLevel().model)
	}
}
