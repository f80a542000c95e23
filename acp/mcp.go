package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/mcp"
)

// mcpServers are a session's MCP servers: those the client passes and the user's own mcp.json.
// The workspace's .vscode/mcp.json is not read: ACP has no question for a server's trust, and the
// client already passes the servers its user set up.
func (s *server) mcpServers(given []sdk.McpServer) ([]mcp.ServerConfig, error) {
	user, err := mcp.LoadUser(s.opts.ConfigHome)
	if err != nil {
		s.log.Warn("MCP configuration", "error", err)
	}
	var client []mcp.ServerConfig
	for _, m := range given {
		switch {
		case m.Stdio != nil:
			env := map[string]string{}
			for _, e := range m.Stdio.Env {
				env[e.Name] = e.Value
			}
			client = append(client, mcp.ServerConfig{Name: m.Stdio.Name, Type: mcp.TypeStdio, Command: m.Stdio.Command, Args: m.Stdio.Args, Env: env, Source: "the client", Literal: true})
		case m.Http != nil:
			headers := map[string]string{}
			for _, h := range m.Http.Headers {
				headers[h.Name] = h.Value
			}
			client = append(client, mcp.ServerConfig{Name: m.Http.Name, Type: mcp.TypeHTTP, URL: m.Http.Url, Headers: headers, Source: "the client", Literal: true})
		default:
			return nil, sdk.NewInvalidParams(map[string]any{"error": "only stdio and http MCP servers are supported"})
		}
	}
	return mcp.Merge(user, client), nil
}

// manager makes the manager of a session's servers, not started: the runner starts it with the
// request's context, once the session is otherwise ready, and closes it with the session. A
// session closed while idle reopens with a manager made anew from the same servers.
func (s *server) manager(id, ws string, servers []mcp.ServerConfig) *mcp.Manager {
	return mcp.New(mcp.Options{
		Workspace: ws,
		Servers:   servers,
		Logger:    s.log,
		Version:   s.opts.Version,
		Notify: func(server, message string) {
			// During the setup the client does not know the session yet: afterSetup reports
			// the servers that did not start.
			if s.runner.Lookup(id) != nil {
				s.send(s.ctx, id, sdk.UpdateAgentMessageText(fmt.Sprintf("\n[%s]\n", message)))
			}
		},
	})
}
