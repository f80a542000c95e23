package gemini

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// TestListModels: every page of models.list is read through the real client; models that cannot
// generate content are left out, a model the catalogue lacks is kept.
func TestListModels(t *testing.T) {
	ids := []string{"gemini-3.8-flash", "text-embedding-004", "gemini-9-experimental"}
	for i := range 60 { // past the fake's page of 50
		ids = append(ids, "tuned-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	srv := geminitest.New(geminitest.Script{Models: ids})
	defer srv.Close()
	got, err := newClient(t, srv).ListModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids)-1 {
		t.Fatalf("%d models, want %d", len(got), len(ids)-1)
	}
	want := []ListedModel{
		{ID: "gemini-3.8-flash", DisplayName: "Gemini 3.8 Flash", InputTokenLimit: 1048576, OutputTokenLimit: 65536},
		{ID: "gemini-9-experimental", DisplayName: "gemini-9-experimental", InputTokenLimit: 1048576, OutputTokenLimit: 65536},
	}
	if diff := cmp.Diff(got[:2], want); diff != "" {
		t.Errorf("models (-got +want):\n%s", diff)
	}
	pages := 0
	for _, r := range srv.Requests() {
		if r.Path == "/v1beta/models" {
			pages++
		}
	}
	if pages != 2 {
		t.Errorf("%d pages read, want 2", pages)
	}
}
