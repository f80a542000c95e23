package lsp

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/contextwin"
)

// TestMaxTurnRequestsSetting: the per-turn cap on model calls is a setting; below 1 it is refused
// with its name and the settings in force stay.
func TestMaxTurnRequestsSetting(t *testing.T) {
	c := config{policy: contextwin.DefaultPolicy()}
	n120, zero := 120, 0
	n, err := c.apply(Settings{MaxTurnRequests: &n120})
	if err != nil || n.maxTurnRequests != 120 {
		t.Fatalf("apply: %v, %d", err, n.maxTurnRequests)
	}
	kept, err := n.apply(Settings{MaxTurnRequests: &zero})
	if err == nil || !strings.Contains(err.Error(), "maxTurnRequests") || kept.maxTurnRequests != 120 {
		t.Errorf("0: %v, kept %d", err, kept.maxTurnRequests)
	}
}
