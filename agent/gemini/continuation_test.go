package gemini

import (
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestNoAutomaticContinuation: a reply the API cut with finish reason CONTINUATION and a
// continuation token is taken as it is: one request (the SDK, which continues by default since
// v1.74, does not send another, which the fake would refuse), its usage counted once, its text
// kept. Streamed or not.
func TestNoAutomaticContinuation(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
				{Parts: []geminitest.Part{{Text: "The first half of a long answer"}}, Chunks: 3, FinishReason: "CONTINUATION", ContinuationToken: "cmVzdW1l",
					Usage: &geminitest.Usage{Prompt: 100, Candidates: 8}},
				{Parts: []geminitest.Part{{Text: " and its second half."}}, Usage: &geminitest.Usage{Prompt: 100, Candidates: 6}},
			}})
			defer srv.Close()
			c := newClient(t, srv)
			got := run(t.Context(), c, &Request{Contents: userTurn("explain"), Stream: mode.stream})
			if got.err != nil {
				t.Fatal(got.err)
			}
			if n := len(srv.Requests()); n != 1 || srv.Pending() != 1 {
				t.Fatalf("%d requests, %d turns left; want one request: no continuation hop", n, srv.Pending())
			}
			if got.done.FinishReason != genai.FinishReasonContinuation || got.done.Usage.Prompt != 100 || got.done.Usage.Candidates != 8 {
				t.Errorf("response: finish %q, usage %+v; want CONTINUATION and the one request's usage", got.done.FinishReason, got.done.Usage)
			}
			if text := got.done.Content.Parts[0].Text; text != "The first half of a long answer" {
				t.Errorf("text %q", text)
			}
			checkRequests(t, srv)
		})
	}
}
