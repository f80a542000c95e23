package lsp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.lsp.dev/protocol"
)

// The cost settings (CostSettings) are held to the user's level when they come from the
// workspace (boundCosts), and the user changes them while the server runs: VS Code's model picker
// writes the user's reprise.model, Neovim's setup() runs again. Those choices cannot travel on the
// workspace's channel, which a project fills too, nor restart the server at each pick: the editors
// send the user's own values with MethodDidChangeUserSettings, a notification only their code
// sends (no project file can make VS Code, Neovim or eglot send it), just before the merged ones.

// userCostSettings is the part of s that the notification may set: its cost settings, and the
// names of the other settings s sets, which it may not.
func userCostSettings(s Settings) (only Settings, others []string) {
	only = Settings{Model: s.Model, CompactionModel: s.CompactionModel, Thinking: s.Thinking,
		ContextBudget: s.ContextBudget, MaxTurnRequests: s.MaxTurnRequests,
		ExplicitCache: s.ExplicitCache, ExplicitCacheIdle: s.ExplicitCacheIdle, CacheHead: s.CacheHead}
	// Settings marshals with omitempty: the keys are the settings s sets.
	var all map[string]json.RawMessage
	if b, err := json.Marshal(s); err == nil && json.Unmarshal(b, &all) != nil {
		all = nil
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if !slices.Contains(CostSettings, name) {
			others = append(others, name)
		}
	}
	return only, others
}

// updateUser applies the user's cost settings and makes them the level the workspace's are
// held to.
func (c *configStore) updateUser(s Settings) (n config, changed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, changed, err = c.updateLocked(s)
	if err != nil {
		return n, false, err
	}
	caps := userSpending(n)
	caps.tokenCap, caps.maxCost, caps.prices = c.user.tokenCap, c.user.maxCost, c.user.prices
	c.user = caps
	return n, changed, nil
}

// didChangeUserSettings handles MethodDidChangeUserSettings: {settings: {model: …, …}}, the
// user's own values of the cost settings.
func (s *server) didChangeUserSettings(raw json.RawMessage) {
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || len(p.Settings) == 0 || string(p.Settings) == "null" {
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+MethodDidChangeUserSettings+" needs {settings: {…}}")
		return
	}
	settings, err := parseSettings(p.Settings)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+err.Error())
		return
	}
	only, others := userCostSettings(settings)
	if len(others) > 0 {
		s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf("Reprise: ignored %s sent through %s, which carries only %s.",
			strings.Join(others, ", "), MethodDidChangeUserSettings, strings.Join(CostSettings, ", ")))
	}
	s.cfg.applying.Lock()
	defer s.cfg.applying.Unlock()
	c, changed, err := s.cfg.updateUser(only)
	if err != nil {
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+err.Error())
	} else if changed {
		s.sessions.applyConfig(c)
	}
}
