package agent

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/fspath"
	"github.com/reprise-dev/reprise/agent/ignore"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// Pinned context (issue 27): items the user pins are never cleared or summarized. A new pin is
// added to the last user message before the next model call (never between a call and its
// response, and never into what was already sent); a compaction restates every pin in the head,
// a pinned file read again then; a clearing keeps the reads of pinned files. Unpinning drops the
// pin from the next head: it does not rewrite the prompt at once.

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

// Pin pins an item and returns it; it reaches the model at the next call, a running turn's
// included.
func (s *Session) Pin(ctx context.Context, r PinRequest) (contextwin.Pin, error) {
	p := contextwin.Pin{Kind: r.Kind, Turn: max(r.Turn, 0)}
	switch r.Kind {
	case contextwin.PinMessage:
		text := s.opts.Secrets.String(r.Text)
		if strings.TrimSpace(text) == "" {
			return p, pinError(`text is required for a "message" pin`)
		}
		if len([]rune(text)) > contextwin.RequestCap {
			text = contextwin.CapText(text, contextwin.RequestCap, "message", s.opts.saveRequest(text))
		}
		p.Text, p.Label = text, contextwin.PinLabel(text)
	case contextwin.PinFile:
		if strings.TrimSpace(r.Path) == "" {
			return p, pinError(`path is required for a "file" pin`)
		}
		rel, body, err := s.opts.readPinned(ctx, s.settings.toolsEnv(), r.Path)
		if err != nil {
			return p, err
		}
		p.Path, p.Label, p.Text = rel, rel, body
	default:
		return p, pinError(`kind must be "file" or "message", not %q`, r.Kind)
	}
	c := &s.conv
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pinSeq++
	p.ID = fmt.Sprintf("p%d", c.pinSeq)
	fence(&p)
	p.Tokens = c.ledger.Estimator.Tokens(contextwin.EstimateText(p.Render()))
	c.pins = append(c.pins, p)
	c.pending = append(c.pending, p.ID)
	s.opts.journal(journal.Record{Kind: journal.KindPin, Pin: &p})
	return p, nil
}

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

// secretFiles are names of files that hold credentials: never pinned, whatever read_file would
// mask (a pin rides in every prompt).
var secretFiles = []string{".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", ".npmrc", ".pypirc", "credentials*", "*.tfvars"}

// readPinned reads a file to pin as read_file reads it (confined to the workspace, an editor's
// unsaved buffer first, binary refused, secrets masked), capped to contextwin.PinFileCap
// characters, through env (a copy, which it changes). Secrets files, hidden and ignored paths are
// refused.
func (o *Options) readPinned(ctx context.Context, env *tools.Env, given string) (rel, body string, err error) {
	rel, err = o.pinnablePath(given)
	if err != nil {
		return "", "", err
	}
	env.MaxOutputChars, env.LargeOutputBytes = contextwin.PinFileCap, math.MaxInt
	res := tools.Run(ctx, env, tools.Call{Name: "read_file", Args: map[string]any{"path": rel}})
	switch {
	case res.IsError && strings.HasPrefix(res.Output, "path outside the workspace"):
		return "", "", pinError("path is outside the workspace: %s", given)
	case res.IsError:
		return "", "", pinError("cannot pin %s: %s", given, res.Output)
	}
	return rel, res.Output, nil
}

// pinnablePath is given as a workspace-relative, slash-separated path, or why it cannot be pinned.
func (o *Options) pinnablePath(given string) (string, error) {
	ws := filepath.Clean(o.Workspace)
	p := filepath.FromSlash(given)
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	rel, ok := fspath.Within(ws, filepath.Clean(p))
	if !ok || rel == "." {
		return "", pinError("path is outside the workspace: %s", given)
	}
	rel = filepath.ToSlash(rel)
	parts := strings.Split(rel, "/")
	for _, pat := range secretFiles {
		if ok, _ := path.Match(pat, parts[len(parts)-1]); ok {
			return "", pinError("%s is a secrets file; it is not pinned", given)
		}
	}
	if ignore.Hidden(rel) {
		return "", pinError("%s is a hidden path; it is not pinned", given)
	}
	m := ignore.New(os.DirFS(ws), ignore.Options{Getenv: os.Getenv})
	for i := range parts {
		if m.Ignored(strings.Join(parts[:i+1], "/"), i < len(parts)-1) {
			return "", pinError("%s is ignored (.gitignore or .repriseignore); it is not pinned", given)
		}
	}
	return rel, nil
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

// freshPins reads the pinned files again for a new head, without a lock held: the model gets
// each file as it is now. A file that can no longer be read keeps its last content.
func (s *Session) freshPins() []contextwin.Pin {
	pins, env := s.conv.Pins(), s.settings.toolsEnv()
	for i, p := range pins {
		if p.Kind != contextwin.PinFile {
			continue
		}
		if _, body, err := s.opts.readPinned(context.Background(), env, p.Path); err == nil {
			pins[i].Text = body
		}
	}
	return pins
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
