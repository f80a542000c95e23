package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// codeActionKind is the kind of every Reprise code action. A plain client (LSP4IJ, eglot) cannot
// type a prompt, so the server's commands come to it as code actions. Not "quickfix": LSP4IJ
// keeps quick fixes for diagnostics and drops them from its intentions. Not "source": VS Code
// leaves source actions out of the light bulb. Under "refactor", every client lists them by
// default, and a key binding can ask for this kind alone (eglot: (eglot-code-actions beg end
// "refactor.reprise" t)).
const codeActionKind = "refactor.reprise"

// commentPrefix marks a comment the user wants to send as a prompt: "// reprise: add a test".
const commentPrefix = "reprise:"

// defaultSelectionQuestion is asked about a selection by the "ask about the selection" action.
const defaultSelectionQuestion = "Explain this code and point out problems."

const (
	maxCommentActions = 5        // reprise: comments turned into actions per request
	maxQuotedBytes    = 16 << 10 // a larger selection is named by its lines, not quoted
	maxCommentRunes   = 80       // of a comment's prompt: shown whole in the title, and all that is sent
	maxScannedLines   = 200      // lines of the range searched for reprise: comments
	maxFileBytes      = 8 << 20  // a file on disk larger than this is not read for actions
	selectionTitle    = "Reprise: ask about the selection"
	compactTitle      = "Reprise: compact session"
	showContextTitle  = "Reprise: show context"
	undoFileTitle     = "Reprise: undo the agent's change to this file"
	showChangesTitle  = "Reprise: list the agent's changes"
)

// codeActionParams is the part of CodeActionParams the server reads.
type codeActionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Range   lspRange `json:"range"`
	Context struct {
		Only []string `json:"only"`
	} `json:"context"`
}

type lspRange struct {
	Start lspPosition `json:"start"`
	End   lspPosition `json:"end"`
}

// lspPosition is an LSP position: a zero-based line and a column in UTF-16 code units.
type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// codeActions offers the server's commands where the client has no other way to reach them: an
// action per "reprise:" comment in the range, one for a non-empty selection, and Compact session
// and Show context everywhere. It answers [] rather than null when nothing applies.
func (s *server) codeActions(ctx context.Context, params json.RawMessage) (any, error) {
	var p codeActionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("textDocument/codeAction: %v", err)
	}
	actions := []protocol.CodeAction{}
	if !kindWanted(codeActionKind, p.Context.Only) {
		return actions, nil
	}
	if name, text, ok := s.documentText(p.TextDocument.URI); ok {
		actions = append(actions, commentActions(name, text, p.Range)...)
		if a, ok := selectionAction(name, text, p.Range); ok {
			actions = append(actions, a)
		}
	}
	actions = append(actions, s.changeActions(p.TextDocument.URI, p.Range)...)
	// sessionId "" is the current session when the user picks the action. The argument is not
	// {}: Emacs reads an empty object as nil and sends it back as null, which reprise.compact
	// refuses.
	actions = append(actions,
		commandAction(compactTitle, CommandCompact, compactArgs{}),
		commandAction(showContextTitle, CommandShowContext, SessionArgs{}),
	)
	return actions, nil
}

// documentText returns a document's name for prompts (workspace-relative when inside it) and its
// text: the editor's buffer when open, else the file on disk.
func (s *server) documentText(uri string) (name, text string, ok bool) {
	path, err := uriToPath(uri)
	if err != nil {
		return "", "", false
	}
	name = path
	if rel, inside := s.docs.rel(uri); inside {
		name = rel
		if t, open := s.docs.overlay(rel); open {
			return name, t, true
		}
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() > maxFileBytes {
		return "", "", false
	}
	b, err := os.ReadFile(path)
	if err != nil || !utf8.Valid(b) {
		return "", "", false
	}
	return name, string(b), true
}

// kindWanted reports whether kind passes a client's context.only filter: kinds are hierarchical,
// so "refactor" asks for "refactor.reprise" too.
func kindWanted(kind string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o != "" && (kind == o || strings.HasPrefix(kind, o+".")) {
			return true
		}
	}
	return false
}

func commandAction(title, command string, arg any) protocol.CodeAction {
	return protocol.CodeAction{
		Title:   title,
		Kind:    codeActionKind,
		Command: &protocol.Command{Title: title, Command: command, Arguments: []any{arg}},
	}
}

// commentActions turns each "reprise:" comment on the lines of r into an ask action whose prompt
// says where it came from.
func commentActions(name, text string, r lspRange) []protocol.CodeAction {
	var out []protocol.CodeAction
	last := r.End.Line
	if r.End.Character == 0 && r.End.Line > r.Start.Line { // a selection of whole lines
		last--
	}
	last = min(last, r.Start.Line+maxScannedLines-1)
	n := -1
	for line := range strings.Lines(text) {
		n++
		if n > last || len(out) == maxCommentActions {
			break
		}
		if n < r.Start.Line {
			continue
		}
		prompt, ok := commentPrompt(strings.TrimRight(line, "\r\n"))
		if !ok {
			continue
		}
		shown, cut := shownPrompt(prompt)
		text := fmt.Sprintf("%s (from %s:%d)", shown, name, n+1)
		if cut {
			text = fmt.Sprintf("%s (the comment goes on at %s:%d; read it there)", shown, name, n+1)
		}
		out = append(out, commandAction(`Reprise: ask "`+shown+`"`, CommandAsk, AskArgs{Text: text}))
	}
	return out
}

// shownPrompt is what an action sends of a comment's prompt, and shows whole in its title: the
// user picks the action from its title, and the prompt goes to the model as the user's own words,
// so nothing may hide in it. A title used to show 60 characters of a comment and send all of it
// (a line padded with spaces hid an instruction after them). What does not show as itself
// (tools.Invisible: controls, bidi overrides, zero-width spaces, combining marks, the Hangul and
// Braille fillers) and the look-alike letters of a word that mixes scripts (tools.MixedScripts)
// are written as escapes, each run of white space becomes one
// space, and past maxCommentRunes the prompt is cut, with cut true: the rest reaches the model
// only as the file's content, if it reads it.
func shownPrompt(prompt string) (shown string, cut bool) {
	var pieces []string // each shows one rune of prompt, or a run of white space
	space := false
	mixed := tools.MixedScripts(prompt)
	for i, r := range prompt {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case space && len(pieces) > 0:
			pieces = append(pieces, " ")
		}
		space = false
		if r == utf8.RuneError || tools.Invisible(r) || mixed[i] {
			pieces = append(pieces, strings.Trim(strconv.QuoteRuneToASCII(r), "'"))
		} else {
			pieces = append(pieces, string(r))
		}
	}
	var b strings.Builder
	runes := 0
	for i, p := range pieces {
		n := utf8.RuneCountInString(p)
		if runes+n > maxCommentRunes || runes+n == maxCommentRunes && i < len(pieces)-1 {
			return strings.TrimRight(b.String(), " ") + "…", true
		}
		b.WriteString(p)
		runes += n
	}
	return b.String(), false
}

// commentLeaders start a comment in the languages people write. Quotes (Vim's ", Basic's ')
// are left out: they would take a string holding "reprise:" for a comment.
var commentLeaders = []string{"<!--", "/*", "(*", "{-", "//", "--", "#", ";", "%", "*"}

// commentClosers end a block comment on the same line.
var commentClosers = []string{"*/", "-->", "*)", "-}"}

// commentPrompt finds "reprise: <prompt>" in a comment on line: after a comment leader that starts
// the line or follows code and a space ("x := 1 // reprise: why?"). A leader may be repeated or
// extended ("///", ";;", "#!", "/**"). The prefix is matched case-insensitively.
func commentPrompt(line string) (string, bool) {
	i := strings.Index(strings.ToLower(line), commentPrefix)
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(line[:i])
	if len(fields) == 0 || !isCommentLeader(fields[len(fields)-1]) {
		return "", false
	}
	prompt := strings.TrimSpace(line[i+len(commentPrefix):])
	for _, c := range commentClosers {
		prompt = strings.TrimSpace(strings.TrimSuffix(prompt, c))
	}
	return prompt, prompt != ""
}

// isCommentLeader reports whether token is a comment leader, possibly repeated or extended.
func isCommentLeader(token string) bool {
	for _, l := range commentLeaders {
		if rest, ok := strings.CutPrefix(token, l); ok && strings.Trim(rest, "/*#;%-!") == "" {
			return true
		}
	}
	return false
}

// selectionAction asks about the selected text, quoted in a fenced block with its place.
func selectionAction(name, text string, r lspRange) (protocol.CodeAction, bool) {
	if r.Start == r.End {
		return protocol.CodeAction{}, false
	}
	start, end := offsetOf(text, r.Start), offsetOf(text, r.End)
	if end < start {
		start, end = end, start
	}
	selected := text[start:end]
	if strings.TrimSpace(selected) == "" {
		return protocol.CodeAction{}, false
	}
	first, last := r.Start.Line+1, r.End.Line+1
	if r.End.Character == 0 && r.End.Line > r.Start.Line { // the selection ends at a line start
		last--
	}
	where := fmt.Sprintf("%s:%d", name, first)
	if last > first {
		where = fmt.Sprintf("%s:%d-%d", name, first, last)
	}
	var prompt string
	if len(selected) > maxQuotedBytes {
		prompt = fmt.Sprintf("%s\n\nThe code is %s (%d bytes, too long to quote here: read those lines).", defaultSelectionQuestion, where, len(selected))
	} else {
		fence := contextwin.CodeFence(selected)
		lang := strings.TrimPrefix(filepath.Ext(name), ".")
		prompt = fmt.Sprintf("%s\n\n%s\n%s%s\n%s\n%s", defaultSelectionQuestion, where, fence, lang, strings.TrimSuffix(selected, "\n"), fence)
	}
	return commandAction(selectionTitle, CommandAsk, AskArgs{Text: prompt}), true
}

// offsetOf converts an LSP position to a byte offset in text. Columns count UTF-16 code units; a
// column past the end of its line means the line's end, and a line past the end of the text
// means the end of the text, as LSP asks.
func offsetOf(text string, p lspPosition) int {
	if p.Line < 0 {
		return 0
	}
	off := 0
	for range p.Line {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			return len(text)
		}
		off += nl + 1
	}
	lineEnd := len(text)
	if nl := strings.IndexByte(text[off:], '\n'); nl >= 0 {
		lineEnd = off + nl
	}
	lineEnd = off + len(strings.TrimSuffix(text[off:lineEnd], "\r"))
	units := 0
	for i, r := range text[off:lineEnd] {
		if units >= p.Character {
			return off + i
		}
		units += utf16Len(r)
	}
	return lineEnd
}

func utf16Len(r rune) int {
	if n := utf16.RuneLen(r); n > 0 {
		return n
	}
	return 1 // an invalid rune is one replacement character
}

// showContext shows the /context view as a message and returns it.
func (s *server) showContext(l *runner.Live) contextResult {
	r := s.contextReport(l)
	s.showMessage(protocol.MessageTypeInfo, r.Text)
	return r
}
