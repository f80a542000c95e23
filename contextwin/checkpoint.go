package contextwin

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Trigger says what started a compaction. Checkpoints save it.
type Trigger string

// Compaction triggers.
const (
	TriggerAuto   Trigger = "auto"   // the context passed a threshold
	TriggerManual Trigger = "manual" // the user asked
)

// Checkpoint is one compaction, numbered and titled like Copilot's /session checkpoints, in a form
// that can be saved and listed later.
type Checkpoint struct {
	N            int       `json:"n"`
	Title        string    `json:"title"`
	Summary      string    `json:"summary"`
	Trigger      Trigger   `json:"trigger"`
	Focus        string    `json:"focus,omitempty"`
	From         int       `json:"from"` // replaced messages [From, To) of the history before
	To           int       `json:"to"`
	Replaced     int       `json:"replaced"` // messages summarized by this compaction
	Covered      int       `json:"covered"`  // messages the summary covers in all
	TokensBefore int       `json:"tokensBefore"`
	TokensAfter  int       `json:"tokensAfter"`
	Fallback     string    `json:"fallback,omitempty"`
	Time         time.Time `json:"time"`
	// Cleared is how many tool results this checkpoint cleared (the first tier: no summary);
	// 0 for a compaction.
	Cleared int `json:"cleared,omitempty"`
}

// FileName is the checkpoint's file name: NNN-title-slug.md.
func (c Checkpoint) FileName() string {
	return fmt.Sprintf("%03d-%s.md", c.N, Slug(c.Title))
}

// Markdown renders the checkpoint whole.
func (c Checkpoint) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Checkpoint %d: %s\n\n", c.N, c.Title)
	fmt.Fprintf(&b, "- trigger: %s\n", c.Trigger)
	if c.Focus != "" {
		fmt.Fprintf(&b, "- focus: %s\n", c.Focus)
	}
	fmt.Fprintf(&b, "- replaced: messages %d–%d (%d messages; the summary covers %d)\n", c.From, c.To-1, c.Replaced, c.Covered)
	fmt.Fprintf(&b, "- tokens: %d → %d\n", c.TokensBefore, c.TokensAfter)
	if c.Fallback != "" {
		fmt.Fprintf(&b, "- deterministic summary: %s\n", c.Fallback)
	}
	if !c.Time.IsZero() {
		fmt.Fprintf(&b, "- time: %s\n", c.Time.UTC().Format(time.RFC3339))
	}
	b.WriteString("\n" + strings.TrimSpace(c.Summary) + "\n")
	return b.String()
}

// Slug makes a file-name-safe lower-case slug of at most 48 characters.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		return "checkpoint"
	}
	return s
}
