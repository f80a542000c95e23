package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/tools"
)

// configHome is the user's Reprise configuration directory (the MCP servers of mcp.json, the
// consents to workspace servers): $REPRISE_CONFIG_HOME, else $XDG_CONFIG_HOME/reprise, else the
// OS's user configuration directory.
func configHome(getenv func(string) string) string {
	if h := getenv("REPRISE_CONFIG_HOME"); h != "" {
		return h
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "reprise")
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "reprise")
	}
	return ""
}

// runMCP gathers a headless run's MCP servers: the user's mcp.json, the --mcp-config files,
// and the workspace's .vscode/mcp.json only with --trust-mcp (a cloned repository is not the
// user, and nobody is there to ask). It returns nil when there is none.
func runMCP(ws string, f runFlags, getenv func(string) string, stderr io.Writer, logger *slog.Logger) (*mcp.Manager, error) {
	user, err := mcp.LoadUser(configHome(getenv))
	if err != nil {
		fmt.Fprintln(stderr, "reprise: warning:", err)
	}
	lists := [][]mcp.ServerConfig{user}
	for _, path := range f.mcpConfig {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--mcp-config: %w", err)
		}
		list, err := mcp.LoadFile(path, false)
		if err != nil {
			return nil, fmt.Errorf("--mcp-config: %w", err)
		}
		lists = append(lists, list)
	}
	declared, err := mcp.LoadWorkspace(ws)
	if err != nil {
		fmt.Fprintln(stderr, "reprise: warning:", err)
	}
	if len(declared) > 0 && !f.trustMCP {
		var names []string
		for _, sc := range declared {
			names = append(names, sc.Name)
		}
		fmt.Fprintf(stderr, "reprise: the workspace's .vscode/mcp.json declares MCP servers (%s): not started; --trust-mcp starts them\n", strings.Join(names, ", "))
		declared = nil
	}
	for _, sc := range declared { // --trust-mcp: say what it trusts
		fmt.Fprintf(stderr, "reprise: --trust-mcp: the workspace's MCP server %q runs with your rights, unsandboxed: %s\n", sc.Name, trustedWhat(sc, ws))
	}
	lists = append(lists, declared)
	servers := mcp.Merge(lists...)
	if len(servers) == 0 {
		return nil, nil
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	m := mcp.New(mcp.Options{
		ToolBudget: mcp.SettingBudget(f.mcpToolBudget),
		Workspace:  ws,
		Servers:    servers,
		Logger:     logger,
		Version:    currentBuild().Version,
		Notify: func(server, message string) {
			fmt.Fprintf(stderr, "reprise: MCP server %q: %s\n", server, message)
		},
	})
	return m, nil
}

// mcpRefused is the --yes approver's answer to an MCP tool: --yes covers commands only, an MCP
// tool is granted by name with --allow-mcp.
func mcpRefused(ctx context.Context, out io.Writer, req tools.ApprovalRequest) (tools.Decision, error) {
	server, _, _ := strings.Cut(req.Tool, "__")
	fmt.Fprintf(out, "reprise: the MCP tool %s was refused: --yes covers commands, not MCP tools (--allow-mcp %s or --allow-mcp %s)\n", req.Tool, server, req.Tool)
	return tools.Reject, ctx.Err()
}

// trustedWhat says what --trust-mcp trusts of a workspace server: what it runs, and the workspace
// code it can load (which any command of this run may have changed).
func trustedWhat(sc mcp.ServerConfig, ws string) string {
	if sc.Type != mcp.TypeStdio {
		return "it connects to " + sc.URL
	}
	what := strings.TrimSpace(sc.Command + " " + strings.Join(sc.Args, " "))
	var loads []string
	for _, p := range mcp.Loads(sc, ws) {
		rel, err := filepath.Rel(ws, p)
		if err != nil {
			continue
		}
		if rel == "." {
			rel = "the whole workspace"
		}
		loads = append(loads, filepath.ToSlash(rel))
	}
	if len(loads) > 0 {
		what += ", with the code in " + strings.Join(loads, ", ")
	}
	return what
}
