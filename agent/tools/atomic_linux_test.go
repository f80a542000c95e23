package tools_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
)

// temps lists the temporary files under dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".reprise.tmp") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

var modes = []struct {
	name    string
	unnamed bool
}{{"O_TMPFILE", true}, {"named temporary", false}}

func TestWriteAtomic(t *testing.T) {
	tests := []struct {
		name    string
		rel     string
		setup   func(t *testing.T, ws, out string)
		wantErr bool
		want    map[string]string // ws afterwards ("→ x" for a symlink to x)
	}{
		{name: "new file", rel: "new.txt", want: map[string]string{"new.txt": "data"}},
		{
			name:  "overwrite",
			rel:   "a.txt",
			setup: func(t *testing.T, ws, out string) { os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old"), 0o644) },
			want:  map[string]string{"a.txt": "data"},
		},
		{
			name: "a symlink leading out is replaced, not followed",
			rel:  "a.txt",
			setup: func(t *testing.T, ws, out string) {
				os.Symlink(filepath.Join(out, "secret"), filepath.Join(ws, "a.txt"))
			},
			want: map[string]string{"a.txt": "data"},
		},
		{
			name:    "a parent leading out is refused",
			rel:     "sub/a.txt",
			setup:   func(t *testing.T, ws, out string) { os.Symlink(out, filepath.Join(ws, "sub")) },
			wantErr: true,
			want:    map[string]string{"sub": "→ OUT"},
		},
		{
			name:    "a directory at the path is an error, and nothing is left",
			rel:     "d",
			setup:   func(t *testing.T, ws, out string) { os.MkdirAll(filepath.Join(ws, "d", "x"), 0o755) },
			wantErr: true,
			want:    map[string]string{},
		},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				tools.UseTmpfile(m.unnamed)
				defer tools.UseTmpfile(true)
				ws, out, notes := t.TempDir(), t.TempDir(), t.TempDir()
				os.WriteFile(filepath.Join(out, "secret"), []byte("secret"), 0o600)
				if tt.setup != nil {
					tt.setup(t, ws, out)
				}
				root, err := os.OpenRoot(ws)
				if err != nil {
					t.Fatal(err)
				}
				defer root.Close()
				err = tools.WriteAtomic(root, tt.rel, []byte("data"), 0o640, tools.NewTemps(notes))
				if (err != nil) != tt.wantErr {
					t.Errorf("WriteAtomic: %v, want error %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tree(t, ws, out), tt.want); diff != "" {
					t.Errorf("workspace (-got +want):\n%s", diff)
				}
				if b, _ := os.ReadFile(filepath.Join(out, "secret")); string(b) != "secret" {
					t.Errorf("the file outside is now %q", b)
				}
				if fi, err := os.Stat(filepath.Join(ws, tt.rel)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o640 {
					t.Errorf("mode %v, want 0640", fi.Mode().Perm())
				}
				if left, _ := os.ReadDir(notes); len(left) != 0 {
					t.Errorf("notes left: %v", left)
				}
			})
		}
	}
}

// tree maps the files under dir to their content, symlinks to "→ target" (out written OUT).
func tree(t *testing.T, dir, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			got[rel] = "→ " + strings.ReplaceAll(target, out, "OUT")
		} else {
			b, _ := os.ReadFile(p)
			got[rel] = string(b)
		}
		return nil
	})
	return got
}

// writerSpec tells TestHelperAtomicWriter what to write.
type writerSpec struct {
	Workspace, Temps string
	Unnamed          bool
}

const helperEnv = "REPRISE_TEST_ATOMIC_WRITER"

// TestHelperAtomicWriter is the process TestAttackTempLeftover kills: it writes big.bin through
// WriteAtomic, prints "writing" after 16 MiB and blocks on stdin until killed.
func TestHelperAtomicWriter(t *testing.T) {
	raw := os.Getenv(helperEnv)
	if raw == "" {
		t.Skip("helper process for TestAttackTempLeftover")
	}
	var spec writerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	tools.UseTmpfile(spec.Unnamed)
	root, err := os.OpenRoot(spec.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	r := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("x"), 16<<20)), stall{})
	err = tools.WriteAtomicFrom(root, "big.bin", r, 0o644, tools.NewTemps(spec.Temps))
	t.Fatalf("the write returned: %v", err)
}

// stall says the write is under way, then waits for a kill.
type stall struct{}

func (stall) Read([]byte) (int, error) {
	fmt.Println("writing")
	io.Copy(io.Discard, os.Stdin) // the parent never writes nor closes it
	return 0, errors.New("stdin closed")
}

// TestAttackTempLeftover: a write killed half-way (SIGKILL, no chance to clean up) leaves neither
// a partial target nor, with O_TMPFILE, any temporary file. Without O_TMPFILE the named temporary
// file is noted, left alone by a start-up while its writer lives, and removed by the next start-up
// (journal.OpenStore) once it is dead.
func TestAttackTempLeftover(t *testing.T) {
	for _, m := range modes {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/target existed %v", m.name, existing), func(t *testing.T) {
				ws, store := t.TempDir(), t.TempDir()
				notes := filepath.Join(store, "sessions", "s1", journal.TempsDir)
				want := map[string]string{}
				if existing {
					os.WriteFile(filepath.Join(ws, "big.bin"), []byte("old\n"), 0o644)
					want["big.bin"] = "old\n"
				}
				spec, _ := json.Marshal(writerSpec{Workspace: ws, Temps: notes, Unnamed: m.unnamed})
				cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperAtomicWriter$")
				cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				stdin, _ := cmd.StdinPipe()
				defer stdin.Close()
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(stdout)
				for sc.Scan() && sc.Text() != "writing" {
				}
				if sc.Err() != nil || sc.Text() != "writing" {
					cmd.Wait()
					t.Fatalf("the helper did not start writing: %s", stderr.String())
				}
				// Mid-write, with the writer alive.
				during := temps(t, ws)
				if m.unnamed && len(during) != 0 {
					t.Errorf("O_TMPFILE write in progress shows %v", during)
				}
				if !m.unnamed && len(during) != 1 {
					t.Errorf("named write in progress shows %v, want one temporary file", during)
				}
				if removed, err := tools.CleanTemps(notes); len(removed) != 0 || err != nil {
					t.Errorf("a start-up while the writer lives removed %v (%v)", removed, err)
				}
				cmd.Process.Kill() // SIGKILL
				cmd.Wait()
				got, left := withoutTemps(tree(t, ws, ""))
				if diff := cmp.Diff(got, want); diff != "" {
					t.Errorf("after the kill (-got +want):\n%s", diff)
				}
				if wantLeft := !m.unnamed; (len(left) > 0) != wantLeft {
					t.Errorf("temporary files after the kill: %v, want some: %v", left, wantLeft)
				}
				if _, err := journal.OpenStore(store); err != nil { // the next start-up
					t.Fatal(err)
				}
				if diff := cmp.Diff(tree(t, ws, ""), want); diff != "" {
					t.Errorf("after the next start-up (-got +want):\n%s", diff)
				}
				if left, _ := os.ReadDir(notes); len(left) != 0 {
					t.Errorf("notes left: %v", left)
				}
			})
		}
	}
}

// withoutTemps splits the temporary files off a tree.
func withoutTemps(files map[string]string) (rest map[string]string, temps []string) {
	rest = map[string]string{}
	for k, v := range files {
		if strings.HasSuffix(k, ".reprise.tmp") {
			temps = append(temps, k)
		} else {
			rest[k] = v
		}
	}
	return rest, temps
}
