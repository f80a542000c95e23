package lsp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// initParams is the part of InitializeParams the server reads, decoded leniently: clients differ
// in what they send (null processId, rootPath only, experimental objects).
type initParams struct {
	RootURI          string `json:"rootUri"`
	RootPath         string `json:"rootPath"`
	WorkspaceFolders []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	Capabilities          struct {
		Experimental map[string]json.RawMessage `json:"experimental"`
		Window       struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Workspace struct {
			Configuration bool `json:"configuration"`
		} `json:"workspace"`
	} `json:"capabilities"`
	Trace string `json:"trace"`
}

// clientCaps is what the client said it supports. Written once by initialize, before any other
// message is handled, and only read afterwards.
type clientCaps struct {
	reprise       bool // capabilities.experimental.reprise: the custom notifications
	progress      bool // window.workDoneProgress
	configuration bool // workspace.configuration
}

// initialize answers the initialize request.
func (s *server) initialize(raw json.RawMessage) (any, error) {
	if initialized, _ := s.life.state(); initialized {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already received")
	}
	var p initParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("initialize: %v", err)
	}
	root, err := workspaceRoot(p)
	if err != nil {
		return nil, invalidParams("initialize: %v", err)
	}
	s.root = root
	s.docs.root = root
	home, _ := os.UserHomeDir()
	s.roots.set(root, home)
	if st, err := s.sessions.runner.Store(root); err != nil {
		s.pendingWarnings = append(s.pendingWarnings, "sessions will not be saved: "+err.Error())
		s.sessions.runner.StateHome = "" // the sessions work, unsaved (no session is open yet)
	} else {
		s.sessions.store = st
	}
	exp := string(p.Capabilities.Experimental[ExperimentalCapability])
	s.client = clientCaps{
		reprise:       exp != "" && exp != "false" && exp != "null",
		progress:      p.Capabilities.Window.WorkDoneProgress,
		configuration: p.Capabilities.Workspace.Configuration,
	}
	s.trace.set(p.Trace)
	// The user's level, where the protected settings come from: the user settings file, then
	// initializationOptions, which win.
	s.applyUserSettings()
	if settings, err := parseSettings(p.InitializationOptions); err != nil {
		s.pendingWarnings = append(s.pendingWarnings, err.Error())
	} else if _, _, err := s.cfg.update(settings); err != nil {
		s.pendingWarnings = append(s.pendingWarnings, err.Error())
	}
	s.cfg.fixUserLevel()
	s.life.mu.Lock()
	s.life.initialized = true
	s.life.mu.Unlock()
	return protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: map[string]any{
				"openClose": true,
				"change":    protocol.TextDocumentSyncKindFull,
				"save":      map[string]any{"includeText": false},
			},
			ExecuteCommandProvider: &protocol.ExecuteCommandOptions{Commands: serverCommands},
			CodeActionProvider:     true,
			Experimental:           map[string]any{ExperimentalCapability: map[string]any{"protocolVersion": protocolVersion}},
		},
		ServerInfo: &protocol.ServerInfo{Name: ServerName, Version: s.opts.Version},
	}, nil
}

// protocolVersion is the version of PROTOCOL.md this server speaks.
const protocolVersion = 1

// workspaceRoot picks the first workspace folder, else rootUri, else rootPath, else the current
// directory.
func workspaceRoot(p initParams) (string, error) {
	var root string
	switch {
	case len(p.WorkspaceFolders) > 0:
		path, err := uriToPath(p.WorkspaceFolders[0].URI)
		if err != nil {
			return "", err
		}
		root = path
	case p.RootURI != "":
		path, err := uriToPath(p.RootURI)
		if err != nil {
			return "", err
		}
		root = path
	case p.RootPath != "":
		root = p.RootPath
	default:
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		root = wd
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", root)
	}
	return root, nil
}

// uriToPath converts a file URI to a path.
func uriToPath(u string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("bad URI %q: %w", u, err)
	}
	if parsed.Scheme != "file" {
		return "", fmt.Errorf("only file URIs are supported, got %q", u)
	}
	p := parsed.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' { // file:///C:/x on Windows
		p = p[1:]
	}
	return filepath.FromSlash(p), nil
}

// initialized starts what needs the client: pulling the configuration and watching files. Only
// the first initialized counts: each would start another watcher.
func (s *server) initialized() {
	s.life.mu.Lock()
	again := s.life.started
	s.life.started = true
	s.life.mu.Unlock()
	if again {
		s.log.Debug("initialized received twice; ignored")
		return
	}
	for _, w := range s.pendingWarnings {
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+w)
	}
	s.pendingWarnings = nil
	s.startupWarnings()
	s.sweepCaches()
	s.pull()
	if s.roots.startAsking() {
		s.askRoot() // the watcher starts once the user confirms the workspace
	} else if !s.opts.NoWatch {
		s.spawn(s.watch)
	}
}

// shutdown cancels every turn; the client then sends exit.
func (s *server) shutdown() any {
	s.life.mu.Lock()
	s.life.shutdown = true
	s.life.mu.Unlock()
	s.sessions.runner.CancelAll()
	return nil
}

// didChangeConfiguration applies settings pushed with the notification, then pulls the section
// (most clients send an empty notification and expect the pull). Neither may set a protected
// setting (protected.go).
func (s *server) didChangeConfiguration(raw json.RawMessage) {
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal(raw, &p); err == nil && len(p.Settings) > 0 {
		var wrapped map[string]json.RawMessage
		section := p.Settings
		if json.Unmarshal(p.Settings, &wrapped) == nil && wrapped[ConfigSection] != nil {
			section = wrapped[ConfigSection]
		}
		s.applyWorkspaceSettings(section, settingsSource{})
	}
	s.pull()
}

// pull asks the client for the configuration on a goroutine of its own. Pulls asked for while one
// runs are merged into one more afterwards: a client sending didChangeConfiguration in a loop
// without answering costs one goroutine, not one per notification.
func (s *server) pull() {
	if !s.cfg.startPull() {
		return
	}
	s.spawn(func() { // ends when no pull was asked for during the last one
		for {
			s.pullConfiguration()
			if !s.cfg.pullAgain() {
				return
			}
		}
	})
}

// pullConfiguration asks the client for the "reprise" section, whose protected settings are
// ignored (protected.go).
func (s *server) pullConfiguration() {
	if !s.client.configuration {
		return
	}
	var out []json.RawMessage
	from := settingsSource{pull: true, pushesBefore: s.cfg.pushCount()}
	params := protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: ConfigSection}}}
	if _, err := s.conn.Call(s.ctx, "workspace/configuration", params, &out); err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("workspace/configuration failed", "error", err)
		}
		return
	}
	if len(out) > 0 {
		s.applyWorkspaceSettings(out[0], from)
	}
}

// showMessage shows a message to the user.
func (s *server) showMessage(typ protocol.MessageType, msg string) {
	s.notify("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: strings.TrimSpace(msg)})
}
