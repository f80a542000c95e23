// Package jetbrains_test checks the LSP4IJ user-defined language server template in this folder:
// the JSON files parse, use only the keys LSP4IJ documents, name exactly the settings of
// lsp/PROTOCOL.md, and are accepted by the real server. JetBrains itself cannot run in CI.
package jetbrains_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/lsp"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// The keys LSP4IJ reads from a template folder, from its documentation and the code that loads
// templates (redhat-developer/lsp4ij, main, 2025):
//
//   - docs/UserDefinedLanguageServer.md, "Custom template structure": template.json (required),
//     settings.json, initializationOptions.json, and README.md shown by the help icon.
//   - docs/UserDefinedLanguageServerTemplate.md, "Template descriptor": id, name,
//     programArgs {default, windows}, fileTypeMappings [{fileType {name, patterns}, languageId}];
//     the file list adds clientSettings.json, installer.json and settings.schema.json.
//   - src/main/java/com/redhat/devtools/lsp4ij/templates/ServerTemplate.java and
//     ServerTemplateJsonDeserializer.java: url, dev, env, workingDir, languageMappings
//     [{language, languageId}], and the OS keys of programArgs: windows, mac, unix, default.
var (
	templateFiles = []string{
		"template.json", "settings.json", "settings.schema.json", "initializationOptions.json",
		"clientSettings.json", "installer.json", "README.md",
	}
	templateKeys    = []string{"id", "name", "url", "dev", "programArgs", "fileTypeMappings", "languageMappings", "env", "workingDir"}
	programArgsKeys = []string{"default", "windows", "mac", "unix"}
	fileTypeMapKeys = []string{"fileType", "languageId"}
	fileTypeKeys    = []string{"name", "patterns"}
	languageMapKeys = []string{"language", "languageId"}
)

func readJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON value", name)
	}
	return v
}

// onlyKeys reports keys of obj that are not in allowed.
func onlyKeys(t *testing.T, where string, obj any, allowed []string) {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Errorf("%s: want an object, got %T", where, obj)
		return
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: key %q is not one LSP4IJ reads (%s)", where, k, strings.Join(allowed, ", "))
		}
	}
}

func TestFolderHoldsTemplateFilesOnly(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		if !slices.Contains(templateFiles, e.Name()) {
			t.Errorf("%s is not a file of an LSP4IJ template (%s)", e.Name(), strings.Join(templateFiles, ", "))
		}
	}
	for _, required := range []string{"template.json", "README.md"} {
		if _, err := os.Stat(required); err != nil {
			t.Error(err)
		}
	}
}

func TestTemplateDescriptor(t *testing.T) {
	tmpl := readJSON(t, "template.json")
	onlyKeys(t, "template.json", tmpl, templateKeys)
	if tmpl["id"] != lsp.ServerName || tmpl["name"] != "Reprise" {
		t.Errorf("id %v, name %v", tmpl["id"], tmpl["name"])
	}
	onlyKeys(t, "programArgs", tmpl["programArgs"], programArgsKeys)
	args, _ := tmpl["programArgs"].(map[string]any)
	if args["default"] != lsp.ServerName+" serve --stdio" {
		t.Errorf("programArgs.default = %v, want %q", args["default"], lsp.ServerName+" serve --stdio")
	}
	mappings, _ := tmpl["fileTypeMappings"].([]any)
	if len(mappings) == 0 {
		t.Fatal("no fileTypeMappings: the server would start for no file")
	}
	var patterns []any
	for i, m := range mappings {
		where := fmt.Sprintf("fileTypeMappings[%d]", i)
		onlyKeys(t, where, m, fileTypeMapKeys)
		ft := m.(map[string]any)["fileType"]
		onlyKeys(t, where+".fileType", ft, fileTypeKeys)
		if ps, ok := ft.(map[string]any)["patterns"].([]any); ok {
			patterns = append(patterns, ps...)
		}
		// Older LSP4IJ releases drop a mapping without languageId.
		if id, _ := m.(map[string]any)["languageId"].(string); id == "" {
			t.Errorf("%s: no languageId", where)
		}
	}
	if !slices.Contains(patterns, any("*")) {
		t.Errorf("file name patterns %v: want \"*\", every file", patterns)
	}
	if lm, ok := tmpl["languageMappings"].([]any); ok {
		for i, m := range lm {
			onlyKeys(t, fmt.Sprintf("languageMappings[%d]", i), m, languageMapKeys)
		}
	}
}

// protocolSettings reads the names in the Settings table of PROTOCOL.md.
func protocolSettings(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../lsp/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Settings\n")
	if !ok {
		t.Fatal("PROTOCOL.md has no Settings section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)` \\|").FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatal("no settings found in PROTOCOL.md")
	}
	sort.Strings(names)
	return names
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func TestSettingsNamesMatchProtocol(t *testing.T) {
	want := protocolSettings(t)
	// The server's own names, so PROTOCOL.md and the code cannot drift apart either.
	var code []string
	st := reflect.TypeFor[lsp.Settings]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		code = append(code, name)
	}
	sort.Strings(code)
	settings := readJSON(t, "settings.json")
	if keys := sortedKeys(settings); !slices.Equal(keys, []string{lsp.ConfigSection}) {
		t.Errorf("settings.json keys %v, want only the section %q", keys, lsp.ConfigSection)
	}
	section, _ := settings[lsp.ConfigSection].(map[string]any)
	schema := readJSON(t, "settings.schema.json")
	schemaSection := schema["properties"].(map[string]any)[lsp.ConfigSection].(map[string]any)
	// settings.json is answered to workspace/configuration, where the server ignores the
	// protected settings: they are in initializationOptions.json only.
	unprotected := slices.DeleteFunc(slices.Clone(want), func(k string) bool { return slices.Contains(lsp.ProtectedSettings, k) })
	for _, tt := range []struct {
		name      string
		got, want []string
	}{
		{"lsp.Settings", code, want},
		{"initializationOptions.json", sortedKeys(readJSON(t, "initializationOptions.json")), want},
		{"settings.json", sortedKeys(section), unprotected},
		{"settings.schema.json (properties)", sortedKeys(schemaSection["properties"].(map[string]any)), want},
	} {
		if diff := cmp.Diff(tt.got, tt.want); diff != "" {
			t.Errorf("%s names vs PROTOCOL.md (-got +want):\n%s", tt.name, diff)
		}
	}
	// Both files hold the same values: the server's defaults, so pulling settings.json after
	// initialize changes nothing until the user edits it.
	init := readJSON(t, "initializationOptions.json")
	for _, k := range lsp.ProtectedSettings {
		delete(init, k)
	}
	if diff := cmp.Diff(section, init); diff != "" {
		t.Errorf("settings.json vs initializationOptions.json (-settings +init):\n%s", diff)
	}
}

func TestSettingsValidateAgainstSchema(t *testing.T) {
	schema := readJSON(t, "settings.schema.json")
	good := map[string]any{
		"settings.json":              readJSON(t, "settings.json"),
		"initializationOptions.json": map[string]any{lsp.ConfigSection: readJSON(t, "initializationOptions.json")},
	}
	for name, v := range good {
		if err := validate(schema, v, "$"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The validator and the schema do refuse what the server refuses.
	for _, bad := range []string{
		`{"reprise": {"contextBudget": 10}}`,
		`{"reprise": {"compactAt": 1}}`,
		`{"reprise": {"contextbudget": 24000}}`,
		`{"reprise": {"allow": "go test"}}`,
		`{"reprise": {"prices": {"m": {"input": -1}}}}`,
		`{"other": {}}`,
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(bad))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if validate(schema, v, "$") == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}

// validate checks v against the subset of JSON Schema draft-07 the settings schema uses.
func validate(schema, v any, at string) error {
	s, _ := schema.(map[string]any)
	switch s["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object", at)
		}
		props, _ := s["properties"].(map[string]any)
		for k, child := range obj {
			sub, known := props[k]
			switch extra := s["additionalProperties"].(type) {
			case bool:
				if !known && !extra {
					return fmt.Errorf("%s: unknown key %q", at, k)
				}
			case map[string]any:
				if !known {
					sub = extra
				}
			}
			if sub != nil {
				if err := validate(sub, child, at+"."+k); err != nil {
					return err
				}
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array", at)
		}
		for i, item := range arr {
			if err := validate(s["items"], item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string", at)
		}
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, any(str)) {
			return fmt.Errorf("%s: %q is not one of %v", at, str, enum)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: want a boolean", at)
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want a number", at)
		}
		if _, err := n.Int64(); err != nil && s["type"] == "integer" {
			return fmt.Errorf("%s: want an integer, got %s", at, n)
		}
		f, _ := n.Float64()
		bound := func(key string) (float64, bool) {
			b, ok := s[key].(json.Number)
			if !ok {
				return 0, false
			}
			x, _ := b.Float64()
			return x, true
		}
		if b, ok := bound("minimum"); ok && f < b {
			return fmt.Errorf("%s: %v < minimum %v", at, f, b)
		}
		if b, ok := bound("maximum"); ok && f > b {
			return fmt.Errorf("%s: %v > maximum %v", at, f, b)
		}
		if b, ok := bound("exclusiveMinimum"); ok && f <= b {
			return fmt.Errorf("%s: %v <= exclusive minimum %v", at, f, b)
		}
		if b, ok := bound("exclusiveMaximum"); ok && f >= b {
			return fmt.Errorf("%s: %v >= exclusive maximum %v", at, f, b)
		}
	default:
		return fmt.Errorf("%s: schema type %v not handled by this validator", at, s["type"])
	}
	return nil
}

// TestServerAcceptsTheSettings gives the real server each file's settings the way LSP4IJ does:
// initializationOptions.json in initialize, settings.json's section answered to
// workspace/configuration (and, alone, as initializationOptions: the same parsing). A refused
// value comes back as a window/showMessage warning; so does a protected setting left in
// settings.json, which the server ignores there.
func TestServerAcceptsTheSettings(t *testing.T) {
	settings := readJSON(t, "settings.json")
	section, _ := settings[lsp.ConfigSection].(map[string]any)
	tests := []struct {
		name     string
		options  any
		pulled   map[string]any // answered to workspace/configuration
		refused  bool
		warnings string // what a warning must say, when refused
	}{
		{"initializationOptions.json, settings.json pulled", readJSON(t, "initializationOptions.json"), section, false, ""},
		{"settings.json", section, nil, false, ""},
		{"a value out of range", map[string]any{"contextBudget": 10}, nil, true, "contextBudget"},
		// A settings.json that still carries a protected setting (a template imported before the
		// rule): the server ignores it and says where it belongs.
		{"a protected setting in settings.json", readJSON(t, "initializationOptions.json"), map[string]any{"sandbox": "off"}, true, "initializationOptions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serve := func(ctx context.Context, rwc io.ReadWriteCloser) error {
				return lsp.Serve(ctx, rwc, lsp.Options{
					Version:   "test",
					StateHome: t.TempDir(),
					NoWatch:   true,
					Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
					NewModel: func(context.Context, string) (agent.Model, int, error) {
						return nil, 0, errors.New("no model in this test")
					},
				})
			}
			ed := lsptest.Pipe(t, serve, lsptest.Options{Root: t.TempDir(), InitializationOptions: tt.options, Settings: tt.pulled})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if _, err := ed.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ed.Execute(ctx, lsp.CommandSessions, nil, nil); err != nil {
				t.Fatal(err)
			}
			if tt.refused {
				if _, err := ed.AwaitNotification(ctx, "window/showMessage", func(raw json.RawMessage) bool {
					return strings.Contains(string(raw), tt.warnings)
				}); err != nil {
					t.Errorf("no warning saying %q: %v", tt.warnings, err)
				}
				return
			}
			// A warning about the pulled settings would follow the answer at once: look after the
			// pull and one more round trip.
			if tt.pulled != nil {
				if err := ed.Await(ctx, "the configuration pull", func(msgs []lsptest.Message) bool {
					return slices.ContainsFunc(msgs, func(m lsptest.Message) bool { return m.Method == "workspace/configuration" })
				}); err != nil {
					t.Fatal(err)
				}
				if err := ed.Execute(ctx, lsp.CommandSessions, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if warnings := ed.Notifications("window/showMessage"); len(warnings) > 0 {
				t.Errorf("warnings %s, want none", warnings)
			}
		})
	}
}
