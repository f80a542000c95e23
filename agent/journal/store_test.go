package journal

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

// TestNewSessionOnDiskWithContent: a session made by New reaches the disk with its first content.
// Left empty (its settings changed in a loop meanwhile), it leaves nothing; once a turn starts, the
// log has its meta, its last settings and the turn, and resumes like any other.
func TestNewSessionOnDiskWithContent(t *testing.T) {
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Dir(st.Dir("x"))
	entries := func() []string {
		t.Helper()
		ents, err := os.ReadDir(sessions)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}

	empty, err := st.New(Meta{ID: "empty", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	p := contextwin.DefaultPolicy()
	for i := range 1000 {
		p.ContextBudget = 10000 + i
		if err := empty.Append(Record{Kind: KindSettings, Policy: &p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := empty.Sync(); err != nil {
		t.Fatal(err)
	}
	if len(empty.held) != 2 {
		t.Errorf("an empty log holds %d records, want its meta and its last settings", len(empty.held))
	}
	if err := empty.Close(); err != nil {
		t.Fatal(err)
	}
	if got := entries(); len(got) != 0 {
		t.Errorf("an empty session left %v", got)
	}
	if err := empty.Append(Record{Kind: KindTurnStart, Turn: 1, Text: "late"}); err == nil {
		t.Error("append after Close succeeded")
	}
	if got := entries(); len(got) != 0 {
		t.Errorf("an append after Close left %v", got)
	}

	log, err := st.New(Meta{ID: "real", Model: "m", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	p.ContextBudget = 9000
	for _, r := range []Record{
		{Kind: KindSettings, Policy: &p},
		{Kind: KindTurnStart, Turn: 1, Text: "hello"},
		{Kind: KindAppend, Content: genai.NewContentFromText("hello", genai.RoleUser)},
		{Kind: KindTurnEnd, StopReason: "end_turn"},
	} {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if got := entries(); !slices.Equal(got, []string{"real"}) {
		t.Errorf("sessions on disk %v, want [real]", got)
	}
	snap, err := st.Load("real")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Meta.ID != "real" || snap.Meta.Model != "m" || snap.Title != "hello" || len(snap.History) != 1 || snap.Policy == nil || snap.Policy.ContextBudget != 9000 {
		t.Errorf("loaded %+v", snap)
	}
	list, err := st.List(nil)
	if err != nil || len(list) != 1 || list[0].Title != "hello" {
		t.Errorf("List = %+v, %v", list, err)
	}

	// A restore point is content too.
	blob, err := st.New(Meta{ID: "blob", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blob.SaveBlob(1, "a.txt", []byte("before")); err != nil {
		t.Fatal(err)
	}
	if err := blob.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("blob"); err != nil {
		t.Errorf("a session with a restore point: %v", err)
	}
}
