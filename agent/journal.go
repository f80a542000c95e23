package agent

import (
	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
)

// Journal saves what happens to a session (journal.Log implements it). Without one, nothing is
// saved and restore points are not kept.
type Journal interface {
	Append(r journal.Record) error
	Sync() error
}

// Blobs keeps restore points' file contents, and the texts of the edits an editor was shown
// (journal.Log implements it).
type Blobs interface {
	SaveBlob(turn int, rel string, data []byte) (string, error)
	SaveText(data []byte) (string, error)
	ReadBlob(name string) ([]byte, error)
}

// journal appends a record; a failure to save is logged, never fatal to the turn.
func (s *Session) journal(r journal.Record) {
	if s.opts.Journal == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = s.opts.Now()
	}
	if err := s.opts.Journal.Append(r); err != nil {
		s.opts.Logger.Warn("session not saved", "session", s.opts.ID, "error", err)
	}
}

func (s *Session) sync() {
	if s.opts.Journal == nil {
		return
	}
	if err := s.opts.Journal.Sync(); err != nil {
		s.opts.Logger.Warn("session not synced", "session", s.opts.ID, "error", err)
	}
}

// appendRecord is the journal entry for a message appended to the history.
func appendRecord(c *genai.Content) journal.Record {
	return journal.Record{Kind: journal.KindAppend, Content: c}
}
