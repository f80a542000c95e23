package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

// Protection comes from the user, never from the workspace. The protected settings choose what
// runs on the user's machine and what it may do unasked: the allowlist, the sandbox, the network,
// the paths hidden from commands and the MCP servers started without a question. They are taken
// from the user's level only: the user settings file and initializationOptions, which clients
// take from the user's own configuration. Clients fill workspace/configuration and the settings
// of didChangeConfiguration from the project as well (eglot applies a cloned repository's
// .dir-locals.el without asking, as eglot-workspace-configuration is a safe local variable), so
// there they are ignored, whatever the client, and the user is told once per connection.

// protectedSetting is one setting only the user's level may set.
type protectedSetting struct {
	name string // as written in the settings
	// take moves the setting out of s: s no longer sets it, the result sets only it; ok is
	// false when s did not set it.
	take func(s *Settings) (only Settings, ok bool)
	// same reports whether two configurations agree on it.
	same func(a, b config) bool
}

// protectedSettings are the protected settings, in the order warnings name them.
var protectedSettings = []protectedSetting{
	{"allow",
		func(s *Settings) (Settings, bool) {
			v := s.Allow
			s.Allow = nil
			return Settings{Allow: v}, v != nil
		},
		func(a, b config) bool { return slices.Equal(a.allow, b.allow) }},
	{"sandbox",
		func(s *Settings) (Settings, bool) {
			v := s.Sandbox
			s.Sandbox = nil
			return Settings{Sandbox: v}, v != nil
		},
		func(a, b config) bool { return sandboxMode(a.sandbox) == sandboxMode(b.sandbox) }},
	{"allowNetwork",
		func(s *Settings) (Settings, bool) {
			v := s.AllowNetwork
			s.AllowNetwork = nil
			return Settings{AllowNetwork: v}, v != nil
		},
		func(a, b config) bool { return a.allowNetwork == b.allowNetwork }},
	{"hidePaths",
		func(s *Settings) (Settings, bool) {
			v := s.HidePaths
			s.HidePaths = nil
			return Settings{HidePaths: v}, v != nil
		},
		func(a, b config) bool { return slices.Equal(a.hidePaths, b.hidePaths) }},
	{"readPaths",
		func(s *Settings) (Settings, bool) {
			v := s.ReadPaths
			s.ReadPaths = nil
			return Settings{ReadPaths: v}, v != nil
		},
		func(a, b config) bool { return slices.Equal(a.readPaths, b.readPaths) }},
	{"provider",
		func(s *Settings) (Settings, bool) {
			v := s.Provider
			s.Provider = nil
			return Settings{Provider: v}, v != nil
		},
		func(a, b config) bool { return a.provider.Name == b.provider.Name }},
	{"baseURL",
		func(s *Settings) (Settings, bool) {
			v := s.BaseURL
			s.BaseURL = nil
			return Settings{BaseURL: v}, v != nil
		},
		func(a, b config) bool { return a.provider.BaseURL == b.provider.BaseURL }},
	{"apiKeyEnv",
		func(s *Settings) (Settings, bool) {
			v := s.APIKeyEnv
			s.APIKeyEnv = nil
			return Settings{APIKeyEnv: v}, v != nil
		},
		func(a, b config) bool { return a.provider.KeyEnv == b.provider.KeyEnv }},
	{"mcpServers",
		func(s *Settings) (Settings, bool) {
			v := s.MCPServers
			s.MCPServers = nil
			return Settings{MCPServers: v}, len(v) > 0 && string(v) != "null"
		},
		func(a, b config) bool { return slices.Equal(serverKeys(a.mcpServers), serverKeys(b.mcpServers)) }},
}

// sandboxMode is m with the default spelled out.
func sandboxMode(m sandbox.Mode) sandbox.Mode {
	if m == "" {
		return sandbox.WorkspaceWrite
	}
	return m
}

// serverKeys identifies MCP servers by name and by what they run.
func serverKeys(list []mcp.ServerConfig) []string {
	out := make([]string, len(list))
	for i, sc := range list {
		out[i] = sc.Name + "=" + mcp.Fingerprint(sc)
	}
	return out
}

// withoutProtected returns s without its protected settings, and the names of those that would
// change what cur holds (or are not valid). One equal to the value in force is dropped silently:
// it changes nothing, and some clients (Neovim's plugin, LSP4IJ templates made before this rule)
// send the user's values in both places.
func withoutProtected(cur config, s Settings) (rest Settings, ignored []string) {
	rest = s
	for _, p := range protectedSettings {
		only, ok := p.take(&rest)
		if !ok {
			continue
		}
		if n, err := cur.apply(only); err != nil || !p.same(cur, n) {
			ignored = append(ignored, p.name)
		}
	}
	return rest, ignored
}

// updateFromWorkspace applies settings that came through workspace/configuration or
// didChangeConfiguration, without the protected ones and with the spending caps held to the
// user's (spending.go). ignored and held name those that would have made a difference and were
// not reported on this connection before. from is where they came from: a push counts itself; a
// pull's answer is dropped (stale) when a push came in after the pull asked, since the client
// may have answered with the settings from before that push.
func (c *configStore) updateFromWorkspace(s Settings, from settingsSource) (n config, changed bool, ignored, held []string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from.pull && from.pushesBefore != c.pushes {
		return c.c, false, nil, nil, errStalePull
	}
	if !from.pull {
		c.pushes++
	}
	rest, protected := withoutProtected(c.c, s)
	rest, spending := boundSpending(c.c, c.user, rest)
	n, changed, err = c.updateLocked(rest)
	return n, changed, c.unreported(protected), c.unreported(spending), err
}

// unreported returns the names not reported on this connection yet, and marks them reported.
// c.mu must be held.
func (c *configStore) unreported(names []string) []string {
	var out []string
	for _, name := range names {
		if !c.reported[name] {
			c.reported[name] = true
			out = append(out, name)
		}
	}
	return out
}

// settingsSource says how settings reached the server: pushed with didChangeConfiguration, or
// pulled with workspace/configuration after pushesBefore pushes.
type settingsSource struct {
	pull         bool
	pushesBefore int
}

func (f settingsSource) via() string {
	if f.pull {
		return "workspace/configuration"
	}
	return "workspace/didChangeConfiguration"
}

var errStalePull = errors.New("a newer push came in while the pull ran")

// applyWorkspaceSettings applies settings the client sent through via (workspace/configuration
// or workspace/didChangeConfiguration) to the server and every session, the protected ones left
// out, and re-emits usage.
func (s *server) applyWorkspaceSettings(raw json.RawMessage, from settingsSource) {
	via := from.via()
	settings, err := parseSettings(raw)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+err.Error())
		return
	}
	s.cfg.applying.Lock()
	defer s.cfg.applying.Unlock()
	c, changed, ignored, held, err := s.cfg.updateFromWorkspace(settings, from)
	if errors.Is(err, errStalePull) {
		s.log.Debug("workspace/configuration answer dropped: settings were pushed since it was asked")
		return
	}
	if len(ignored) > 0 {
		s.protectedIgnored(ignored, via)
	}
	if len(held) > 0 {
		s.spendingIgnored(held, via, s.cfg.userLevel())
	}
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+err.Error())
	} else if changed {
		s.sessions.applyConfig(c)
	}
}

// protectedIgnored tells the user, shown and logged, which protected settings came through via
// and were ignored, and where to set them instead.
func (s *server) protectedIgnored(names []string, via string) {
	where := "initializationOptions"
	if s.opts.UserSettings != "" {
		where = s.opts.UserSettings + " or in initializationOptions"
	}
	msg := fmt.Sprintf("Reprise: ignored %s sent through %s: these settings choose what runs without asking, "+
		"and a project's own settings (.dir-locals.el, .vscode/settings.json) reach the server the same way. "+
		"Set them in %s.", strings.Join(names, ", "), via, where)
	s.opts.Logger.Warn("protected settings ignored", "settings", names, "via", via)
	s.logMessage(protocol.MessageTypeWarning, msg)
	s.showMessage(protocol.MessageTypeWarning, msg)
}

// maxUserSettingsBytes bounds the user settings file: settings, not data.
const maxUserSettingsBytes = 1 << 20

// loadUserSettings reads the user settings file: the same object as initializationOptions. A
// missing file, or none configured, is no settings. Unlike initializationOptions it is decoded
// strictly: a misspelt key (a "hidePath" that hides nothing) makes the file an error rather
// than a setting silently lost.
func loadUserSettings(path string) (Settings, error) {
	var s Settings
	if path == "" {
		return s, nil
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if !st.Mode().IsRegular() {
		return s, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUserSettingsBytes+1))
	if err != nil {
		return s, err
	}
	if len(data) > maxUserSettingsBytes {
		return s, fmt.Errorf("larger than %d bytes", maxUserSettingsBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, err
	}
	if dec.More() {
		return Settings{}, errors.New("more than one JSON value")
	}
	return s, nil
}

// applyUserSettings applies the user settings file at initialize, before initializationOptions;
// a file that cannot be read or applied is ignored as a whole, with a warning.
func (s *server) applyUserSettings() {
	us, err := loadUserSettings(s.opts.UserSettings)
	if err == nil {
		_, _, err = s.cfg.update(us)
	}
	if err != nil {
		s.pendingWarnings = append(s.pendingWarnings, fmt.Sprintf("the user settings file %s was ignored: %v", s.opts.UserSettings, err))
	}
}
