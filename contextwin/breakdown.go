package contextwin

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"
)

// Breakdown is the /context view: where the window's tokens go. The categories sum to the window
// unless the prompt already overflows it.
type Breakdown struct {
	SystemPrompt       int `json:"systemPrompt"`
	CustomInstructions int `json:"customInstructions"`
	// WorkspaceMap is the map of the workspace in the head (omitted when there is none).
	WorkspaceMap int `json:"workspaceMap,omitempty"`
	Tools        int `json:"tools"`
	MCPTools     int `json:"mcpTools"`
	Messages     int `json:"messages"`
	Free         int `json:"free"`
	Buffer       int `json:"buffer"`
}

// Fixed is what every request carries before any message.
type Fixed struct {
	SystemPrompt, CustomInstructions, WorkspaceMap, Tools, MCPTools int
}

// Sum of the fixed parts.
func (f Fixed) Sum() int {
	return f.SystemPrompt + f.CustomInstructions + f.WorkspaceMap + f.Tools + f.MCPTools
}

// NewBreakdown splits a window of the given size: the fixed parts, the messages (what the prompt
// uses beyond them), the reply buffer, and what is left free.
func NewBreakdown(window, used, reserve int, f Fixed) Breakdown {
	b := Breakdown{
		SystemPrompt:       f.SystemPrompt,
		CustomInstructions: f.CustomInstructions,
		WorkspaceMap:       f.WorkspaceMap,
		Tools:              f.Tools,
		MCPTools:           f.MCPTools,
		Messages:           max(used-f.Sum(), 0),
	}
	left := window - max(used, f.Sum())
	b.Buffer = min(max(left, 0), reserve)
	b.Free = max(left-b.Buffer, 0)
	return b
}

// Item is one large thing in the messages: a file read, a tool output, a message.
type Item struct {
	Index  int    `json:"index"` // message index in the history
	Kind   string `json:"kind"`  // tool name, "user", "model" or "summary"
	Label  string `json:"label"` // e.g. "read_file src/a.go"
	Path   string `json:"path,omitempty"`
	Tokens int    `json:"tokens"`
}

// LargestItems lists the n largest items of history, biggest first: each function response
// (labelled by its call: tool name and path or command) and each text message. summarized says
// the first message is a compaction's head (the task and the summaries), not the user's task.
func LargestItems(history []*genai.Content, n int, est *Estimator, summarized bool) []Item {
	var items []Item
	calls := map[string]*genai.FunctionCall{} // by ID, and by name for calls without one
	for i, c := range history {
		if c == nil {
			continue
		}
		text := 0.0
		for _, p := range c.Parts {
			if fc := p.FunctionCall; fc != nil {
				calls[CallKey(fc.ID, fc.Name)] = fc
			}
			if fr := p.FunctionResponse; fr != nil {
				it := Item{Index: i, Kind: fr.Name, Label: fr.Name, Tokens: est.Tokens(EstimatePart(p))}
				if fc := calls[CallKey(fr.ID, fr.Name)]; fc != nil {
					it.Path, it.Label = describeCall(fc)
				}
				items = append(items, it)
				continue
			}
			if p.FunctionCall == nil {
				text += EstimatePart(p)
			}
		}
		if text > 0 {
			kind := c.Role
			if i == 0 && summarized {
				kind = "summary"
			}
			items = append(items, Item{Index: i, Kind: kind, Label: kind + " message", Tokens: est.Tokens(text)})
		}
	}
	slices.SortStableFunc(items, func(a, b Item) int { return cmp.Compare(b.Tokens, a.Tokens) })
	if len(items) > n {
		items = items[:n]
	}
	return items
}

// CallKey pairs a function call with its response: by id when the model gave one, else by name.
func CallKey(id, name string) string {
	if id != "" {
		return "id:" + id
	}
	return "name:" + name
}

// describeCall labels a call by its main argument.
func describeCall(fc *genai.FunctionCall) (path, label string) {
	arg := func(k string) string { s, _ := fc.Args[k].(string); return s }
	what := ""
	switch {
	case arg("path") != "":
		path, what = arg("path"), arg("path")
	case arg("command") != "":
		what = arg("command")
	case arg("pattern") != "":
		what = arg("pattern")
	default:
		b, _ := json.Marshal(fc.Args)
		what = string(b)
	}
	// One line, of a length a list shows (a path whole): a view lists an item a line.
	what = strings.Join(strings.Fields(what), " ")
	if r := []rune(what); len(r) > 60 && path == "" {
		what = string(r[:59]) + "…"
	}
	return path, fc.Name + " " + what
}

// Kilo writes a token count as people read it: 950, 10.1k, 1.2M.
func Kilo(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}
