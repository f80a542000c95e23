package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// Transient reports whether err, which is not an API error, looks like the network failing
// rather than the request being wrong: a reset or refused connection, a connection closed
// mid-response, a timeout, an HTTP/2 stream reset. A malformed URL or a response of the wrong
// shape is not retried: it would fail the same way every time.
func Transient(err error) bool {
	for _, target := range []error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.ECONNREFUSED,
		syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT} {
		if errors.Is(err, target) {
			return true
		}
	}
	// A body cut short mid-message: the SDK reports it as malformed JSON. (A well-formed
	// message of the wrong shape is a json.UnmarshalTypeError and is not retried.)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTemporary || dns.IsTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// net/http's bundled HTTP/2 reports stream resets with unexported types.
	return strings.Contains(err.Error(), "http2: ") || strings.Contains(err.Error(), "stream error: ")
}

// retryInfoDelay reads google.rpc.RetryInfo.retryDelay from an API error's details, the wait
// the server asks for on 429 and 503 (the SDK ignores it). A duration is JSON-encoded as a
// string of seconds, like "30s" or "1.5s".
func retryInfoDelay(details []map[string]any) (time.Duration, bool) {
	for _, d := range details {
		typ, _ := d["@type"].(string)
		if !strings.HasSuffix(typ, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if delay, err := time.ParseDuration(s); err == nil && delay >= 0 {
			return delay, true
		}
	}
	return 0, false
}

// backoff is the wait after the failed attempt number attempt (1-based): base doubled per
// attempt, capped at max, with "equal jitter" (half fixed, half random) so that clients failing
// together do not retry together. jitter is in [0, 1).
func backoff(attempt int, base, max time.Duration, jitter float64) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return d/2 + time.Duration(jitter*float64(d/2))
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
