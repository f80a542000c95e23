package contextwin

import "strings"

// CodeFence returns a backtick fence longer than any run of backticks in s, so that s quoted
// between two of them cannot close the block early.
func CodeFence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
