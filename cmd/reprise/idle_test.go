package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/lsp"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestServeReopensIdleSession: `reprise serve --idle-after` closes a session once it is idle
// (reprise.sessions lists it saved and current), and the editor's next question in it reopens it:
// the turn runs with its history.
func TestServeReopensIdleSession(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{Text: "kiwi noted"}}},
		{Parts: []geminitest.Part{{Text: "kiwi"}}},
	}})
	defer srv.Close()
	vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(),
		"REPRISE_CONFIG_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir()})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ed := lsptest.Pipe(t, func(ctx context.Context, rwc io.ReadWriteCloser) error {
		// A tick each millisecond: the session is closed as soon as its turn has ended.
		run(ctx, []string{"serve", "--stdio", "--idle-after", "1ms"}, rwc, rwc, io.Discard, vars)
		return nil
	}, lsptest.Options{Root: t.TempDir(), Experimental: true})
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	var asked lsp.SessionResult
	if err := ed.Execute(ctx, lsp.CommandAsk, map[string]any{"text": "remember the word kiwi"}, &asked); err != nil {
		t.Fatal(err)
	}
	id := asked.SessionID
	if _, err := ed.AwaitTurnEnd(ctx, id); err != nil {
		t.Fatal(err)
	}
	for { // until the server's ticker has closed it: listing does not use the session
		var list []lsp.SessionInfo
		if err := ed.Execute(ctx, lsp.CommandSessions, nil, &list); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(list, func(s lsp.SessionInfo) bool { return s.SessionID == id && s.Saved && s.Current }) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the idle session was not closed: %+v", list)
		case <-time.After(time.Millisecond):
		}
	}
	if err := ed.Execute(ctx, lsp.CommandAsk, map[string]any{"sessionId": id, "text": "which word?"}, &asked); err != nil {
		t.Fatalf("asking in the closed session: %v", err)
	}
	if _, err := ed.AwaitTurnEnd(ctx, id); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "remember the word kiwi") || !strings.Contains(last, "which word?") {
		t.Errorf("the turn after the reopening lacks the history: %s", last)
	}
}
