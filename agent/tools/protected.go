package tools

import (
	"bytes"
	"context"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/reprise-dev/reprise/agent/sandbox"
)

// A write to a protected path (sandbox.ProtectedPaths: hook managers' files, editors' settings,
// the hooks directory and included configuration of a repository) is what a command the user did
// not approve may not do, so write_file and edit_file do it only once the user approves that
// write. Version-control directories stay refused outright (vcsRefusal): the model edits the work
// tree, never a repository's metadata.

// WriteGrants are the protected files the user allowed always during the session: "Always
// allow" on a write remembers that one file, not the directory or the kind. Safe for concurrent
// use; the zero value grants nothing.
type WriteGrants struct {
	mu    sync.Mutex
	paths []string
}

func (g *WriteGrants) allow(key string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paths = append(g.paths, key)
}

func (g *WriteGrants) allowed(key string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.paths, key)
}

// protection says why p is protected, "" when it is not. The repositories considered are the
// workspace's and those whose work trees hold p (a .git in one of its parent directories), as git
// finds them from where the user commits.
func (e *Env) protection(p *place) string {
	if p.spill {
		return ""
	}
	parts := strings.Split(p.key, "/")
	repos := []string{"."}
	for i := 1; i < len(parts); i++ {
		dir := path.Join(parts[:i]...)
		if _, err := p.root.Lstat(path.Join(dir, ".git")); err == nil {
			repos = append(repos, dir)
		}
	}
	for _, g := range sandbox.ProtectedPaths(e.Workspace, repos) {
		if under(parts, strings.Split(g.Rel, "/")) {
			return g.Why
		}
	}
	return ""
}

// under reports whether the path of parts is prefix or inside it, comparing names as the file
// system may (case, the characters HFS+ ignores, Windows' trailing dots and short names).
func under(parts, prefix []string) bool {
	if len(parts) < len(prefix) {
		return false
	}
	for i, name := range prefix {
		if !strings.EqualFold(foldName(parts[i]), foldName(name)) {
			return false
		}
	}
	return true
}

// askWrite asks the user about a write to a protected path (verb: "write" or "edit") whose
// content was cur; ok is false when it must not happen, res then being the result to return. An
// answer can take minutes: a file that changed meanwhile is not written over.
func (e *Env) askWrite(ctx context.Context, call Call, p *place, given, verb string, cur existing) (res Result, ok bool) {
	why := e.protection(p)
	if why == "" || e.WriteGrants.allowed(p.key) {
		return Result{}, true
	}
	refused := func(msg string) (Result, bool) {
		r := failure(msg)
		r.Refused, r.Path = true, p.key
		return r, false
	}
	reason := given + " holds " + why
	if e.Approver == nil {
		return refused("refused: " + reason + "; writing it needs the user's approval, and nobody can be asked")
	}
	d, err := e.Approver.Approve(ctx, ApprovalRequest{CallID: call.ID, Command: verb + " " + e.Secrets.String(p.key),
		Reason: e.Secrets.String(reason), Rule: "writes to " + e.Secrets.String(p.key), File: p.key}.displayed())
	switch {
	case err != nil && ctx.Err() != nil:
		return refused("cancelled")
	case err != nil || d == Reject:
		return refused("refused by the user: " + reason + "; it was not written")
	case d == AlwaysAllow:
		e.WriteGrants.allow(p.key)
	}
	if now, problem := current(p, given); problem != "" || now.existed != cur.existed || !bytes.Equal(now.data, cur.data) {
		return refused(given + " changed while the user was asked; read it again before writing it")
	}
	return Result{}, true
}
