package lsp

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// TestEditorDefaultModel holds every copy of the default model, in the editors' settings and the
// documents, to the model catalogue's default: a retired model must not linger as a default
// anywhere (issue 21).
func TestEditorDefaultModel(t *testing.T) {
	want := catalog.Builtin().DefaultModel()
	if m, _ := catalog.Builtin().Lookup(want); m.Status != catalog.GA {
		t.Fatalf("the catalogue's default %s is not GA", want)
	}
	readJSON := func(path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v
	}
	at := func(v any, keys ...string) any {
		for _, k := range keys {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v
	}
	got := map[string]any{
		packageJSON:                            at(readJSON(packageJSON), "contributes", "configuration", "properties", "reprise.model", "default"),
		"jetbrains settings.json":              at(readJSON("../editors/jetbrains/settings.json"), ConfigSection, "model"),
		"jetbrains initializationOptions.json": at(readJSON("../editors/jetbrains/initializationOptions.json"), "model"),
		"jetbrains settings.schema.json":       at(readJSON("../editors/jetbrains/settings.schema.json"), "properties", ConfigSection, "properties", "model", "default"),
	}
	for name, v := range got {
		if v != want {
			t.Errorf("%s: default model %v, want the catalogue's %s", name, v, want)
		}
	}
	// Documents: every "model = …", "| `--model M` | `…` |" or "`model` | string | `…`" names it.
	docs := map[string]*regexp.Regexp{
		"../editors/nvim/doc/reprise.txt": regexp.MustCompile(`model = '([^']+)'`),
		"../README.md":                    regexp.MustCompile("\\| `--model M` \\| `([^`]+)` \\|"),
		"PROTOCOL.md":                     regexp.MustCompile("\\| `model` \\| string \\| `([^`]+)`"),
	}
	for path, re := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ms := re.FindAllStringSubmatch(string(b), -1)
		if len(ms) == 0 {
			t.Errorf("%s: no default model found (%s)", path, re)
		}
		for _, m := range ms {
			if m[1] != want {
				t.Errorf("%s: default model %s, want the catalogue's %s", path, m[1], want)
			}
		}
	}
	// No setting or document offers a retired model as the one to use.
	for _, path := range []string{packageJSON, "../editors/jetbrains/settings.json", "../editors/jetbrains/initializationOptions.json",
		"../editors/jetbrains/settings.schema.json", "../editors/nvim/doc/reprise.txt", "PROTOCOL.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range catalog.Builtin().Models() {
			if m.RetiredAt(catalog.Builtin().AsOf()) && strings.Contains(string(b), `"`+m.ID+`"`) {
				t.Errorf("%s names the retired %s", path, m.ID)
			}
		}
	}
}
