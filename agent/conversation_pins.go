package agent

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
	"google.golang.org/genai"
)

// PinRequest is what the user asks to pin.
type PinRequest struct {
	Kind string // contextwin.PinFile or contextwin.PinMessage
	Path string // a file pin's path, relative to the workspace or absolute inside it
	Text string // a message pin's text
	Turn int    // the earlier turn a message comes from; 0 when typed now
}

// PinError is a pin that cannot be made or removed, in words for the user: front-ends answer it
// as bad arguments.
type PinError struct{ Msg string }

func (e *PinError) Error() string { return e.Msg }

func pinError(format string, a ...any) error { return &PinError{Msg: fmt.Sprintf(format, a...)} }

// Unpin removes a pin. The history keeps what the model was shown; the next compaction's head
// leaves it out.
func (c *Conversation) Unpin(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.pins, func(p contextwin.Pin) bool { return p.ID == id })
	if i < 0 {
		return pinError("no pin %q in session %s", id, c.opts.ID)
	}
	c.pins = slices.Delete(c.pins, i, i+1)
	c.pending = slices.DeleteFunc(c.pending, func(x string) bool { return x == id })
	c.opts.journal(journal.Record{Kind: journal.KindUnpin, Text: id})
	return nil
}

// Pins returns the session's pins, in the order they were pinned.
func (c *Conversation) Pins() []contextwin.Pin {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.pins)
}

// announcePinsLocked adds the pins not yet in the history to the last user message (see
// announceStaleLocked), and tells whether it did. s.conv.mu must be held.
func (c *Conversation) announcePinsLocked() bool {
	var notes []string
	for _, id := range c.pending {
		if i := slices.IndexFunc(c.pins, func(p contextwin.Pin) bool { return p.ID == id }); i >= 0 {
			notes = append(notes, c.pins[i].Render())
		}
	}
	if len(notes) == 0 || !c.addNotesLocked(notes...) {
		return false
	}
	c.pending = nil
	return true
}

// headPinsLocked are the pins the new head restates: those still pinned, each as fresh read
// (those pinned since fresh was read as they are). Pins whose file changed are journaled again,
// and none is pending any more. s.conv.mu must be held.
func (c *Conversation) headPinsLocked(fresh []contextwin.Pin) []contextwin.Pin {
	for i, p := range c.pins {
		j := slices.IndexFunc(fresh, func(f contextwin.Pin) bool { return f.ID == p.ID })
		if j < 0 || fresh[j].Text == p.Text {
			continue
		}
		p.Text = fresh[j].Text
		fence(&p)
		p.Tokens = c.ledger.Estimator.Tokens(contextwin.EstimateText(p.Render()))
		c.pins[i] = p
		c.opts.journal(journal.Record{Kind: journal.KindPin, Pin: &p})
	}
	c.pending = nil
	return slices.Clone(c.pins)
}

// repinLocked marks pending the pins the history no longer holds (after an undo, or on resume),
// so that the next call adds them again. s.conv.mu must be held.
func (c *Conversation) repinLocked() {
	held := map[string]bool{}
	for _, m := range c.history {
		if m == nil || m.Role != genai.RoleUser {
			continue
		}
		for _, p := range m.Parts {
			if p != nil && p.FunctionResponse == nil {
				if id := contextwin.PinID(p.Text); id != "" {
					held[id] = true
				}
			}
		}
	}
	c.pending = nil
	for _, p := range c.pins {
		if !held[p.ID] {
			c.pending = append(c.pending, p.ID)
		}
	}
}

// pinnedReads marks the messages holding a read_file result of a pinned file: a clearing keeps
// them. s.conv.mu must be held.
func (c *Conversation) pinnedReadsLocked() map[int]bool {
	paths := map[string]bool{}
	for _, p := range c.pins {
		if p.Kind == contextwin.PinFile {
			paths[p.Path] = true
		}
	}
	out := map[int]bool{}
	if len(paths) == 0 {
		return out
	}
	for i := 1; i < len(c.history); i++ {
		for _, call := range callsAnswered(c.history, i) {
			p, _ := call.Args["path"].(string)
			if call.Name != "read_file" || p == "" {
				continue
			}
			if filepath.IsAbs(p) {
				if r, ok := fspath.Within(filepath.Clean(c.opts.Workspace), filepath.Clean(p)); ok {
					p = r
				}
			}
			if paths[clean(p)] {
				out[i] = true
			}
		}
	}
	return out
}

// fence gives p a fence its text does not hold (contextwin.Pin.Fence): drawn at random, so a file
// pinned cannot guess it, and drawn again when the text comes to hold it (a model steered into
// writing it into the pinned file, read again at a compaction).
func fence(p *contextwin.Pin) {
	for p.Fence == "" || strings.Contains(p.Text, p.Fence) {
		p.Fence = rand.Text()[:16]
	}
}
