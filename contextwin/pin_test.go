package contextwin

import (
	"regexp"
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

// TestPinInfoCarriesMessageText: the editors tell a pinned message by its text, whole or cut around
// the omission line whose form VS Code's pinOf matches; a file's content stays off the wire.
func TestPinInfoCarriesMessageText(t *testing.T) {
	msg := Pin{ID: "p1", Kind: PinMessage, Label: "Keep", Text: "Keep the API.", Tokens: 4}
	if got := msg.Info(); got.Text != "Keep the API." || got.Label != "Keep" {
		t.Errorf("message pin info = %+v", got)
	}
	file := Pin{ID: "p2", Kind: PinFile, Label: "a.go", Path: "a.go", Text: "package a\n", Tokens: 3}
	if got := file.Info(); got.Text != "" || got.Path != "a.go" {
		t.Errorf("file pin info = %+v", got)
	}
	long := strings.Repeat("a", 3000) + "middle" + strings.Repeat("z", 3000)
	capped := CapText(long, RequestCap, "message", "read_file .reprise/requests/1.txt")
	omitted := regexp.MustCompile(`\n\[… \d+ characters of this message omitted[^\n]*…\]\n`)
	m := omitted.FindStringIndex(capped)
	if m == nil || !strings.HasPrefix(long, capped[:m[0]]) || !strings.HasSuffix(long, capped[m[1]:]) {
		t.Errorf("a capped message is not its start and end around one omission line:\n%.200s", capped)
	}
}
