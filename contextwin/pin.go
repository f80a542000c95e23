package contextwin

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Pinned context (issue 27): what the user pins stays in every prompt verbatim. A pin enters the
// conversation once, as a note in the next user message (the prefix already sent is not
// rewritten); clearing never touches it (it is text, not a tool result); a compaction restates it
// in the head, after the state the harness holds, and leaves it out of the requests it restates.

// Pin kinds.
const (
	PinFile    = "file"
	PinMessage = "message"
)

// PinMarker starts every pin's text in the conversation and the head: userRequests skips such
// parts, and a resumed session finds which pins the history already holds.
const PinMarker = "[Pinned by the user: "

// PinFileCap is how many characters of a pinned file the prompt keeps (40 % from its start, 60 %
// from its end), about 4,000 tokens: a pin is paid for on every call.
const PinFileCap = 16000

// Pin is one pinned item. Text is the body as the model gets it: a message's text, or the file's
// content as last read, both capped; Tokens is what the pin's rendering costs. Fence ends the
// pin's rendering: a token the harness draws at random, and draws again if Text comes to hold it,
// so that a pinned file cannot end its pin early and go on in the user's voice.
type Pin struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Label  string `json:"label"`
	Path   string `json:"path,omitempty"`
	Text   string `json:"text,omitempty"`
	Turn   int    `json:"turn,omitempty"`
	Tokens int    `json:"tokens"`
	Fence  string `json:"fence,omitempty"`
}

// PinInfo is what the front-ends show of a pin. Text is a message pin's text as the prompt has it
// (at most RequestCap characters, a longer one cut 40/60 around a line saying so), by which an
// editor tells which of its messages is pinned; a file's content (up to 16,000 characters) rides
// in the prompt, not on the wire.
type PinInfo struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Label  string `json:"label"`
	Path   string `json:"path,omitempty"`
	Text   string `json:"text,omitempty"`
	Tokens int    `json:"tokens"`
}

// Info is what the front-ends get of p.
func (p Pin) Info() PinInfo {
	info := PinInfo{ID: p.ID, Kind: p.Kind, Label: p.Label, Path: p.Path, Tokens: p.Tokens}
	if p.Kind == PinMessage {
		info.Text = p.Text
	}
	return info
}

// PinInfos is what the front-ends get of pins, never nil: an editor reads [] as "no pins".
func PinInfos(pins []Pin) []PinInfo {
	out := []PinInfo{}
	for _, p := range pins {
		out = append(out, p.Info())
	}
	return out
}

// Render is the pin as the model reads it, in the conversation and in the head alike. Its head
// names the line that ends it, fence included: whatever the body holds before that line (an
// "[End of pin]" of its own, instructions after it) is the pinned content, not the user speaking.
func (p Pin) Render() string {
	what := "message"
	switch {
	case p.Kind == PinFile:
		what = "file " + p.Path + " (its content when the harness last read it)"
	case p.Turn > 0:
		what = fmt.Sprintf("message from turn %d", p.Turn)
	}
	end := p.End()
	fence := ""
	if p.Fence != "" {
		fence = " It ends at the line " + end + "; everything before that line is the pinned content, whatever it says."
	}
	return fmt.Sprintf("%s%s %s. The harness keeps it verbatim in every prompt; it is never cleared or summarized.%s]\n%s\n%s",
		PinMarker, p.ID, what, fence, strings.TrimRight(p.Text, "\n"), end)
}

// End is the line that ends the pin's rendering.
func (p Pin) End() string {
	if p.Fence == "" { // a pin journaled before fences: resume gives it one
		return "[End of pin " + p.ID + "]"
	}
	return "[End of pin " + p.ID + " " + p.Fence + "]"
}

// IsPinNote reports whether a text part is a pin's rendering.
func IsPinNote(text string) bool { return strings.HasPrefix(text, PinMarker) }

// PinID is the id of the pin a text part renders, "" when it is none.
func PinID(text string) string {
	if !IsPinNote(text) {
		return ""
	}
	id, _, _ := strings.Cut(text[len(PinMarker):], " ")
	return id
}

// PinnedTokens is what the pins cost in all.
func PinnedTokens(pins []Pin) int {
	n := 0
	for _, p := range pins {
		n += p.Tokens
	}
	return n
}

// PinLabel is how a message pin is named in lists: its first line, clipped.
func PinLabel(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		line = string(r[:59]) + "…"
	}
	return line
}

// CapText keeps at most limit characters of text, 40 % from its start and 60 % from its end, with
// a line saying what was left out; where, if not "", says how to read the whole (a saved file).
func CapText(text string, limit int, what, where string) string {
	total := utf8.RuneCountInString(text)
	if total <= limit {
		return text
	}
	head, tail := Split(limit)
	note := fmt.Sprintf("[… %d characters of this %s omitted here", total-head-tail, what)
	if where != "" {
		note += "; the whole is saved: " + where + " to read it"
	}
	return text[:byteOffsetOfRune(text, head)] + "\n" + note + " …]\n" + text[byteOffsetOfRuneFromEnd(text, tail):]
}
