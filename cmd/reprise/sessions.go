package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/agent/session"
)

// sessionsCmd shows saved sessions without an editor:
// reprise sessions [list | show ID | checkpoints ID [N]] [--workspace DIR].
func sessionsCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
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
	st, err := session.OpenStore(session.WorkspaceDir(home, abs))
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	switch {
	case rest[0] == "list" && len(rest) == 1:
		list, err := st.List(nil)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			fmt.Fprintf(stdout, "no saved session for %s\n", abs)
			return nil
		}
		w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "id\tlast activity\tturns\tcalls\tlast prompt\tcheckpoints\ttitle")
		for _, s := range list {
			if s.Err != "" {
				fmt.Fprintf(w, "%s\t\t\t\t\t\tunreadable: %s\n", s.ID, s.Err)
				continue
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", s.ID, s.LastActivity.Local().Format(time.DateTime), s.Turns, s.Calls, s.LastPrompt, s.Checkpoints, s.Title)
		}
		return w.Flush()
	case rest[0] == "show" && len(rest) == 2:
		snap, err := st.Load(rest[1])
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, snap.Describe())
		return nil
	case rest[0] == "checkpoints" && (len(rest) == 2 || len(rest) == 3):
		snap, err := st.Load(rest[1])
		if err != nil {
			return err
		}
		cps := snap.Checkpoints
		if len(rest) == 2 {
			fmt.Fprintf(stdout, "Checkpoint History (%d total):\n", len(cps))
			for i := len(cps) - 1; i >= 0; i-- {
				fmt.Fprintf(stdout, "  %d. %s\n", cps[i].N, cps[i].Title)
			}
			return nil
		}
		n, err := strconv.Atoi(rest[2])
		if err != nil || n < 1 || n > len(cps) {
			fmt.Fprintf(stderr, "reprise sessions: no checkpoint %q in session %s (it has %d)\n", rest[2], rest[1], len(cps))
			return errUsage
		}
		fmt.Fprint(stdout, cps[n-1].Markdown())
		return nil
	}
	fmt.Fprintln(stderr, "usage: reprise sessions [list | show ID | checkpoints ID [N]] [--workspace DIR]")
	return errUsage
}
