package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	src := `{
	// VS Code's format, with comments and trailing commas
	"inputs": [],
	"servers": {
		"fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "${workspaceFolder}",], "env": {"K": "v"}},
		"web": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
		"old": {"type": "sse", "url": "https://example.invalid/sse"},
		"plain": {"command": "srv", "cwd": "tools"}, /* no type: stdio */
	},
	"mcpServers": {
		"gemini": {"httpUrl": "https://example.invalid/g"},
		"claude": {"url": "https://example.invalid/c"},
	},
}`
	got, err := ParseConfig([]byte(src), ".vscode/mcp.json", true)
	if err != nil {
		t.Fatal(err)
	}
	const f = ".vscode/mcp.json"
	want := []ServerConfig{
		{Name: "fs", Type: TypeStdio, Command: "npx", Args: []string{"-y", "server-fs", "${workspaceFolder}"}, Env: map[string]string{"K": "v"}, Source: f, Workspace: true},
		{Name: "web", Type: TypeHTTP, URL: "https://example.invalid/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}, Source: f, Workspace: true},
		{Name: "old", Type: TypeSSE, URL: "https://example.invalid/sse", Source: f, Workspace: true},
		{Name: "plain", Type: TypeStdio, Command: "srv", Cwd: "tools", Source: f, Workspace: true},
		{Name: "gemini", Type: TypeHTTP, URL: "https://example.invalid/g", Source: f, Workspace: true},
		{Name: "claude", Type: TypeHTTP, URL: "https://example.invalid/c", Source: f, Workspace: true},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("ParseConfig (-got +want):\n%s", diff)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		wantErr   []string
		wantNames []string // the valid servers, still returned
	}{
		{"no command", `{"servers": {"a": {"type": "stdio"}, "ok": {"command": "x"}}}`,
			[]string{`m.json: server "a": command: missing for a stdio server`}, []string{"ok"}},
		{"nothing", `{"servers": {"a": {}}}`, []string{`m.json: server "a": command: missing`}, nil},
		{"no url", `{"servers": {"a": {"type": "http"}}}`, []string{`m.json: server "a": url: missing for an http server`}, nil},
		{"bad type", `{"servers": {"a": {"type": "ws", "url": "x"}}}`, []string{`m.json: server "a": type: "ws" is not one of stdio, http, sse`}, nil},
		{"args not a list", `{"servers": {"a": {"command": "x", "args": "-v"}}}`, []string{`m.json: server "a": args: want []string`}, nil},
		{"env value not a string", `{"servers": {"a": {"command": "x", "env": {"N": 1}}}}`, []string{`m.json: server "a": env: want string`}, nil},
		{"twice", `{"servers": {"a": {"command": "x"}}, "mcpServers": {"a": {"command": "y"}}}`, []string{`m.json: server "a" is declared twice`}, []string{"a"}},
		{"not JSON", `{"servers": `, []string{"m.json: "}, nil},
		{"servers not an object", `{"servers": []}`, []string{`m.json: "servers": want an object of servers by name`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tc.src), "m.json", false)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(names, tc.wantNames); diff != "" {
				t.Errorf("servers returned (-got +want):\n%s", diff)
			}
		})
	}
}

func TestLoadFileAndMerge(t *testing.T) {
	dir := t.TempDir()
	got, err := LoadFile(filepath.Join(dir, "missing.json"), false)
	if err != nil || got != nil {
		t.Errorf("LoadFile(missing) = %v, %v; want no servers and no error", got, err)
	}
	user := filepath.Join(dir, "user.json")
	if err := os.WriteFile(user, []byte(`{"servers": {"a": {"command": "a1"}, "b": {"command": "b1"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	users, err := LoadFile(user, false)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := ParseConfig([]byte(`{"servers": {"c": {"command": "c2"}, "a": {"command": "a2"}}}`), "ws.json", true)
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, c := range Merge(users, ws) {
		summary = append(summary, c.Name+"="+c.Command+"@"+filepath.Base(c.Source))
	}
	want := []string{"a=a2@ws.json", "b=b1@user.json", "c=c2@ws.json"}
	if diff := cmp.Diff(summary, want); diff != "" {
		t.Errorf("Merge (-got +want):\n%s", diff)
	}
}

func TestFingerprint(t *testing.T) {
	base := ServerConfig{Name: "s", Type: TypeStdio, Command: "npx", Args: []string{"srv"},
		Env: map[string]string{"A": "1", "B": "2"}, Headers: map[string]string{"Authorization": "t1"}}
	same := base
	same.Name, same.Source, same.Workspace = "renamed", "other.json", true
	same.Env = map[string]string{"B": "2", "A": "1"}
	same.Headers = map[string]string{"Authorization": "t1"}
	if Fingerprint(base) != Fingerprint(same) {
		t.Error("the fingerprint changed with the name, the source or map order")
	}
	for name, change := range map[string]func(*ServerConfig){
		"command":     func(c *ServerConfig) { c.Command = "node" },
		"args":        func(c *ServerConfig) { c.Args = []string{"srv", "--evil"} },
		"args split":  func(c *ServerConfig) { c.Args = []string{"s", "rv"} },
		"env value":   func(c *ServerConfig) { c.Env = map[string]string{"A": "1", "B": "3"} },
		"env key":     func(c *ServerConfig) { c.Env = map[string]string{"A": "1", "C": "2"} },
		"cwd":         func(c *ServerConfig) { c.Cwd = "/tmp" },
		"url":         func(c *ServerConfig) { c.URL = "http://x" },
		"type":        func(c *ServerConfig) { c.Type = TypeHTTP },
		"header name": func(c *ServerConfig) { c.Headers = map[string]string{"X-Key": "t1"} },
		// A trusted server must not start sending a credential of the user's unasked.
		"header value": func(c *ServerConfig) { c.Headers = map[string]string{"Authorization": "${env:GITHUB_TOKEN}"} },
	} {
		c := base
		change(&c)
		if Fingerprint(c) == Fingerprint(base) {
			t.Errorf("changing the %s keeps the fingerprint", name)
		}
	}
}

func TestExpand(t *testing.T) {
	c := ServerConfig{Name: "s", Source: "mcp.json", Command: "${workspaceFolder}/bin/srv",
		Args: []string{"--token=${env:TOKEN}", "${env:UNSET}x"}, Env: map[string]string{"HOME_DIR": "${env:HOME}"},
		Cwd: "${workspaceFolder}", URL: "http://h/${env:TOKEN}", Headers: map[string]string{"K": "${env:TOKEN}"}}
	got, err := expand(c, "/ws", []string{"TOKEN=old", "HOME=/home/u", "TOKEN=t0k"})
	if err != nil {
		t.Fatal(err)
	}
	want := c
	want.Command, want.Args, want.Env = "/ws/bin/srv", []string{"--token=t0k", "x"}, map[string]string{"HOME_DIR": "/home/u"}
	want.Cwd, want.URL, want.Headers = "/ws", "http://h/t0k", map[string]string{"K": "t0k"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("expand (-got +want):\n%s", diff)
	}
	if c.Args[0] != "--token=${env:TOKEN}" {
		t.Error("expand changed the configuration it was given")
	}

	for _, tc := range []struct {
		cfg       ServerConfig
		workspace string
		want      string
	}{
		{ServerConfig{Args: []string{"a", "${input:key}"}}, "/ws", `mcp.json: server "s": args[1]: ${input:key} is not supported`},
		{ServerConfig{Headers: map[string]string{"X": "${config:x}"}}, "/ws", `mcp.json: server "s": headers.X: ${config:x} is not supported`},
		{ServerConfig{Cwd: "${workspaceFolder}"}, "", `mcp.json: server "s": cwd: ${workspaceFolder}: no workspace folder is open`},
		{ServerConfig{URL: "http://${env:X"}, "/ws", `mcp.json: server "s": url: "http://${env:X": unclosed ${`},
	} {
		tc.cfg.Name, tc.cfg.Source = "s", "mcp.json"
		_, err := expand(tc.cfg, tc.workspace, nil)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("expand(%+v) error = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestServerDir: the user's own servers do not run in the workspace unless they say so; a
// workspace-declared one does.
func TestServerDir(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "repo")
	for _, c := range []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{}, home},
		{ServerConfig{Cwd: "tools"}, filepath.Join(home, "tools")},
		{ServerConfig{Cwd: ws}, ws}, // ${workspaceFolder}, expanded
		{ServerConfig{Workspace: true}, ws},
		{ServerConfig{Workspace: true, Cwd: "srv"}, filepath.Join(ws, "srv")},
	} {
		if got := serverDir(c.cfg, ws); got != c.want {
			t.Errorf("serverDir(%+v) = %s, want %s", c.cfg, got, c.want)
		}
	}
}
