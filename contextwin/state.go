package contextwin

import (
	"regexp"
	"strings"
)

// State is what the harness knows for certain and states itself after a compaction, instead of
// trusting the summary: the files it changed and the last test verdict it saw.
type State struct {
	FilesModified []string `json:"filesModified"`
	LastVerdict   string   `json:"lastVerdict,omitempty"`
	Plan          []Todo   `json:"plan,omitempty"`  // the agent's (write_todos)
	Notes         []Note   `json:"notes,omitempty"` // the agent's exact values (save_note)
}

// Render is the "State held by the harness" section of the head message.
func (s State) Render() string {
	var b strings.Builder
	b.WriteString("**State held by the harness** (authoritative, kept by the harness itself):\n")
	files := "none"
	if len(s.FilesModified) > 0 {
		files = strings.Join(s.FilesModified, ", ")
	}
	b.WriteString("- Files modified since the session began: " + files + "\n")
	verdict := "no test run yet"
	if s.LastVerdict != "" {
		verdict = s.LastVerdict
	}
	b.WriteString("- Last test verdict: " + verdict + "\n")
	if len(s.Plan) > 0 {
		b.WriteString("- Plan (your latest write_todos; update it as you go):\n" + RenderPlan(s.Plan))
	}
	if len(s.Notes) > 0 {
		b.WriteString("- Notes (your save_note values, exact: quote them as they are):\n" + RenderNotes(s.Notes))
	}
	return b.String()
}

// verdictPatterns recognise the summary line of common test runners.
var verdictPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\b\d+ (passed|failed)\b`),                        // pytest, cargo ("test result: ok. 3 passed; 0 failed")
	regexp.MustCompile(`^(ok|FAIL)\s+\S+`),                               // go test, per package
	regexp.MustCompile(`^(PASS|FAIL)$`),                                  // go test, single package verbose
	regexp.MustCompile(`^---\s*FAIL:`),                                   // go test failure line
	regexp.MustCompile(`^Tests:\s+.*\d+ (passed|failed|total)`),          // jest, vitest
	regexp.MustCompile(`^\s*Tests\s+\d+ (passed|failed)`),                // vitest
	regexp.MustCompile(`^(#|ℹ) (pass|fail|tests) \d+$`),                  // node --test (TAP and spec reporters)
	regexp.MustCompile(`^test result: (ok|FAILED)\.`),                    // cargo
	regexp.MustCompile(`^=+ .*(passed|failed|error|no tests ran).* =+$`), // pytest banner variants
}

// ExtractVerdict returns the last line of output that reads as a test verdict. For the node test
// runner, whose pass and fail counts stand on separate lines, both are joined.
func ExtractVerdict(output string) (string, bool) {
	lines := strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if line == "" || len(line) > 400 {
			continue
		}
		for _, re := range verdictPatterns {
			if !re.MatchString(line) {
				continue
			}
			if m := nodeCount.FindStringSubmatch(line); m != nil && m[2] == "fail" {
				if pass := findNodePass(lines[:i]); pass != "" {
					return pass + " · " + line, true
				}
			}
			return line, true
		}
	}
	return "", false
}

var nodeCount = regexp.MustCompile(`^(#|ℹ) (pass|fail) (\d+)$`)

func findNodePass(lines []string) string {
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-4; i-- {
		line := strings.TrimSpace(lines[i])
		if m := nodeCount.FindStringSubmatch(line); m != nil && m[2] == "pass" {
			return line
		}
	}
	return ""
}
