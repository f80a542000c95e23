package tools

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reprise-dev/reprise/agent/fspath"
)

// newCaptureFor returns the sink for one call's output: bounded to MaxOutputChars, saved to
// SpillDir past LargeOutputBytes under a name that says which tool and call it came from.
func (e *Env) newCaptureFor(call Call, tool string) *capture {
	room := min(e.MaxSavedBytes, e.storeRoom())
	return newCapture(e.MaxOutputChars,
		newSpill(e.SpillDir, spillPrefix(tool, call.ID), e.LargeOutputBytes, room)).redacting(e.Secrets)
}

// storeRoom is what SpillDir may still take: the saved outputs of a session are bounded in all
// (MaxStoreBytes), not only each one, so a command that floods its output at every call cannot
// fill the disk 64 MiB at a time. Calls that run at once may each take the room left.
func (e *Env) storeRoom() int64 {
	if e.MaxStoreBytes < 0 {
		return math.MaxInt64
	}
	max := cmp.Or(e.MaxStoreBytes, DefaultMaxStoreBytes)
	entries, err := os.ReadDir(e.SpillDir)
	if err != nil {
		return max
	}
	var used int64
	for _, d := range entries {
		if info, err := d.Info(); err == nil {
			used += info.Size()
		}
	}
	return max - used
}

// bounded fills res.Output with text as the model should get it.
func (e *Env) bounded(call Call, tool, text string, res *Result) {
	c := e.newCaptureFor(call, tool)
	c.WriteString(text)
	res.Output = e.present(c, res)
}

// present renders a capture for the model: when the output was saved, a first line naming the
// file (a path read_file and search accept) and, if it was cut there, how much it holds; then
// the head and tail. It sets the size fields of res.
func (e *Env) present(c *capture, res *Result) string {
	text, chars, omitted := c.render()
	res.TotalChars, res.Omitted = chars, omitted
	saved, err := c.spill.finish()
	var line string
	switch {
	case saved != "" && c.spill.capped:
		res.SavedPath = saved
		line = fmt.Sprintf("[output of %s bytes; its first %s bytes saved to %s; read_file or search it]\n",
			commas(c.total), commas(c.spill.saved), e.shown(saved))
	case saved != "":
		res.SavedPath = saved
		line = fmt.Sprintf("[output of %s bytes saved whole to %s; read_file or search it]\n",
			commas(c.total), e.shown(saved))
	case err != nil:
		line = fmt.Sprintf("[output of %s bytes; saving it whole failed: %v]\n", commas(c.total), err)
	}
	return line + text
}

// shown names a saved file the way the model should pass it back: relative when it lies in the
// workspace, absolute otherwise.
func (e *Env) shown(abs string) string {
	if rel, ok := fspath.Within(filepath.Clean(e.Workspace), abs); ok {
		return filepath.ToSlash(rel)
	}
	if real, err := filepath.EvalSymlinks(e.Workspace); err == nil {
		if rel, ok := fspath.Within(real, abs); ok {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// spillPrefix makes a file name prefix from the tool and the model's call id, keeping only
// characters safe in a file name.
func spillPrefix(tool, id string) string {
	var b strings.Builder
	b.WriteString(tool)
	if id != "" {
		b.WriteByte('-')
		for _, r := range id {
			if b.Len() >= len(tool)+41 {
				break
			}
			if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// commas writes n with thousands separators, as people read sizes.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lineEnded returns s ending with a newline, so a note can follow on its own line.
func lineEnded(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
