package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

func TestPlanOf(t *testing.T) {
	cases := []struct {
		name, summary string
		want          []string
	}{
		{"list", "**Objective:**\nFix the bug\n\n**Remaining work:**\n- write the test\n- run go test\n\n**Last tests:**\nnone", []string{"write the test", "run go test"}},
		{"numbered heading", "## Objective\nx\n## Remaining work\n1. a\n2) b\n", []string{"a", "b"}},
		{"paragraph", "**Remaining work:**\ncontinue the objective;\nthe commands run so far", []string{"continue the objective; the commands run so far"}},
		{"inline", "**Remaining work:** ship it", []string{"ship it"}},
		{"none", "**Objective:**\nx", nil},
	}
	for _, c := range cases {
		var got []string
		for _, e := range planOf(c.summary) {
			got = append(got, e.Content)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	p := planOf("**Remaining work:**\n- a\n- b")
	if p[0].Status != sdk.PlanEntryStatusInProgress || p[0].Priority != sdk.PlanEntryPriorityHigh || p[1].Status != sdk.PlanEntryStatusPending {
		t.Errorf("plan = %+v: the first entry goes on, the rest wait", p)
	}
}
