package roots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBroad(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home", "u")
	project := filepath.Join(home, "src", "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	toRoot := filepath.Join(base, "to-root")
	if err := os.Symlink("/", toRoot); err != nil {
		t.Fatal(err)
	}
	toHome := filepath.Join(base, "to-home")
	if err := os.Symlink(home, toHome); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		root, want string // want: part of the reason, "" when the root needs no confirmation
	}{
		{"/", "root of the file system"},
		{"/.", "root of the file system"},
		{toRoot, "root of the file system"},
		{home, "your home directory"},
		{home + "/", "your home directory"},
		{toHome, "your home directory"},
		{filepath.Dir(home), "holds your home directory"},
		{filepath.Join(base, "home"), "holds your home directory"},
		{"/usr", "system directory"},
		{"/etc", "system directory"},
		{"/home", "system directory"},
		{"/var/lib", "system directory"},
		{project, ""},
		{filepath.Join(home, "src"), ""},
		{"/usr/src/linux", ""},
		{"/srv/app", ""},
	}
	for _, tt := range tests {
		got := Broad(tt.root, home)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("Broad(%q) = %q, want %q", tt.root, got, tt.want)
		}
	}
	if got := Broad("/usr", ""); got == "" {
		t.Error("without a home directory, /usr is still broad")
	}
	tmp := filepath.Join(base, "tmp")
	t.Setenv("TMPDIR", tmp)
	if got := Broad(tmp, ""); !strings.Contains(got, "temporary directory") {
		t.Errorf("Broad(%q) = %q, want the temporary directory", tmp, got)
	}
}
