package agent

import (
	"context"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

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

// unpinnableDirs are the directories a pinned file may not be under: version control's internals
// and credential stores. Other dotfiles (.github/workflows/ci.yml, .eslintrc.json) may be pinned,
// as Copilot and Claude Code let a user attach them.
var unpinnableDirs = []string{".git", ".hg", ".svn", ".jj", ".sl", ".bzr", ".repo", ".ssh", ".gnupg", ".aws", ".azure", ".kube",
	".docker", ".gcloud", ".terraform.d"}

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
	for _, part := range parts[:len(parts)-1] {
		if slices.Contains(unpinnableDirs, part) {
			return "", pinError("%s is in %s, version control's or credentials' own; it is not pinned", given, part)
		}
	}
	m := ignore.New(os.DirFS(ws), ignore.Options{Getenv: os.Getenv})
	for i := range parts {
		if m.Ignored(strings.Join(parts[:i+1], "/"), i < len(parts)-1) {
			return "", pinError("%s is ignored (.gitignore or .repriseignore); it is not pinned", given)
		}
	}
	return rel, nil
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
