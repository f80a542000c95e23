// Package mcp is Reprise's client for the user's Model Context Protocol servers: it reads their
// configuration (VS Code's mcp.json, or the mcpServers of Claude and Gemini CLI), starts them,
// and offers their tools to the agent as a tools.External.
package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Transport types of a server's configuration.
const (
	TypeStdio = "stdio" // a command spoken to over stdin and stdout
	TypeHTTP  = "http"  // streamable HTTP
	TypeSSE   = "sse"   // the older HTTP with server-sent events
)

// ServerConfig is one server as configured. Its strings are kept as written, ${...} included:
// they are expanded when the server starts, so that Fingerprint does not change with the
// environment.
type ServerConfig struct {
	Name    string
	Type    string // TypeStdio, TypeHTTP or TypeSSE
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
	// Source is the file the server was declared in, for messages.
	Source string
	// Workspace marks a server declared by the workspace's own files: a repository can declare
	// commands, so the caller runs it only once the user trusts its Fingerprint.
	Workspace bool
	// Literal: the strings are final, no ${...} is expanded (an ACP client passes servers it
	// has resolved itself).
	Literal bool
}

// wireServer is a server's entry in any of the accepted formats.
type wireServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	HTTPURL string            `json:"httpUrl"` // Gemini CLI's streamable HTTP
	Headers map[string]string `json:"headers"`
}

// ParseConfig reads a configuration file's contents: VS Code's {"servers": {...}} or the
// {"mcpServers": {...}} of Claude and Gemini CLI (both keys may be present), comments and
// trailing commas allowed. Servers are returned in the file's order. An invalid server is left
// out and named in the error, along with the file and the field; the valid ones are returned
// all the same, so that one mistake does not take every server away.
func ParseConfig(data []byte, source string, workspace bool) ([]ServerConfig, error) {
	plain, err := stripJSONC(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var top struct {
		Servers    json.RawMessage `json:"servers"`
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(plain, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var out []ServerConfig
	var errs []error
	for _, block := range []struct {
		key string
		raw json.RawMessage
	}{{"servers", top.Servers}, {"mcpServers", top.MCPServers}} {
		if len(block.raw) == 0 || string(block.raw) == "null" {
			continue
		}
		names, raws, err := orderedObject(block.raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q: %w", source, block.key, err))
			continue
		}
		for i, name := range names {
			cfg, err := parseServer(name, raws[i], source, workspace)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if slices.ContainsFunc(out, func(c ServerConfig) bool { return c.Name == name }) {
				errs = append(errs, fmt.Errorf("%s: server %q is declared twice", source, name))
				continue
			}
			out = append(out, cfg)
		}
	}
	return out, errors.Join(errs...)
}

func parseServer(name string, raw json.RawMessage, source string, workspace bool) (ServerConfig, error) {
	fail := func(field, format string, args ...any) (ServerConfig, error) {
		return ServerConfig{}, fmt.Errorf("%s: server %q: %s: %s", source, name, field, fmt.Sprintf(format, args...))
	}
	if name == "" {
		return fail("name", "empty")
	}
	var w wireServer
	if err := json.Unmarshal(raw, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fail(te.Field, "want %s, got JSON %s", te.Type, te.Value)
		}
		return fail("entry", "%v", err)
	}
	cfg := ServerConfig{Name: name, Type: w.Type, Command: w.Command, Args: w.Args, Env: w.Env, Cwd: w.Cwd,
		URL: w.URL, Headers: w.Headers, Source: source, Workspace: workspace}
	if w.HTTPURL != "" {
		cfg.URL = w.HTTPURL
		if cfg.Type == "" {
			cfg.Type = TypeHTTP
		}
	}
	if cfg.Type == "" {
		switch {
		case cfg.Command != "":
			cfg.Type = TypeStdio
		case cfg.URL != "":
			cfg.Type = TypeHTTP
		default:
			return fail("command", "missing: a server needs a command (stdio) or a url (http)")
		}
	}
	switch cfg.Type {
	case TypeStdio:
		if cfg.Command == "" {
			return fail("command", "missing for a stdio server")
		}
	case TypeHTTP, TypeSSE, "streamableHttp":
		cfg.Type = strings.Replace(cfg.Type, "streamableHttp", TypeHTTP, 1)
		if cfg.URL == "" {
			return fail("url", "missing for an %s server", cfg.Type)
		}
	default:
		return fail("type", "%q is not one of stdio, http, sse", cfg.Type)
	}
	return cfg, nil
}

// orderedObject splits a JSON object into its keys, in order, and their values: the order of
// the servers is the order of the declarations.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("want an object of servers by name")
	}
	var names []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, tok.(string))
		values = append(values, v)
	}
	return names, values, nil
}

// Where servers are declared: the user's file in Reprise's config directory, and the
// workspace's own, in VS Code's place.
const (
	UserFile      = "mcp.json"
	WorkspaceFile = ".vscode/mcp.json"
)

// LoadUser reads the user's servers from configHome's mcp.json; "" declares none.
func LoadUser(configHome string) ([]ServerConfig, error) {
	if configHome == "" {
		return nil, nil
	}
	return LoadFile(filepath.Join(configHome, UserFile), false)
}

// LoadWorkspace reads the servers a workspace declares; they need the user's trust.
func LoadWorkspace(workspace string) ([]ServerConfig, error) {
	return LoadFile(filepath.Join(workspace, filepath.FromSlash(WorkspaceFile)), true)
}

// LoadFile reads a configuration file; a missing file declares no server.
func LoadFile(path string, workspace bool) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MCP configuration: %w", err)
	}
	return ParseConfig(data, path, workspace)
}

// Merge joins configurations, the user's first and the workspace's after: a later server
// replaces an earlier one of the same name, at the earlier one's place.
func Merge(lists ...[]ServerConfig) []ServerConfig {
	var out []ServerConfig
	for _, list := range lists {
		for _, c := range list {
			if i := slices.IndexFunc(out, func(o ServerConfig) bool { return o.Name == c.Name }); i >= 0 {
				out[i] = c
			} else {
				out = append(out, c)
			}
		}
	}
	return out
}

// Fingerprint identifies what a server runs and where it connects: the user's trust in a
// workspace server is remembered by it, and a changed command, argument, environment, URL or
// header asks again. Values are taken as written, before ${env:…} is expanded, so a token that
// rotates in the environment keeps the fingerprint, and a header that starts sending one does
// not.
func Fingerprint(c ServerConfig) string {
	h := sha256.New()
	field := func(s string) {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	field(c.Type)
	field(c.Command)
	field(fmt.Sprint(len(c.Args)))
	for _, a := range c.Args {
		field(a)
	}
	field(fmt.Sprint(len(c.Env)))
	for _, k := range sortedKeys(c.Env) {
		field(k)
		field(c.Env[k])
	}
	field(c.Cwd)
	field(c.URL)
	field(fmt.Sprint(len(c.Headers)))
	for _, k := range sortedKeys(c.Headers) {
		field(strings.ToLower(k))
		field(c.Headers[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func resolveIn(word, dir, workspace string) string {
	word = strings.ReplaceAll(word, "${workspaceFolder}", workspace)
	if !filepath.IsAbs(word) {
		word = filepath.Join(dir, word)
	}
	return filepath.Clean(word)
}
