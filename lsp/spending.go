package lsp

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// The spending caps are the user's. A project's settings (.vscode/settings.json, .dir-locals.el)
// reach workspace/configuration as the user's own do, and a cloned repository set maxCostUSD to 0,
// zero prices and a huge sessionTokenCap, which turned the user's caps off. From the workspace,
// sessionTokenCap and maxCostUSD may only be lowered (a cap of 0, no cap, counts as removing it),
// and prices not changed at all: what a session is billed at is a fact, not a preference. The
// user's level (the user settings file, initializationOptions, else the defaults) is fixed at
// initialize.

// spendingCaps are the user's spending settings, and the settings that set what a token costs or
// how many are spent: the models, thinking, the budget, the calls a turn may make, explicit
// caching. A workspace may lower these, never raise them.
type spendingCaps struct {
	tokenCap int     // sessionTokenCap
	maxCost  float64 // maxCostUSD; 0 means no dollar cap
	prices   contextwin.PriceTable
	// the rest, as the user's level sets them
	model, compactionModel string
	thinking               string
	budget                 int
	maxTurnRequests        int // 0: the agent's default
	explicitCache          bool
	explicitCacheIdle      bool
	plainHead              bool
	subagents              agent.SubagentSettings
}

// userSpending is what c holds of them.
func userSpending(c config) spendingCaps {
	return spendingCaps{tokenCap: c.policy.SessionTokenCap, maxCost: c.policy.MaxCostUSD, prices: c.prices,
		model: c.model, compactionModel: c.compactionModel, thinking: c.thinking, budget: c.policy.ContextBudget,
		maxTurnRequests: c.maxTurnRequests, explicitCache: c.policy.ExplicitCache, explicitCacheIdle: c.policy.ExplicitCacheIdle,
		plainHead: c.policy.PlainHead, subagents: c.subagents}
}

// boundSpending returns s with its spending settings held to the user's: a cap above the user's
// (or removed) is replaced by the user's, and prices are dropped. ignored names those that would
// have changed what cur holds.
func boundSpending(cur config, user spendingCaps, s Settings) (rest Settings, ignored []string) {
	rest = s
	if v := s.SessionTokenCap; v != nil && (*v < 1 || *v > user.tokenCap) {
		rest.SessionTokenCap = &user.tokenCap
		ignored = append(ignored, "sessionTokenCap")
	}
	if v := s.MaxCostUSD; v != nil && user.maxCost > 0 && (*v <= 0 || *v > user.maxCost) {
		rest.MaxCostUSD = &user.maxCost
		ignored = append(ignored, "maxCostUSD")
	}
	if s.Prices != nil {
		rest.Prices = nil
		if n, err := cur.apply(Settings{Prices: s.Prices}); err != nil || fmt.Sprint(n.prices) != fmt.Sprint(cur.prices) {
			ignored = append(ignored, "prices")
		}
	}
	// The models setting overlays catalogue rows, prices included: the user's, like prices.
	if s.Models != nil {
		rest.Models = nil
		if n, err := cur.apply(Settings{Models: s.Models}); err != nil || fmt.Sprint(n.models) != fmt.Sprint(cur.models) {
			ignored = append(ignored, "models")
		}
	}
	rest, more := boundCosts(cur, user, rest)
	return rest, append(ignored, more...)
}

// boundCosts holds to the user's level the settings of s that set what a token costs or how many
// a session spends: a model no dearer per token than the user's (and with a known price), thinking
// no deeper, a budget and a number of calls per turn no larger, explicit caching not turned on.
func boundCosts(cur config, user spendingCaps, s Settings) (rest Settings, ignored []string) {
	rest = s
	cat := cur.catalogue()
	pricing := contextwin.Pricing{Catalog: cat, Overrides: cur.prices}
	if v := s.Model; v != nil && *v != "" && !cat.Same(*v, user.model) && !noDearer(pricing, *v, user.model) {
		rest.Model = nil
		ignored = append(ignored, "model")
	}
	if v := s.CompactionModel; v != nil && *v != "" {
		mine := cmp.Or(user.compactionModel, user.model)
		if !cat.Same(*v, mine) && !noDearer(pricing, *v, mine) {
			rest.CompactionModel = nil
			ignored = append(ignored, "compactionModel")
		}
	}
	if v := s.Thinking; v != nil {
		model := user.model
		if rest.Model != nil && *rest.Model != "" {
			model = *rest.Model
		}
		if catalog.ThinkingRank(cat, model, *v) > catalog.ThinkingRank(cat, user.model, user.thinking) {
			rest.Thinking = nil
			ignored = append(ignored, "thinking")
		}
	}
	if v := s.ContextBudget; v != nil && *v > user.budget {
		rest.ContextBudget = nil
		ignored = append(ignored, "contextBudget")
	}
	if v := s.MaxTurnRequests; v != nil && *v > cmp.Or(user.maxTurnRequests, agent.DefaultMaxTurnRequests) {
		rest.MaxTurnRequests = nil
		ignored = append(ignored, "maxTurnRequests")
	}
	if v := s.ExplicitCache; v != nil && *v && !user.explicitCache {
		rest.ExplicitCache = nil
		ignored = append(ignored, "explicitCache")
	}
	if v := s.ExplicitCacheIdle; v != nil && *v && !user.explicitCacheIdle {
		rest.ExplicitCacheIdle = nil
		ignored = append(ignored, "explicitCacheIdle")
	}
	if v := s.CacheHead; v != nil && *v && user.plainHead {
		rest.CacheHead = nil
		ignored = append(ignored, "cacheHead")
	}
	rest, more := boundSubagents(cur, user, rest)
	return rest, append(ignored, more...)
}

// boundSubagents holds the task tool's settings of s to the user's: not turned on when the user
// turned it off, a model no dearer, a budget, a parallelism and a number of calls no larger (0,
// the default, counts as the default's value).
func boundSubagents(cur config, user spendingCaps, s Settings) (rest Settings, ignored []string) {
	rest = s
	cat := cur.catalogue()
	mine := user.subagents
	if v := s.Subagents; v != nil && *v && mine.Off {
		rest.Subagents = nil
		ignored = append(ignored, "subagents")
	}
	if v := s.SubagentModel; v != nil && *v != "" {
		pricing := contextwin.Pricing{Catalog: cat, Overrides: cur.prices}
		model := mine.Model
		if model == "" {
			model, _ = cat.SubagentModel()
		}
		if !cat.Same(*v, model) && !noDearer(pricing, *v, model) {
			rest.SubagentModel = nil
			ignored = append(ignored, "subagentModel")
		}
	}
	for _, f := range []struct {
		name     string
		v        **int
		mine, at int
	}{
		{"subagentBudget", &rest.SubagentBudget, mine.Budget, user.budget},
		{"subagentParallel", &rest.SubagentParallel, mine.Parallel, agent.DefaultSubagentParallel},
		{"subagentMaxCalls", &rest.SubagentMaxCalls, mine.MaxCalls, agent.DefaultSubagentMaxCalls},
	} {
		if *f.v == nil {
			continue
		}
		if v, limit := cmp.Or(**f.v, f.at), cmp.Or(f.mine, f.at); v > limit {
			*f.v = nil
			ignored = append(ignored, f.name)
		}
	}
	return rest, ignored
}

// noDearer reports whether model has a known price and costs no more per token than mine, for
// input, cached input and output alike, at today's prices.
func noDearer(pricing contextwin.Pricing, model, mine string) bool {
	now := time.Now()
	p, ok := pricing.At(model, now, 0)
	if !ok {
		return false
	}
	q, ok := pricing.At(mine, now, 0)
	return ok && p.Input <= q.Input && p.CachedInput <= q.CachedInput && p.Output <= q.Output
}

// fixUserLevel records the spending settings in force as the user's: called at initialize, once
// the user settings file and initializationOptions are applied.
func (c *configStore) fixUserLevel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.user = userSpending(c.c)
}

// userLevel returns the user's spending settings.
func (c *configStore) userLevel() spendingCaps {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.user
}

// spendingIgnored tells the user, shown and logged, which spending settings from via were held to
// theirs, and what holds.
func (s *server) spendingIgnored(names []string, via string, user spendingCaps) {
	where := "initializationOptions"
	if s.opts.UserSettings != "" {
		where = s.opts.UserSettings + " or in initializationOptions"
	}
	maxCost := "none"
	if user.maxCost > 0 {
		maxCost = "$" + strconv.FormatFloat(user.maxCost, 'f', -1, 64)
	}
	msg := fmt.Sprintf("Reprise: ignored %s sent through %s: a project's settings may lower what you spend, "+
		"never raise it: no higher or removed caps, no prices, no model dearer per token than yours (%s) or without a price, "+
		"no deeper thinking, larger contextBudget or maxTurnRequests, no explicit caching you did not turn on. "+
		"Your caps hold: sessionTokenCap %d, maxCostUSD %s. To change these, set them in %s.",
		strings.Join(names, ", "), via, user.model, user.tokenCap, maxCost, where)
	s.opts.Logger.Warn("spending settings held to the user's", "settings", names, "via", via)
	s.logMessage(protocol.MessageTypeWarning, msg)
	s.showMessage(protocol.MessageTypeWarning, msg)
}
