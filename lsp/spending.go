package lsp

import (
	"fmt"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/contextwin"
)

// The spending caps are the user's. A project's settings (.vscode/settings.json, .dir-locals.el)
// reach workspace/configuration as the user's own do, and a cloned repository set maxCostUSD to 0,
// zero prices and a huge sessionTokenCap, which turned the user's caps off. From the workspace,
// sessionTokenCap and maxCostUSD may only be lowered (a cap of 0, no cap, counts as removing it),
// and prices not changed at all: what a session is billed at is a fact, not a preference. The
// user's level (the user settings file, initializationOptions, else the defaults) is fixed at
// initialize.

// spendingCaps are the user's spending settings.
type spendingCaps struct {
	tokenCap int     // sessionTokenCap
	maxCost  float64 // maxCostUSD; 0 means no dollar cap
	prices   contextwin.PriceTable
}

// userSpending is what c holds of them.
func userSpending(c config) spendingCaps {
	return spendingCaps{tokenCap: c.policy.SessionTokenCap, maxCost: c.policy.MaxCostUSD, prices: c.prices}
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
	return rest, ignored
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
	msg := fmt.Sprintf("Reprise: ignored %s sent through %s: a project's settings may lower the spending caps, "+
		"never raise or remove them, nor change prices. Your caps hold: sessionTokenCap %d, maxCostUSD %s. "+
		"To change them, set them in %s.", strings.Join(names, ", "), via, user.tokenCap, maxCost, where)
	s.opts.Logger.Warn("spending settings held to the user's", "settings", names, "via", via)
	s.logMessage(protocol.MessageTypeWarning, msg)
	s.showMessage(protocol.MessageTypeWarning, msg)
}
