package gemini

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestServedModel: the response names the model that served the call (modelVersion) and its
// modelStatus, streamed or not, so that the call is priced and reported as that model.
func TestServedModel(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{
				Routes: map[string]geminitest.Route{"gemini-2.5-pro": {To: "gemini-3.8-flash", Stage: "RETIRED"}},
				Turns:  []geminitest.Turn{{Parts: []geminitest.Part{{Text: "hello"}}, Chunks: 3}},
			})
			defer srv.Close()
			c := newClient(t, srv, func(c *Config) { c.Model = "gemini-2.5-pro" })
			got := run(t.Context(), c, &Request{Contents: userTurn("hi"), Stream: mode.stream})
			if got.err != nil {
				t.Fatal(got.err)
			}
			if got.done.ModelVersion != "gemini-3.8-flash" || got.done.ModelStatus == nil || got.done.ModelStatus.ModelStage != genai.ModelStageRetired {
				t.Errorf("served %q, status %+v; want gemini-3.8-flash, RETIRED", got.done.ModelVersion, got.done.ModelStatus)
			}
		})
	}
}

// TestRetiredModelEndsAtOnce: a 404 for the model is final: one attempt, in well under a second
// whatever the backoff, and one line naming the model and the catalogue's replacement.
func TestRetiredModelEndsAtOnce(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "unused"}}}}})
			defer srv.Close()
			c := newClient(t, srv, func(c *Config) { c.Model, c.MaxAttempts, c.BaseDelay = "gemini-2.5-flash", 5, 5*time.Second })
			start := time.Now()
			got := run(t.Context(), c, &Request{Contents: userTurn("hi"), Stream: mode.stream})
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if !IsModelNotFound(got.err) || len(got.retries) != 0 || len(srv.Requests()) != 1 {
				t.Fatalf("err = %v, %d retries, %d requests; want one 404, not retried", got.err, len(got.retries), len(srv.Requests()))
			}
			msg := got.err.Error()
			for _, want := range []string{"model gemini-2.5-flash is not available (404 NOT_FOUND", "no longer available to new users",
				"it was shut down on 2026-12-01; use gemini-3.5-flash-lite, the replacement the model catalogue of 2026-12-01 names"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
		})
	}
	srv := geminitest.New(geminitest.Script{})
	defer srv.Close()
	c := newClient(t, srv, func(c *Config) { c.Model = "gemini-3-pro-preview" })
	if _, err := c.InputTokenLimit(t.Context()); !IsModelNotFound(err) || !strings.Contains(err.Error(), "use gemini-3.1-pro-preview") {
		t.Errorf("models.get of a retired model: %v", err)
	}
}
