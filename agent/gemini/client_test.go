package gemini

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{
			name: "nothing set",
			env:  nil,
			want: Config{},
		},
		{
			name: "GEMINI_API_KEY wins over GOOGLE_API_KEY",
			env:  map[string]string{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "o", "GOOGLE_GEMINI_BASE_URL": "http://proxy"},
			want: Config{APIKey: "g", BaseURL: "http://proxy"},
		},
		{
			name: "GOOGLE_API_KEY alone",
			env:  map[string]string{"GOOGLE_API_KEY": "o"},
			want: Config{APIKey: "o"},
		},
		{
			name: "Vertex",
			env:  map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "True", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "europe-west1"},
			want: Config{Vertex: true, Project: "p", Location: "europe-west1"},
		},
		{
			name: "Vertex base URL",
			env:  map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_VERTEX_BASE_URL": "https://proxy.example"},
			want: Config{Vertex: true, BaseURL: "https://proxy.example"},
		},
		{
			name: "GOOGLE_GEMINI_BASE_URL wins over the Vertex one, as in the SDK",
			env:  map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_VERTEX_BASE_URL": "https://v.example", "GOOGLE_GEMINI_BASE_URL": "https://g.example"},
			want: Config{Vertex: true, BaseURL: "https://g.example"},
		},
		{
			name: "Vertex base URL ignored without Vertex",
			env:  map[string]string{"GOOGLE_VERTEX_BASE_URL": "https://v.example"},
			want: Config{},
		},
		{
			name: "Vertex switched off",
			env:  map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "0"},
			want: Config{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ConfigFromEnv(func(k string) string { return tt.env[k] })
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("config (-got +want):\n%s", diff)
			}
		})
	}
}

func TestNew(t *testing.T) {
	_, err := New(t.Context(), Config{Model: "gemini-3.8-flash"})
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("without a key: err = %v, want ErrNoAPIKey naming GEMINI_API_KEY", err)
	}

	c, err := New(t.Context(), Config{APIKey: testKey})
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	got := []any{c.Model(), c.maxAttempts, c.baseDelay, c.maxDelay}
	want := []any{catalog.Builtin().DefaultModel(), DefaultMaxAttempts, DefaultBaseDelay, DefaultMaxDelay}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("defaults (-got +want):\n%s", diff)
	}

	// Vertex needs no key; an HTTP client of the caller's stands in for credentials, so this
	// stays offline.
	if _, err := New(t.Context(), Config{Vertex: true, Project: "p", Location: "us-central1", HTTPClient: http.DefaultClient}); err != nil {
		t.Errorf("Vertex without a key: %v", err)
	}
}

func TestInputTokenLimit(t *testing.T) {
	srv := geminitest.New(geminitest.Script{InputTokenLimit: 20000})
	defer srv.Close()
	got, err := newClient(t, srv).InputTokenLimit(t.Context())
	if got != 20000 || err != nil {
		t.Errorf("limit = %d, %v; want 20000 from the script", got, err)
	}
	if r := srv.Requests()[0]; r.Method != http.MethodGet || r.Path != "/v1beta/models/gemini-3.8-flash" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}

	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"404", 404, `{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}`, "model gemini-3.8-flash is not available (404 NOT_FOUND: models/x is not found): reprise models lists the models this key can use"},
		{"500", 500, `{"error":{"code":500,"message":"oops","status":"INTERNAL"}}`, "Gemini failed (500 INTERNAL, 1 attempt): oops; try again"},
		{"plain-text 503", 503, `overloaded`, "Gemini is overloaded (503 UNAVAILABLE, 1 attempt): overloaded; try again in a minute"},
		{"limit 0", 200, `{"name":"models/gemini-3.8-flash"}`, "the API reported 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer api.Close()
			c, err := New(t.Context(), Config{APIKey: testKey, BaseURL: api.URL})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.InputTokenLimit(t.Context())
			if want := catalog.Builtin().InputLimit(c.Model()); got != want || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("limit = %d, err = %v; want the catalogue's %d and an error containing %q", got, err, want, tt.want)
			}
		})
	}
}
