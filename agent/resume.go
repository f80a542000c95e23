package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// Resume rebuilds a saved session: its live history exactly as it was last sent (the compacted
// view), checkpoints, totals and the harness state. opts.Journal is the reopened log; a history
// left with unanswered calls by a crash gets the answers Replay made, saved to the log too.
func Resume(opts Options, snap *journal.Snapshot) (*Session, error) {
	opts.ID = snap.Meta.ID
	if snap.Policy != nil && opts.ContextPolicy == (contextwin.Policy{}) {
		opts.ContextPolicy = *snap.Policy
	}
	s, err := New(opts)
	if err != nil {
		return nil, fmt.Errorf("resume session %s: %w", snap.Meta.ID, err)
	}
	// Nothing else holds s yet: its parts are filled without their locks.
	h := snap.History
	c := &s.conv
	c.history = slices.Clone(h)
	if a := snap.AnchorLen; a > 0 && a <= len(h) && snap.LastPrompt > 0 {
		c.ledger.Reset(h[:a])
		c.ledger.Observe(snap.LastPrompt)
		for _, m := range h[a:] {
			c.ledger.Append(m)
		}
	} else {
		c.ledger.Reset(h)
	}
	c.task, c.blocks = snap.Task, slices.Clone(snap.Blocks)
	c.checkpoints = slices.Clone(snap.Checkpoints)
	c.undo = slices.Clone(snap.Undo)
	c.turns = snap.Turns
	c.transcript = slices.Clone(snap.Transcript)
	c.pins, c.pinSeq = slices.Clone(snap.Pins), snap.PinSeq
	for i := range c.pins {
		fence(&c.pins[i])
	}
	s.conv.repinLocked()
	b := &s.bill
	b.totals, b.calls, b.lastPrompt = snap.Totals, snap.Calls, snap.LastPrompt
	b.capped = b.totals.Capped(s.opts.ContextPolicy)
	s.memo.plan, s.memo.notes = slices.Clone(snap.Plan), slices.Clone(snap.Notes)
	t := &s.files
	t.verdict = snap.Verdict
	t.restorePoints = slices.Clone(snap.RestorePoints)
	t.modified = snap.ModifiedFiles()
	t.seen = map[string]string{}
	for p, hash := range snap.Wrote {
		if b, err := hex.DecodeString(hash); err == nil {
			t.seen[p] = string(b)
		}
	}
	if !snap.LastActivity.IsZero() {
		s.loop.lastActivity = snap.LastActivity
	}
	if snap.Closed != nil && snap.Unanswered != nil {
		s.answerUnanswered(snap.Unanswered, snap.Closed)
	}
	if snap.Closed != nil {
		c.transcript = append(c.transcript, journal.Entry{Content: snap.Closed, Turn: c.turns})
		s.opts.journal(appendRecord(snap.Closed))
	}
	if snap.Interrupted {
		s.endTurn(StopCancelled, "", b.calls)
		s.opts.sync()
	}
	return s, nil
}

// Answers to calls a crash left without results, by what the files say (answerUnanswered).
const (
	// answerNotRun is Replay's own: nothing shows the call ran.
	answerNotRun = "interrupted: the server stopped before this call ran; run it again if it is still needed"
	// answerUnchanged: the call's file is as it was when the call was asked.
	answerUnchanged = "interrupted: the server stopped before this call ran (%s is as it was); run it again if it is still needed"
	// answerFileChanged: the call's file differs from its restore point.
	answerFileChanged = "interrupted: the server stopped before this call's result was saved. It may have run; the file changed: %s differs from what it was before the call. Read it before running the call again."
	// answerMayHaveRun: a command, or a tool of an MCP server, whose effects the log cannot tell.
	answerMayHaveRun = "interrupted: the server stopped before this call's result was saved. It may have run, in whole or in part: check what it does before running it again."
)

// readOnlyTools change nothing: whether they ran does not matter.
var readOnlyTools = map[string]bool{"read_file": true, "list_files": true, "search": true, "mcp_find_tools": true}

// answerUnanswered rewrites the answers Replay gave to the calls a crash left without results
// (closed, one function response per call, in order), by what the workspace says now. A write
// leaves a restore point, changes the file, then records its hash: a kill between the change and
// the record left the file changed although the log has no result, and the model was told the
// call "was interrupted before it ran" (1 run in 8 of an attack test). A file tool's call whose
// file differs from before it is now said to have maybe run; a command, which leaves no trace in
// the log, may always have.
func (s *Session) answerUnanswered(u *journal.Unanswered, closed *genai.Content) {
	root, err := os.OpenRoot(s.opts.Workspace)
	if err != nil {
		return // Replay's answers stay
	}
	defer root.Close()
	for i, p := range closed.Parts {
		if p.FunctionResponse == nil || i >= len(u.Calls) {
			continue
		}
		fc := u.Calls[i]
		answer := answerNotRun
		switch fc.Name {
		case "write_file", "edit_file":
			answer = s.fileCallAnswer(root, u, fc)
		default:
			if !readOnlyTools[fc.Name] {
				answer = answerMayHaveRun
			}
		}
		p.FunctionResponse.Response = map[string]any{"error": answer}
	}
}

// fileCallAnswer judges a write_file or edit_file call by its file: changed since before the
// call (its restore point, or what the agent last left there), or not.
func (s *Session) fileCallAnswer(root *os.Root, u *journal.Unanswered, fc *genai.FunctionCall) string {
	arg, _ := fc.Args["path"].(string)
	rel, ok := s.opts.workspaceRel(arg)
	if !ok {
		return answerNotRun
	}
	if _, ok := u.Since[rel]; ok { // written and recorded: it ran, its result is what was lost
		return fmt.Sprintf(answerFileChanged, rel)
	}
	now, err := hashFile(root, rel)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf(answerFileChanged, rel) // not a readable regular file any more
	}
	for _, p := range u.Points {
		if p.Path != rel {
			continue
		}
		if !p.Existed {
			if exists {
				return fmt.Sprintf(answerFileChanged, rel)
			}
			return fmt.Sprintf(answerUnchanged, rel)
		}
		if s.opts.Blobs == nil {
			return answerMayHaveRun
		}
		before, err := s.opts.Blobs.ReadBlob(p.Blob)
		if err != nil {
			return answerMayHaveRun
		}
		if sum := sha256.Sum256(before); !exists || now != string(sum[:]) {
			return fmt.Sprintf(answerFileChanged, rel)
		}
		return fmt.Sprintf(answerUnchanged, rel)
	}
	// Changed earlier in the same turn: no new restore point, what the agent left is the measure.
	earlier := s.files.hasPoint(s.conv.turn(), rel)
	if h, ok := u.Before[rel]; ok && earlier {
		if b, err := hex.DecodeString(h); err == nil && (!exists || now != string(b)) {
			return fmt.Sprintf(answerFileChanged, rel)
		}
		return fmt.Sprintf(answerUnchanged, rel)
	}
	// No restore point since the call was asked: it never reached its write.
	return answerNotRun
}

// workspaceRel is a tool's path argument as the restore points name it: workspace-relative,
// slash-separated; false for one outside the workspace.
func (o *Options) workspaceRel(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(o.Workspace, p)
		if err != nil {
			return "", false
		}
		p = r
	}
	p = filepath.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) || filepath.IsAbs(p) {
		return "", false
	}
	return filepath.ToSlash(p), true
}
