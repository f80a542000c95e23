package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

const testKey = "test-key-0123456789"

// newClient points a Client at srv with millisecond backoff.
func newClient(t *testing.T, srv *geminitest.Server, edit ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{APIKey: testKey, BaseURL: srv.URL(), MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}
	for _, e := range edit {
		e(&cfg)
	}
	c, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	return c
}

// result is what a Generate call yielded.
type result struct {
	text, thought string
	retries       []Retry
	done          *Response
	err           error
}

func run(ctx context.Context, c *Client, req *Request) result {
	var r result
	for ch, err := range c.Generate(ctx, req) {
		switch {
		case err != nil:
			r.err = err
		case ch.Retry != nil:
			r.retries = append(r.retries, *ch.Retry)
			if ch.Retry.Discard {
				r.text, r.thought = "", ""
			}
		case ch.Done != nil:
			r.done = ch.Done
		default:
			r.text += ch.Text
			r.thought += ch.Thought
		}
	}
	return r
}

func userTurn(s string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(s, genai.RoleUser)}
}

// checkRequests fails if any request carried a continuationToken or the API key in its body.
func checkRequests(t *testing.T, srv *geminitest.Server) {
	t.Helper()
	for i, r := range srv.Requests() {
		body := string(r.Body)
		if strings.Contains(body, "continuationToken") || strings.Contains(body, "automaticContinuation") || strings.Contains(body, testKey) {
			t.Errorf("request %d body: %s", i, body)
		}
		if !r.HasAPIKey {
			t.Errorf("request %d without x-goog-api-key", i)
		}
	}
}

var modes = []struct {
	name   string
	stream bool
}{{"unary", false}, {"stream", true}}

func TestPlainReply(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Chunks: 4, Parts: []geminitest.Part{{Text: "Hello, world"}}}}})
			defer srv.Close()
			c := newClient(t, srv)
			got := run(t.Context(), c, &Request{System: "be brief", Contents: userTurn("hi there"), Stream: mode.stream, MaxOutputTokens: 100})
			if got.err != nil {
				t.Fatalf("generate: %v", got.err)
			}
			want := &Response{
				Content:      &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "Hello, world"}}},
				Usage:        Usage{Prompt: 4, Candidates: 3, Total: 7}, // ceil((8+8)/4), ceil(12/4)
				FinishReason: genai.FinishReasonStop,
				ModelVersion: "gemini-3.8-flash",
				Tier:         catalog.TierStandard, // the x-gemini-service-tier header
			}
			if diff := cmp.Diff(got.done, want); diff != "" {
				t.Errorf("response (-got +want):\n%s", diff)
			}
			if got.text != "Hello, world" || len(got.retries) != 0 {
				t.Errorf("deltas %q, retries %v; want the whole text, no retry", got.text, got.retries)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Stream != mode.stream || !strings.Contains(string(reqs[0].Body), `"maxOutputTokens":100`) {
				t.Errorf("requests = %+v", reqs)
			}
			checkRequests(t, srv)
		})
	}
}

func TestStreamDeltasArriveInPieces(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Chunks: 4, Parts: []geminitest.Part{
		{Text: "hmm", Thought: true}, {Text: "abc"},
	}}}})
	defer srv.Close()
	var got []Chunk
	for ch, err := range newClient(t, srv).Generate(t.Context(), &Request{Contents: userTurn("hi"), Stream: true}) {
		if err != nil {
			t.Fatalf("generate: %v", err)
		}
		if ch.Done == nil {
			got = append(got, ch)
		}
	}
	want := []Chunk{{Thought: "h"}, {Thought: "mm"}, {Text: "a"}, {Text: "bc"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("chunks (-got +want):\n%s", diff)
	}
}

func TestThoughtSignatureRoundTrip(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
				{Chunks: 6, Parts: []geminitest.Part{
					{Text: "I should list the files.", Thought: true},
					{Text: "Listing."},
					{FunctionCall: &geminitest.FunctionCall{Name: "ls", Args: map[string]any{"dir": "."}}, ThoughtSignature: "c2lnLWNhbGw="},
				}},
				{Parts: []geminitest.Part{{Text: "Two files."}}},
			}})
			defer srv.Close()
			c := newClient(t, srv)
			tools := []*genai.FunctionDeclaration{{Name: "ls", Description: "list a directory"}}
			contents := userTurn("what is here?")

			first := run(t.Context(), c, &Request{Contents: contents, Tools: tools, Stream: mode.stream, IncludeThoughts: true})
			if first.err != nil {
				t.Fatalf("first turn: %v", first.err)
			}
			wantParts := []*genai.Part{
				{Text: "I should list the files.", Thought: true},
				{Text: "Listing."},
				{FunctionCall: &genai.FunctionCall{Name: "ls", Args: map[string]any{"dir": "."}}, ThoughtSignature: []byte("sig-call")},
			}
			if diff := cmp.Diff(first.done.Content.Parts, wantParts); diff != "" {
				t.Errorf("merged parts (-got +want):\n%s", diff)
			}
			if first.thought != "I should list the files." || first.text != "Listing." {
				t.Errorf("deltas: thought %q, text %q", first.thought, first.text)
			}

			contents = append(contents, first.done.Content, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				genai.NewPartFromFunctionResponse("ls", map[string]any{"output": "a.go b.go"}),
			}})
			second := run(t.Context(), c, &Request{Contents: contents, Tools: tools, Stream: mode.stream})
			if second.err != nil || second.done.Content.Parts[0].Text != "Two files." {
				t.Fatalf("second turn: %+v", second)
			}
			reqs := srv.Requests()
			sent := reqs[1].Contents[1]
			if diff := cmp.Diff(sent, &genai.Content{Role: genai.RoleModel, Parts: wantParts}); diff != "" {
				t.Errorf("model turn sent back (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(reqs[0].Functions, []string{"ls"}); diff != "" {
				t.Errorf("declared functions (-got +want):\n%s", diff)
			}
			if !strings.Contains(string(reqs[0].Body), `"includeThoughts":true`) {
				t.Errorf("first request did not ask for thoughts: %s", reqs[0].Body)
			}
			checkRequests(t, srv)
		})
	}
}

// TestCachedTokens goes through the real client to the fake's implicit caching: a call that
// extends the previous one reports the shared prefix as cached, and one that rewrites the first
// message keeps only the system instruction cached.
func TestCachedTokens(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
				{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "ls", Args: map[string]any{"dir": "."}}, ThoughtSignature: "c2lnLWNhbGw="}}},
				{Parts: []geminitest.Part{{Text: "Two files."}}},
				{Parts: []geminitest.Part{{Text: "Two files."}}},
			}})
			defer srv.Close()
			c := newClient(t, srv)
			system := strings.Repeat("You are a careful coding agent. ", 625) // 20,000 characters: past the 4,096-token minimum
			contents := userTurn("what is here?")
			first := run(t.Context(), c, &Request{System: system, Contents: contents, Stream: mode.stream})
			if first.err != nil {
				t.Fatalf("first call: %v", first.err)
			}
			contents = append(contents, first.done.Content, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				genai.NewPartFromFunctionResponse("ls", map[string]any{"output": "a.go b.go"}),
			}})
			second := run(t.Context(), c, &Request{System: system, Contents: contents, Stream: mode.stream})
			if second.err != nil {
				t.Fatalf("second call: %v", second.err)
			}
			// A compaction rewrites the first message: only the system instruction stays shared.
			contents[0] = genai.NewContentFromText("[summary] what is here?", genai.RoleUser)
			third := run(t.Context(), c, &Request{System: system, Contents: contents, Stream: mode.stream})
			if third.err != nil {
				t.Fatalf("third call: %v", third.err)
			}
			// Characters: system 20,000 + "what is here?" 13; the call "ls" + {"dir":"."} 13; the
			// response {"name":"ls","response":{"output":"a.go b.go"}} 47; the new first message 23.
			got := []Usage{first.done.Usage, second.done.Usage, third.done.Usage}
			want := []Usage{
				{Prompt: 5004, Candidates: 4, Total: 5008},               // ceil(20,013 / 4)
				{Prompt: 5019, Cached: 5003, Candidates: 3, Total: 5022}, // ceil(20,073 / 4); floor(20,013 / 4)
				{Prompt: 5021, Cached: 5000, Candidates: 3, Total: 5024}, // ceil(20,083 / 4); floor(20,000 / 4)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("usage (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	ok := geminitest.Turn{Chunks: 2, Parts: []geminitest.Part{{Text: "recovered"}}}
	fault := func(f geminitest.Fault) geminitest.Turn {
		return geminitest.Turn{Chunks: 2, Parts: []geminitest.Part{{Text: "lost text"}}, Fault: &f}
	}
	type retry struct {
		Attempt int
		Status  int
		Cut     bool
		Discard bool
	}
	tests := []struct {
		name      string
		only      string // "stream" or "unary" when the case is meaningful in one mode only
		turns     []geminitest.Turn
		want      []retry
		wantDelay time.Duration // of the first retry, when set by RetryInfo
	}{
		{
			name:      "429 waits what RetryInfo says",
			turns:     []geminitest.Turn{fault(geminitest.Fault{Status: 429, Message: "quota", RetryDelay: "0.01s"}), ok},
			want:      []retry{{Attempt: 2, Status: 429}},
			wantDelay: 10 * time.Millisecond,
		},
		{
			name:      "RetryInfo capped at MaxDelay",
			turns:     []geminitest.Turn{fault(geminitest.Fault{Status: 429, RetryDelay: "30s"}), ok},
			want:      []retry{{Attempt: 2, Status: 429}},
			wantDelay: 20 * time.Millisecond,
		},
		{
			name:  "503 twice",
			turns: []geminitest.Turn{fault(geminitest.Fault{Status: 503}), fault(geminitest.Fault{Status: 503}), ok},
			want:  []retry{{Attempt: 2, Status: 503}, {Attempt: 3, Status: 503}},
		},
		{
			name:  "500 mid-stream discards what was shown",
			only:  "stream",
			turns: []geminitest.Turn{fault(geminitest.Fault{Status: 500, AfterEvents: 1}), ok},
			want:  []retry{{Attempt: 2, Status: 500, Discard: true}},
		},
		{
			name:  "cut stream",
			only:  "stream",
			turns: []geminitest.Turn{fault(geminitest.Fault{AfterEvents: 1}), ok},
			want:  []retry{{Attempt: 2, Cut: true, Discard: true}},
		},
		{
			name:  "cut stream before any event",
			only:  "stream",
			turns: []geminitest.Turn{fault(geminitest.Fault{}), ok},
			want:  []retry{{Attempt: 2, Cut: true}},
		},
		{
			name:  "dropped connection",
			only:  "unary", // streamed, a fault without status is a cut stream
			turns: []geminitest.Turn{fault(geminitest.Fault{}), ok},
			want:  []retry{{Attempt: 2}},
		},
	}
	for _, tt := range tests {
		for _, mode := range modes {
			if tt.only != "" && tt.only != mode.name {
				continue
			}
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				srv := geminitest.New(geminitest.Script{Turns: tt.turns})
				defer srv.Close()
				got := run(t.Context(), newClient(t, srv), &Request{Contents: userTurn("hi"), Stream: mode.stream})
				if got.err != nil {
					t.Fatalf("generate: %v", got.err)
				}
				var retries []retry
				for _, r := range got.retries {
					var e *Error
					if !errors.As(r.Err, &e) {
						t.Fatalf("retry error %v is not an *Error", r.Err)
					}
					retries = append(retries, retry{Attempt: r.Attempt, Status: e.Status, Cut: errors.Is(r.Err, ErrStreamCut), Discard: r.Discard})
				}
				if diff := cmp.Diff(retries, tt.want); diff != "" {
					t.Errorf("retries (-got +want):\n%s", diff)
				}
				if tt.wantDelay != 0 && got.retries[0].Delay != tt.wantDelay {
					t.Errorf("delay = %v, want %v from RetryInfo", got.retries[0].Delay, tt.wantDelay)
				}
				for _, r := range got.retries {
					if r.Delay <= 0 || r.Delay > 20*time.Millisecond {
						t.Errorf("delay %v outside (0, MaxDelay]", r.Delay)
					}
				}
				if got.text != "recovered" || got.done.Content.Parts[0].Text != "recovered" {
					t.Errorf("shown %q, response %v; want only the recovered reply", got.text, got.done.Content)
				}
				if srv.Pending() != 0 {
					t.Errorf("%d turns left", srv.Pending())
				}
				checkRequests(t, srv)
			})
		}
	}
}

func TestGivingUp(t *testing.T) {
	repeat := func(n int, f geminitest.Fault) []geminitest.Turn {
		var turns []geminitest.Turn
		for range n {
			turns = append(turns, geminitest.Turn{Parts: []geminitest.Part{{Text: "x"}}, Fault: &f})
		}
		return turns
	}
	tests := []struct {
		name     string
		stream   bool
		turns    []geminitest.Turn
		status   int
		requests int
		want     string
		cut      bool
	}{
		{
			name:     "400 not retried",
			turns:    repeat(2, geminitest.Fault{Status: 400, Message: "Request contains an invalid argument."}),
			status:   400,
			requests: 1,
			want:     "Gemini rejected the request (400 INVALID_ARGUMENT): Request contains an invalid argument",
		},
		{
			name:     "401 not retried",
			stream:   true,
			turns:    repeat(2, geminitest.Fault{Status: 401, Message: "Request had invalid authentication credentials."}),
			status:   401,
			requests: 1,
			want:     "Gemini refused the API key (401 UNAUTHENTICATED): Request had invalid authentication credentials; check GEMINI_API_KEY",
		},
		{
			name:     "403 not retried, key scrubbed",
			turns:    repeat(2, geminitest.Fault{Status: 403, Message: "API key " + testKey + " not valid."}),
			status:   403,
			requests: 1,
			want:     "Gemini refused the API key (403 PERMISSION_DENIED): API key [redacted] not valid; check GEMINI_API_KEY",
		},
		{
			name:     "503 exhausted",
			stream:   true,
			turns:    repeat(3, geminitest.Fault{Status: 503, Message: "The model is overloaded."}),
			status:   503,
			requests: 3,
			want:     "Gemini is overloaded (503 UNAVAILABLE, 3 attempts): The model is overloaded; try again in a minute",
		},
		{
			name:     "400 bad key: said so, not retried",
			turns:    repeat(2, geminitest.Fault{Status: 400, Message: "API key not valid. Please pass a valid API key."}),
			status:   400,
			requests: 1,
			want:     "Gemini refused the API key (400 INVALID_ARGUMENT): API key not valid. Please pass a valid API key; check GEMINI_API_KEY",
		},
		{
			name:     "429 quota spent",
			turns:    repeat(3, geminitest.Fault{Status: 429, Message: "You exceeded your current quota, please check your plan and billing details."}),
			status:   429,
			requests: 3,
			want:     "Gemini's quota for this API key is used up (429 RESOURCE_EXHAUSTED, 3 attempts): You exceeded your current quota, please check your plan and billing details; wait for it to refill, or raise the key's limits",
		},
		{
			name:     "429 no capacity",
			turns:    repeat(3, geminitest.Fault{Status: 429, Message: "No capacity available for model gemini-3.8-flash on the server"}),
			status:   429,
			requests: 3,
			want:     "Gemini is overloaded (429 RESOURCE_EXHAUSTED, 3 attempts): No capacity available for model gemini-3.8-flash on the server; try again in a minute",
		},
		{
			name:     "cut stream that never recovers",
			stream:   true,
			turns:    repeat(3, geminitest.Fault{AfterEvents: 1}),
			requests: 3,
			want:     "the model's stream ended before the response finished (3 attempts)",
			cut:      true,
		},
		{
			name:     "script exhausted",
			turns:    nil,
			status:   500,
			requests: 3,
			want:     "Gemini failed (500 INTERNAL, 3 attempts): geminitest: script exhausted (request 3); try again",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: tt.turns})
			defer srv.Close()
			got := run(t.Context(), newClient(t, srv), &Request{Contents: userTurn("hi"), Stream: tt.stream})
			var e *Error
			if !errors.As(got.err, &e) {
				t.Fatalf("err = %v, want an *Error", got.err)
			}
			if e.Message != tt.want || e.Status != tt.status || errors.Is(e, ErrStreamCut) != tt.cut {
				t.Errorf("error = %q (status %d, cut %v), want %q (status %d, cut %v)", e.Message, e.Status, errors.Is(e, ErrStreamCut), tt.want, tt.status, tt.cut)
			}
			if e.Attempts != tt.requests || len(srv.Requests()) != tt.requests || got.done != nil {
				t.Errorf("attempts %d, requests %d, done %v; want %d attempts and no response", e.Attempts, len(srv.Requests()), got.done, tt.requests)
			}
			if strings.Contains(got.err.Error(), testKey) {
				t.Errorf("error shows the API key: %v", got.err)
			}
		})
	}
}

func TestMalformedArgsNotRetried(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "ls", RawArgs: []byte(`"not an object"`)}}}},
		{Parts: []geminitest.Part{{Text: "unused"}}},
	}})
	defer srv.Close()
	got := run(t.Context(), newClient(t, srv), &Request{Contents: userTurn("hi"), Stream: true})
	var e *Error
	if !errors.As(got.err, &e) || !strings.HasPrefix(e.Message, "the model request failed: ") || len(srv.Requests()) != 1 {
		t.Errorf("err = %v after %d requests; want one failed request", got.err, len(srv.Requests()))
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		{Fault: &geminitest.Fault{Status: 503}},
		{Parts: []geminitest.Part{{Text: "never reached"}}},
	}})
	defer srv.Close()
	c := newClient(t, srv, func(cfg *Config) { cfg.BaseDelay, cfg.MaxDelay = time.Hour, time.Hour })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	start := time.Now()
	var retried bool
	var err error
	for ch, e := range c.Generate(ctx, &Request{Contents: userTurn("hi"), Stream: true}) {
		if ch.Retry != nil {
			retried = true
			cancel() // the consumer gives up while the adapter waits
		}
		err = e
	}
	if !retried || !errors.Is(err, context.Canceled) {
		t.Errorf("retried %v, err %v; want a retry, then context.Canceled", retried, err)
	}
	if elapsed := time.Since(start); elapsed > time.Minute {
		t.Errorf("returned after %v, not at cancellation", elapsed)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestStopEarly(t *testing.T) {
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Chunks: 5, Parts: []geminitest.Part{{Text: "abcdefghij"}}}}})
	defer srv.Close()
	n := 0
	for ch, err := range newClient(t, srv).Generate(t.Context(), &Request{Contents: userTurn("hi"), Stream: true}) {
		if err != nil || ch.Text == "" {
			t.Fatalf("chunk %+v, err %v", ch, err)
		}
		n++
		break
	}
	if n != 1 {
		t.Errorf("got %d chunks", n)
	}
}

// BenchmarkGenerateStream measures one streamed reply of 200 events through the real genai
// client and the fake: the adapter's overhead next to HTTP and JSON.
func BenchmarkGenerateStream(b *testing.B) {
	text := strings.Repeat("word ", 400)
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	c, err := New(b.Context(), Config{APIKey: testKey, BaseURL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	req := &Request{Contents: userTurn("hi"), Stream: true}
	for b.Loop() {
		srv.Append(geminitest.Turn{Chunks: 200, Parts: []geminitest.Part{{Text: text}}})
		for _, err := range c.Generate(b.Context(), req) {
			if err != nil {
				b.Fatal(fmt.Errorf("generate: %w", err))
			}
		}
	}
}

// TestConnectionDroppedMidEvent covers what geminitest cannot script: the connection dropping
// in the middle of an SSE event, which the SDK reports as malformed JSON.
func TestConnectionDroppedMidEvent(t *testing.T) {
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			fmt.Fprint(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"lost\"}]}}]}\n\ndata: {\"cand")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		fmt.Fprint(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"whole\"}]},\"finishReason\":\"STOP\"}]}\n\n")
	}))
	defer api.Close()
	c, err := New(t.Context(), Config{APIKey: testKey, BaseURL: api.URL, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := run(t.Context(), c, &Request{Contents: userTurn("hi"), Stream: true})
	if got.err != nil || got.text != "whole" || len(got.retries) != 1 || !got.retries[0].Discard || !errors.Is(got.retries[0].Err, ErrStreamCut) {
		t.Errorf("got %+v; want one discarding retry for a cut stream, then the whole reply", got)
	}
}
