package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTryLock: a second open file cannot take the lock while the first holds it, and can once it
// is closed.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock while held: %v, want ErrLocked", err)
	}
	a.Close()
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
}
