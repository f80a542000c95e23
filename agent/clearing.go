package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/journal"
	"github.com/reprise-dev/reprise/contextwin"
)

// The first tier of context management: old tool results cleared, no model call. A cleared
// result keeps its call and response part; its output becomes a stub that names the call and,
// for a long one, the file its whole text was saved to. A clearing is a checkpoint like a
// compaction: journaled, replayed on resume, undone by UndoCompaction.

// recallAbove is the output size past which a cleared result is saved to a file the stub names:
// a shorter one costs less to call again than to save and read back.
const recallAbove = 1000

// growthOf is about what the prompt gains per call: the tokens of the last keep model turns and
// their results, divided by keep.
func growthOf(history []*genai.Content, msgs []int, keep int) int {
	keep = max(keep, 1)
	from, ok := contextwin.SplitPoint(history, keep)
	if !ok {
		return 0
	}
	n := 0
	for _, t := range msgs[from:] {
		n += t
	}
	return n / keep
}

// clearedTokensLocked is what message i would cost cleared, its stubs as the first tier would
// write them (a saved result's path as long as the one it would get). An estimate of the stubs
// at a flat size missed by a third of a result's stub, enough to bring a prompt the plan left
// just above the cache minimum under it. c.mu must be held.
func (c *Conversation) clearedTokensLocked(est *contextwin.Estimator, i int) int {
	spill := filepath.Join(c.opts.StateDir, "tool-outputs")
	// The message and the one holding its calls: not a copy of the whole history per message.
	h := contextwin.ClearResults(c.history[i-1:i+1], []int{1}, func(fr *genai.FunctionResponse) string {
		if _, ok := recallText(fr); !ok {
			return ""
		}
		return readBack(filepath.Join(spill, fmt.Sprintf("cleared-%d-%d-%s.txt", len(c.checkpoints)+1, len(fr.Response), safeName(fr.Name))))
	})
	return est.Tokens(contextwin.EstimateContent(h[1]))
}

// horizon is how many calls a decision taken now is weighed over: a turn that has made calls
// calls makes, under a Lindy prior (P(T > t) = calls/t), at least calls/3 more three times out
// of four; and no more than its limit leaves. Never less than the next call and one more.
func (o *Options) horizon(calls int) int {
	return max(min(calls/3, o.MaxTurnRequests-calls), 2)
}

// liveResults counts the function responses of m that are not cleared yet.
func liveResults(m *genai.Content) int {
	if m == nil || m.Role == genai.RoleModel {
		return 0
	}
	n := 0
	for _, p := range m.Parts {
		if p != nil && p.FunctionResponse != nil && !contextwin.IsCleared(p.FunctionResponse) {
			n++
		}
	}
	return n
}

// inUse marks the results the model is still working from: the last read of the files it is
// editing (the two it changed last), and the last command run (the last test output). modified
// are the files it changed in the session, for the calls that name a path another way.
func inUse(history []*genai.Content, modified []string) map[int]bool {
	out := map[int]bool{}
	editing := map[string]bool{}
	lastRun := -1
	for i := len(history) - 1; i > 0; i-- {
		for _, call := range callsAnswered(history, i) {
			p, _ := call.Args["path"].(string)
			switch {
			case call.Name == "run_command" && lastRun < 0:
				lastRun = i
			case (call.Name == "edit_file" || call.Name == "write_file") && len(editing) < 2 && p != "":
				editing[clean(p)] = true
			}
		}
	}
	if lastRun > 0 {
		out[lastRun] = true
	}
	if len(editing) == 0 { // edits made before a compaction: the harness's own list
		for _, p := range modified[max(len(modified)-2, 0):] {
			editing[clean(p)] = true
		}
	}
	seen := map[string]bool{}
	for i := len(history) - 1; i > 0; i-- {
		for _, call := range callsAnswered(history, i) {
			if p, ok := call.Args["path"].(string); ok && call.Name == "read_file" && editing[clean(p)] && !seen[clean(p)] {
				seen[clean(p)] = true
				out[i] = true
			}
		}
	}
	return out
}

func clean(p string) string { return filepath.ToSlash(filepath.Clean(p)) }

// callsAnswered are the calls message i answers: those of the model message before it.
func callsAnswered(history []*genai.Content, i int) []*genai.FunctionCall {
	if liveResults(history[i]) == 0 || history[i-1] == nil || history[i-1].Role != genai.RoleModel {
		return nil
	}
	return journal.FunctionCalls(history[i-1])
}

// recall saves a long result whole to the session's tool outputs, where read_file reads it, and
// says how to read it back; "" for a short one, for a read (its stub names the path and range:
// reading it again is the way back), or when it cannot be saved.
func recall(dir, name string, fr *genai.FunctionResponse) string {
	text, ok := recallText(fr)
	if !ok {
		return ""
	}
	return saveWhole(dir, name, text)
}

// recallText is the text of a result worth saving when it is cleared: a long one that is not a
// read. ok is false for the others.
func recallText(fr *genai.FunctionResponse) (text string, ok bool) {
	if fr.Name == "read_file" {
		return "", false
	}
	for _, v := range fr.Response {
		if s, ok := v.(string); ok {
			text += s
		}
	}
	return text, utf8.RuneCountInString(text) > recallAbove
}

// saveWhole writes text to dir/name.txt and says how to read it back; "" when it cannot.
func saveWhole(dir, name, text string) string {
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	path := filepath.Join(dir, name+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return ""
	}
	return readBack(path)
}

// readBack says how the model reads a saved text back.
func readBack(path string) string { return fmt.Sprintf("read_file path=%q", path) }

// Clearable are the messages of history whose results the first tier may clear now, in order:
// those holding results not cleared yet, before the last keep model turns, that the model is not
// still working from (inUse) and the user did not pin (pinned, by index). modified are the files
// the session changed, as the harness lists them. The cost tests' mark replays the same rule.
func Clearable(history []*genai.Content, modified []string, keep int, pinned map[int]bool) []int {
	keepFrom, ok := contextwin.SplitPoint(history, keep)
	if !ok {
		return nil
	}
	used := inUse(history, modified)
	var out []int
	for i := 1; i < keepFrom; i++ {
		if liveResults(history[i]) > 0 && !used[i] && !pinned[i] {
			out = append(out, i)
		}
	}
	return out
}

// ClearedCopy is history with the results of the messages at idx cleared as clearing number n
// clears them, its stubs naming files under spillDir, but nothing saved: what the next request
// would hold. The cost tests' mark prices schedules of clearings with it.
func ClearedCopy(history []*genai.Content, idx []int, spillDir string, n int) []*genai.Content {
	seq := 0
	return contextwin.ClearResults(history, idx, func(fr *genai.FunctionResponse) string {
		seq++
		if _, ok := recallText(fr); !ok {
			return ""
		}
		return readBack(filepath.Join(spillDir, fmt.Sprintf("cleared-%d-%d-%s", n, seq, safeName(fr.Name))+".txt"))
	})
}

// saveRequest saves a user request too long for the head whole to the session's tool outputs,
// named by its content (the same request saved twice is one file), and says how to read it.
func (o *Options) saveRequest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return saveWhole(filepath.Join(o.StateDir, "tool-outputs"), "request-"+hex.EncodeToString(sum[:6]), text)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
