package gemini

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// googleDomains are where the Gemini API and Vertex AI live; a base URL on one of them, over
// https, sends the key nowhere it would not go anyway.
var googleDomains = []string{"googleapis.com", "google.com"}

// CheckBaseURL says whether a base URL (GOOGLE_GEMINI_BASE_URL) would send the API key, or
// Vertex AI's credentials, somewhere other than Google: it returns "" for the default (empty), for
// https to *.googleapis.com or *.google.com, and for http or https to loopback (127.0.0.0/8, ::1,
// localhost: a local proxy, or the fake server of tests); otherwise a warning to show before the
// first request. The URL is judged by the host net/http will dial (url.Parse's Hostname), so
// userinfo tricks such as https://generativelanguage.googleapis.com@evil.com are judged by
// evil.com. The endpoint is the user's choice, so it is warned about, not refused.
func CheckBaseURL(u string) (warning string) {
	if u == "" {
		return ""
	}
	parsed, err := url.Parse(u)
	if err != nil {
		// url.Error repeats the URL, which may hold a proxy's password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Sprintf("the model's base URL is not a valid URL (%v)", err)
	}
	host := strings.TrimSuffix(strings.ToLower(parsed.Hostname()), ".")
	if host == "" || (parsed.Scheme != "http" && parsed.Scheme != "https") {
		return fmt.Sprintf("the model's base URL %q is not an http(s) URL with a host", parsed.Redacted())
	}
	if loopback(host) || (parsed.Scheme == "https" && google(host)) {
		return ""
	}
	return fmt.Sprintf("the model's base URL %q is not https on a Google host (*.googleapis.com, *.google.com) nor loopback: the API key will be sent to %s", parsed.Redacted(), host)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	host, _, _ = strings.Cut(host, "%") // an IPv6 zone
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func google(host string) bool {
	for _, d := range googleDomains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}
