package contextwin

import (
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// SummaryBlock is one summary in the head message: the messages it stands for (numbered from 1 after
// the task, over the whole session) and the user's requests found among them.
type SummaryBlock struct {
	From     int      `json:"from"`
	To       int      `json:"to"`
	Requests []string `json:"requests,omitempty"`
	Summary  string   `json:"summary"`
}

// Covered is how many messages the blocks stand for.
func Covered(blocks []SummaryBlock) int {
	if len(blocks) == 0 {
		return 0
	}
	return blocks[len(blocks)-1].To
}

// JoinSummaries is the blocks' summaries as one text, oldest first: what a checkpoint holds.
func JoinSummaries(blocks []SummaryBlock) string {
	var parts []string
	for _, b := range blocks {
		parts = append(parts, strings.TrimSpace(b.Summary))
	}
	return strings.Join(parts, "\n\n")
}

// Requests are the user's later requests the blocks restate, oldest first.
func Requests(blocks []SummaryBlock) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b.Requests...)
	}
	return out
}

// LegacyBlocks turns what sessions saved before blocks existed (one merged summary) into blocks.
func LegacyBlocks(summary string, covered int, requests []string) []SummaryBlock {
	if summary == "" && covered == 0 {
		return nil
	}
	return []SummaryBlock{{From: 1, To: covered, Requests: requests, Summary: summary}}
}

// HeadContent is the first message after a compaction. Its parts are laid out for the prefix
// cache: the task exactly as the user first sent it, then one part per summary block, oldest
// first, then the state the harness holds, then one part per pinned item, verbatim. A compaction
// that appends a block leaves every part before it byte for byte, so the provider still has that
// prefix cached; only the new block, the state, the pins and what follows are billed in full
// again.
func HeadContent(task string, blocks []SummaryBlock, st State, pins []Pin) *genai.Content {
	parts := []*genai.Part{{Text: task}}
	for i, b := range blocks {
		parts = append(parts, &genai.Part{Text: b.render(i == 0)})
	}
	parts = append(parts, &genai.Part{Text: st.Render()})
	for _, p := range pins {
		parts = append(parts, &genai.Part{Text: p.Render()})
	}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// HeadText is the head message's text, parts joined, as a person reads it.
func HeadText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, p := range c.Parts {
		if p.Text != "" {
			parts = append(parts, strings.TrimSpace(p.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}

// render is the block's part: the precedence sentence, the user's requests verbatim, the summary.
func (b SummaryBlock) render(first bool) string {
	var s strings.Builder
	if first {
		fmt.Fprintf(&s, "[Summary of the first %d messages, compacted by the harness. The messages that follow are kept verbatim and take precedence over this summary.]\n", b.To)
	} else {
		fmt.Fprintf(&s, "[Summary of messages %d to %d, compacted by the harness. The messages that follow are kept verbatim and take precedence over this summary and the ones above.]\n", b.From, b.To)
	}
	if len(b.Requests) > 0 {
		s.WriteString("Requests from the user in those messages, verbatim:\n")
		for _, r := range b.Requests {
			s.WriteString("- " + strings.TrimSpace(r) + "\n")
		}
	}
	s.WriteString(strings.TrimSpace(b.Summary))
	s.WriteString("\n")
	return s.String()
}
