package agent

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/session"
)

// Files the agent has seen can change on disk behind its back (the user edits, a build writes).
// The session remembers a hash of each file as the agent last read or wrote it; when the editor's
// watcher reports a change that does not match, the file is stale: the next model call is told,
// and the largest-items view marks it.

// fileHash hashes rel through an os.Root on the workspace (hashFile); false when it cannot be
// read as a regular file there.
func (s *Session) fileHash(rel string) (string, bool) {
	root, err := os.OpenRoot(s.opts.Workspace)
	if err != nil {
		return "", false
	}
	defer root.Close()
	h, err := hashFile(root, rel)
	return h, err == nil
}

// rememberLocked records what the agent now knows of rel.
func (s *Session) rememberLocked(rel, hash string) {
	if s.seen == nil {
		s.seen = map[string]string{}
	}
	s.seen[rel] = hash
	delete(s.stale, rel)
	s.unannounced = slices.DeleteFunc(s.unannounced, func(p string) bool { return p == rel })
}

// SeenFiles are the workspace-relative files the agent has read or written, sorted: the ones
// whose changes on disk matter to it.
func (s *Session) SeenFiles() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.seen))
}

// remember hashes rel as the agent just read or wrote it.
func (s *Session) remember(rel string) {
	h, ok := s.fileHash(rel)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rememberLocked(rel, h)
}

// FilesChanged tells the session that these workspace-relative files changed on disk. Those the
// agent has read and whose content is no longer what it saw become stale.
func (s *Session) FilesChanged(paths []string) {
	type check struct{ rel, hash string }
	var checks []check
	s.mu.Lock()
	for _, p := range paths {
		if h, ok := s.seen[p]; ok {
			checks = append(checks, check{p, h})
		}
	}
	s.mu.Unlock()
	for _, c := range checks {
		now, ok := s.fileHash(c.rel)
		if ok && now == c.hash {
			continue
		}
		s.mu.Lock()
		if s.stale == nil {
			s.stale = map[string]bool{}
		}
		if !s.stale[c.rel] {
			s.stale[c.rel] = true
			s.unannounced = append(s.unannounced, c.rel)
		}
		s.mu.Unlock()
	}
}

// Stale reports whether rel changed on disk since the agent read it.
func (s *Session) Stale(rel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stale[rel]
}

// announceStaleLocked adds a note about files changed on disk to the last user message, once per
// change, so the model does not rely on a stale read.
func (s *Session) announceStaleLocked() {
	if len(s.unannounced) == 0 || len(s.history) == 0 {
		return
	}
	last := s.history[len(s.history)-1]
	if last.Role != genai.RoleUser {
		return
	}
	slices.Sort(s.unannounced)
	note := fmt.Sprintf("[Note from the harness: these files changed on disk after you read them: %s. Read them again before relying on their content.]", strings.Join(s.unannounced, ", "))
	// A copy: the message may already have been sent in an earlier request, which must stay as sent.
	c := &genai.Content{Role: last.Role, Parts: append(slices.Clone(last.Parts), &genai.Part{Text: note})}
	s.history[len(s.history)-1] = c
	s.ledger.Replace(len(s.history)-1, c)
	s.journal(session.Record{Kind: session.KindAmend, Index: len(s.history) - 1, Content: c})
	s.unannounced = nil
}
