package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// SummaryFile is the name, in a session's directory, of the small file that answers a listing
// without replaying the log.
const SummaryFile = "summary.json"

// summaryFile is what SummaryFile holds: the log's Summary when it was LogSize bytes long. The
// log only grows, so its size is its version: a summary whose LogSize is not the log's size now
// is stale. A time would not do: a record appended within the clock's tick would go unseen.
type summaryFile struct {
	Summary
	LogSize int64 `json:"logSize"`
}

// add folds one record into s the way Replay does for the fields of a Summary, so a log can keep
// its summary as it goes (TestSummaryMatchesReplay holds the two together).
func (s *Summary) add(r Record) {
	if !r.Time.IsZero() {
		s.LastActivity = r.Time
	}
	switch r.Kind {
	case KindMeta:
		if r.Meta != nil && r.Meta.ID != "" {
			s.ID, s.Parent, s.From, s.Subagent = r.Meta.ID, r.Meta.Parent, r.Meta.From, r.Meta.Subagent
		}
	case KindTurnStart:
		s.Turns = max(s.Turns, r.Turn)
		if s.Title == "" {
			s.Title = r.Text
		}
	case KindUsage:
		if r.Usage != nil {
			s.Calls++
			s.LastPrompt = r.Usage.Prompt
		}
	case KindCompaction:
		// Replay also checks that the record fits the history; the agent writes none that does
		// not, and a log that holds one is read again by Load, not through this.
		if c := r.Compaction; c != nil && c.Head != nil && c.Split >= 1 {
			s.Checkpoints++
		}
	}
}

// readSummary returns the summary of the session in dir if it is current: it exists, decodes,
// and was written when the log was logSize bytes long, as it is now.
func readSummary(dir string, logSize int64) (Summary, bool) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return Summary{}, false
	}
	var f summaryFile
	if err := json.Unmarshal(b, &f); err != nil || f.LogSize != logSize || f.ID == "" {
		return Summary{}, false
	}
	f.Err = ""
	return f.Summary, true
}

// writeSummary replaces dir's summary, atomically: a reader sees the old one or the new one. It
// is a cache, so it is not synced, and a failure only costs the next listing a replay of the log.
func writeSummary(dir string, s Summary, logSize int64) error {
	b, err := json.Marshal(summaryFile{Summary: s, LogSize: logSize})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".summary-*.tmp") // 0600, like every file of the session
	if err != nil {
		return fmt.Errorf("write session summary: %w", err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, SummaryFile))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write session summary: %w", err)
	}
	return nil
}

// List describes every session but those skip names (nil for none), most recent first. A session
// is answered from its summary while that is current; a log without one (written before
// summaries existed, or cut by a crash mid-turn) is replayed, and its summary written for the next
// listing. A directory without a log, or with an empty one, is a session being created (or one
// a crash stopped before its first record): there is nothing to list or resume yet. A log that
// cannot be read is listed with its error; it never hides the others.
func (st *Store) List(skip func(id string) bool) ([]Summary, error) {
	entries, err := os.ReadDir(filepath.Join(st.dir, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []Summary
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() || !validID(id) || skip != nil && skip(id) {
			continue
		}
		fi, err := os.Stat(filepath.Join(st.Dir(id), "events.jsonl"))
		if err == nil && fi.Size() == 0 || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			if s, ok := readSummary(st.Dir(id), fi.Size()); ok {
				out = append(out, s)
				continue
			}
		}
		snap, size, err := st.load(id)
		if err != nil {
			out = append(out, Summary{ID: id, Err: err.Error()})
			continue
		}
		s := snap.Brief()
		_ = writeSummary(st.Dir(id), s, size) // best effort: the next listing replays again
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Summary) int { return b.LastActivity.Compare(a.LastActivity) })
	return out, nil
}
