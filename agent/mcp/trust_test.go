package mcp

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTrustStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "trusted-mcp.json")
	s := NewTrustStore(path)
	if s.Trusted("abc") {
		t.Fatal("trusted before any consent")
	}
	if err := s.Trust("abc"); err != nil {
		t.Fatal(err)
	}
	if err := s.Trust("abc"); err != nil {
		t.Fatal(err)
	}
	again := NewTrustStore(path)
	if !again.Trusted("abc") || again.Trusted("abd") {
		t.Error("the consent is not kept by fingerprint")
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("trust file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	// A damaged file trusts nothing and is not overwritten silently.
	os.WriteFile(path, []byte("{not json"), 0o600)
	if again.Trusted("abc") {
		t.Error("a damaged trust file still trusts")
	}
	if err := again.Trust("xyz"); err == nil {
		t.Error("Trust over a damaged file succeeded")
	}
}
