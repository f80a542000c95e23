package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// documents holds the editor's open buffers, so the agent reads what the user sees and never
// overwrites unsaved work.
type documents struct {
	root string     // set by initialize, then only read
	mu   sync.Mutex // guards open
	// open maps a workspace-relative slash path to its buffer; unknown marks a buffer whose
	// content is not known (an incremental change the server cannot apply).
	open map[string]buffer
}

type buffer struct {
	text    string
	unknown bool
}

func newDocuments() *documents { return &documents{open: map[string]buffer{}} }

// rel converts a document URI to a workspace-relative path; ok is false outside the workspace.
func (d *documents) rel(uri string) (string, bool) {
	p, err := uriToPath(uri)
	if err != nil {
		return "", false
	}
	r, err := filepath.Rel(d.root, p)
	if err != nil || r == ".." || filepath.IsAbs(r) || len(r) > 2 && r[:3] == ".."+string(filepath.Separator) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (d *documents) didOpen(raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if rel, ok := d.rel(p.TextDocument.URI); ok {
		d.mu.Lock()
		d.open[rel] = buffer{text: p.TextDocument.Text}
		d.mu.Unlock()
	}
	return nil
}

func (d *documents) didChange(raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		ContentChanges []struct {
			Range *json.RawMessage `json:"range"`
			Text  string           `json:"text"`
		} `json:"contentChanges"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	rel, ok := d.rel(p.TextDocument.URI)
	if !ok || len(p.ContentChanges) == 0 {
		return nil
	}
	// The server announces full synchronisation; a client sending ranges anyway leaves the
	// buffer unknown, and writes to it are refused rather than guessed.
	b := buffer{unknown: true}
	for _, c := range p.ContentChanges {
		if c.Range == nil {
			b = buffer{text: c.Text}
		} else {
			b = buffer{unknown: true}
		}
	}
	d.mu.Lock()
	d.open[rel] = b
	d.mu.Unlock()
	if b.unknown {
		return fmt.Errorf("incremental change to %s ignored: the server asked for full synchronisation", rel)
	}
	return nil
}

func (d *documents) didClose(raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if rel, ok := d.rel(p.TextDocument.URI); ok {
		d.mu.Lock()
		delete(d.open, rel)
		d.mu.Unlock()
	}
	return nil
}

// overlay returns the buffer of rel when the editor has it open.
func (d *documents) overlay(rel string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.open[rel]
	if !ok || b.unknown {
		return "", false
	}
	return b.text, true
}

// guard refuses a write to a file whose editor buffer differs from the disk: the user has unsaved
// changes there.
func (d *documents) guard(rel string) error {
	d.mu.Lock()
	b, ok := d.open[rel]
	d.mu.Unlock()
	if !ok {
		return nil
	}
	disk, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(rel)))
	if b.unknown || err != nil && !os.IsNotExist(err) || string(disk) != b.text {
		return fmt.Errorf("%s has unsaved changes in the editor; ask the user to save or discard them, then try again", rel)
	}
	return nil
}
