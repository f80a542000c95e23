package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin"
)

// pinReads reads the pinned file first, then notes from..from+n-1.
func pinReads(from, n int) []geminitest.Turn {
	out := []geminitest.Turn{callTurn("read_file", map[string]any{"path": "src/pinned.go"}, sig)}
	for i := from; i < from+n; i++ {
		out = append(out, callTurn("read_file", map[string]any{"path": fmt.Sprintf("notes/%d.txt", i)}, sig))
	}
	return out
}

// TestPinsSurviveClearingsAndCompactions: a pinned message and a pinned file are in every request
// after they were pinned, byte for byte, through several clearings and summaries; a read of the
// pinned file is never cleared; no call is ever separated from its response; after the file
// changed, the next compaction's head holds its new content; undo and resume keep the pins.
func TestPinsSurviveClearingsAndCompactions(t *testing.T) {
	p := contextwin.DefaultPolicy()
	p.ContextBudget, p.KeepRecentTurns = 5000, 1
	var turns []geminitest.Turn
	turns = append(turns, pinReads(0, 4)...)
	turns = append(turns, textTurn("read the first four"))
	turns = append(turns, pinReads(4, 6)...)
	turns = append(turns, textTurn("read six more"))
	turns = append(turns, pinReads(10, 12)...)
	turns = append(turns, textTurn("read the rest"), textTurn("after the undo"))
	for range 20 {
		turns = append(turns, summaryTurn(summaryText))
	}
	files := notes(22, 2400)
	body := strings.Repeat("// a line of the pinned file, long enough to be worth clearing\n", 40)
	files["src/pinned.go"] = "package pinned\n\n// Version one of the pinned file.\n" + body
	f, st, log := saved(t, fixtureOpts{policy: p, files: files, clearing: true}, turns...)
	msg, err := f.s.Pin(t.Context(), PinRequest{Kind: contextwin.PinMessage, Text: "Never touch db/migrations: it is generated.\nAnswer in French."})
	if err != nil {
		t.Fatal(err)
	}
	file, err := f.s.Pin(t.Context(), PinRequest{Kind: contextwin.PinFile, Path: "./src/pinned.go"})
	if err != nil {
		t.Fatal(err)
	}
	if msg.ID != "p1" || file.ID != "p2" || file.Path != "src/pinned.go" || file.Tokens == 0 || msg.Label != "Never touch db/migrations: it is generated." {
		t.Fatalf("pins %+v %+v", msg, file)
	}
	for i, ask := range []string{"Read the first four notes.", "Now read six more notes.", "Read the rest of the notes."} {
		if i == 2 { // the file changes: the next head holds the new content
			writeFiles(t, f.ws, map[string]string{"src/pinned.go": "package pinned\n\n// Version two of the pinned file.\n" + body})
		}
		if _, err := f.run(t.Context(), ask); err != nil {
			t.Fatal(err)
		}
		// Clearings come by themselves at this budget; a summary after each turn as well.
		if _, err := f.s.Compact(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
	}
	cps := f.s.Conversation().Checkpoints()
	var cleared, summarized int
	for _, cp := range cps {
		if cp.Cleared > 0 {
			cleared++
		} else {
			summarized++
		}
	}
	if cleared < 1 || summarized < 3 {
		t.Fatalf("%d clearings and %d summaries, want at least 1 and 3", cleared, summarized)
	}
	reqs := mainRequests(f.srv)
	for n, r := range reqs {
		body := allText(r.Contents)
		if !strings.Contains(body, msg.Render()) {
			t.Errorf("request %d lost the pinned message", n)
		}
		if !strings.Contains(body, contextwin.PinMarker+"p2 file src/pinned.go") {
			t.Errorf("request %d lost the pinned file", n)
		}
		if err := pairs(r.Contents); err != nil {
			t.Errorf("request %d: %v", n, err)
		}
		for _, c := range r.Contents {
			for _, part := range c.Parts {
				if fr := part.FunctionResponse; fr != nil && contextwin.IsCleared(fr) && strings.Contains(fmt.Sprint(fr.Response), `read_file path="src/pinned.go"`) {
					t.Errorf("request %d: a read of the pinned file was cleared", n)
				}
			}
		}
	}
	head := contextwin.HeadText(f.s.Conversation().History()[0])
	if !strings.Contains(head, "Version two of the pinned file.") || strings.Contains(head, "Version one") {
		t.Errorf("the head does not hold the pinned file as it is now:\n%s", head)
	}
	if strings.Count(head, "Never touch db/migrations") != 1 {
		t.Errorf("the pinned message is %d times in the head", strings.Count(head, "Never touch db/migrations"))
	}
	// Undo: the pins stay pinned, and are in the next request.
	big := p
	big.ContextBudget = 200000
	if err := f.s.SetPolicy(big); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.UndoCompaction(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t.Context(), "Go on."); err != nil {
		t.Fatal(err)
	}
	last := mainRequests(f.srv)
	lastBody := allText(last[len(last)-1].Contents)
	if !strings.Contains(lastBody, msg.Render()) || !strings.Contains(lastBody, contextwin.PinMarker+"p2 ") {
		t.Errorf("after the undo, the pins are not in the request")
	}
	// Resume: the same pins, and the next pin is p3.
	want := f.s.Conversation().Pins()
	s2 := resumeFrom(t, f, st, log)
	if diff := cmp.Diff(s2.Conversation().Pins(), want); diff != "" {
		t.Errorf("resumed pins (-got +want):\n%s", diff)
	}
	if p3, err := s2.Pin(t.Context(), PinRequest{Kind: contextwin.PinMessage, Text: "third"}); err != nil || p3.ID != "p3" {
		t.Errorf("pin after resume: %+v %v", p3, err)
	}
	if got := s2.Context(); len(got.Pins) != 3 {
		t.Errorf("context pins %d, want 3", len(got.Pins))
	}
}

// allText joins every text part of contents.
func allText(cs []*genai.Content) string {
	var b strings.Builder
	for _, c := range cs {
		for _, p := range c.Parts {
			b.WriteString(p.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestPinRefusals: what cannot be pinned is a PinError that names the problem.
func TestPinRefusals(t *testing.T) {
	f := newFixture(t, fixtureOpts{files: map[string]string{
		".env": "KEY=1", "keys/server.pem": "x", ".git/config": "x", ".ssh/config": "x", "build/out.txt": "x", ".gitignore": "build/\n",
		"bin.dat": "a\x00b", "ok.txt": "fine",
	}})
	if err := os.WriteFile(filepath.Join(filepath.Dir(f.ws), "outside.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		req  PinRequest
		want string
	}{
		{PinRequest{Kind: "folder"}, `kind must be "file" or "message"`},
		{PinRequest{Kind: "message", Text: "  "}, "text is required"},
		{PinRequest{Kind: "file"}, "path is required"},
		{PinRequest{Kind: "file", Path: "../outside.txt"}, "path is outside the workspace"},
		{PinRequest{Kind: "file", Path: filepath.Join(filepath.Dir(f.ws), "outside.txt")}, "path is outside the workspace"},
		{PinRequest{Kind: "file", Path: ".env"}, "secrets file"},
		{PinRequest{Kind: "file", Path: "keys/server.pem"}, "secrets file"},
		{PinRequest{Kind: "file", Path: ".git/config"}, "is in .git, version control's or credentials' own"},
		{PinRequest{Kind: "file", Path: ".ssh/config"}, "is in .ssh"},
		{PinRequest{Kind: "file", Path: "build/out.txt"}, "ignored"},
		{PinRequest{Kind: "file", Path: "bin.dat"}, "binary"},
		{PinRequest{Kind: "file", Path: "missing.txt"}, "file not found"},
	} {
		_, err := f.s.Pin(t.Context(), tt.req)
		var pe *PinError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Pin(%+v) = %v, want a PinError with %q", tt.req, err, tt.want)
		}
	}
	if err := f.s.Conversation().Unpin("p9"); err == nil || !strings.Contains(err.Error(), `no pin "p9"`) {
		t.Errorf("Unpin(p9) = %v", err)
	}
	p, err := f.s.Pin(t.Context(), PinRequest{Kind: "file", Path: "ok.txt"})
	if err != nil || p.ID != "p1" {
		t.Fatalf("%+v %v", p, err)
	}
	// A dotfile that holds no credential may be pinned, as Copilot and Claude Code let one attach it.
	writeFiles(t, f.ws, map[string]string{".github/workflows/ci.yml": "on: push\n"})
	if ci, err := f.s.Pin(t.Context(), PinRequest{Kind: "file", Path: ".github/workflows/ci.yml"}); err != nil || ci.Path != ".github/workflows/ci.yml" {
		t.Errorf("pinning the CI workflow: %+v %v", ci, err)
	}
	if err := f.s.Conversation().Unpin("p1"); err != nil || len(f.s.Conversation().Pins()) != 1 {
		t.Errorf("Unpin(p1) = %v, pins %v", err, f.s.Conversation().Pins())
	}
}
