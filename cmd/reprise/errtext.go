package main

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
)

var (
	// dialFailed is a refused or timed-out connection in a Go error chain.
	dialFailed = regexp.MustCompile(`dial (?:tcp|udp)[46]? ([^ ]+?): (?:connect: )?([^:]+)$`)
	// lookupFailed is a host name that did not resolve.
	lookupFailed = regexp.MustCompile(`lookup ([^ :]+)(?: on [^ ]+)?: ([^:]+)$`)
	// requestPrefix is the method and URL net/http puts before the cause, and genai's wrapping.
	requestPrefix = regexp.MustCompile(`(?:doRequest: )?(?:error sending request: )?(?:Get|Post|Put|Delete) "[^"]*": `)
)

// shortError is an error text for a terminal line: the cause a user acts on, without the chain of
// Go functions and the full URL above it. "model unavailable after 5 attempts: doRequest: error
// sending request: Post "http://…": dial tcp 127.0.0.1:9: connect: connection refused" becomes
// "model unavailable after 5 attempts: cannot reach 127.0.0.1:9 (connection refused)".
func shortError(s string) string {
	s = strings.TrimSpace(s)
	if m := dialFailed.FindStringSubmatchIndex(s); m != nil {
		addr, why := s[m[2]:m[3]], s[m[4]:m[5]]
		s = cutRequest(s[:m[0]]) + "cannot reach " + addr + " (" + why + ")"
	} else if m := lookupFailed.FindStringSubmatchIndex(s); m != nil {
		host, why := s[m[2]:m[3]], s[m[4]:m[5]]
		s = cutRequest(s[:m[0]]) + "cannot find the host " + host + " (" + why + ")"
	} else {
		s = requestPrefix.ReplaceAllString(s, "")
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// cutRequest removes from the head of an error text the request that failed, keeping what the
// caller said about it ("model unavailable after 5 attempts: ").
func cutRequest(head string) string {
	if loc := requestPrefix.FindStringIndex(head); loc != nil {
		head = head[:loc[0]]
	}
	return head
}

// unreachable says why no connection to the model's endpoint could be made (a refused connection,
// a host that does not resolve, a connection that timed out), or "" when err is nil or another
// failure: the request reached a server.
func unreachable(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("cannot find the host %s (%s)", dns.Name, dns.Err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return shortError(op.Error())
	}
	return ""
}

// shortErr is an error shown as shortError words it, still matching what it wraps.
type shortErr struct{ err error }

func (e shortErr) Error() string { return shortError(e.err.Error()) }
func (e shortErr) Unwrap() error { return e.err }
