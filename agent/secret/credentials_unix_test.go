//go:build unix

package secret

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestFromEnvSkipsFIFO: a FIFO where a credential file should be does not block start-up.
func TestFromEnvSkipsFIFO(t *testing.T) {
	home := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(home, ".netrc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := FromEnv(func(k string) string { return map[string]string{"HOME": home}[k] }); !r.Empty() {
		t.Errorf("learnt %d values from a FIFO", len(r.secrets))
	}
}
