package lsp

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/mcp"
)

// trustFile keeps, in Options.ConfigHome, the workspace servers the user agreed to start.
const trustFile = "trusted-mcp.json"

// mcpHost runs the connection's MCP servers. One manager serves the sessions created while the
// servers in force stay the same; when they change (a setting, a consent), new sessions get a new
// manager, and the old one runs on for the sessions that declared its tools until the connection
// ends: a session's declarations never change, so that its prompt prefix stays cached.
type mcpHost struct {
	srv   *server
	trust *mcp.TrustStore

	// choosing serializes the choice of a manager for new sessions: the trust questions and the
	// start. mu guards the fields below and is never held across a question or a start, so that
	// reprise.mcp answers meanwhile.
	choosing sync.Mutex
	mu       sync.Mutex
	current  *mcp.Manager
	key      string
	all      []*mcp.Manager
	declined map[string]bool    // fingerprints the user declined on this connection
	skipped  []mcp.ServerConfig // workspace servers not started, for reprise.mcp
	problems map[string]bool    // configuration errors already shown
}

func newMCPHost(srv *server) *mcpHost {
	h := &mcpHost{srv: srv, declined: map[string]bool{}, problems: map[string]bool{}}
	if srv.opts.ConfigHome != "" {
		h.trust = mcp.NewTrustStore(filepath.Join(srv.opts.ConfigHome, trustFile))
	}
	return h
}

// external returns the tools for a new session: nil when no server is configured (or none is
// trusted). The first call starts the servers, in parallel, with a progress report.
func (h *mcpHost) external(ctx context.Context, c config) *mcp.Manager {
	h.choosing.Lock()
	defer h.choosing.Unlock()
	// The user's servers (the config directory's mcp.json, the setting) run as they are; the
	// workspace's only once trusted.
	h.mu.Lock()
	user, ws := h.configured(c)
	h.mu.Unlock()
	var trusted, skipped []mcp.ServerConfig
	for _, sc := range ws {
		if h.trusted(ctx, sc) {
			trusted = append(trusted, sc)
		} else {
			skipped = append(skipped, sc)
		}
	}
	servers := mcp.Merge(user, trusted)
	budget := mcp.SettingBudget(c.mcpToolBudget)
	var fps []string
	for _, sc := range servers {
		fps = append(fps, sc.Name+"="+mcp.TrustFingerprint(sc, h.srv.root))
	}
	key := fmt.Sprintf("%s\nbudget=%d", strings.Join(fps, "\n"), budget)
	h.mu.Lock()
	h.skipped = skipped
	current := h.current
	same := current != nil && key == h.key
	h.mu.Unlock()
	if len(servers) == 0 {
		return nil
	}
	if same {
		return current
	}
	m := mcp.New(mcp.Options{
		Workspace:  h.srv.root,
		Servers:    servers,
		Logger:     h.srv.log,
		Version:    h.srv.opts.Version,
		ToolBudget: budget,
		Notify: func(server, message string) {
			h.srv.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: MCP server %q: %s", server, message))
		},
	})
	tok := h.srv.createProgress("Reprise: starting MCP servers", strings.Join(names(servers), ", "), 0, false, nil)
	if err := m.Start(ctx); err != nil {
		h.srv.log.Warn("MCP servers", "error", err)
	}
	tok.end(startSummary(m.Servers()))
	h.mu.Lock()
	h.current, h.key = m, key
	h.all = append(h.all, m)
	h.mu.Unlock()
	return m
}

// configured reads the user's servers (the config directory's mcp.json, then the setting) and
// the workspace's. h.mu must be held.
func (h *mcpHost) configured(c config) (user, ws []mcp.ServerConfig) {
	user = mcp.Merge(h.shown(mcp.LoadUser(h.srv.opts.ConfigHome)), c.mcpServers)
	return user, h.shown(mcp.LoadWorkspace(h.srv.root))
}

// shown passes a configuration's servers on; its error is shown once, and its valid servers
// still run. h.mu must be held.
func (h *mcpHost) shown(list []mcp.ServerConfig, err error) []mcp.ServerConfig {
	if err != nil && !h.problems[err.Error()] {
		h.problems[err.Error()] = true
		h.srv.log.Warn("MCP configuration", "error", err)
		h.srv.showMessage(protocol.MessageTypeWarning, "Reprise: "+err.Error())
	}
	return list
}

// trusted says whether a workspace-declared server may start, asking the user the first time:
// a cloned repository is not the user, and the server would run with the user's rights. Only
// an answer counts: a question that fails or is dismissed is asked again with the next session.
func (h *mcpHost) trusted(ctx context.Context, sc mcp.ServerConfig) bool {
	fp := mcp.TrustFingerprint(sc, h.srv.root)
	if h.trust != nil && h.trust.Trusted(fp) {
		return true
	}
	h.mu.Lock()
	declined := h.declined[fp]
	h.mu.Unlock()
	if declined {
		return false
	}
	params := protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeWarning,
		Message: fmt.Sprintf("The workspace's %s declares the MCP server %q:\n%s\nIt would run with your rights. Start it? (Asked again if any of this, or a workspace file it names, changes.)",
			mcp.WorkspaceFile, sc.Name, describeServer(sc)),
		Actions: []protocol.MessageActionItem{{Title: ActionStartServer}, {Title: ActionDontStartServer}},
	}
	var item *protocol.MessageActionItem
	if _, err := h.srv.conn.Call(ctx, "window/showMessageRequest", params, &item); err != nil || item == nil || item.Title != ActionStartServer {
		if err == nil && item != nil && item.Title == ActionDontStartServer {
			h.mu.Lock()
			h.declined[fp] = true
			h.mu.Unlock()
		}
		return false
	}
	if h.trust != nil {
		if err := h.trust.Trust(fp); err != nil {
			h.srv.log.Warn("MCP trust not saved", "server", sc.Name, "error", err)
		}
	}
	return true
}

// status lists the servers of the manager in force and the workspace servers not started.
func (h *mcpHost) status() mcpResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := mcpResult{Servers: []mcpServerInfo{}}
	if h.current != nil {
		out.Tokens = h.current.CatalogTokens()
		for _, st := range h.current.Servers() {
			info := mcpServerInfo{Name: st.Name, Source: st.Source, Type: st.Type, State: st.State, Error: st.Error, Tools: []mcpToolInfo{}}
			for _, t := range st.Tools {
				info.Tools = append(info.Tools, mcpToolInfo{Name: t.Name, Tool: t.Tool, Description: t.Description, Tokens: t.Tokens, Deferred: t.Deferred})
				if !t.Deferred {
					info.Tokens += t.Tokens
				}
			}
			out.Tokens += info.Tokens
			out.Servers = append(out.Servers, info)
		}
	}
	skipped := h.skipped
	if h.current == nil {
		// Nothing started yet: the servers the next session would start, without asking anything.
		skipped = nil
		user, ws := h.configured(h.srv.cfg.get())
		for _, sc := range ws {
			if h.trust == nil || !h.trust.Trusted(mcp.TrustFingerprint(sc, h.srv.root)) {
				skipped = append(skipped, sc)
			} else {
				user = append(user, sc)
			}
		}
		for _, sc := range user {
			out.Servers = append(out.Servers, mcpServerInfo{Name: sc.Name, Source: sc.Source, Type: sc.Type, State: MCPStateStopped,
				Error: "starts with the first session", Tools: []mcpToolInfo{}})
		}
	}
	for _, sc := range skipped {
		out.Servers = append(out.Servers, mcpServerInfo{Name: sc.Name, Source: sc.Source, Type: sc.Type, State: MCPStateUntrusted,
			Error: "declared by the workspace and not trusted: it was not started", Tools: []mcpToolInfo{}})
	}
	return out
}

// closeAll stops every server started on this connection.
func (h *mcpHost) closeAll() {
	h.mu.Lock()
	all := h.all
	h.all, h.current = nil, nil
	h.mu.Unlock()
	for _, m := range all {
		if err := m.Close(); err != nil {
			h.srv.log.Warn("MCP servers", "error", err)
		}
	}
}

func describeServer(sc mcp.ServerConfig) string {
	var b strings.Builder
	if sc.Command != "" {
		fmt.Fprintf(&b, "command: %s", strings.TrimSpace(sc.Command+" "+strings.Join(sc.Args, " ")))
	} else {
		fmt.Fprintf(&b, "%s server: %s", sc.Type, sc.URL)
	}
	if sc.Cwd != "" {
		fmt.Fprintf(&b, "\nin: %s", sc.Cwd)
	}
	for _, k := range slices.Sorted(maps.Keys(sc.Env)) {
		fmt.Fprintf(&b, "\nenvironment: %s=%s", k, sc.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(sc.Headers)) {
		fmt.Fprintf(&b, "\nheader: %s: %s", k, sc.Headers[k])
	}
	return b.String()
}

func names(servers []mcp.ServerConfig) []string {
	out := make([]string, len(servers))
	for i, sc := range servers {
		out[i] = sc.Name
	}
	return out
}

// startSummary is the end of the start-up progress: how many servers run, and which failed.
func startSummary(st []mcp.ServerStatus) string {
	running, tools := 0, 0
	var failed []string
	for _, s := range st {
		if s.State == mcp.StateRunning {
			running++
			tools += len(s.Tools)
		} else {
			failed = append(failed, s.Name)
		}
	}
	msg := fmt.Sprintf("%d server(s) running, %d tool(s)", running, tools)
	if len(failed) > 0 {
		msg += "; not running: " + strings.Join(failed, ", ")
	}
	return msg
}
