package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
)

// dyingJournal is a log as a kill -9 leaves it: every record from the first one die matches on is
// lost, as if the process died right before writing it.
type dyingJournal struct {
	log  *journal.Log
	die  func(r journal.Record) bool
	dead bool
}

func (j *dyingJournal) Append(r journal.Record) error {
	if j.dead || j.die(r) {
		j.dead = true
		return nil
	}
	return j.log.Append(r)
}

func (j *dyingJournal) Sync() error { return j.log.Sync() }

// lastAnswer is the error the resumed history gives the n-th call of its last message.
func lastAnswer(t *testing.T, s *Session, n int) string {
	t.Helper()
	h := s.Conversation().History()
	parts := h[len(h)-1].Parts
	if n >= len(parts) || parts[n].FunctionResponse == nil {
		t.Fatalf("the resumed history does not end with answers: %+v", h[len(h)-1])
	}
	msg, _ := parts[n].FunctionResponse.Response["error"].(string)
	return msg
}

// TestResumeAfterKillBetweenWriteAndRecord: a write_file leaves its restore point, writes the file,
// then records the new hash and, once all calls ran, their results. Killed between the write and
// either record, the session used to tell the model the call "was interrupted before it ran"
// although the file had changed (1 trial in 8 of the attack run). It now says the call may have
// run and the file changed, in the history and in the log.
func TestResumeAfterKillBetweenWriteAndRecord(t *testing.T) {
	for _, tt := range []struct {
		name string
		die  func(r journal.Record) bool
	}{
		{"before the hash", func(r journal.Record) bool { return r.Kind == journal.KindWrote }},
		{"before the results", func(r journal.Record) bool {
			return r.Kind == journal.KindAppend && r.Content.Role == genai.RoleUser && r.Content.Parts[0].FunctionResponse != nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, st, log := saved(t, fixtureOpts{files: map[string]string{"a.txt": "original\n"}},
				callTurn("write_file", map[string]any{"path": "a.txt", "content": "changed\n"}, sig), textTurn("done"))
			f.s.opts.Journal = &dyingJournal{log: log, die: tt.die}
			if _, err := f.run(t.Context(), "change a.txt"); err != nil {
				t.Fatal(err)
			}
			if data, _ := os.ReadFile(filepath.Join(f.ws, "a.txt")); string(data) != "changed\n" {
				t.Fatalf("a.txt = %q: the write did not happen", data)
			}
			s := resumeFrom(t, f, st, log)
			got := lastAnswer(t, s, 0)
			if !strings.Contains(got, "It may have run; the file changed: a.txt differs") || strings.Contains(got, "before this call ran") {
				t.Errorf("the model reads %q", got)
			}
			// The log holds the same answer: a second resume tells the same.
			data, _ := os.ReadFile(filepath.Join(st.Dir(f.s.ID()), "events.jsonl"))
			if !strings.Contains(string(data), "It may have run; the file changed") {
				t.Error("the answer is not in the log")
			}
		})
	}
}

// TestResumeAnswersByWhatTheFilesSay: logs written as a kill leaves them at each step, against
// the workspace as it is after. Only a call whose file changed, or that may have done anything
// (a command), is said to have maybe run.
func TestResumeAnswersByWhatTheFilesSay(t *testing.T) {
	hash := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	tests := []struct {
		name  string
		call  *genai.FunctionCall
		after []journal.Record // after the model message, before the kill
		// earlier are records of the same turn before the model message
		earlier []journal.Record
		blob    string // the restore point's content, saved as turn 1's a.txt
		disk    *string
		want    string
	}{
		{
			name: "restore point, file unchanged: killed before the write",
			call: &genai.FunctionCall{Name: "write_file", Args: map[string]any{"path": "a.txt", "content": "new\n"}},
			after: []journal.Record{{Kind: journal.KindRestorePoint, Turn: 1,
				RestorePoint: &journal.RestorePoint{Turn: 1, Path: "a.txt", Existed: true, Blob: "0001-a.txt"}}},
			blob: "original\n", disk: ptr("original\n"),
			want: "before this call ran (a.txt is as it was)",
		},
		{
			name: "restore point, file changed, absolute path",
			call: &genai.FunctionCall{Name: "edit_file", Args: map[string]any{"path": "WS/a.txt", "old": "original", "new": "new"}},
			after: []journal.Record{{Kind: journal.KindRestorePoint, Turn: 1,
				RestorePoint: &journal.RestorePoint{Turn: 1, Path: "a.txt", Existed: true, Blob: "0001-a.txt"}}},
			blob: "original\n", disk: ptr("new\n"),
			want: "It may have run; the file changed: a.txt differs",
		},
		{
			name: "created file now there",
			call: &genai.FunctionCall{Name: "write_file", Args: map[string]any{"path": "./b/c.txt", "content": "x"}},
			after: []journal.Record{{Kind: journal.KindRestorePoint, Turn: 1,
				RestorePoint: &journal.RestorePoint{Turn: 1, Path: "b/c.txt", Existed: false}}},
			want: "It may have run; the file changed: b/c.txt differs",
		},
		{
			name: "created file not there",
			call: &genai.FunctionCall{Name: "write_file", Args: map[string]any{"path": "b/c.txt", "content": "x"}},
			after: []journal.Record{{Kind: journal.KindRestorePoint, Turn: 1,
				RestorePoint: &journal.RestorePoint{Turn: 1, Path: "b/c.txt", Existed: false}}},
			want: "before this call ran (b/c.txt is as it was)",
		},
		{
			name: "no restore point: it never reached its write",
			call: &genai.FunctionCall{Name: "write_file", Args: map[string]any{"path": "a.txt", "content": "new\n"}},
			disk: ptr("edited by the user since\n"),
			want: answerNotRun,
		},
		{
			name: "written earlier in the turn, changed again",
			call: &genai.FunctionCall{Name: "edit_file", Args: map[string]any{"path": "a.txt", "old": "one", "new": "two"}},
			earlier: []journal.Record{
				{Kind: journal.KindRestorePoint, Turn: 1, RestorePoint: &journal.RestorePoint{Turn: 1, Path: "a.txt", Existed: true, Blob: "0001-a.txt"}},
				{Kind: journal.KindWrote, Hashes: map[string]string{"a.txt": hash("one\n")}},
			},
			blob: "original\n", disk: ptr("two\n"),
			want: "It may have run; the file changed: a.txt differs",
		},
		{
			name: "written earlier in the turn, as the agent left it",
			call: &genai.FunctionCall{Name: "edit_file", Args: map[string]any{"path": "a.txt", "old": "one", "new": "two"}},
			earlier: []journal.Record{
				{Kind: journal.KindRestorePoint, Turn: 1, RestorePoint: &journal.RestorePoint{Turn: 1, Path: "a.txt", Existed: true, Blob: "0001-a.txt"}},
				{Kind: journal.KindWrote, Hashes: map[string]string{"a.txt": hash("one\n")}},
			},
			blob: "original\n", disk: ptr("one\n"),
			want: "before this call ran (a.txt is as it was)",
		},
		{
			name: "a command",
			call: &genai.FunctionCall{Name: "run_command", Args: map[string]any{"command": "make install"}},
			want: answerMayHaveRun,
		},
		{
			name: "a read",
			call: &genai.FunctionCall{Name: "read_file", Args: map[string]any{"path": "a.txt"}},
			disk: ptr("original\n"),
			want: answerNotRun,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if tt.disk != nil {
				writeFiles(t, ws, map[string]string{"a.txt": *tt.disk})
			}
			if strings.Contains(tt.want, "b/c.txt differs") {
				writeFiles(t, ws, map[string]string{"b/c.txt": "x"})
			}
			if p, ok := tt.call.Args["path"].(string); ok {
				tt.call.Args["path"] = strings.Replace(p, "WS", ws, 1)
			}
			st, err := journal.OpenStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			log, err := st.Create(journal.Meta{ID: "crashed", Workspace: ws, Created: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if tt.blob != "" {
				if _, err := log.SaveBlob(1, "a.txt", []byte(tt.blob)); err != nil {
					t.Fatal(err)
				}
			}
			recs := []journal.Record{
				{Kind: journal.KindTurnStart, Turn: 1, Text: "do it"},
				{Kind: journal.KindAppend, Content: genai.NewContentFromText("do it", genai.RoleUser)},
			}
			recs = append(recs, tt.earlier...)
			recs = append(recs, journal.Record{Kind: journal.KindAppend, Content: &genai.Content{Role: genai.RoleModel,
				Parts: []*genai.Part{{FunctionCall: tt.call, ThoughtSignature: []byte("sig")}}}})
			recs = append(recs, tt.after...)
			for _, r := range recs {
				if err := log.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			log.Close()
			log2, snap, err := st.Resume("crashed")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { log2.Close() })
			client, err := gemini.New(t.Context(), gemini.Config{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Resume(Options{Workspace: ws, Model: client, StateDir: t.TempDir(), Journal: log2, Blobs: log2}, snap)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			if got := lastAnswer(t, s, 0); !strings.Contains(got, tt.want) {
				t.Errorf("the model reads %q, want %q", got, tt.want)
			}
		})
	}
}
