package openai

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/reprise-dev/reprise/agent/gemini"
)

// failure is one failed attempt, classified.
type failure struct {
	err    error
	status int
	code   string // the server's error code or type, or the status name
	msg    string // without the key
	retry  bool
	who    string // "OpenAI", or "the server at localhost:11434"
}

var retryable = map[int]bool{408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 504: true}

var statusNames = map[int]string{400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
	408: "timeout", 409: "conflict", 422: "unprocessable", 429: "rate_limited", 500: "server_error",
	502: "bad_gateway", 503: "unavailable", 504: "timeout"}

func (c *Client) classify(err error) failure {
	who := "the server at " + host(c.cfg.BaseURL)
	if host(c.cfg.BaseURL) == "api.openai.com" {
		who = "OpenAI"
	}
	f := failure{err: err, who: who}
	var api *oai.Error
	switch {
	case errors.Is(err, ErrStreamCut):
		f.msg, f.retry = ErrStreamCut.Error(), true
	case errors.As(err, &api):
		f.status, f.code = api.StatusCode, cmpOr(api.Code, cmpOr(api.Type, statusNames[api.StatusCode]))
		f.msg = cmpOr(api.Message, strings.TrimSpace(api.RawJSON()))
		f.retry = retryable[api.StatusCode]
	default:
		f.msg, f.retry = err.Error(), gemini.Transient(err) // the same network, the same failures
	}
	f.msg = clip(redact(f.msg, c.cfg.APIKey))
	return f
}

func host(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	return u.Host
}

func (f failure) detail() string {
	if f.status != 0 {
		return fmt.Sprintf("%d %s: %s", f.status, f.code, f.msg)
	}
	return f.msg
}

func (f failure) attemptError(attempt int) *gemini.Error {
	return &gemini.Error{Status: f.status, Code: f.code, Attempts: attempt, Message: f.detail(), Err: f.err}
}

// giveUp words the last failure for the user: what happened first, what to do last.
func (f failure) giveUp(attempts int, keyName string) *gemini.Error {
	e := &gemini.Error{Status: f.status, Code: f.code, Attempts: attempts, Err: f.err}
	api := fmt.Sprintf("(%d %s, %s)", f.status, f.code, plural(attempts, "attempt"))
	msg := strings.TrimSuffix(strings.TrimSpace(f.msg), ".")
	switch {
	case errors.Is(f.err, ErrStreamCut):
		e.Message = fmt.Sprintf("%s (%s)", ErrStreamCut, plural(attempts, "attempt"))
	case f.status == 0 && f.retry:
		e.Message = fmt.Sprintf("%s cannot be reached after %s: %s; is it running?", f.who, plural(attempts, "attempt"), msg)
	case f.status == 401 || f.status == 403:
		e.Message = fmt.Sprintf("%s refused the API key (%d %s): %s; check %s", f.who, f.status, f.code, msg, keyName)
	case f.status == 429 && strings.Contains(strings.ToLower(msg), "quota"):
		e.Message = fmt.Sprintf("the quota of this API key at %s is used up %s: %s", f.who, api, msg)
	case f.status == 429:
		e.Message = fmt.Sprintf("%s is rate-limiting this key %s: %s; try again in a minute", f.who, api, msg)
	case f.retry:
		e.Message = fmt.Sprintf("%s failed %s: %s; try again", f.who, api, msg)
	case f.status == 404:
		e.Message = fmt.Sprintf("%s does not serve this model (%d %s): %s; reprise models lists what it serves", f.who, f.status, f.code, msg)
	case f.status == 400 && toolsUnsupported(msg):
		e.Message = fmt.Sprintf("this model cannot call tools (%d %s): %s; Reprise needs a model with tool calling", f.status, f.code, msg)
	case f.status != 0:
		e.Message = fmt.Sprintf("%s rejected the request (%d %s): %s", f.who, f.status, f.code, msg)
	default:
		e.Message = fmt.Sprintf("the model request to %s failed: %s", f.who, msg)
	}
	return e
}

// toolsUnsupported recognises the servers' ways of saying a model has no tool calling (Ollama:
// "does not support tools"; vLLM: "auto" tool choice requires --enable-auto-tool-choice).
func toolsUnsupported(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "does not support tools") || strings.Contains(m, "tool choice requires") ||
		strings.Contains(m, "tools are not supported") || strings.Contains(m, "tool calling is not supported")
}

func redact(s, key string) string {
	if key == "" || key == "none" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

func clip(s string) string {
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
