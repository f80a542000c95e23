package geminitest

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"
)

// TestRoutes: a request for a routed model is answered by the route's model, named in every
// response's modelVersion with the route's modelStatus; its prefix is cached with the serving
// model's.
func TestRoutes(t *testing.T) {
	srv := New(Script{
		Routes: map[string]Route{"gemini-2.5-pro": {To: "gemini-3.8-flash", Stage: "RETIRED", RetirementTime: "2026-12-01T00:00:00Z", Message: "routed to gemini-3.8-flash"}},
		Turns:  []Turn{{Parts: []Part{{Text: "one"}}}, {Parts: []Part{{Text: "two"}}, Chunks: 2}},
	})
	defer srv.Close()
	c := client(t, srv)
	resp, err := c.Models.GenerateContent(t.Context(), "gemini-2.5-pro", userText("hi"), noContinuation())
	if err != nil {
		t.Fatal(err)
	}
	want := &genai.ModelStatus{ModelStage: genai.ModelStageRetired, RetirementTime: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Message: "routed to gemini-3.8-flash"}
	if resp.ModelVersion != "gemini-3.8-flash" || resp.ModelStatus == nil || *resp.ModelStatus != *want {
		t.Errorf("unary: modelVersion %q, status %+v", resp.ModelVersion, resp.ModelStatus)
	}
	for r, err := range c.Models.GenerateContentStream(t.Context(), "gemini-2.5-pro", userText("hi"), noContinuation()) {
		if err != nil {
			t.Fatal(err)
		}
		if r.ModelVersion != "gemini-3.8-flash" || r.ModelStatus == nil {
			t.Errorf("stream event: modelVersion %q, status %+v", r.ModelVersion, r.ModelStatus)
		}
	}
	// An unrouted current model answers as itself, without a status.
	srv.Append(Turn{Parts: []Part{{Text: "three"}}})
	resp, err = c.Models.GenerateContent(t.Context(), model, userText("hi"), noContinuation())
	if err != nil || resp.ModelVersion != model || resp.ModelStatus != nil {
		t.Errorf("current model: %v, modelVersion %q, status %+v", err, resp.ModelVersion, resp.ModelStatus)
	}
}

// TestRetiredModelAnswers404: a model the catalogue marks retired, which no route names, answers
// 404 "no longer available to new users" to generateContent, streaming and models.get alike, and
// consumes no turn.
func TestRetiredModelAnswers404(t *testing.T) {
	srv := New(Script{Turns: []Turn{{Parts: []Part{{Text: "never"}}}}})
	defer srv.Close()
	c := client(t, srv)
	check := func(what string, err error) {
		t.Helper()
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != http.StatusNotFound || !strings.Contains(apiErr.Message, "models/gemini-2.5-flash is no longer available to new users") {
			t.Errorf("%s: err = %v, want a 404 saying the model is no longer available", what, err)
		}
	}
	_, err := c.Models.GenerateContent(t.Context(), "gemini-2.5-flash", userText("hi"), noContinuation())
	check("generateContent", err)
	for _, err := range c.Models.GenerateContentStream(t.Context(), "gemini-2.5-flash", userText("hi"), noContinuation()) {
		check("streamGenerateContent", err)
		break
	}
	_, err = c.Models.Get(t.Context(), "gemini-2.5-flash", nil)
	check("models.get", err)
	if srv.Pending() != 1 {
		t.Errorf("a 404 consumed a turn: %d pending", srv.Pending())
	}
	// gemini-2.5-flash-lite is not retired: it answers.
	if _, err := c.Models.GenerateContent(t.Context(), "gemini-2.5-flash-lite", userText("hi"), noContinuation()); err != nil {
		t.Errorf("gemini-2.5-flash-lite: %v", err)
	}
}
