//go:build linux || darwin

package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/journal"
)

// link makes a symlink name → target, with its parent directories.
func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// readTree returns the regular files under dir and their content ("→ target" for a symlink).
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			got[filepath.ToSlash(rel)] = "→ " + target
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			got[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return got
}

// TestAttackRestoreThroughSymlink: the agent changes files, then (run_command) swaps a symlink
// leading out of the workspace in place of a file or of its parent directory, with the outside
// file holding what the agent last wrote so that the conflict check would pass through the link.
// reprise.restore must neither write nor delete outside: it refuses, and says which path and why.
func TestAttackRestoreThroughSymlink(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // the workspace before the turn
		outside map[string]string // the directory outside, before and (unchanged) after
		call    geminitest.Turn   // the agent's change
		swap    string            // the agent's command; OUT is the outside directory
		wantErr string
	}{
		{
			name:    "a changed file replaced by a symlink to a file outside",
			files:   map[string]string{"a.txt": "one\n"},
			outside: map[string]string{"a.txt": "two\n"},
			call:    callTurn("edit_file", map[string]any{"path": "a.txt", "old": "one", "new": "two"}, ""),
			swap:    "rm a.txt && ln -s OUT/a.txt a.txt",
			wantErr: "a.txt (it is now a symlink)",
		},
		{
			name:    "a created file replaced by a symlink to a file outside",
			outside: map[string]string{"new.txt": "made\n"},
			call:    callTurn("write_file", map[string]any{"path": "new.txt", "content": "made\n"}, ""),
			swap:    "rm new.txt && ln -s OUT/new.txt new.txt",
			wantErr: "new.txt (it is now a symlink)",
		},
		{
			name:    "the parent of a changed file replaced by a symlink to a directory outside",
			files:   map[string]string{"sub/a.txt": "one\n"},
			outside: map[string]string{"a.txt": "two\n"},
			call:    callTurn("edit_file", map[string]any{"path": "sub/a.txt", "old": "one", "new": "two"}, ""),
			swap:    "mv sub sub.orig && ln -s OUT sub",
			wantErr: "sub/a.txt (sub is now a symlink)",
		},
		{
			name:    "the parent of a created file replaced by a symlink to a directory outside",
			files:   map[string]string{"sub/keep.txt": "keep\n"},
			outside: map[string]string{"new.txt": "made\n"},
			call:    callTurn("write_file", map[string]any{"path": "sub/new.txt", "content": "made\n"}, ""),
			swap:    "mv sub sub.orig && ln -s OUT sub",
			wantErr: "sub/new.txt (sub is now a symlink)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			for name, content := range tt.outside {
				os.WriteFile(filepath.Join(out, name), []byte(content), 0o644)
			}
			swap := strings.ReplaceAll(tt.swap, "OUT", out)
			f, _, _ := saved(t, fixtureOpts{files: tt.files, commands: &cmdpolicy.Policy{AllowAll: true}},
				tt.call, callTurn("run_command", map[string]any{"command": swap}, ""), textTurn("done"))
			if _, err := f.run(t.Context(), "change it"); err != nil {
				t.Fatal(err)
			}
			if got := responses(mainRequests(f.srv)[2])["run_command"]; len(got) != 1 || strings.HasPrefix(got[0], "error") {
				t.Fatalf("the swap did not run: %q", got)
			}
			before := readTree(t, f.ws)
			_, err := f.s.RestoreFiles(1)
			if !errors.Is(err, ErrUnsafeRestore) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "nothing was restored") {
				t.Errorf("restore: %v, want ErrUnsafeRestore naming %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(readTree(t, out), tt.outside); diff != "" {
				t.Errorf("outside the workspace (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(readTree(t, f.ws), before); diff != "" {
				t.Errorf("a refused restore changed the workspace (-got +want):\n%s", diff)
			}
		})
	}
}

// blobMap is restore point content kept in memory.
type blobMap map[string][]byte

func (b blobMap) SaveBlob(turn int, rel string, data []byte) (string, error) {
	b[rel] = data
	return rel, nil
}

func (b blobMap) SaveText(data []byte) (string, error) {
	name := fmt.Sprintf("text-%d", len(b))
	b[name] = data
	return name, nil
}

func (b blobMap) ReadBlob(name string) ([]byte, error) { return b[name], nil }

// TestPutBackNeverFollows covers a swap made after RestoreFiles' checks: the write or the delete
// itself goes through os.Root and replaces a final symlink instead of following it.
func TestPutBackNeverFollows(t *testing.T) {
	tests := []struct {
		name      string
		point     journal.RestorePoint
		swap      func(t *testing.T, ws, out string)
		wantErr   bool
		wantFiles map[string]string // the workspace afterwards
	}{
		{
			name:      "write over a final symlink replaces the link",
			point:     journal.RestorePoint{Path: "a.txt", Existed: true, Blob: "a.txt"},
			swap:      func(t *testing.T, ws, out string) { link(t, filepath.Join(out, "a.txt"), filepath.Join(ws, "a.txt")) },
			wantFiles: map[string]string{"a.txt": "original\n"},
		},
		{
			name:      "delete of a final symlink removes the link",
			point:     journal.RestorePoint{Path: "a.txt"},
			swap:      func(t *testing.T, ws, out string) { link(t, filepath.Join(out, "a.txt"), filepath.Join(ws, "a.txt")) },
			wantFiles: map[string]string{},
		},
		{
			name:      "write under a parent leading outside is refused",
			point:     journal.RestorePoint{Path: "sub/a.txt", Existed: true, Blob: "sub/a.txt"},
			swap:      func(t *testing.T, ws, out string) { link(t, out, filepath.Join(ws, "sub")) },
			wantErr:   true,
			wantFiles: map[string]string{"sub": "→ OUT"},
		},
		{
			name:      "delete under a parent leading outside is refused",
			point:     journal.RestorePoint{Path: "sub/a.txt"},
			swap:      func(t *testing.T, ws, out string) { link(t, out, filepath.Join(ws, "sub")) },
			wantErr:   true,
			wantFiles: map[string]string{"sub": "→ OUT"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			os.WriteFile(filepath.Join(out, "a.txt"), []byte("outside\n"), 0o644)
			f := newFixture(t, fixtureOpts{})
			f.s.opts.Blobs = blobMap{"a.txt": []byte("original\n"), "sub/a.txt": []byte("original\n")}
			tt.swap(t, f.ws, out)
			root, err := os.OpenRoot(f.ws)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			err = putBack(root, f.s.opts.Blobs, f.s.settings.toolsEnv().Temps, tt.point)
			if (err != nil) != tt.wantErr {
				t.Errorf("putBack: %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(readTree(t, out), map[string]string{"a.txt": "outside\n"}); diff != "" {
				t.Errorf("outside the workspace (-got +want):\n%s", diff)
			}
			got := readTree(t, f.ws)
			for k, v := range got {
				got[k] = strings.ReplaceAll(v, out, "OUT")
			}
			if diff := cmp.Diff(got, tt.wantFiles); diff != "" {
				t.Errorf("workspace (-got +want):\n%s", diff)
			}
		})
	}
}

// TestAttackHashBigFile: the hash behind the staleness and restore checks streams the file, so a
// big file (256 MiB here, sparse: no disk used; the attack used 600 MB) costs bounded memory.
func TestAttackHashBigFile(t *testing.T) {
	ws := t.TempDir()
	fh, err := os.Create(filepath.Join(ws, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(256 << 20); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h, err := hashFile(root, "big.bin")
	runtime.ReadMemStats(&after)
	if err != nil || len(h) != 32 {
		t.Fatalf("hash: %d bytes, %v", len(h), err)
	}
	const bound = 1 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bound {
		t.Errorf("hashing 256 MiB allocated %d bytes, want at most %d", alloc, bound)
	} else {
		t.Logf("hashing 256 MiB allocated %d bytes", alloc)
	}
}

// BenchmarkFileHash reports the memory one hash of a 64 MiB file costs (B/op stays ~constant
// whatever the size).
func BenchmarkFileHash(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.bin"), make([]byte, 64<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	b.ReportAllocs()
	b.SetBytes(64 << 20)
	for b.Loop() {
		if _, err := hashFile(root, "f.bin"); err != nil {
			b.Fatal(err)
		}
	}
}
