package gemini

import (
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	tests := []struct {
		url      string
		wantWarn string // a substring of the warning; "" = no warning
	}{
		{"", ""},
		{"https://generativelanguage.googleapis.com", ""},
		{"https://generativelanguage.googleapis.com/", ""},
		{"https://GenerativeLanguage.GoogleAPIs.com.:443/v1beta", ""},
		{"https://europe-west1-aiplatform.googleapis.com", ""},
		{"https://googleapis.com", ""},
		{"https://proxy.corp.google.com", ""},
		{"http://127.0.0.1:8080", ""},
		{"https://127.0.0.1:8443", ""},
		{"http://127.0.0.2", ""},
		{"http://localhost:9000/", ""},
		{"http://LOCALHOST", ""},
		{"http://[::1]:1234", ""},
		{"http://[::1%25lo]:1234", ""},
		{"http://[::ffff:127.0.0.1]", ""},

		{"http://evil.com", "will be sent to evil.com"},
		{"http://192.168.1.10:8080", "will be sent to 192.168.1.10"},
		{"http://0.0.0.0:8080", "will be sent to 0.0.0.0"},
		{"https://evil.com", "will be sent to evil.com"},
		{"http://generativelanguage.googleapis.com", "not https on a Google host"},
		{"https://x.googleapis.com.evil.com", "will be sent to x.googleapis.com.evil.com"},
		{"https://evilgoogleapis.com", "will be sent to evilgoogleapis.com"},
		{"https://generativelanguage.googleapis.com@evil.com", "will be sent to evil.com"},
		{"https://generativelanguage.googleapis.com:443@evil.com/", "will be sent to evil.com"},
		{"https://user:hunter2@evil.com", `"https://user:xxxxx@evil.com"`},
		{"https://localhost.evil.com", "will be sent to localhost.evil.com"},
		{"https://127.0.0.1.nip.io", "will be sent to 127.0.0.1.nip.io"},
		{"http://[::2]", "will be sent to ::2"},

		{"generativelanguage.googleapis.com", "not an http(s) URL with a host"},
		{"ftp://generativelanguage.googleapis.com", "not an http(s) URL with a host"},
		{"https://", "not an http(s) URL with a host"},
		{"https://evil.com\\@generativelanguage.googleapis.com", "not a valid URL"},
		{"https://[::1", "not a valid URL"},
		{"http://a b.com", "not a valid URL"},
		{"https://user:hunter2@evil.com/%zz", "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got := CheckBaseURL(tt.url)
			switch {
			case tt.wantWarn == "" && got != "":
				t.Errorf("CheckBaseURL(%q) = %q, want no warning", tt.url, got)
			case tt.wantWarn != "" && !strings.Contains(got, tt.wantWarn):
				t.Errorf("CheckBaseURL(%q) = %q, want a warning containing %q", tt.url, got, tt.wantWarn)
			}
			if strings.Contains(got, "hunter2") {
				t.Errorf("CheckBaseURL(%q) = %q: the password is shown", tt.url, got)
			}
		})
	}
}
