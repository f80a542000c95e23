package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/agent/journal/export"
	"github.com/reprise-dev/reprise/agent/secret"
)

const sessionsUsage = `Usage: reprise sessions [list | show ID | checkpoints ID [N] | fork ID [N | --turn T] | export ID [--format md|html] [-o FILE]] [--workspace DIR]

  list               the saved sessions of the workspace, most recent first (the default)
  show ID            one session: turns, model calls, tokens, files modified, last verdict
  checkpoints ID     the session's checkpoints, newest first
  checkpoints ID N   checkpoint N in full
  fork ID            a new session, as session ID is now
  fork ID N          a new session from right after checkpoint N of session ID
  fork ID --turn T   a new session from just before the message of turn T (a rewind that keeps
                     the original); neither fork touches session ID or the files
  export ID [--format md|html] [-o FILE]
                     the whole conversation with each turn's tokens and dollars, as Markdown
                     (the default) or one self-contained HTML page, on stdout or into FILE (its
                     extension, .html or .md, picks the format when --format is not given)
  --workspace DIR    the workspace whose sessions to show (default: the current directory)

A turn is one prompt of the user; it takes one model call or several when the agent uses tools.
`

// sessionsCmd shows and forks saved sessions without an editor:
// reprise sessions [list | show ID | checkpoints ID [N] | fork ID [N | --turn T]] [--workspace DIR].
func sessionsCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if askedHelp(args) {
		fmt.Fprint(stdout, sessionsUsage)
		return nil
	}
	ws := "."
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--workspace" && i+1 < len(args):
			ws = args[i+1]
			i++
		default:
			rest = append(rest, a)
		}
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	home, err := stateHome(getenv)
	if err != nil {
		return err
	}
	st, err := journal.OpenStore(journal.WorkspaceDir(home, abs))
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	switch {
	case rest[0] == "list" && len(rest) == 1:
		return listSessions(st, abs, stdout)
	case rest[0] == "show" && len(rest) == 2:
		snap, err := st.Load(rest[1])
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, describeSession(snap))
		return nil
	case rest[0] == "checkpoints" && (len(rest) == 2 || len(rest) == 3):
		return printCheckpoints(st, rest[1:], stdout, stderr)
	case rest[0] == "fork" && len(rest) >= 2 && len(rest) <= 4:
		return forkSession(st, rest[1:], stdout, stderr)
	case rest[0] == "export" && len(rest) >= 2:
		return exportSession(st, rest[1:], stdout, stderr, getenv)
	}
	fmt.Fprint(stderr, sessionsUsage)
	return errUsage
}

// forkSession saves a new session from a point of another: args are the parent's id, then a
// checkpoint number or --turn and a turn number, or nothing (as it is now).
func forkSession(st *journal.Store, args []string, stdout, stderr io.Writer) error {
	var at journal.ForkPoint
	bad := func() error {
		fmt.Fprint(stderr, sessionsUsage)
		return errUsage
	}
	switch {
	case len(args) == 2 && args[1] != "--turn":
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return fmt.Errorf("fork: checkpoint must be a number (1 or more), got %q", args[1])
		}
		at.Checkpoint = n
	case len(args) == 3 && args[1] == "--turn":
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 {
			return fmt.Errorf("fork: turn must be a number (1 or more), got %q", args[2])
		}
		at.Turn = n
	case len(args) != 1:
		return bad()
	}
	id := agent.NewID(time.Now())
	if err := st.Fork(args[0], at, journal.Meta{ID: id}); err != nil {
		return err
	}
	snap, err := st.Load(id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "session %s: forked from session %s at %s (%s, %s)\n", id, args[0], at, count(snap.Turns, "turn"), count(len(snap.Checkpoints), "checkpoint"))
	fmt.Fprintf(stdout, "The files on disk were not changed. Continue the fork with: reprise run --resume %s\n", id)
	return nil
}

// exportSession writes a session for people: args are its id, then --format and -o.
func exportSession(st *journal.Store, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	id, format, out := args[0], "", ""
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "--format" && i+1 < len(args):
			format = args[i+1]
			i++
		case args[i] == "-o" && i+1 < len(args):
			out = args[i+1]
			i++
		default:
			fmt.Fprint(stderr, sessionsUsage)
			return errUsage
		}
	}
	if format == "" {
		format = export.FormatMarkdown
		if ext := strings.ToLower(filepath.Ext(out)); ext == ".html" || ext == ".htm" {
			format = export.FormatHTML
		}
	}
	recs, err := st.Records(id)
	if err != nil {
		return err
	}
	// The log holds what the session masked; masked again with today's secrets.
	text, err := export.Render(export.Build(recs, secret.FromEnv(getenv).String), format)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = io.WriteString(stdout, text)
		return err
	}
	if err := os.WriteFile(out, []byte(text), 0o600); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(stderr, "reprise: session %s exported to %s\n", id, out)
	return nil
}

// listSessions prints the workspace's saved sessions, one a line.
func listSessions(st *journal.Store, abs string, stdout io.Writer) error {
	list, err := st.List(nil)
	if err != nil {
		return err
	}
	// A subagent's session is its parent's: sessions show PARENT lists them.
	list = slices.DeleteFunc(list, func(s journal.Summary) bool { return s.Subagent != "" })
	if len(list) == 0 {
		fmt.Fprintf(stdout, "no saved session for %s\n", abs)
		return nil
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "id\tlast activity\tturns\tmodel calls\tlast prompt\tcheckpoints\ttitle")
	for _, s := range list {
		if s.Err != "" {
			fmt.Fprintf(w, "%s\t\t\t\t\t\tunreadable: %s\n", s.ID, s.Err)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", s.ID, s.LastActivity.Local().Format(time.DateTime), s.Turns, s.Calls, s.LastPrompt, s.Checkpoints, s.Title)
	}
	return w.Flush()
}

// printCheckpoints prints a session's checkpoints, newest first, or one whole: args are the
// session's id and, optionally, the checkpoint's number.
func printCheckpoints(st *journal.Store, args []string, stdout, stderr io.Writer) error {
	snap, err := st.Load(args[0])
	if err != nil {
		return err
	}
	cps := snap.Checkpoints
	if len(args) == 1 {
		fmt.Fprintf(stdout, "Checkpoint History (%d total):\n", len(cps))
		for i := len(cps) - 1; i >= 0; i-- {
			fmt.Fprintf(stdout, "  %d. %s\n", cps[i].N, cps[i].Title)
		}
		return nil
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 || n > len(cps) {
		fmt.Fprintf(stderr, "reprise sessions: no checkpoint %q in session %s (it has %d)\n", args[1], args[0], len(cps))
		return errUsage
	}
	fmt.Fprint(stdout, cps[n-1].Markdown())
	return nil
}

// describeSession renders a saved session for people: one fact a line, counts with their nouns,
// "none" for what is empty.
func describeSession(s *journal.Snapshot) string {
	var b strings.Builder
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(&b, "session %s · %s\n", s.Meta.ID, title)
	switch {
	case s.Meta.Subagent != "":
		fmt.Fprintf(&b, "subagent of    session %s · «%s»\n", s.Meta.Parent, s.Meta.Subagent)
	case s.Meta.Parent != "":
		fmt.Fprintf(&b, "forked from    session %s at %s\n", s.Meta.Parent, s.Meta.From)
	}
	fmt.Fprintf(&b, "created        %s\n", s.Meta.Created.Local().Format(time.DateTime))
	fmt.Fprintf(&b, "last activity  %s\n", s.LastActivity.Local().Format(time.DateTime))
	fmt.Fprintf(&b, "activity       %s · %s\n", count(s.Turns, "turn"), count(s.Calls, "model call"))
	fmt.Fprintf(&b, "tokens         last prompt %s · %s input billed · %s output\n",
		commas(s.LastPrompt), commas(s.Totals.InputTokens), commas(s.Totals.OutputTokens))
	fmt.Fprintf(&b, "cost           %s (%s cached)\n", s.Totals.CostText(), commas(s.Totals.CachedTokens))
	if line := s.Totals.Subagents.Text(); line != "" {
		fmt.Fprintf(&b, "subagents      %s, counted above\n", line)
		for _, sa := range s.Subagents {
			fmt.Fprintf(&b, "  %s  %-9s «%s» · %s · %s · %s\n", sa.ID, sa.Status, sa.Description, sa.Model, count(sa.Calls, "call"), sa.Totals.CostText())
		}
		b.WriteString("  (each is saved as a session of its own: reprise sessions show ID)\n")
	}
	fmt.Fprintf(&b, "history        %s · %s\n", count(len(s.History), "message"), count(len(s.Checkpoints), "checkpoint"))
	files := "none"
	if m := s.ModifiedFiles(); len(m) > 0 {
		files = strings.Join(m, ", ")
	}
	fmt.Fprintf(&b, "files modified %s\n", files)
	verdict := strings.Join(strings.Fields(s.Verdict), " ")
	if verdict == "" {
		verdict = "none"
	}
	fmt.Fprintf(&b, "last verdict   %s\n", verdict)
	if s.Interrupted {
		b.WriteString("the last turn was interrupted (the server stopped during it)\n")
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

// count is n with its noun, plural when n is not 1: "1 turn", "7 model calls".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return commas(n) + " " + noun + "s"
}
