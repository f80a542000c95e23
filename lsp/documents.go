package lsp

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// documents holds the editor's open buffers, so the agent reads what the user sees and never
// overwrites unsaved work. Their total size is capped: a buffer that would pass the cap is kept
// as a marker without its text (the agent reads the disk, and is refused writes to that file).
type documents struct {
	root  string // set by initialize, then only read
	limit int64  // the cap on total, limits.MaxBufferBytes
	log   *slog.Logger

	mu sync.Mutex // guards open, total and warned
	// open maps a workspace-relative slash path to its buffer; unknown marks a buffer whose
	// content is not known (an incremental change the server cannot apply).
	open   map[string]buffer
	total  int64 // bytes of every key and text in open
	warned bool  // the user was told a buffer was dropped; said once per connection
}

type buffer struct {
	text    string
	unknown bool
	dropped bool // its text passed the cap and was not kept
}

func newDocuments(limit int64, log *slog.Logger) *documents {
	return &documents{open: map[string]buffer{}, limit: limit, log: log}
}

// cost is what an entry counts against the cap.
func cost(rel string, b buffer) int64 { return int64(len(rel) + len(b.text)) }

// putLocked stores b for rel within the cap: when it does not fit, its text is dropped, and when
// not even the path fits, the entry goes. It reports whether the text was dropped. d.mu must be
// held.
func (d *documents) putLocked(rel string, b buffer) (dropped bool) {
	if old, ok := d.open[rel]; ok {
		d.total -= cost(rel, old)
		delete(d.open, rel)
	}
	if b.dropped || d.total+cost(rel, b) > d.limit {
		b, dropped = buffer{dropped: true}, true
		if d.total+cost(rel, b) > d.limit {
			return true
		}
	}
	d.open[rel] = b
	d.total += cost(rel, b)
	return dropped
}

// put stores b for rel and warns, once per connection, when a buffer had to be dropped.
func (d *documents) put(rel string, b buffer) {
	d.mu.Lock()
	dropped := d.putLocked(rel, b)
	warn := dropped && !d.warned
	if dropped {
		d.warned = true
	}
	d.mu.Unlock()
	switch {
	case warn:
		d.log.Warn(fmt.Sprintf("open buffers exceed %d MiB: %s and any further buffer over the limit are read from disk, and the agent may not write them until they are closed", d.limit>>20, rel))
	case dropped:
		d.log.Debug("buffer dropped: open buffers exceed the limit", "path", rel, "limit", d.limit)
	}
}

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

// target decodes the document's URI alone (the decoder skips the text without keeping it) and
// returns its workspace-relative path; ok is false outside the workspace.
func (d *documents) target(raw json.RawMessage) (rel string, ok bool, err error) {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", false, err
	}
	rel, ok = d.rel(p.TextDocument.URI)
	return rel, ok, nil
}

// tooLarge reports whether a message of size bytes for rel cannot fit beside the other buffers.
// The message is an upper bound of its text (JSON escapes only lengthen it), so a buffer that
// would fit is decoded; one whose message does not fit is dropped before its text is copied out
// of the message, which halves what a flood of large buffers costs. Near the cap, a text with
// many escapes may be dropped although it would just have fitted.
func (d *documents) tooLarge(rel string, size int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	others := d.total
	if old, ok := d.open[rel]; ok {
		others -= cost(rel, old)
	}
	return others+int64(len(rel)+size) > d.limit
}

// admit returns the document a didOpen or didChange is for, and whether its text is to be
// decoded: not when it is outside the workspace, nor when the message cannot fit beside the other
// buffers (the buffer is then marked dropped).
func (d *documents) admit(raw json.RawMessage) (rel string, decode bool, err error) {
	rel, ok, err := d.target(raw)
	if err != nil || !ok {
		return "", false, err
	}
	if d.tooLarge(rel, len(raw)) {
		d.put(rel, buffer{dropped: true})
		return "", false, nil
	}
	return rel, true, nil
}

func (d *documents) didOpen(raw json.RawMessage) error {
	rel, decode, err := d.admit(raw)
	if !decode {
		return err
	}
	var p struct {
		TextDocument struct {
			Text string `json:"text"`
		} `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	d.put(rel, buffer{text: p.TextDocument.Text})
	return nil
}

func (d *documents) didChange(raw json.RawMessage) error {
	rel, decode, err := d.admit(raw)
	if !decode {
		return err
	}
	var p struct {
		ContentChanges []struct {
			Range *json.RawMessage `json:"range"`
			Text  string           `json:"text"`
		} `json:"contentChanges"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if len(p.ContentChanges) == 0 {
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
	d.put(rel, b)
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
		if b, ok := d.open[rel]; ok {
			d.total -= cost(rel, b)
			delete(d.open, rel)
		}
		d.mu.Unlock()
	}
	return nil
}

// size is what the open buffers count against the cap.
func (d *documents) size() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total
}

// overlay returns the buffer of rel when the editor has it open.
func (d *documents) overlay(rel string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.open[rel]
	if !ok || b.unknown || b.dropped {
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
	if b.dropped {
		return fmt.Errorf("%s is open in the editor but too large for the server to follow, so its unsaved changes cannot be checked; ask the user to save and close it, then try again", rel)
	}
	disk, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(rel)))
	if b.unknown || err != nil && !os.IsNotExist(err) || string(disk) != b.text {
		return fmt.Errorf("%s has unsaved changes in the editor; ask the user to save or discard them, then try again", rel)
	}
	return nil
}
