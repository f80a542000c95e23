package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// A workspace is what the agent may read, search and change, and where its commands may write.
// A client that sends the root of the file system, the home directory or a system directory as
// the workspace (a misconfigured root marker, an editor opened on ~, or a hostile client) would
// give the model all of it, with no warning: such a root is used only once the user confirms it.

// systemDirs are directories no project lives in: a workspace there is one of them or a tree of
// programs, logs and other users' files. Absolute, as the OS writes them; home directories and
// their parents are judged apart (broadRoot).
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
	"/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr",
	"/usr/bin", "/usr/lib", "/usr/local", "/usr/share", "/var", "/var/lib", "/var/log", "/var/tmp",
	"/nix", "/nix/store",
	// macOS
	"/Applications", "/Library", "/System", "/Users", "/Volumes", "/private", "/private/etc",
	"/private/tmp", "/private/var", "/cores",
}

// broadRoot says why root is too broad to be a workspace without the user's confirmation, or ""
// when it is not: the root of a file system (/, C:\), the home directory or a directory holding
// it (/home, /Users), a system directory (systemDirs, Windows' own and program folders) or the
// temp directory itself. home is the user's home directory ("" if unknown). Both are compared as
// given and with their symlinks resolved, so a link to / is judged as /.
func broadRoot(root, home string) string {
	for _, r := range variants(root) {
		if why := broadPath(r, variants(home)); why != "" {
			return why
		}
	}
	return ""
}

// variants is p cleaned, and p with its symlinks resolved when that differs; none for "".
func variants(p string) []string {
	if p == "" {
		return nil
	}
	out := []string{filepath.Clean(p)}
	if r, err := filepath.EvalSymlinks(p); err == nil && filepath.Clean(r) != out[0] {
		out = append(out, filepath.Clean(r))
	}
	return out
}

func broadPath(root string, homes []string) string {
	if filepath.Dir(root) == root {
		return "the root of the file system"
	}
	for _, h := range homes {
		switch {
		case samePath(root, h):
			return "your home directory"
		case within(h, root):
			return "a directory that holds your home directory"
		}
	}
	system := systemDirs
	if runtime.GOOS == "windows" {
		system = nil
		for _, v := range []string{"SystemRoot", "ProgramFiles", "ProgramFiles(x86)", "ProgramData"} {
			if d := os.Getenv(v); d != "" {
				system = append(system, d)
			}
		}
	}
	for _, d := range system {
		if samePath(root, d) {
			return "a system directory"
		}
	}
	if samePath(root, os.TempDir()) {
		return "the temporary directory, shared with other programs"
	}
	return ""
}

// samePath compares two cleaned paths as the OS does: without case on Windows and macOS (their
// usual file systems ignore it).
func samePath(a, b string) bool {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// within reports whether p is strictly inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

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
	why  string // broadRoot's reason; "" when the workspace needs no confirmation

	mu    sync.Mutex // guards state
	state rootState
}

// set judges the workspace at initialize.
func (g *rootGate) set(root, home string) {
	g.root, g.why = root, broadRoot(root, home)
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
