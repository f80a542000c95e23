package contextwin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func user(text string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}}
}

func call(id, name string, args map[string]any, sig string) *genai.Content {
	p := &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}
	if sig != "" {
		p.ThoughtSignature = []byte(sig)
	}
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}
}

func response(id, name, out string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"output": out}}}}}
}

func modelText(text string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}
}

// session builds task + n tool turns (call, response) + optionally a final answer.
func session(n int) []*genai.Content {
	h := []*genai.Content{user("Fix the discount bug in facturation.")}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		h = append(h, call(id, "read_file", map[string]any{"path": fmt.Sprintf("f%d.go", i)}, "sig"+id), response(id, "read_file", strings.Repeat("x", 100)))
	}
	return h
}

func TestSplitPoint(t *testing.T) {
	tests := []struct {
		name      string
		history   []*genai.Content
		keep      int
		wantSplit int
		wantOK    bool
	}{
		{"too short", session(3), 3, 0, false},
		{"one to summarize", session(4), 3, 3, true},
		{"seed shape", session(9), 3, 13, true},
		{"keep one", session(4), 1, 7, true},
		{"only task", session(0), 3, 0, false},
		{"final answer counts as a turn", append(session(4), modelText("done")), 3, 5, true},
		{"follow-up request", append(append(session(2), modelText("done"), user("now the tests")), session(2)[1:]...), 2, 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			split, ok := SplitPoint(tt.history, tt.keep)
			if split != tt.wantSplit || ok != tt.wantOK {
				t.Errorf("SplitPoint() = %d, %v; want %d, %v", split, ok, tt.wantSplit, tt.wantOK)
			}
			if ok && tt.history[split].Role != genai.RoleModel {
				t.Errorf("split %d is before a %s message, want a model message", split, tt.history[split].Role)
			}
		})
	}
}

// promptOf is the text of a summary request: the request part in context, the message alone.
func promptOf(req SummaryRequest) string {
	last := req.Contents[len(req.Contents)-1]
	return last.Parts[len(last.Parts)-1].Text
}

func okSummary(_ context.Context, _ SummaryRequest) (string, error) {
	return "**Objective:**\nFix discounts\n**Files read and what mattered:**\nf0.go\n**Modifications made:**\nnone\n**Last tests:**\nnone\n**Hypotheses ruled out:**\nnone\n**Remaining work:**\nfix", nil
}

func TestCompactHead(t *testing.T) {
	h := session(9)
	st := State{FilesModified: []string{"facturation/remises.go"}, LastVerdict: "1 failed, 5 passed"}
	res, err := Compact(t.Context(), Request{History: h, Task: "Fix the discount bug in facturation.", State: st, KeepRecentTurns: 3}, okSummary)
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced != 12 || res.Split != 13 || len(res.History) != 7 {
		t.Errorf("replaced %d, split %d, len %d; want 12, 13, 7 (the seed's 19 → 7)", res.Replaced, res.Split, len(res.History))
	}
	head := HeadText(res.History[0])
	for _, want := range []string{
		"Fix the discount bug in facturation.",
		"[Summary of the first 12 messages, compacted by the harness. The messages that follow are kept verbatim and take precedence over this summary.]",
		"**Objective:**",
		"**State held by the harness**",
		"facturation/remises.go",
		"1 failed, 5 passed",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("head lacks %q:\n%s", want, head)
		}
	}
	if res.Title != "Fix discounts" {
		t.Errorf("Title = %q, want %q", res.Title, "Fix discounts")
	}
	if res.Fallback != "" {
		t.Errorf("Fallback = %q, want none", res.Fallback)
	}
}

func TestCompactKeepsActiveLoopByteForByte(t *testing.T) {
	h := session(6)
	res, err := Compact(t.Context(), Request{History: h, Task: "t", KeepRecentTurns: 2}, okSummary)
	if err != nil {
		t.Fatal(err)
	}
	kept := res.History[1:]
	if diff := cmp.Diff(h[res.Split:], kept); diff != "" {
		t.Errorf("kept messages changed (-want +got):\n%s", diff)
	}
	for i, c := range kept {
		if c != h[res.Split+i] {
			t.Errorf("kept message %d is a copy, want the same value", i)
		}
		for _, p := range c.Parts {
			if p.FunctionCall != nil && string(p.ThoughtSignature) != "sig"+p.FunctionCall.ID {
				t.Errorf("call %s lost its signature", p.FunctionCall.ID)
			}
		}
	}
}

func TestSummaryRequestInContext(t *testing.T) {
	h := session(5)
	before := cloneContents(h)
	var got SummaryRequest
	res, err := Compact(t.Context(), Request{History: h, Task: "t", Focus: "keep the exact error strings", KeepRecentTurns: 2, MaxInputTokens: 100_000}, func(_ context.Context, r SummaryRequest) (string, error) {
		got = r
		return okSummary(t.Context(), r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.InContext {
		t.Fatal("the summary was asked stand-alone, want in context")
	}
	// The prefix the agent's calls cached, unchanged, then the request as one more part of the
	// last message (a function response), so that roles still alternate.
	if len(got.Contents) != res.Split {
		t.Fatalf("request has %d messages, want the %d before the split", len(got.Contents), res.Split)
	}
	for i, c := range got.Contents[:res.Split-1] {
		if c != h[i] {
			t.Errorf("message %d is not the history's own", i)
		}
	}
	last := got.Contents[res.Split-1]
	if diff := cmp.Diff(h[res.Split-1].Parts, last.Parts[:len(last.Parts)-1]); diff != "" || last.Role != genai.RoleUser {
		t.Errorf("last message changed before the request part (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, h); diff != "" {
		t.Errorf("the history was changed by building the request:\n%s", diff)
	}
	prompt := promptOf(got)
	for _, want := range append(slices.Clone(Headings), SummaryMarker+" above", "keep the exact error strings", "Do not call any tool") {
		if !strings.Contains(prompt, want) {
			t.Errorf("request lacks %q:\n%s", want, prompt)
		}
	}
}

func TestSummaryPromptStandalone(t *testing.T) {
	h := session(5)
	h[2] = response("c0", "read_file", strings.Repeat("a", 300)+strings.Repeat("b", 700)+"VERDICT")
	var prompts []string
	blocks := []SummaryBlock{{From: 1, To: 4, Summary: "PREVIOUS-SUMMARY"}}
	_, err := Compact(t.Context(), Request{History: h, Task: "t", Blocks: blocks, Focus: "keep the exact error strings", KeepRecentTurns: 2, MaxInputTokens: 1}, func(_ context.Context, r SummaryRequest) (string, error) {
		if r.InContext || len(r.Contents) != 1 {
			t.Errorf("a history over MaxInputTokens got an in-context request")
		}
		prompts = append(prompts, promptOf(r))
		return okSummary(t.Context(), r)
	})
	if err != nil {
		t.Fatal(err)
	}
	prompt := strings.Join(prompts, "\n")
	for _, h := range Headings {
		if !strings.Contains(prompts[0], "**"+h+":**") {
			t.Errorf("prompt lacks heading %q", h)
		}
	}
	for _, want := range []string{SummaryMarker + " below", "PREVIOUS-SUMMARY", "keep the exact error strings", "VERDICT", Marker(1007 - ToolOutputInSummary)} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, strings.Repeat("b", 400)) {
		t.Error("prompt has a tool output longer than 600 characters")
	}
}

func cloneContents(h []*genai.Content) []*genai.Content {
	out := make([]*genai.Content, len(h))
	for i, c := range h {
		cc := *c
		cc.Parts = slices.Clone(c.Parts)
		out[i] = &cc
	}
	return out
}

// TestCompactAppendsThenMerges compacts twice: the second summary is appended as a part after the
// first, leaving the head's task and first summary byte for byte (the provider's cached prefix),
// until the summaries pass MergeAbove and are merged into one.
func TestCompactAppendsThenMerges(t *testing.T) {
	st := State{FilesModified: []string{"a.go"}}
	first, err := Compact(t.Context(), Request{History: session(6), Task: "Fix it", State: st, KeepRecentTurns: 2, MergeAbove: 1000}, okSummary)
	if err != nil {
		t.Fatal(err)
	}
	h := append(slices.Clone(first.History), session(4)[1:]...)
	var asked string
	second, err := Compact(t.Context(), Request{History: h, Task: "Fix it", Blocks: first.Blocks, State: st, KeepRecentTurns: 2, MergeAbove: 1000}, func(_ context.Context, r SummaryRequest) (string, error) {
		asked = promptOf(r)
		return "**Objective:**\nsecond", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if second.Merged || len(second.Blocks) != 2 || !strings.Contains(asked, "after the summaries at its start") {
		t.Fatalf("merged %v, %d blocks, request %q; want a second block appended", second.Merged, len(second.Blocks), asked)
	}
	if b := second.Blocks[1]; b.From != first.Covered+1 || b.To != second.Covered || second.Covered != first.Covered+second.Replaced {
		t.Errorf("second block covers %d–%d, covered %d; want %d–%d", b.From, b.To, second.Covered, first.Covered+1, first.Covered+second.Replaced)
	}
	old, now := first.History[0].Parts, second.History[0].Parts
	if len(now) != 4 || now[0].Text != "Fix it" || now[1].Text != old[1].Text {
		t.Errorf("head parts: the task and the first summary must stay byte for byte:\n%s\n%s", HeadText(first.History[0]), HeadText(second.History[0]))
	}
	if !strings.Contains(now[2].Text, fmt.Sprintf("[Summary of messages %d to %d", first.Covered+1, second.Covered)) || !strings.Contains(now[3].Text, "State held by the harness") {
		t.Errorf("new parts: %q / %q", now[2].Text, now[3].Text)
	}

	merged, err := Compact(t.Context(), Request{History: append(slices.Clone(second.History), session(4)[1:]...), Task: "Fix it", Blocks: second.Blocks, KeepRecentTurns: 2, MergeAbove: 10}, func(_ context.Context, r SummaryRequest) (string, error) {
		asked = promptOf(r)
		return "**Objective:**\nall", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !merged.Merged || len(merged.Blocks) != 1 || merged.Blocks[0].From != 1 || merged.Blocks[0].To != merged.Covered || !strings.Contains(asked, "the summaries in its first message included") {
		t.Errorf("merged %v, blocks %+v, request %q; want one block for all", merged.Merged, merged.Blocks, asked)
	}
	if !strings.Contains(HeadText(merged.History[0]), fmt.Sprintf("[Summary of the first %d messages", merged.Covered)) {
		t.Errorf("merged head:\n%s", HeadText(merged.History[0]))
	}
}

func TestCompactFallback(t *testing.T) {
	long := func(context.Context, SummaryRequest) (string, error) { return strings.Repeat("word ", 5000), nil }
	tests := []struct {
		name      string
		summarize Summarizer
		want      string
	}{
		{"error", func(context.Context, SummaryRequest) (string, error) { return "", errors.New("503 overloaded") }, "summarizer failed: 503 overloaded"},
		{"empty", func(context.Context, SummaryRequest) (string, error) { return "  ", nil }, "summarizer returned nothing"},
		{"not smaller", long, "summary was not smaller than what it replaced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := session(5)
			h = append(h, call("r", "run_command", map[string]any{"command": "go test ./..."}, ""), response("r", "run_command", "FAIL\tx\t0.1s\nexit status 1"))
			h = append(h, session(3)[1:]...)
			st := State{FilesModified: []string{"a.go"}, LastVerdict: "FAIL\tx\t0.1s"}
			res, err := Compact(t.Context(), Request{History: h, Task: "Fix it", State: st, KeepRecentTurns: 3}, tt.summarize)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fallback != tt.want {
				t.Errorf("Fallback = %q, want %q", res.Fallback, tt.want)
			}
			for _, want := range []string{"**Objective:**\nFix it", "read_file f0.go", "run_command go test ./... → FAIL\tx\t0.1s", "a.go"} {
				if !strings.Contains(res.Summary, want) {
					t.Errorf("deterministic summary lacks %q:\n%s", want, res.Summary)
				}
			}
		})
	}
}

func TestCompactCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	h := session(6)
	before := append([]*genai.Content(nil), h...)
	_, err := Compact(ctx, Request{History: h, Task: "t", KeepRecentTurns: 2}, func(context.Context, SummaryRequest) (string, error) {
		cancel()
		return "", context.Canceled
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if diff := cmp.Diff(before, h); diff != "" {
		t.Errorf("history changed by a cancelled compaction:\n%s", diff)
	}
}

func TestCompactInChunks(t *testing.T) {
	h := session(20)
	var prompts []string
	res, err := Compact(t.Context(), Request{History: h, Task: "t", KeepRecentTurns: 2, MaxInputTokens: 200}, func(_ context.Context, r SummaryRequest) (string, error) {
		prompts = append(prompts, promptOf(r))
		return fmt.Sprintf("**Objective:**\nchunk %d", len(prompts)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) < 3 {
		t.Fatalf("summarizer called %d times, want several chunks", len(prompts))
	}
	for i, p := range prompts[1:] {
		if !strings.Contains(p, fmt.Sprintf("chunk %d", i+1)) {
			t.Errorf("chunk %d prompt does not merge the running summary", i+2)
		}
	}
	if res.Summary != fmt.Sprintf("**Objective:**\nchunk %d", len(prompts)) {
		t.Errorf("Summary = %q, want the last chunk's", res.Summary)
	}
}

func TestCompactNothing(t *testing.T) {
	_, err := Compact(t.Context(), Request{History: session(2), KeepRecentTurns: 3}, okSummary)
	if !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("err = %v, want ErrNothingToCompact", err)
	}
}

// TestCompactProperty compacts random histories and checks that no call is separated from its
// response and that the kept messages are untouched.
func TestCompactProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for iter := range 300 {
		h := []*genai.Content{user("task")}
		for i := range 1 + r.IntN(30) {
			switch r.IntN(5) {
			case 0:
				h = append(h, modelText("thinking out loud"), user("continue"))
			case 1: // parallel calls
				id1, id2 := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
				h = append(h, &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
					{Text: "two calls", Thought: true, ThoughtSignature: []byte("t" + id1)},
					{FunctionCall: &genai.FunctionCall{ID: id1, Name: "search"}, ThoughtSignature: []byte(id1)},
					{FunctionCall: &genai.FunctionCall{ID: id2, Name: "list_files"}},
				}}, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
					{FunctionResponse: &genai.FunctionResponse{ID: id1, Name: "search"}},
					{FunctionResponse: &genai.FunctionResponse{ID: id2, Name: "list_files"}},
				}})
			default:
				id := fmt.Sprintf("c%d", i)
				h = append(h, call(id, "read_file", map[string]any{"path": id}, id), response(id, "read_file", "content"))
			}
		}
		keep := 1 + r.IntN(4)
		res, err := Compact(t.Context(), Request{History: h, Task: "task", KeepRecentTurns: keep}, okSummary)
		if errors.Is(err, ErrNothingToCompact) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := checkPairs(res.History); err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		for i, c := range res.History[1:] {
			if c != h[res.Split+i] {
				t.Fatalf("iteration %d: kept message %d altered", iter, i)
			}
		}
	}
}

// checkPairs verifies that every function call is answered in the next message and every
// response answers a call of the previous one.
func checkPairs(h []*genai.Content) error {
	for i, c := range h {
		for _, p := range c.Parts {
			if fc := p.FunctionCall; fc != nil {
				if i+1 >= len(h) || !hasResponse(h[i+1], fc.ID) {
					return fmt.Errorf("call %s at %d has no response after it", fc.ID, i)
				}
			}
			if fr := p.FunctionResponse; fr != nil {
				if i == 0 || !hasCall(h[i-1], fr.ID) {
					return fmt.Errorf("response %s at %d has no call before it", fr.ID, i)
				}
			}
		}
	}
	return nil
}

func hasResponse(c *genai.Content, id string) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil && p.FunctionResponse.ID == id {
			return true
		}
	}
	return false
}

func hasCall(c *genai.Content, id string) bool {
	for _, p := range c.Parts {
		if p.FunctionCall != nil && p.FunctionCall.ID == id {
			return true
		}
	}
	return false
}

func TestTitleAndSlug(t *testing.T) {
	tests := []struct{ summary, title, slug string }{
		{"**Objective:**\nFix the discount threshold in `remises.go`", "Fix the discount threshold in `remises.go`", "fix-the-discount-threshold-in-remises-go"},
		{"**Objective:** Refactoring authentication module\n**Files…", "Refactoring authentication module", "refactoring-authentication-module"},
		{"plain text", "plain text", "plain-text"},
		{"", "", "checkpoint"},
	}
	for _, tt := range tests {
		if got := Title(tt.summary); got != tt.title {
			t.Errorf("Title(%q) = %q, want %q", tt.summary, got, tt.title)
		}
		if got := Slug(tt.title); got != tt.slug {
			t.Errorf("Slug(%q) = %q, want %q", tt.title, got, tt.slug)
		}
	}
}

func BenchmarkSplitPoint10k(b *testing.B) {
	h := session(5000)
	for b.Loop() {
		if _, ok := SplitPoint(h, 3); !ok {
			b.Fatal("no split")
		}
	}
}

func BenchmarkCompactPlan10k(b *testing.B) {
	h := session(5000)
	summarize := func(context.Context, SummaryRequest) (string, error) { return "**Objective:**\nx", nil }
	for b.Loop() {
		if _, err := Compact(b.Context(), Request{History: h, Task: "t", KeepRecentTurns: 3, MaxInputTokens: 100_000}, summarize); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompactCapsLongRequests: a later request over RequestCap characters (a pasted log) keeps its
// start and end in the head, says how much was left out and where the whole of it is saved; a
// short one is kept whole; without a place to save, the head says only what was left out.
func TestCompactCapsLongRequests(t *testing.T) {
	long := "Never touch db/migrations. Here is the log:\n" + strings.Repeat("é line of the failing build\n", 400) + "END OF LOG: 3 failed"
	h := session(2)
	h = append(h, user(long), modelText("ok"), user("And keep the API stable."))
	h = append(h, session(4)[1:]...)
	for _, tc := range []struct {
		name  string
		save  func(string) string
		where string
	}{
		{"saved", func(text string) string {
			if text != long {
				t.Errorf("saved %d characters, want the whole request (%d)", len(text), len(long))
			}
			return `read_file path="/state/request-1.txt"`
		}, `; the whole request is saved: read_file path="/state/request-1.txt" to read it`},
		{"unsaved", func(string) string { return "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compact(t.Context(), Request{History: h, Task: "Fix the build.", KeepRecentTurns: 2, SaveRequest: tc.save}, okSummary)
			if err != nil {
				t.Fatal(err)
			}
			reqs := Requests(res.Blocks)
			if len(reqs) != 2 || reqs[1] != "And keep the API stable." {
				t.Fatalf("requests %q", reqs)
			}
			got := reqs[0]
			head, tail := Split(RequestCap)
			omitted := utf8.RuneCountInString(long) - head - tail
			note := fmt.Sprintf("\n[… %d characters of this request omitted here%s …]\n", omitted, tc.where)
			if want := string([]rune(long)[:head]) + note + string([]rune(long)[utf8.RuneCountInString(long)-tail:]); got != want {
				t.Errorf("capped request:\n%q\nwant\n%q", got, want)
			}
			if !strings.HasPrefix(got, "Never touch db/migrations.") || !strings.HasSuffix(got, "END OF LOG: 3 failed") {
				t.Errorf("the request lost its start or its end")
			}
		})
	}
}

// TestCompactStandAlone: a summary for another model is asked over the rendered transcript
// however short the history, without the session's system prompt or raw parts; it appends a
// block to the head's summaries, or merges them when MergeAbove says so, as in context.
func TestCompactStandAlone(t *testing.T) {
	var asked []SummaryRequest
	summarize := func(_ context.Context, r SummaryRequest) (string, error) {
		asked = append(asked, r)
		return "**Objective:**\nshort", nil
	}
	first, err := Compact(t.Context(), Request{History: session(6), Task: "Fix it", KeepRecentTurns: 2, MergeAbove: 1000, MaxInputTokens: 1 << 20, StandAlone: true}, summarize)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0].InContext || len(asked[0].Contents) != 1 || !strings.Contains(promptOf(asked[0]), SummaryMarker+" below") {
		t.Fatalf("asked %d requests, in context %v: want one stand-alone", len(asked), len(asked) > 0 && asked[0].InContext)
	}
	h := append(slices.Clone(first.History), session(4)[1:]...)
	asked = nil
	second, err := Compact(t.Context(), Request{History: h, Task: "Fix it", Blocks: first.Blocks, KeepRecentTurns: 2, MergeAbove: 1000, MaxInputTokens: 1 << 20, StandAlone: true}, summarize)
	if err != nil {
		t.Fatal(err)
	}
	if second.Merged || len(second.Blocks) != 2 || strings.Contains(promptOf(asked[0]), first.Blocks[0].Summary) {
		t.Errorf("merged %v, %d blocks: want a block appended, the earlier summary not asked again", second.Merged, len(second.Blocks))
	}
	asked = nil
	merged, err := Compact(t.Context(), Request{History: append(slices.Clone(second.History), session(4)[1:]...), Task: "Fix it", Blocks: second.Blocks, KeepRecentTurns: 2, MergeAbove: 10, MaxInputTokens: 1 << 20, StandAlone: true}, summarize)
	if err != nil {
		t.Fatal(err)
	}
	if !merged.Merged || len(merged.Blocks) != 1 || !strings.Contains(promptOf(asked[0]), "short") {
		t.Errorf("merged %v, %d blocks: want the summaries merged, given to the summarizer", merged.Merged, len(merged.Blocks))
	}
}
