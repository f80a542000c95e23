package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// TrustStore remembers the workspace-declared servers the user agreed to start, by fingerprint:
// a cloned repository's .vscode/mcp.json is not the user, and a server it names runs with the
// user's rights. A changed command, argument or environment is a new fingerprint, asked again.
// The file lives in the user's config directory, never in the workspace.
type TrustStore struct {
	path string
	mu   sync.Mutex
}

// NewTrustStore keeps the consents in path (created on the first Trust).
func NewTrustStore(path string) *TrustStore { return &TrustStore{path: path} }

type trustFile struct {
	Trusted []string `json:"trusted"`
}

func (t *TrustStore) read() (trustFile, error) {
	var f trustFile
	data, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read the MCP trust file: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("read the MCP trust file %s: %w", t.path, err)
	}
	return f, nil
}

// Trusted reports whether the user agreed to start the server with this fingerprint. An
// unreadable file trusts nothing.
func (t *TrustStore) Trusted(fingerprint string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.read()
	return err == nil && slices.Contains(f.Trusted, fingerprint)
}

// Trust records the user's consent.
func (t *TrustStore) Trust(fingerprint string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.read()
	if err != nil {
		return err
	}
	if slices.Contains(f.Trusted, fingerprint) {
		return nil
	}
	f.Trusted = append(f.Trusted, fingerprint)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("save the MCP trust: %w", err)
	}
	// Written aside and renamed, so that a crash leaves the old consents, not half a file.
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save the MCP trust: %w", err)
	}
	if err := os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("save the MCP trust: %w", err)
	}
	return nil
}
