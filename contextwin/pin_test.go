package contextwin

import (
	"strings"
	"testing"

	"google.golang.org/genai"
)

// TestPinsInHeadNotInRequests: the head restates each pin verbatim after the state, and the
// requests a summary restates leave the pin notes out, so a pin is in the head once.
func TestPinsInHeadNotInRequests(t *testing.T) {
	pin := Pin{ID: "p1", Kind: PinMessage, Label: "Keep it short.", Text: "Keep it short."}
	note := pin.Render()
	if PinID(note) != "p1" || !IsPinNote(note) || PinID("hello") != "" {
		t.Fatalf("PinID(%q) = %q", note, PinID(note))
	}
	old := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "Do the thing."}, {Text: note}}}}
	if got := userRequests(old); len(got) != 1 || got[0] != "Do the thing." {
		t.Errorf("userRequests = %q", got)
	}
	head := HeadContent("task", nil, State{}, []Pin{pin})
	if last := head.Parts[len(head.Parts)-1].Text; last != note {
		t.Errorf("the head's last part is %q, want the pin", last)
	}
	capped := CapText(strings.Repeat("a", 100)+strings.Repeat("b", 100), 100, "message", `read_file path="x"`)
	if !strings.HasPrefix(capped, strings.Repeat("a", 40)+"\n[… 100 characters of this message omitted here; the whole is saved: read_file path=\"x\" to read it …]\n") || !strings.HasSuffix(capped, strings.Repeat("b", 60)) {
		t.Errorf("CapText = %q", capped)
	}
}
