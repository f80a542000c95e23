package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTempDirBounded: a command that writes its private temp dir past MaxTemp, quickly (between
// two looks of the supervisor) or slowly (while it runs), is killed, the dir emptied, and the
// status says so; one that stays under keeps its files for the next command. /dev/shm holds
// no more than the same bound.
func TestTempDirBounded(t *testing.T) {
	if ok, why := New(Config{Workspace: t.TempDir()}).Confined(); !ok {
		t.Skip("commands are not confined here: " + why)
	}
	ws, tmp := t.TempDir(), t.TempDir()
	sb := New(Config{Workspace: ws, Writable: []string{}, TempDir: tmp, MaxTemp: 8 << 20})
	if !sb.privateTemp() {
		t.Skip("no private temp dir here")
	}
	out, st := runFor(t, sb, ws, "echo kept > /tmp/small", 30*time.Second)
	if st.Code != 0 || st.TempFull {
		t.Fatalf("a small file: %+v %s", st, out)
	}
	for name, line := range map[string]string{
		"at once":  "head -c 64000000 /dev/zero > /tmp/big",
		"steadily": "while :; do head -c 1000000 /dev/zero >> /tmp/big; done",
	} {
		t.Run(name, func(t *testing.T) {
			out, st := runFor(t, sb, ws, line, time.Minute)
			if !st.TempFull {
				t.Errorf("status %+v, want the temp dir full: %s", st, out)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("the temp dir still holds %d entries", len(left))
			}
		})
	}
	out, _ = runFor(t, sb, ws, "head -c 64000000 /dev/zero > /dev/shm/big; echo rc=$?; ls -la /dev/shm/big", 30*time.Second)
	if !strings.Contains(out, "rc=1") || strings.Contains(out, " 64000000 ") {
		t.Errorf("/dev/shm took 64 MB past its 8 MiB: %s", out)
	}
}

// TestSessionTempDirs: each session gets a temp dir of its own under the sandbox's cache, removed
// when it ends; the dirs of sessions a dead server left are removed after a week untouched.
func TestSessionTempDirs(t *testing.T) {
	cache := t.TempDir()
	sb := New(Config{Workspace: t.TempDir(), Cache: cache})
	old := filepath.Join(cache, "tmp", "20260101-000000-dead")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	week := time.Now().Add(-8 * 24 * time.Hour)
	if err := os.Chtimes(old, week, week); err != nil {
		t.Fatal(err)
	}
	a, b := sb.ForSession("s-a"), sb.ForSession("s-b")
	if a.cfg.TempDir == b.cfg.TempDir || filepath.Dir(a.cfg.TempDir) != filepath.Join(cache, "tmp") {
		t.Fatalf("temp dirs %s and %s", a.cfg.TempDir, b.cfg.TempDir)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the stale temp dir is still there: %v", err)
	}
	for _, s := range []*Sandbox{a, b} {
		if err := os.MkdirAll(filepath.Join(s.cfg.TempDir, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.RemoveTemp(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.cfg.TempDir); !os.IsNotExist(err) {
		t.Errorf("a's temp dir is still there: %v", err)
	}
	if _, err := os.Stat(b.cfg.TempDir); err != nil {
		t.Errorf("b's temp dir went with a's: %v", err)
	}
	given := New(Config{Workspace: t.TempDir(), Cache: cache, TempDir: t.TempDir()})
	if s := given.ForSession("s-c"); s.cfg.TempDir != given.cfg.TempDir || s.RemoveTemp() != nil {
		t.Errorf("a temp dir the configuration names was moved or removed: %s", s.cfg.TempDir)
	}
}
