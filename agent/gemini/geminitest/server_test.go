package geminitest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

const model = "gemini-3.8-flash"

// client is the real genai client pointed at srv, as the adapter and the demo use it.
func client(t *testing.T, srv *Server) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(t.Context(), &genai.ClientConfig{
		APIKey:      "test-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL(), APIVersion: catalog.Builtin().API.Version},
	})
	if err != nil {
		t.Fatalf("new genai client: %v", err)
	}
	return c
}

// noContinuation is the config every caller in this project sends.
func noContinuation() *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
}

func userText(s string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(s, genai.RoleUser)}
}

// stream collects the parts of each streamed event and the first error.
func stream(t *testing.T, c *genai.Client, contents []*genai.Content) (events [][]*genai.Part, last *genai.GenerateContentResponse, err error) {
	t.Helper()
	for resp, err := range c.Models.GenerateContentStream(t.Context(), model, contents, noContinuation()) {
		if err != nil {
			return events, last, err
		}
		last = resp
		var parts []*genai.Part
		if len(resp.Candidates) > 0 && resp.Candidates[0].Content != nil {
			parts = resp.Candidates[0].Content.Parts
		}
		events = append(events, parts)
	}
	return events, last, nil
}

func TestUnaryReplyAndComputedUsage(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Parts: []Part{
		{Text: "thinking", Thought: true},
		{Text: "Hello there"},
		{FunctionCall: &FunctionCall{Name: "read_file", Args: map[string]any{"path": "a.go"}}, ThoughtSignature: "c2lnLTE="},
	}}}})
	defer srv.Close()
	c := client(t, srv)

	resp, err := c.Models.GenerateContent(t.Context(), model, userText("12345678"), &genai.GenerateContentConfig{
		AutomaticContinuation: genai.Ptr(false),
		SystemInstruction:     genai.NewContentFromText("sys!", ""),
	})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	got := resp.Candidates[0].Content.Parts
	want := []*genai.Part{
		{Text: "thinking", Thought: true},
		{Text: "Hello there"},
		{FunctionCall: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "a.go"}}, ThoughtSignature: []byte("sig-1")},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("parts (-got +want):\n%s", diff)
	}
	if got, want := resp.Candidates[0].FinishReason, genai.FinishReasonStop; got != want {
		t.Errorf("finish reason = %q, want %q", got, want)
	}
	// prompt: "sys!" + "12345678" = 12 chars -> 3; answer: "Hello there" (11) + "read_file" (9)
	// + {"path":"a.go"} (15) = 35 -> 9; thoughts: 8 -> 2.
	u := resp.UsageMetadata
	gotUsage := [5]int32{u.PromptTokenCount, u.CandidatesTokenCount, u.ThoughtsTokenCount, u.CachedContentTokenCount, u.TotalTokenCount}
	if want := [5]int32{3, 9, 2, 0, 14}; gotUsage != want {
		t.Errorf("usage (prompt, candidates, thoughts, cached, total) = %v, want %v", gotUsage, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	gotReq := fmt.Sprintf("%s %s model=%s stream=%v key=%v turn=%d system=%q", r.Method, r.Path, r.Model, r.Stream, r.HasAPIKey, r.Turn, r.SystemInstruction.Parts[0].Text)
	wantReq := `POST /v1beta/models/gemini-3.8-flash:generateContent model=gemini-3.8-flash stream=false key=true turn=0 system="sys!"`
	if gotReq != wantReq {
		t.Errorf("request = %s, want %s", gotReq, wantReq)
	}
	if strings.Contains(fmt.Sprintf("%+v", r), "test-key") {
		t.Errorf("the recorded request holds the API key")
	}
	if got := srv.Pending(); got != 0 {
		t.Errorf("pending = %d, want 0", got)
	}
}

func TestStreamSpreadsPartsOverChunks(t *testing.T) {
	call := &FunctionCall{Name: "ls", Args: map[string]any{}}
	tests := []struct {
		name  string
		turn  Turn
		want  [][]wirePart // parts of each event
		final int          // index of the event with finishReason and usage
	}{
		{
			name: "one event per part",
			turn: Turn{Parts: []Part{{Text: "ab", Thought: true}, {Text: "cd", ThoughtSignature: "c2ln"}}},
			want: [][]wirePart{
				{{Text: ptr("ab"), Thought: true}},
				{{Text: ptr("cd"), ThoughtSignature: "c2ln"}},
			},
		},
		{
			name: "text split, signature on the last piece, call whole",
			turn: Turn{Chunks: 5, Parts: []Part{{Text: "abcdef", ThoughtSignature: "c2ln"}, {FunctionCall: call, ThoughtSignature: "c2lnMg=="}}},
			want: [][]wirePart{
				{{Text: ptr("a")}},
				{{Text: ptr("bc")}},
				{{Text: ptr("d")}},
				{{Text: ptr("ef"), ThoughtSignature: "c2ln"}},
				{{FunctionCall: &wireCall{Name: "ls", Args: []byte("{}")}, ThoughtSignature: "c2lnMg=="}},
			},
		},
		{
			name: "text too short for the chunks asked",
			turn: Turn{Chunks: 10, Parts: []Part{{Text: "ab"}}},
			want: [][]wirePart{{{Text: ptr("a")}}, {{Text: ptr("b")}}},
		},
		{
			name: "fewer chunks than parts",
			turn: Turn{Chunks: 2, Parts: []Part{{Text: "a"}, {Text: "b"}, {Text: "c"}}},
			want: [][]wirePart{{{Text: ptr("a")}}, {{Text: ptr("b")}, {Text: ptr("c")}}},
		},
		{
			name: "signature alone",
			turn: Turn{Parts: []Part{{Text: "a"}, {ThoughtSignature: "c2ln"}}},
			want: [][]wirePart{{{Text: ptr("a")}}, {{Text: ptr(""), ThoughtSignature: "c2ln"}}},
		},
		{
			name: "no parts",
			turn: Turn{},
			want: [][]wirePart{nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := streamReply(model, nil, tt.turn, Usage{Prompt: 1})
			var got [][]wirePart
			for _, e := range events {
				got = append(got, e.Candidates[0].Content.Parts)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("events (-got +want):\n%s", diff)
			}
			for i, e := range events {
				last := i == len(events)-1
				if (e.Candidates[0].FinishReason != "") != last || (e.UsageMetadata != nil) != last {
					t.Errorf("event %d: finishReason %q, usage %v; want them on the last event only", i, e.Candidates[0].FinishReason, e.UsageMetadata)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestStreamThroughClient(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Chunks: 3, Parts: []Part{{Text: "abc", ThoughtSignature: "c2ln"}}}}})
	defer srv.Close()
	events, last, err := stream(t, client(t, srv), userText("hi"))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	want := [][]*genai.Part{{{Text: "a"}}, {{Text: "b"}}, {{Text: "c", ThoughtSignature: []byte("sig")}}}
	if diff := cmp.Diff(events, want); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
	if got := last.Candidates[0].FinishReason; got != genai.FinishReasonStop {
		t.Errorf("finish reason = %q, want STOP", got)
	}
	if got := last.UsageMetadata.TotalTokenCount; got != 2 {
		t.Errorf("total tokens = %d, want 2", got)
	}
	if r := srv.Requests()[0]; !r.Stream || r.Path != "/v1beta/models/gemini-3.8-flash:streamGenerateContent" {
		t.Errorf("request stream=%v path=%s", r.Stream, r.Path)
	}
}

func TestTurnSelection(t *testing.T) {
	srv := New(Script{Turns: []Turn{
		{Parts: []Part{{Text: "first"}}},
		{Match: "SUMMARIZE", Parts: []Part{{Text: "summary"}}},
		{Parts: []Part{{Text: "second"}}},
	}})
	defer srv.Close()
	c := client(t, srv)
	var got []string
	for _, prompt := range []string{"go on", "please SUMMARIZE this", "go on", "go on"} {
		resp, err := c.Models.GenerateContent(t.Context(), model, userText(prompt), noContinuation())
		if err != nil {
			got = append(got, err.Error())
			continue
		}
		got = append(got, resp.Text())
	}
	want := []string{"first", "summary", "second", "Error 500, Message: geminitest: script exhausted (request 4), Status: INTERNAL, Details: []"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("replies (-got +want):\n%s", diff)
	}
	var turns []int
	for _, r := range srv.Requests() {
		turns = append(turns, r.Turn)
	}
	if diff := cmp.Diff(turns, []int{0, 1, 2, -1}); diff != "" {
		t.Errorf("turns served (-got +want):\n%s", diff)
	}

	srv.Append(Turn{Parts: []Part{{Text: "appended"}}})
	resp, err := c.Models.GenerateContent(t.Context(), model, userText("go on"), noContinuation())
	if err != nil || resp.Text() != "appended" {
		t.Errorf("after Append: %v, %v; want appended", resp, err)
	}
	if got := srv.Requests()[4].Turn; got != 3 {
		t.Errorf("appended turn index = %d, want 3", got)
	}
}

func TestFaults(t *testing.T) {
	reply := []Part{{Text: "abcd"}}
	tests := []struct {
		name       string
		fault      Fault
		stream     bool
		wantEvents int
		wantErr    string // substring; empty means the stream ends without error
		wantAPI    *genai.APIError
	}{
		{
			name:    "429 with RetryInfo",
			fault:   Fault{Status: 429, Message: "slow down", RetryDelay: "0.05s"},
			wantAPI: &genai.APIError{Code: 429, Message: "slow down", Status: "RESOURCE_EXHAUSTED", Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.05s"}}},
		},
		{
			name:    "503 streamed before any event",
			fault:   Fault{Status: 503},
			stream:  true,
			wantAPI: &genai.APIError{Code: 503, Message: "Service Unavailable", Status: "UNAVAILABLE"},
		},
		{
			name:       "500 mid-stream",
			fault:      Fault{Status: 500, Message: "boom", AfterEvents: 2},
			stream:     true,
			wantEvents: 2,
			wantAPI:    &genai.APIError{Code: 500, Message: "boom", Status: "INTERNAL"},
		},
		{
			name:       "cut stream",
			fault:      Fault{AfterEvents: 1},
			stream:     true,
			wantEvents: 1,
		},
		{
			name:    "dropped unary connection",
			fault:   Fault{},
			wantErr: "EOF",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Script{Turns: []Turn{{Chunks: 4, Parts: reply, Fault: &tt.fault}}})
			defer srv.Close()
			c := client(t, srv)
			var events [][]*genai.Part
			var last *genai.GenerateContentResponse
			var err error
			if tt.stream {
				events, last, err = stream(t, c, userText("hi"))
			} else {
				_, err = c.Models.GenerateContent(t.Context(), model, userText("hi"), noContinuation())
			}
			if len(events) != tt.wantEvents {
				t.Errorf("got %d events, want %d", len(events), tt.wantEvents)
			}
			if last != nil && (last.Candidates[0].FinishReason != "" || last.UsageMetadata != nil) {
				t.Errorf("a failed stream sent finishReason %q, usage %v", last.Candidates[0].FinishReason, last.UsageMetadata)
			}
			switch {
			case tt.wantAPI != nil:
				var apiErr genai.APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("err = %v, want a genai.APIError", err)
				}
				if diff := cmp.Diff(apiErr, *tt.wantAPI); diff != "" {
					t.Errorf("API error (-got +want):\n%s", diff)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("err = %v, want none", err)
			}
		})
	}
}

func TestRejectsContinuationToken(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Parts: []Part{{Text: "never sent"}}}}})
	defer srv.Close()
	cfg := noContinuation()
	cfg.ContinuationToken = []byte("resume")
	_, err := client(t, srv).Models.GenerateContent(t.Context(), model, userText("hi"), cfg)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "continuationToken") {
		t.Errorf("err = %v, want a 400 about continuationToken", err)
	}
	if got := srv.Pending(); got != 1 {
		t.Errorf("pending = %d, want 1: a rejected request consumes no turn", got)
	}
}

func TestModelInfoAndCountTokens(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		want  int32
	}{
		{name: "scripted", limit: 20000, want: 20000},
		{name: "default", want: DefaultInputTokenLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Script{InputTokenLimit: tt.limit})
			defer srv.Close()
			m, err := client(t, srv).Models.Get(t.Context(), model, nil)
			if err != nil {
				t.Fatalf("get model: %v", err)
			}
			got := fmt.Sprintf("%s %d %d", m.Name, m.InputTokenLimit, m.OutputTokenLimit)
			want := fmt.Sprintf("models/%s %d %d", model, tt.want, OutputTokenLimit)
			if got != want {
				t.Errorf("model = %s, want %s", got, want)
			}
		})
	}

	srv := New(Script{})
	defer srv.Close()
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{
		{Text: "hello"},
		{FunctionCall: &genai.FunctionCall{Name: "f", Args: map[string]any{"a": 1}}},
	}}}
	resp, err := client(t, srv).Models.CountTokens(t.Context(), model, contents, nil)
	if err != nil {
		t.Fatalf("count tokens: %v", err)
	}
	// "hello" (5) + "f" (1) + {"a":1} (7) = 13 -> 4
	if resp.TotalTokens != 4 {
		t.Errorf("total tokens = %d, want 4", resp.TotalTokens)
	}
	if got := srv.Requests()[0].Turn; got != -1 {
		t.Errorf("countTokens consumed turn %d", got)
	}
}

func TestConcurrentRequests(t *testing.T) {
	const n = 16
	var turns []Turn
	for i := range n {
		turns = append(turns, Turn{Chunks: 3, Parts: []Part{{Text: fmt.Sprintf("reply %02d", i)}}})
	}
	srv := New(Script{Turns: turns})
	defer srv.Close()
	c := client(t, srv)

	var wg sync.WaitGroup
	replies := make(chan string, n)
	for range n {
		wg.Go(func() {
			var b strings.Builder
			events, _, err := stream(t, c, userText("hi"))
			if err != nil {
				t.Errorf("stream: %v", err)
			}
			for _, parts := range events {
				for _, p := range parts {
					b.WriteString(p.Text)
				}
			}
			replies <- b.String()
		})
	}
	wg.Wait()
	close(replies)
	seen := map[string]bool{}
	for r := range replies {
		seen[r] = true
	}
	if len(seen) != n || srv.Pending() != 0 || len(srv.Requests()) != n {
		t.Errorf("got %d distinct replies, %d pending, %d requests; want %d, 0, %d", len(seen), srv.Pending(), len(srv.Requests()), n, n)
	}
}

// TestDelayAndFunctionCallingOff: a delayed turn is held back; a request that turned function
// calling off is refused a scripted function call, which would be a harness bug.
func TestDelayAndFunctionCallingOff(t *testing.T) {
	srv := New(Script{Turns: []Turn{
		{Parts: []Part{{Text: "slow"}}, Delay: "0.2s"},
		{Parts: []Part{{FunctionCall: &FunctionCall{Name: "read_file"}}}},
	}})
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL()+"/v1beta/models/gemini-3.8-flash:generateContent", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	start := time.Now()
	if code, body := post(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`); code != 200 || !strings.Contains(body, "slow") {
		t.Fatalf("delayed turn: %d %s", code, body)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Error("the delayed reply came early")
	}
	code, body := post(`{"contents":[{"role":"user","parts":[{"text":"sum up"}]}],"tools":[{"functionDeclarations":[{"name":"read_file"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`)
	if code != 400 || !strings.Contains(body, "turned function calling off") {
		t.Errorf("function call with calling off: %d %s", code, body)
	}
	if reqs := srv.Requests(); reqs[len(reqs)-1].FunctionCalling != "NONE" {
		t.Errorf("FunctionCalling = %q, want NONE", reqs[len(reqs)-1].FunctionCalling)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"turns":[{"delay":"soon"}]}`), 0o644)
	if _, err := LoadScript(bad); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Errorf("bad delay: %v", err)
	}
}

// TestCachesOnV1betaOnly: a client left on the SDK's default version (v1) still generates, but
// cannot create an explicit cache, as with the Gemini API; one pinned to the catalogue's can.
func TestCachesOnV1betaOnly(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Parts: []Part{{Text: "one"}}}, {Parts: []Part{{Text: "two"}}}}})
	defer srv.Close()
	v1, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL(), APIVersion: "v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v1.Models.GenerateContent(t.Context(), model, userText("hi"), noContinuation()); err != nil {
		t.Fatalf("generateContent on v1: %v", err)
	}
	contents := userText(strings.Repeat("a long prefix ", 2000))
	var apiErr genai.APIError
	if _, err := v1.Caches.Create(t.Context(), model, &genai.CreateCachedContentConfig{Contents: contents, TTL: time.Minute}); !errors.As(err, &apiErr) || apiErr.Code != 404 {
		t.Errorf("a cache created on v1: %v, want a 404", err)
	}
	if _, err := client(t, srv).Caches.Create(t.Context(), model, &genai.CreateCachedContentConfig{Contents: contents, TTL: time.Minute}); err != nil {
		t.Errorf("a cache on %s: %v", catalog.Builtin().API.Version, err)
	}
	if reqs := srv.Requests(); len(reqs) == 0 || reqs[0].Path != "/v1/models/"+model+":generateContent" {
		t.Errorf("the v1 request is recorded as %+v", reqs)
	}
}
