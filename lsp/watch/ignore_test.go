package watch

import "testing"

func TestDefaultIgnore(t *testing.T) {
	tests := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{".git", true, true},
		{"web/node_modules", true, true},
		{"py/.venv", true, true},
		{"py/pkg/__pycache__", true, true},
		{"bazel-out", true, true},
		{"rust/target", true, true},
		{"vendor", true, false},
		{"src", true, false},
		{".", true, false},
		{"build", false, false}, // a file named like an ignored directory is kept
		{"main.go", false, false},
		{".main.go.swp", false, true},
		{"notes.txt~", false, true},
		{".#main.go", false, true},
		{"pkg/4913", false, true},
		{".gitignore", false, false},
	}
	for _, tt := range tests {
		if got := defaultIgnore(tt.rel, tt.isDir); got != tt.want {
			t.Errorf("DefaultIgnore(%q, %v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
}
