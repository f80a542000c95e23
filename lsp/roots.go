package lsp

import (
	"fmt"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/roots"
)

// A workspace that agent/roots judges too broad (the file system's root, the home directory, a
// system directory) is used only once the user confirms it: rootGate holds the agent back until
// then.

// rootState is where the confirmation of a broad workspace stands.
type rootState int

const (
	rootAllowed rootState = iota // not broad, or confirmed
	rootUnasked                  // broad; the question is to be asked (again, after no answer)
	rootAsking                   // broad; the question is out
	rootRefused                  // broad; the user said no: the agent does not run there
)

// rootGate holds the agent back from a broad workspace until the user confirms it, with
// window/showMessageRequest once the client is initialized. An explicit no holds for the
// connection; a question left without an answer (dismissed, null) is asked again with the next
// command that needs the workspace.
type rootGate struct {
	// Set by initialize, then only read.
	root string
	why  string // roots.Broad's reason; "" when the workspace needs no confirmation

	mu    sync.Mutex // guards state
	state rootState
}

// set judges the workspace at initialize.
func (g *rootGate) set(root, home string) {
	g.root, g.why = root, roots.Broad(root, home)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.state = rootAllowed
	if g.why != "" {
		g.state = rootUnasked
	}
}

// check lets command run, or returns the error that says why the agent does not run in this
// workspace; ask is true when the question should go (again) to the user.
func (g *rootGate) check(command string) (ask bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state {
	case rootAllowed:
		return false, nil
	case rootRefused:
		return false, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf(
			"%s: the workspace %s is %s, and you chose not to let the agent work there (%q). Open a project folder instead, or restart the server and answer %q.",
			command, g.root, g.why, ActionRefuseWorkspace, ActionUseWorkspace))
	}
	ask = g.state == rootUnasked
	if ask {
		g.state = rootAsking
	}
	return ask, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf(
		"%s: the workspace %s is %s: the agent works there only once you confirm it. Answer the question %q (%q), then try again; or open a project folder.",
		command, g.root, g.why, "Use "+g.root+" as Reprise's workspace?", ActionUseWorkspace))
}

// decided records the user's answer: use, refuse, or neither (no answer: ask again later). It
// reports whether the workspace became usable.
func (g *rootGate) decided(title string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch title {
	case ActionUseWorkspace:
		g.state = rootAllowed
		return true
	case ActionRefuseWorkspace:
		g.state = rootRefused
	default:
		g.state = rootUnasked
	}
	return false
}

// startAsking reports whether the question is to be asked now, and marks it asked.
func (g *rootGate) startAsking() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != rootUnasked {
		return false
	}
	g.state = rootAsking
	return true
}

// askRoot puts the question about a broad workspace to the user, on a goroutine of the server's;
// once confirmed, the workspace is watched as any other.
func (s *server) askRoot() {
	s.spawn(func() { // ends when the user answers, or the connection ends
		msg := fmt.Sprintf("Reprise: the workspace is %s, %s. The agent reads, searches and changes files anywhere in its workspace, "+
			"and its commands may write there. Use %s as Reprise's workspace? If not, open a project folder: the agent will not run here.",
			s.roots.root, s.roots.why, s.roots.root)
		params := protocol.ShowMessageRequestParams{
			Type:    protocol.MessageTypeWarning,
			Message: msg,
			Actions: []protocol.MessageActionItem{{Title: ActionUseWorkspace}, {Title: ActionRefuseWorkspace}},
		}
		var item *protocol.MessageActionItem
		title := ""
		if _, err := s.conn.Call(s.ctx, "window/showMessageRequest", params, &item); err != nil {
			if s.ctx.Err() == nil {
				s.log.Warn("the question about the workspace failed; it is asked again with the next command", "error", err)
			}
		} else if item != nil {
			title = item.Title
		}
		switch {
		case s.roots.decided(title):
			s.logMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: the agent works in %s, as you confirmed.", s.roots.root))
			if !s.opts.NoWatch {
				s.spawn(s.watch)
			}
		case title == ActionRefuseWorkspace:
			s.logMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: the agent will not work in %s on this connection: open a project folder.", s.roots.root))
		default:
			s.logMessage(protocol.MessageTypeInfo, fmt.Sprintf("Reprise: no answer about the workspace %s; the question comes back with the next command.", s.roots.root))
		}
	})
}
