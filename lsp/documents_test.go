package lsp

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// openParams is a didOpen's params for path under /ws with text.
func openParams(t *testing.T, path, text string) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": "file:///ws/" + path, "languageId": "go", "version": 1, "text": text}})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBufferPastTheCapIsNotDecoded: three 5 MiB buffers against a 8 MiB cap. The first is kept;
// the others are dropped before their text is copied out of the message (it used to be decoded,
// then dropped), and the agent reads them from disk.
func TestBufferPastTheCapIsNotDecoded(t *testing.T) {
	const size = 5 << 20
	d := newDocuments(8<<20, slog.New(slog.DiscardHandler))
	d.root = "/ws"
	text := strings.Repeat("x", size)
	msgs := []json.RawMessage{openParams(t, "a.txt", text), openParams(t, "b.txt", text), openParams(t, "c.txt", text)}
	if err := d.didOpen(msgs[0]); err != nil {
		t.Fatal(err)
	}
	for i, raw := range msgs[1:] {
		before := heapAllocated()
		if err := d.didOpen(raw); err != nil {
			t.Fatal(err)
		}
		if got := heapAllocated() - before; got > size/4 {
			t.Errorf("buffer %d past the cap allocated %d bytes, want far less than its %d", i+2, got, size)
		}
	}
	if got, want := d.size(), int64(len("a.txt")+size+len("b.txt")+len("c.txt")); got != want {
		t.Errorf("open buffers hold %d bytes, want %d (a.txt and two markers)", got, want)
	}
	for _, c := range []struct {
		path string
		held bool
	}{{"a.txt", true}, {"b.txt", false}, {"c.txt", false}} {
		if _, ok := d.overlay(c.path); ok != c.held {
			t.Errorf("overlay(%s) = %v, want %v", c.path, ok, c.held)
		}
	}
	// A change that fits again is kept; one that does not leaves the marker.
	change := func(path, text string) json.RawMessage {
		raw, _ := json.Marshal(map[string]any{"textDocument": map[string]any{"uri": "file:///ws/" + path, "version": 2}, "contentChanges": []any{map[string]any{"text": text}}})
		return raw
	}
	if err := d.didChange(change("b.txt", "small")); err != nil {
		t.Fatal(err)
	}
	if got, ok := d.overlay("b.txt"); !ok || got != "small" {
		t.Errorf("b.txt after a change that fits: %q %v", got, ok)
	}
	if err := d.didChange(change("b.txt", text)); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.overlay("b.txt"); ok {
		t.Error("b.txt after a change past the cap: still held")
	}
	if err := d.guard("b.txt"); err == nil || !strings.Contains(err.Error(), "too large for the server to follow") {
		t.Errorf("a write to b.txt: %v, want a refusal", err)
	}
}
