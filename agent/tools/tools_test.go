package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
)

// workspace makes a workspace holding files (name → content) and returns its path.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outcome is the part of a Result most tests compare.
type outcome struct {
	Output  string
	IsError bool
	Path    string
	Changed []string
	Refused bool
}

func outcomeOf(r Result) outcome {
	return outcome{r.Output, r.IsError, r.Path, r.Changed, r.Refused}
}

func TestDeclarationsSize(t *testing.T) {
	b, err := json.Marshal(Declarations())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("declarations: %d chars (~%d tokens)", len(b), len(b)/4)
	// 3,600 for the six file and command tools; write_todos and save_note add about 700.
	if len(b) > 3800 {
		t.Errorf("declarations are %d chars of JSON, want ≤ 3800: every request pays for them", len(b))
	}
}

func TestDeclarationsShape(t *testing.T) {
	var names []string
	for _, d := range Declarations() {
		names = append(names, d.Name)
		if d.Description == "" {
			t.Errorf("%s has no description", d.Name)
		}
		schema, ok := d.ParametersJsonSchema.(map[string]any)
		if !ok {
			t.Fatalf("%s: schema is %T", d.Name, d.ParametersJsonSchema)
		}
		props := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]string)
		for _, r := range req {
			if props[r] == nil {
				t.Errorf("%s requires %q, which is not a property", d.Name, r)
			}
		}
	}
	want := []string{"read_file", "list_files", "search", "edit_file", "write_file", "run_command", "write_todos", "save_note"}
	if diff := cmp.Diff(names, want); diff != "" {
		t.Errorf("names (-got +want):\n%s", diff)
	}
	// Fresh copies: a caller changing one does not change the next.
	Declarations()[0].Description = "changed"
	if Declarations()[0].Description == "changed" {
		t.Error("Declarations shares its values between calls")
	}
}

func TestRunDispatch(t *testing.T) {
	ws := workspace(t, nil)
	tests := []struct {
		name string
		env  *Env
		call Call
		want outcome
	}{
		{"unknown tool", &Env{Workspace: ws}, Call{Name: "delete_everything"}, outcome{
			Output:  `unknown tool "delete_everything"; available: read_file, list_files, search, edit_file, write_file, run_command, write_todos, save_note`,
			IsError: true,
		}},
		{"no env", nil, Call{Name: "read_file", Args: map[string]any{"path": "a"}}, outcome{
			Output: "no workspace is open", IsError: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(Run(t.Context(), tt.env, tt.call))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestBadArguments checks that every tool answers a missing or mistyped argument with an error
// result naming it, and does not panic.
func TestBadArguments(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "x\n"})
	env := &Env{Workspace: ws, Commands: &cmdpolicy.Policy{AllowAll: true}}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", nil, `missing argument "path"`},
		{"read_file", map[string]any{"file_path": "a.txt"}, `missing argument "path" (got: file_path)`},
		{"read_file", map[string]any{"path": 3.0}, `argument "path" must be a string, got a number`},
		{"read_file", map[string]any{"path": "a.txt", "offset": "2"}, `argument "offset" must be a number, got a string`},
		{"read_file", map[string]any{"path": "a.txt", "offset": 0.0}, `argument "offset" must be a whole number ≥ 1, got 0`},
		{"read_file", map[string]any{"path": "a.txt", "limit": 1.5}, `argument "limit" must be a whole number ≥ 1, got 1.5`},
		{"list_files", map[string]any{"path": []any{"a"}}, `argument "path" must be a string, got an array`},
		{"list_files", map[string]any{"pattern": true}, `argument "pattern" must be a string, got a boolean`},
		{"search", map[string]any{"path": "."}, `missing argument "pattern" (got: path)`},
		{"search", map[string]any{"pattern": map[string]any{}}, `argument "pattern" must be a string, got an object`},
		{"edit_file", map[string]any{"path": "a.txt", "old": "x"}, `missing argument "new" (got: old, path)`},
		{"edit_file", map[string]any{"path": "a.txt", "old": 1, "new": "y"}, `argument "old" must be a string, got a number`},
		{"write_file", map[string]any{"path": "b.txt"}, `missing argument "content" (got: path)`},
		{"write_file", map[string]any{"path": nil, "content": ""}, `missing argument "path" (got: content, path)`},
		{"run_command", map[string]any{}, `missing argument "command"`},
		{"run_command", map[string]any{"command": "true", "timeout_s": "10"}, `argument "timeout_s" must be a number, got a string`},
		{"run_command", map[string]any{"command": "true", "timeout_s": -1}, `argument "timeout_s" must be > 0, got -1`},
		{"run_command", map[string]any{"command": "  "}, `command is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.want, func(t *testing.T) {
			got := outcomeOf(Run(t.Context(), env, Call{Name: tt.tool, Args: tt.args}))
			if diff := cmp.Diff(got, outcome{Output: tt.want, IsError: true}); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		call              Call
		wantTitle, wantKd string
	}{
		{Call{Name: "read_file", Args: map[string]any{"path": "src/a.go"}}, "Read src/a.go", "read"},
		{Call{Name: "list_files"}, "List files", "search"},
		{Call{Name: "list_files", Args: map[string]any{"path": "src", "pattern": "*.go"}}, "List src matching *.go", "search"},
		{Call{Name: "search", Args: map[string]any{"pattern": "func Foo", "path": "src"}}, `Search "func Foo" in src`, "search"},
		{Call{Name: "edit_file", Args: map[string]any{"path": "a.go"}}, "Edit a.go", "edit"},
		{Call{Name: "write_file", Args: map[string]any{"path": "a.go"}}, "Write a.go", "edit"},
		{Call{Name: "run_command", Args: map[string]any{"command": "go  test\n./..."}}, "Run go test ./...", "execute"},
		{Call{Name: "run_command", Args: map[string]any{"command": long}}, "Run " + long[:75] + "…", "execute"},
		{Call{Name: "frobnicate"}, "frobnicate", "other"},
		{Call{Name: "read_file", Args: map[string]any{"path": 7}}, "Read ", "read"},
	}
	for _, tt := range tests {
		title, kind := Describe(tt.call)
		if diff := cmp.Diff([]string{title, string(kind)}, []string{tt.wantTitle, tt.wantKd}); diff != "" {
			t.Errorf("Describe(%v) (-got +want):\n%s", tt.call, diff)
		}
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSpillPrefix(t *testing.T) {
	got := []string{spillPrefix("run_command", ""), spillPrefix("search", "call/../1 é"), spillPrefix("x", strings.Repeat("a", 60))}
	want := []string{"run_command", "search-call1", "x-" + strings.Repeat("a", 40)}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if slices.Contains(got, "") {
		t.Error("empty prefix")
	}
}
