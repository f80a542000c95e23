package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/journal/export"
)

// ExportArgs are reprise.export's arguments: the session (the current one by default), the
// format (md, the default, or html) and, optionally, where in the workspace to write it.
type ExportArgs struct {
	SessionID string `json:"sessionId,omitempty"`
	// SubagentID exports one of the session's subagents instead: its transcript.
	SubagentID string `json:"subagentId,omitempty"`
	Format     string `json:"format,omitempty"`
	Path       string `json:"path,omitempty"`
}

// exportResult answers reprise.export: the text, when no path was given (the editor saves it where
// the user says), else the file written; and the name a file of it would have.
type exportResult struct {
	Format   string `json:"format"`
	FileName string `json:"fileName"`
	Content  string `json:"content,omitempty"`
	Path     string `json:"path,omitempty"`
}

// export answers reprise.export: the session's log as export renders it, secrets masked.
func (s *server) export(ctx context.Context, a ExportArgs) (any, error) {
	format := a.Format
	if format == "" {
		format = export.FormatMarkdown
	}
	if format != export.FormatMarkdown && format != export.FormatHTML {
		return nil, invalidParams("%s: format must be md or html, got %q", CommandExport, a.Format)
	}
	var dest string
	if a.Path != "" {
		var err error
		if dest, err = s.exportPath(a.Path); err != nil {
			return nil, invalidParams("%s: %v", CommandExport, err)
		}
	}
	l, err := s.sessions.use(a.SessionID)
	if err != nil {
		return nil, err
	}
	id := l.ID()
	s.sessions.release(l)
	if s.sessions.store == nil {
		return nil, invalidParams("%s: sessions are not saved (see the server log), so there is nothing to export", CommandExport)
	}
	if a.SubagentID != "" {
		if id, err = s.subagentOf(id, a.SubagentID); err != nil {
			return nil, err
		}
	}
	recs, err := s.sessions.store.Records(id)
	if errors.Is(err, journal.ErrNotFound) {
		return nil, invalidParams("%s: session %s has nothing saved yet", CommandExport, id)
	}
	if err != nil {
		return nil, err
	}
	text, err := export.Render(export.Build(recs, s.secretsFor(s.cfg.get()).String), format)
	if err != nil {
		return nil, err
	}
	out := exportResult{Format: format, FileName: "reprise-" + id + "." + format}
	if dest == "" {
		out.Content = text
		return out, nil
	}
	if err := os.WriteFile(dest, []byte(text), 0o600); err != nil {
		return nil, fmt.Errorf("%s: %w", CommandExport, err)
	}
	out.Path = dest
	return out, nil
}

// exportPath is where a path given to reprise.export leads: in the workspace (relative to it, or
// absolute), not in its version control, its parent directory there already, never a directory.
func (s *server) exportPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, p)
	}
	real, err := fspath.ResolveExisting(filepath.Clean(p))
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		return "", err
	}
	rel, ok := fspath.Within(root, real)
	if !ok || rel == "." {
		return "", fmt.Errorf("path %s is outside the workspace", p)
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		switch part {
		case ".git", ".hg", ".svn", ".jj", ".sl", ".bzr":
			return "", fmt.Errorf("path %s is in the workspace's version control", p)
		}
	}
	if fi, err := os.Stat(filepath.Dir(real)); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("no folder %s in the workspace", filepath.Dir(p))
	}
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return "", fmt.Errorf("path %s is a folder", p)
	}
	return real, nil
}
