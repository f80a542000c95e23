package agent

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
)

// Files the agent has seen can change on disk behind its back (the user edits, a build writes).
// The session remembers a hash of each file as the agent last read or wrote it; when the editor's
// watcher reports a change that does not match, the file is stale: the next model call is told,
// and the largest-items view marks it.

// fileHash hashes rel through an os.Root on the workspace (hashFile); false when it cannot be
// read as a regular file there.
func (o *Options) fileHash(rel string) (string, bool) {
	root, err := os.OpenRoot(o.Workspace)
	if err != nil {
		return "", false
	}
	defer root.Close()
	h, err := hashFile(root, rel)
	return h, err == nil
}

// saw hashes rel as the agent just read or wrote it.
func (t *Tracker) saw(rel string) {
	h, ok := t.opts.fileHash(rel)
	if !ok {
		return
	}
	t.remember(rel, h)
}

// FilesChanged tells the session that these workspace-relative files changed on disk. Those the
// agent has read and whose content is no longer what it saw become stale.
func (t *Tracker) FilesChanged(paths []string) {
	for rel, hash := range t.seenHashes(paths) {
		now, ok := t.opts.fileHash(rel)
		if ok && now == hash {
			continue
		}
		t.markStale(rel)
	}
}

// announceStaleLocked adds a note about paths, files changed on disk, to the last user message,
// so the model does not rely on a stale read. It tells whether it did: the caller then tells the
// tracker they were announced, once per change. s.conv.mu must be held.
func (c *Conversation) announceStaleLocked(paths []string) bool {
	if len(paths) == 0 {
		return false
	}
	return c.addNotesLocked(fmt.Sprintf("[Note from the harness: these files changed on disk after you read them: %s. Read them again before relying on their content.]", strings.Join(paths, ", ")))
}

// addNotesLocked adds text parts to the last message when it is the user's: the one the next call
// sends for the first time, after any function responses it holds, so a call is never separated
// from its response. It tells whether it did. s.conv.mu must be held.
func (c *Conversation) addNotesLocked(notes ...string) bool {
	if len(c.history) == 0 {
		return false
	}
	last := c.history[len(c.history)-1]
	if last.Role != genai.RoleUser {
		return false
	}
	parts := slices.Clone(last.Parts)
	for _, n := range notes {
		parts = append(parts, &genai.Part{Text: n})
	}
	// A copy: the message may already have been sent in an earlier request, which must stay as sent.
	m := &genai.Content{Role: last.Role, Parts: parts}
	c.history[len(c.history)-1] = m
	c.ledger.Replace(len(c.history)-1, m)
	c.opts.journal(journal.Record{Kind: journal.KindAmend, Index: len(c.history) - 1, Content: m})
	return true
}
