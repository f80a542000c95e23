package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// winWorkspace is workspace on tempDir (see tempDir).
func winWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := tempDir(t)
	writeFiles(t, dir, files)
	return dir
}

// TestLocateWindows: Windows's spellings of paths are confined like the others.
func TestLocateWindows(t *testing.T) {
	ws := winWorkspace(t, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	other := winWorkspace(t, map[string]string{"secret.txt": "s"})
	vol := filepath.VolumeName(ws)
	env := &Env{Workspace: ws}
	ok := func(key string) [2]string { return [2]string{key, ""} }
	out := func(given string) [2]string { return [2]string{"", outside(given)} }
	tests := []struct {
		given string
		want  [2]string // key, problem
	}{
		{`a.txt`, ok("a.txt")},
		{`sub\b.txt`, ok("sub/b.txt")},
		{`sub/b.txt`, ok("sub/b.txt")},
		{`sub\..\a.txt`, ok("a.txt")},
		{ws + `\sub\b.txt`, ok("sub/b.txt")},
		{strings.ReplaceAll(ws, `\`, `/`) + `/sub\b.txt`, ok("sub/b.txt")}, // mixed slashes
		{strings.ToLower(vol) + ws[len(vol):] + `\a.txt`, ok("a.txt")},     // volume names ignore case
		{strings.ToUpper(ws) + `\SUB\B.TXT`, ok("sub/b.txt")},              // and so do names
		{`new\c.txt`, ok("new/c.txt")},
		{`..\x`, out(`..\x`)},
		{`sub\..\..\x`, out(`sub\..\..\x`)},
		{`sub/../..\x`, out(`sub/../..\x`)},
		{other + `\secret.txt`, out(other + `\secret.txt`)},
		{vol + `\Windows\win.ini`, out(vol + `\Windows\win.ini`)},
		{`\\server\share\x`, out(`\\server\share\x`)},
		{`//server/share/x`, out(`//server/share/x`)},
		{`\\?\` + ws + `\a.txt`, out(`\\?\` + ws + `\a.txt`)}, // another spelling of the volume: refused
		{`\\?\C:\x`, out(`\\?\C:\x`)},
		{`\\.\pipe\x`, out(`\\.\pipe\x`)},
		{`\\.\C:\x`, out(`\\.\C:\x`)},
		{vol + `a.txt`, out(vol + `a.txt`)}, // drive-relative: that drive's current directory
		{vol, out(vol)},
		{`\a.txt`, out(`\a.txt`)}, // rooted: the current drive's root
		{`/a.txt`, out(`/a.txt`)},
	}
	for _, tt := range tests {
		p, problem := env.locate(tt.given, false)
		got := [2]string{"", problem}
		if p != nil {
			got[0] = p.key
			p.close()
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("locate(%q) (-got +want):\n%s", tt.given, diff)
		}
	}
}

// TestDevicesAndStreamsWindows: reserved device names and alternate data streams are no files of
// the workspace: reading or writing them is refused.
func TestDevicesAndStreamsWindows(t *testing.T) {
	ws := winWorkspace(t, map[string]string{"a.txt": "a"})
	for _, given := range []string{"NUL", "con", "aux.txt", `sub\COM1`, "a.txt:hidden", "a.txt::$DATA"} {
		for _, call := range []Call{
			{Name: "read_file", Args: map[string]any{"path": given}},
			{Name: "write_file", Args: map[string]any{"path": given, "content": "x"}},
		} {
			r := Run(t.Context(), &Env{Workspace: ws}, call)
			if !r.IsError || len(r.Changed) > 0 {
				t.Errorf("%s %q: %q, changed %v; want refused", call.Name, given, r.Output, r.Changed)
			}
		}
	}
	if got := readText(t, filepath.Join(ws, "a.txt")); got != "a" {
		t.Errorf("a.txt holds %q", got)
	}
}

// TestVCSMetadataRefusedWindows: the names Windows opens as .git are refused as .git is.
func TestVCSMetadataRefusedWindows(t *testing.T) {
	ws := winWorkspace(t, map[string]string{".git/config": "[core]\n", "sub/a.go": "package a\n"})
	for _, given := range []string{
		`.git\config`, `.GIT\config`, `.git.\config`, `.git .\hooks\x`, `GIT~1\config`, `sub\git~2\x`,
		`.git::$INDEX_ALLOCATION\config`, `new\.hg.\hgrc`, `SVN~1\entries`,
	} {
		r := Run(t.Context(), &Env{Workspace: ws}, Call{Name: "write_file", Args: map[string]any{"path": given, "content": "x"}})
		if !r.IsError || !r.Refused && !strings.HasPrefix(r.Output, "path outside the workspace") {
			t.Errorf("write_file %q: %q; want refused", given, r.Output)
		}
	}
	if diff := cmp.Diff(readText(t, filepath.Join(ws, ".git", "config")), "[core]\n"); diff != "" {
		t.Errorf(".git/config changed (-got +want):\n%s", diff)
	}
	// Look-alikes are ordinary files.
	r := Run(t.Context(), &Env{Workspace: ws}, Call{Name: "write_file", Args: map[string]any{"path": `.github\x.yml`, "content": "x"}})
	if r.IsError {
		t.Errorf("write_file .github\\x.yml: %q", r.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, ".github", "x.yml")); err != nil {
		t.Error(err)
	}
}

func TestFSNameWindows(t *testing.T) {
	for name, want := range map[string]string{
		".git": ".git", ".git.": ".git", ".git . ": ".git", ".git::$INDEX_ALLOCATION": ".git", "GIT~1": ".git",
		"hg~12": ".hg", "Svn~3": ".svn", "GITHUB~1": "GITHUB~1", ".gitignore": ".gitignore", "a.txt:x": "a.txt",
	} {
		if got := fsName(name); got != want {
			t.Errorf("fsName(%q) = %q, want %q", name, got, want)
		}
	}
}
