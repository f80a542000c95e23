package gemini

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"
)

// ErrStreamCut is the cause of an *Error when the response stream ended without a finish reason:
// the connection was closed between two events, and the reply is incomplete.
var ErrStreamCut = errors.New("the model's stream ended before the response finished")

// Error is a failed model call worded for the user: what happened and, when the user can fix
// it, what to do. Err keeps the cause (a genai.APIError, a transport error, ErrStreamCut) for
// errors.As and errors.Is.
type Error struct {
	Status   int    // HTTP status; 0 when none came (transport failure, cut stream, blocked prompt)
	Code     string // the API's status name (RESOURCE_EXHAUSTED...) or block reason
	Attempts int    // attempts made before giving up
	Message  string // the whole message; never contains the API key
	Err      error
}

// ModelNotFound tells whether the call failed because the model does not exist for this key
// (404): a retired model, or a name the API does not serve. Retrying cannot help.
func (e *Error) ModelNotFound() bool { return e.Status == 404 }

// Shed tells whether the call failed for want of capacity: 429 RESOURCE_EXHAUSTED ("No capacity
// available for model … on the server") or 503 UNAVAILABLE ("The model is overloaded"), what
// Gemini answers when it sheds a request. On the Flex tier, whose capacity is sheddable, it is
// the expected failure.
func (e *Error) Shed() bool { return e.Status == 429 || e.Status == 503 }

// IsShed tells whether err is an *Error for a shed request.
func IsShed(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Shed()
}

// IsModelNotFound tells whether err is an *Error for a missing model.
func IsModelNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.ModelNotFound()
}

// Error returns Message, which is written to be shown to the user as is.
func (e *Error) Error() string { return e.Message }

// Unwrap exposes the cause, so errors.As finds the genai.APIError and errors.Is ErrStreamCut.
func (e *Error) Unwrap() error { return e.Err }

// retryableStatus are the statuses worth another attempt: timeouts, quota, server trouble.
var retryableStatus = map[int]bool{408: true, 429: true, 500: true, 502: true, 503: true, 504: true}

// failure is one failed attempt, classified.
type failure struct {
	err    error  // as the SDK returned it, or ErrStreamCut
	status int    // HTTP status, 0 if none
	code   string // API status name
	msg    string // the API's message or the error's text, without the key
	retry  bool
	// hint is RetryInfo.retryDelay from the error body, or 0.
	hint time.Duration
	// final, when set, is already worded (a blocked prompt) and is returned as is.
	final *Error
}

// classify sorts err (the error of one attempt, ctx not done) into retryable or not, and pulls
// out what the messages need. key is scrubbed from any text.
func classify(err error, key string) failure {
	var done *Error
	if errors.As(err, &done) {
		return failure{err: err, final: done}
	}
	if errors.Is(err, ErrStreamCut) {
		return failure{err: err, msg: ErrStreamCut.Error(), retry: true}
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		f := failure{
			err:    err,
			status: apiErr.Code,
			code:   statusCode(apiErr),
			msg:    redact(apiErr.Message, key),
			retry:  retryableStatus[apiErr.Code],
		}
		f.hint, _ = retryInfoDelay(apiErr.Details)
		return f
	}
	return failure{err: err, msg: clip(redact(err.Error(), key)), retry: Transient(err)}
}

// maxDetail bounds the text of an error that is not the API's: the SDK's decoding errors quote
// the whole response.
const maxDetail = 300

func clip(s string) string {
	r := []rune(s)
	if len(r) <= maxDetail {
		return s
	}
	return string(r[:maxDetail]) + "…"
}

// statusCode is the API's status name; a plain-text error body leaves Status as the HTTP status
// line ("503 Service Unavailable"), which is replaced by the canonical name.
func statusCode(e genai.APIError) string {
	if e.Status != "" && !strings.ContainsAny(e.Status[:1], "0123456789") {
		return e.Status
	}
	if s, ok := statusNames[e.Code]; ok {
		return s
	}
	return "UNKNOWN"
}

var statusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	408: "DEADLINE_EXCEEDED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE",
	503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

// detail is the failure in one line: "503 UNAVAILABLE: The model is overloaded." or the error.
func (f failure) detail() string {
	if f.final != nil {
		return f.final.Message
	}
	if f.status != 0 {
		return fmt.Sprintf("%d %s: %s", f.status, f.code, f.msg)
	}
	return f.msg
}

// attemptError is the failure of one attempt, as reported in Retry.Err.
func (f failure) attemptError(attempt int) *Error {
	return &Error{Status: f.status, Code: f.code, Attempts: attempt, Message: f.detail(), Err: f.err}
}

// giveUp is the error Generate ends with after attempts attempts, the last one being f.
func (f failure) giveUp(attempts int) *Error {
	if f.final != nil {
		e := *f.final
		e.Attempts = attempts
		return &e
	}
	e := &Error{Status: f.status, Code: f.code, Attempts: attempts, Err: f.err}
	// What happened in plain words first, what to do last; the API's status in between.
	api := fmt.Sprintf("(%d %s, %s)", f.status, f.code, plural(attempts, "attempt"))
	f.msg = strings.TrimSuffix(strings.TrimSpace(f.msg), ".")
	switch {
	case f.retry && errors.Is(f.err, ErrStreamCut):
		e.Message = fmt.Sprintf("%s (%s)", ErrStreamCut, plural(attempts, "attempt"))
	case f.retry && f.status == 0:
		e.Message = fmt.Sprintf("model unavailable after %s: %s", plural(attempts, "attempt"), f.detail())
	case f.status == 429 && !overloaded(f.msg):
		e.Message = fmt.Sprintf("Gemini's quota for this API key is used up %s: %s; wait for it to refill, or raise the key's limits", api, f.msg)
	case f.status == 429 || f.status == 503:
		e.Message = fmt.Sprintf("Gemini is overloaded %s: %s; try again in a minute", api, f.msg)
	case f.retry:
		e.Message = fmt.Sprintf("Gemini failed %s: %s; try again", api, f.msg)
	case f.status == 400 && strings.Contains(f.msg, "API key"):
		e.Message = fmt.Sprintf("Gemini refused the API key (%d %s): %s; check GEMINI_API_KEY", f.status, f.code, f.msg)
	case f.status == 400:
		e.Message = fmt.Sprintf("Gemini rejected the request (%d %s): %s", f.status, f.code, f.msg)
	case f.status == 401 || f.status == 403:
		e.Message = fmt.Sprintf("Gemini refused the API key (%d %s): %s; check GEMINI_API_KEY", f.status, f.code, f.msg)
	case f.status != 0:
		e.Message = fmt.Sprintf("the model request failed (%d %s): %s", f.status, f.code, f.msg)
	default:
		e.Message = "the model request failed: " + f.msg
	}
	return e
}

// overloaded tells a 429 for want of capacity ("No capacity available for model … on the
// server") from one for a spent quota ("You exceeded your current quota").
func overloaded(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "capacity") || strings.Contains(m, "overloaded")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// blocked is the error for a prompt the API refused to answer (promptFeedback.blockReason):
// retrying the same prompt would be refused again.
func blocked(fb *genai.GenerateContentResponsePromptFeedback) *Error {
	msg := fb.BlockReasonMessage
	if msg == "" {
		msg = "no reason given"
	}
	return &Error{
		Code:    string(fb.BlockReason),
		Message: fmt.Sprintf("the model blocked the prompt (%s): %s", fb.BlockReason, msg),
	}
}

// redact removes the API key from text that came from the SDK or the server, which sometimes
// echo the whole client configuration.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// scrub is redact for an error, keeping it unchanged (and unwrappable) when it has no key in it.
func scrub(err error, key string) error {
	if key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return errors.New(redact(err.Error(), key))
}
