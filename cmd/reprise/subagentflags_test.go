package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent"
)

// TestSubagentFlags: run's subagent flags become the session's settings; out of range, each is
// one line naming the flag, and the run does not start.
func TestSubagentFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f, rest, err := parseRunFlags([]string{"--subagents=false", "--subagent-model", "gemini-3.1-flash-lite", "--subagent-budget", "9000",
		"--subagent-parallel", "2", "--subagent-max-calls", "12", "look around"}, &out, &errOut)
	if err != nil || len(rest) != 1 {
		t.Fatalf("parse: %v %q %s", err, rest, errOut.String())
	}
	want := agent.SubagentSettings{Off: true, Model: "gemini-3.1-flash-lite", Budget: 9000, Parallel: 2, MaxCalls: 12}
	if f.subagents != want {
		t.Errorf("settings %+v, want %+v", f.subagents, want)
	}
	if f, _, err := parseRunFlags([]string{"x"}, &out, &errOut); err != nil || f.subagents != (agent.SubagentSettings{Parallel: agent.DefaultSubagentParallel, MaxCalls: agent.DefaultSubagentMaxCalls}) {
		t.Errorf("defaults %+v, %v", f.subagents, err)
	}
	for args, want := range map[string]string{
		"--subagent-budget 500":    "--subagent-budget must be at least 1000",
		"--subagent-parallel 0":    "--subagent-parallel must be between 1 and 8, got 0",
		"--subagent-max-calls 999": "--subagent-max-calls must be between 1 and 200",
		"--subagent-model a/b":     "--subagent-model: ",
	} {
		errOut.Reset()
		_, _, err := parseRunFlags(append(strings.Fields(args), "task"), &out, &errOut)
		if !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%s: %v, %q", args, err, errOut.String())
		}
	}
}
