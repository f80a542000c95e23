package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/contextwin"
)

func TestCheckID(t *testing.T) {
	tests := []struct {
		id   string
		want string // "" when valid, else part of the error
	}{
		{"20261130-101500-a1b2c3", ""},
		{"crashed", ""},
		{"other_1", ""},
		{strings.Repeat("a", MaxIDLength), ""},
		{"", "empty"},
		{strings.Repeat("a", MaxIDLength+1), "longer than 64"},
		{"..", `not '.'`},
		{"../x", `not '.'`},
		{"a/b", `not '/'`},
		{`a\b`, `not '\\'`},
		{"/etc/passwd", `not '/'`},
		{"a\x00b", `not '\x00'`},
		{"a b", `not ' '`},
		{"séance", `not 'é'`},
		{"\xff", "not '\uFFFD'"},
	}
	for _, tt := range tests {
		err := CheckID(tt.id)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("CheckID(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// TestLoadStaysInTheStore: Load used to join any id to the store's path, so "../../x" read a
// log outside it.
func TestLoadStaysInTheStore(t *testing.T) {
	home := t.TempDir()
	st, err := OpenStore(filepath.Join(home, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Create(Meta{ID: "real", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(st.Dir("real"), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(home, "planted")
	if err := os.MkdirAll(planted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planted, "events.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("real"); err != nil {
		t.Fatalf("load a real session: %v", err)
	}
	for _, id := range []string{"../../planted", planted, "..", ""} {
		if _, err := st.Load(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Load(%q) = %v, want ErrNotFound", id, err)
		}
		if _, _, err := st.Resume(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resume(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

// TestReplayKeepsSummaryBlocks: a compaction record holds the head's summary blocks; one written
// before blocks existed (a merged summary) is read as one block, and an undo restores the blocks
// the compaction replaced.
func TestReplayKeepsSummaryBlocks(t *testing.T) {
	msg := func(role, text string) *genai.Content {
		return &genai.Content{Role: role, Parts: []*genai.Part{{Text: text}}}
	}
	appendRecs := func(cs ...*genai.Content) []Record {
		var out []Record
		for _, c := range cs {
			out = append(out, Record{Kind: KindAppend, Content: c})
		}
		return out
	}
	recs := appendRecs(msg("user", "task"), msg("model", "a"), msg("user", "b"), msg("model", "c"), msg("user", "d"))
	legacy := append(slices.Clone(recs), Record{Kind: KindCompaction, Compaction: &Compaction{Head: msg("user", "head"), Split: 3, Summary: "old", Covered: 2, Requests: []string{"b"}}})
	if got, want := Replay(legacy).Blocks, []contextwin.SummaryBlock{{From: 1, To: 2, Requests: []string{"b"}, Summary: "old"}}; !cmp.Equal(got, want) {
		t.Errorf("legacy record: blocks %+v, want %+v", got, want)
	}
	blocks := []contextwin.SummaryBlock{{From: 1, To: 2, Summary: "one"}, {From: 3, To: 4, Summary: "two"}}
	current := append(slices.Clone(recs), Record{Kind: KindCompaction, Compaction: &Compaction{Head: msg("user", "head"), Split: 3, Blocks: blocks}})
	snap := Replay(current)
	if !cmp.Equal(snap.Blocks, blocks) {
		t.Errorf("blocks %+v, want %+v", snap.Blocks, blocks)
	}
	if undone := Replay(append(current, Record{Kind: KindUndo})); undone.Blocks != nil || len(undone.History) != 5 {
		t.Errorf("after undo: blocks %+v, %d messages; want none and the 5 messages", undone.Blocks, len(undone.History))
	}
}
