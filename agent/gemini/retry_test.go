package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{1, 0.999, 999500 * time.Microsecond},
		{2, 0, time.Second},
		{3, 0.5, 3 * time.Second},
		{5, 0, 8 * time.Second},
		{6, 0.999, 29985 * time.Millisecond}, // 32s capped at 30s
		{60, 0, 15 * time.Second},            // no overflow
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt %d jitter %v", tt.attempt, tt.jitter), func(t *testing.T) {
			got := backoff(tt.attempt, time.Second, 30*time.Second, tt.jitter)
			if got != tt.want {
				t.Errorf("backoff = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetryInfoDelay(t *testing.T) {
	retryInfo := func(v any) map[string]any {
		return map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": v}
	}
	tests := []struct {
		name    string
		details []map[string]any
		want    time.Duration
		ok      bool
	}{
		{"seconds", []map[string]any{retryInfo("30s")}, 30 * time.Second, true},
		{"fraction", []map[string]any{retryInfo("1.5s")}, 1500 * time.Millisecond, true},
		{"after other details", []map[string]any{{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}, retryInfo("2s")}, 2 * time.Second, true},
		{"malformed", []map[string]any{retryInfo("soon")}, 0, false},
		{"not a string", []map[string]any{retryInfo(3)}, 0, false},
		{"none", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryInfoDelay(tt.details)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryInfoDelay = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	type summary struct {
		Retry  bool
		Status int
		Code   string
		Detail string
	}
	tests := []struct {
		name string
		err  error
		want summary
	}{
		{"429", genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "quota"}, summary{true, 429, "RESOURCE_EXHAUSTED", "429 RESOURCE_EXHAUSTED: quota"}},
		{"wrapped 504", fmt.Errorf("call: %w", genai.APIError{Code: 504, Message: "slow"}), summary{true, 504, "DEADLINE_EXCEEDED", "504 DEADLINE_EXCEEDED: slow"}},
		{"plain-text status line", genai.APIError{Code: 502, Status: "502 Bad Gateway", Message: "<html>"}, summary{true, 502, "UNAVAILABLE", "502 UNAVAILABLE: <html>"}},
		{"404", genai.APIError{Code: 404, Status: "NOT_FOUND", Message: "no model"}, summary{false, 404, "NOT_FOUND", "404 NOT_FOUND: no model"}},
		{"key in message", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "key " + testKey}, summary{false, 400, "INVALID_ARGUMENT", "400 INVALID_ARGUMENT: key [redacted]"}},
		{"cut stream", ErrStreamCut, summary{true, 0, "", ErrStreamCut.Error()}},
		{"connection refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, summary{true, 0, "", `Post "http://x": dial: connection refused`}},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), summary{true, 0, "", "read: unexpected EOF"}},
		{"timeout", &url.Error{Op: "Post", URL: "http://x", Err: timeoutErr{}}, summary{true, 0, "", `Post "http://x": timed out`}},
		{"bad scheme", &url.Error{Op: "Post", URL: "x", Err: errors.New(`unsupported protocol scheme ""`)}, summary{false, 0, "", `Post "x": unsupported protocol scheme ""`}},
		{"undecodable", errors.New("mapToStruct: error unmarshalling input"), summary{false, 0, "", "mapToStruct: error unmarshalling input"}},
		{"truncated body", fmt.Errorf("deserializeUnaryResponse: %w", json.Unmarshal([]byte(`{"cand`), new(any))), summary{true, 0, "", "deserializeUnaryResponse: unexpected end of JSON input"}},
		{"long text clipped", errors.New(strings.Repeat("x", 400)), summary{false, 0, "", strings.Repeat("x", 300) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := classify(tt.err, testKey)
			got := summary{f.retry, f.status, f.code, f.detail()}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("classify (-got +want):\n%s", diff)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "timed out" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestScrub(t *testing.T) {
	sdkErr := fmt.Errorf("project and location are not supported. ClientConfig: {APIKey:%s}", testKey)
	got := scrub(sdkErr, testKey).Error()
	if want := "project and location are not supported. ClientConfig: {APIKey:[redacted]}"; got != want {
		t.Errorf("scrub = %q, want %q", got, want)
	}
	clean := fmt.Errorf("wrapped: %w", context.Canceled)
	if !errors.Is(scrub(clean, testKey), context.Canceled) {
		t.Errorf("scrub lost the chain of an error without the key")
	}
}

func TestSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep = %v, want context.Canceled", err)
	}
	if err := sleep(t.Context(), 0); err != nil {
		t.Errorf("sleep(0) = %v", err)
	}
}
