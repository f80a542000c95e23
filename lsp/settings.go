package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Settings are what an editor can set, in initializationOptions or in the "reprise"
// configuration section, and what the user settings file holds. A missing field keeps its current
// value. The protected ones (protected.go) are taken from the user's level only.
type Settings struct {
	Model *string `json:"model,omitempty"`
	// Thinking is "auto" (the model's default) or a level the model accepts: sent as
	// thinkingLevel, or as a budget on 2.5 models. Sessions created afterwards.
	Thinking                  *string  `json:"thinking,omitempty"`
	ContextBudget             *int     `json:"contextBudget,omitempty"`
	CompactAt                 *float64 `json:"compactAt,omitempty"`
	BlockAt                   *float64 `json:"blockAt,omitempty"`
	KeepRecentTurns           *int     `json:"keepRecentTurns,omitempty"`
	ToolOutputMaxChars        *int     `json:"toolOutputMaxChars,omitempty"`
	LargeOutputThresholdBytes *int     `json:"largeOutputThresholdBytes,omitempty"`
	SessionTokenCap           *int     `json:"sessionTokenCap,omitempty"`
	MaxCostUSD                *float64 `json:"maxCostUSD,omitempty"`
	// ExplicitCache and ExplicitCacheIdle turn on the experimental explicit caching and keeping
	// its cache alive while a session is idle (contextwin.Policy). Either level: the first caches
	// only when its own weighing in dollars says it pays, the second keeps a cache only while
	// storing it costs less than rebuilding it.
	ExplicitCache     *bool `json:"explicitCache,omitempty"`
	ExplicitCacheIdle *bool `json:"explicitCacheIdle,omitempty"`
	// CacheHead puts a guide to the tools and a map of the workspace in the system instruction,
	// sized to the model's cache minimum (true by default; contextwin.Policy.PlainHead).
	CacheHead *bool    `json:"cacheHead,omitempty"`
	Allow     []string `json:"allow,omitempty"`
	// Sandbox is "workspace-write" (the default) or "off"; AllowNetwork lets sandboxed commands
	// use TCP.
	Sandbox      *string `json:"sandbox,omitempty"`
	AllowNetwork *bool   `json:"allowNetwork,omitempty"`
	// HidePaths are files and directories outside the workspace that commands must not read:
	// absolute paths, or paths under the home directory written "~/…".
	HidePaths []string `json:"hidePaths,omitempty"`
	// ReadPaths are files and directories under the home directory that commands may read,
	// besides the toolchains': the rest of the home is hidden from them. Same forms as HidePaths.
	ReadPaths []string `json:"readPaths,omitempty"`
	// Prices per million tokens by model, over the model catalogue's.
	Prices contextwin.PriceTable `json:"prices,omitempty"`
	// Models are rows of the model catalogue by id, partial or new (catalog.Overlay): a model the
	// catalogue lacks, a limit or a cache minimum that changed.
	Models map[string]json.RawMessage `json:"models,omitempty"`
	// MCPServers are the user's MCP servers, as the "servers" object of VS Code's mcp.json.
	MCPServers json.RawMessage `json:"mcpServers,omitempty"`
	// MCPToolBudget caps what the MCP tools' declarations cost per request, in tokens (0: no cap).
	MCPToolBudget *int `json:"mcpToolBudget,omitempty"`
	// MaxTurnRequests caps the model calls of one user turn (agent.DefaultMaxTurnRequests).
	MaxTurnRequests *int `json:"maxTurnRequests,omitempty"`

	// CompactionModel is the model compaction summaries are asked of; "" is the session's own.
	// Sessions created afterwards.
	CompactionModel *string `json:"compactionModel,omitempty"`
	// CompactionTier is "standard" or "flex": whether background summaries ask Gemini's Flex
	// tier first (contextwin.Policy.CompactionTier). From the next compaction on.
	CompactionTier *string `json:"compactionTier,omitempty"`

	// Subagents declares the task tool (true by default); SubagentModel is the model subagents
	// run on ("" is the catalogue's choice), SubagentBudget their context budget (0 is
	// contextBudget), SubagentParallel how many run at once, SubagentMaxCalls the model calls
	// each may make. Sessions created afterwards.
	Subagents        *bool   `json:"subagents,omitempty"`
	SubagentModel    *string `json:"subagentModel,omitempty"`
	SubagentBudget   *int    `json:"subagentBudget,omitempty"`
	SubagentParallel *int    `json:"subagentParallel,omitempty"`
	SubagentMaxCalls *int    `json:"subagentMaxCalls,omitempty"`

	// Provider is "gemini" (the default) or "openai": OpenAI or any server speaking its Chat
	// Completions; BaseURL is that server's /v1 URL ("" is OpenAI's), APIKeyEnv the variable
	// holding its key ("" is OPENAI_API_KEY). Protected, sessions opened afterwards (provider.go).
	Provider  *string `json:"provider,omitempty"`
	BaseURL   *string `json:"baseURL,omitempty"`
	APIKeyEnv *string `json:"apiKeyEnv,omitempty"`
}

// config is the settings in force.
type config struct {
	model    string
	thinking string // catalog.Auto or a level, upper case
	policy   contextwin.Policy
	// maxTurnRequests caps a turn's model calls (0: the agent's default).
	maxTurnRequests int
	allow           []string
	prices          contextwin.PriceTable // overrides of the catalogue's prices; nil = none
	// catalog is the model catalogue with the models setting applied; models is that setting
	// (nil: the built-in catalogue).
	catalog *catalog.Catalog
	models  map[string]json.RawMessage
	// sandbox and allowNetwork configure the commands' sandbox ("" = workspace-write).
	sandbox      sandbox.Mode
	allowNetwork bool
	// hidePaths are absolute paths ("~/" expanded) commands must not read; readPaths those under
	// the home they may.
	hidePaths []string
	readPaths []string
	// mcpServers come from the user's level only (protected.go: the user settings file and
	// initializationOptions, never workspace/configuration), so they run without the trust
	// question.
	mcpServers []mcp.ServerConfig
	// mcpToolBudget is the tokens the MCP declarations may cost; 0 means no cap.
	mcpToolBudget int
	// compactionModel is the model summaries are asked of; "" is the session's.
	compactionModel string
	// subagents are the task tool's settings.
	subagents agent.SubagentSettings
	// provider is where models are asked for; the zero value is Gemini.
	provider ModelProvider
}

// sandboxConfig is the sandbox these settings ask for, over workspace.
func (c config) sandboxConfig(workspace string) sandbox.Config {
	return sandbox.Config{Mode: c.sandbox, AllowNetwork: c.allowNetwork, Workspace: workspace, HidePaths: slices.Clone(c.hidePaths), ReadPaths: slices.Clone(c.readPaths)}
}

// parseSettings decodes raw settings; null or absent is no change.
func parseSettings(raw json.RawMessage) (Settings, error) {
	var s Settings
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("settings: %w", err)
	}
	return s, nil
}

// apply returns c with s applied, or an error naming the setting out of range (c is then kept).
func (c config) apply(s Settings) (config, error) {
	n := c
	n.allow = append([]string(nil), c.allow...)
	if s.Model != nil && *s.Model != "" {
		n.model = *s.Model
	}
	if s.Thinking != nil {
		t, err := catalog.ParseThinking(*s.Thinking)
		if err != nil {
			return c, err
		}
		n.thinking = t
	}
	n.policy = s.applyPolicy(n.policy)
	if v := s.MaxTurnRequests; v != nil {
		if *v < 1 {
			return c, fmt.Errorf("maxTurnRequests must be at least 1, got %d", *v)
		}
		n.maxTurnRequests = *v
	}
	if s.Allow != nil {
		n.allow = s.Allow
	}
	for _, step := range []func(*config, Settings) error{applyCompaction, applySubagents, applySandbox, applyMCP, applyModels, applyProvider} {
		if err := step(&n, s); err != nil {
			return c, err
		}
	}
	if err := n.policy.Validate(); err != nil {
		return c, err
	}
	if _, err := n.thinkingFor(n.model); err != nil {
		return c, err
	}
	return n, nil
}

// applyPolicy returns p with the context policy's settings of s; Validate checks them.
func (s Settings) applyPolicy(p contextwin.Policy) contextwin.Policy {
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	for _, f := range []struct {
		dst *bool
		v   *bool
	}{{&p.ExplicitCache, s.ExplicitCache}, {&p.ExplicitCacheIdle, s.ExplicitCacheIdle}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if s.CacheHead != nil {
		p.PlainHead = !*s.CacheHead
	}
	set(&p.ContextBudget, s.ContextBudget)
	set(&p.KeepRecentTurns, s.KeepRecentTurns)
	set(&p.ToolOutputMaxChars, s.ToolOutputMaxChars)
	set(&p.LargeOutputThresholdBytes, s.LargeOutputThresholdBytes)
	set(&p.SessionTokenCap, s.SessionTokenCap)
	for _, f := range []struct {
		dst *float64
		v   *float64
	}{{&p.CompactAt, s.CompactAt}, {&p.BlockAt, s.BlockAt}, {&p.MaxCostUSD, s.MaxCostUSD}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return p
}

// applyCompaction applies the summaries' settings: their model and their tier.
func applyCompaction(n *config, s Settings) error {
	if v := s.CompactionModel; v != nil {
		name, err := catalog.ParseModelName(*v)
		if err != nil {
			return fmt.Errorf("compactionModel: %w", err)
		}
		n.compactionModel = name
	}
	if v := s.CompactionTier; v != nil {
		tier, err := catalog.ParseTier(*v)
		if err != nil {
			return fmt.Errorf("compactionTier: %w", err)
		}
		if tier == catalog.TierStandard {
			tier = "" // the policy's default, so that choosing it changes nothing
		}
		n.policy.CompactionTier = tier
	}
	return nil
}

// applySubagents applies the task tool's settings.
func applySubagents(n *config, s Settings) error {
	sa := &n.subagents
	if s.Subagents != nil {
		sa.Off = !*s.Subagents
	}
	if v := s.SubagentModel; v != nil {
		name := ""
		if *v != "" {
			var err error
			if name, err = catalog.ParseModelName(*v); err != nil {
				return fmt.Errorf("subagentModel: %w", err)
			}
		}
		sa.Model = name
	}
	for _, f := range []struct {
		name string
		dst  *int
		v    *int
		min  int
		max  int
	}{
		{"subagentBudget", &sa.Budget, s.SubagentBudget, 1000, 1 << 30},
		{"subagentParallel", &sa.Parallel, s.SubagentParallel, 1, agent.MaxSubagentParallel},
		{"subagentMaxCalls", &sa.MaxCalls, s.SubagentMaxCalls, 1, agent.DefaultMaxTurnRequests},
	} {
		if f.v == nil {
			continue
		}
		if *f.v != 0 && (*f.v < f.min || *f.v > f.max) {
			return fmt.Errorf("%s must be between %d and %d (0: the default), got %d", f.name, f.min, f.max, *f.v)
		}
		*f.dst = *f.v
	}
	return nil
}

// applySandbox applies the sandbox's settings: its mode, the network, the hidden paths.
func applySandbox(n *config, s Settings) error {
	if s.Sandbox != nil {
		m, err := parseSandbox(*s.Sandbox)
		if err != nil {
			return err
		}
		n.sandbox = m
	}
	if s.AllowNetwork != nil {
		n.allowNetwork = *s.AllowNetwork
	}
	if s.HidePaths != nil {
		paths, err := parsePaths("hidePaths", s.HidePaths)
		if err != nil {
			return err
		}
		n.hidePaths = paths
	}
	if s.ReadPaths != nil {
		paths, err := parsePaths("readPaths", s.ReadPaths)
		if err != nil {
			return err
		}
		n.readPaths = paths
	}
	return nil
}

// applyMCP applies the MCP settings: the tool budget and the user's servers.
func applyMCP(n *config, s Settings) error {
	if s.MCPToolBudget != nil {
		if *s.MCPToolBudget < 0 {
			return fmt.Errorf("mcpToolBudget must be 0 (no cap) or a number of tokens, got %d", *s.MCPToolBudget)
		}
		n.mcpToolBudget = *s.MCPToolBudget
	}
	if len(s.MCPServers) > 0 && string(s.MCPServers) != "null" {
		wrapped := append(append([]byte(`{"servers":`), s.MCPServers...), '}')
		list, err := mcp.ParseConfig(wrapped, "the mcpServers setting", false)
		if err != nil {
			return err
		}
		n.mcpServers = list
	}
	return nil
}

// applyModels applies what is known of the models: prices, and catalogue rows.
func applyModels(n *config, s Settings) error {
	switch {
	case s.Prices == nil:
	case len(s.Prices) == 0: // the defaults: what an editor sends when its setting is left empty
		n.prices = nil
	default:
		n.prices = s.Prices
	}
	if s.Models != nil {
		n.catalog, n.models = nil, nil
		if len(s.Models) > 0 {
			cat, err := catalog.Builtin().Overlay(s.Models)
			if err != nil {
				return err
			}
			n.catalog, n.models = cat, s.Models
		}
	}
	return nil
}

// catalogue is the model catalogue these settings give: the built-in one, with the models
// setting applied.
func (c config) catalogue() *catalog.Catalog {
	if c.catalog != nil {
		return c.catalog
	}
	return catalog.Builtin()
}

// thinkingFor resolves the thinking setting for model: an error when the model does not accept
// the level, which names those it does.
func (c config) thinkingFor(model string) (catalog.ThinkingChoice, error) {
	return c.catalogue().Thinking(model, c.thinking)
}

// parsePaths checks a setting of paths (hidePaths, readPaths): every entry absolute or "~/…",
// which is expanded with the home directory, then cleaned.
func parsePaths(name string, in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, p := range in {
		switch {
		case strings.HasPrefix(p, "~/") && len(strings.Trim(p[2:], "/")) > 0:
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", name, p, err)
			}
			p = filepath.Join(home, p[2:])
		case filepath.IsAbs(p):
			p = filepath.Clean(p)
		default:
			return nil, fmt.Errorf("%s: %q must be an absolute path or start with ~/", name, p)
		}
		out = append(out, p)
	}
	return out, nil
}
