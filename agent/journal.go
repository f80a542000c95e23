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
func (o *Options) journal(r journal.Record) {
	if o.Journal == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = o.Now()
	}
	if err := o.Journal.Append(r); err != nil {
		o.Logger.Warn("session not saved", "session", o.ID, "error", err)
	}
}

func (o *Options) sync() {
	if o.Journal == nil {
		return
	}
	if err := o.Journal.Sync(); err != nil {
		o.Logger.Warn("session not synced", "session", o.ID, "error", err)
	}
}

// appendRecord is the journal entry for a message appended to the history.
func appendRecord(c *genai.Content) journal.Record {
	return journal.Record{Kind: journal.KindAppend, Content: c}
}
