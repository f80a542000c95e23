package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
)

// InstructionFiles are read from the workspace root, in this order, as custom instructions.
var InstructionFiles = []string{"AGENTS.md", ".github/copilot-instructions.md", "GEMINI.md"}

// maxInstructionBytes bounds what one instructions file may add to every request.
const maxInstructionBytes = 16 * 1024

// basePrompt is the system instruction every request pays for again: short, exact, and byte-stable
// across calls so Gemini's implicit cache keeps matching it.
const basePrompt = `You are Reprise, a coding agent working in the user's workspace: %s
All paths are relative to that root; you cannot leave it.

How to work:
- Read before you edit. Use search and list_files to find code instead of guessing paths.
- edit_file replaces one exact, unique snippet: copy it from read_file output, with enough surrounding lines to be unique. Use write_file only for new files or full rewrites.
- Run the project's tests with run_command after a change and read the verdict before saying it works.
- Commands outside the allowlist need the user's approval; if one is refused, do not retry it, find another way or explain.
- Long outputs are truncated (start and end kept); when a whole output was saved to a file, read_file or search that file for the part you need instead of rerunning the command.
- For a task of several steps, keep a plan with write_todos and update it as you go (not for a one-step answer); save_note an exact value you will need later (a rule's wording, an error message, an identifier).
- After a compaction, the first message summarizes earlier work; the messages after it take precedence, and the harness's state section is authoritative.
- Be concise. When done, say what you changed and the test verdict.`

// head is the tool guide and the workspace map as they go in the system instruction (head.go);
// "" when left out.
type head struct {
	guide, workmap string
}

// systemPrompt is the fixed part of every request.
type systemPrompt struct {
	text         string // the whole system instruction
	base         string // the prompt and, with a head, the tool guide
	instructions string
	workmap      string
	decls        []*genai.FunctionDeclaration
	toolsJSON    string
	mcpJSON      string // the MCP tools' declarations, counted apart
}

// loadInstructions returns the custom-instruction files found, each under its name. They come
// with the workspace, so they are read like any untrusted file: through an os.Root (a symlink
// leading out is refused), regular files only (a FIFO or a device is skipped), and at most
// maxInstructionBytes each, never the whole file.
func loadInstructions(workspace string, log *slog.Logger) string {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		log.Warn("custom instructions not read", "error", err)
		return ""
	}
	defer root.Close()
	var b strings.Builder
	for _, name := range InstructionFiles {
		text, err := readInstructions(root, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			log.Warn("custom instructions skipped", "file", name, "error", err)
			continue
		}
		if text = strings.TrimSpace(text); text == "" {
			continue
		}
		fmt.Fprintf(&b, "\n\n# Instructions from %s\n%s", name, text)
	}
	return b.String()
}

// readInstructions reads one instructions file; past maxInstructionBytes the rest is left unread
// and a note says so.
func readInstructions(root *os.Root, name string) (string, error) {
	f, err := openRegular(root, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInstructionBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) <= maxInstructionBytes {
		return string(data), nil
	}
	// Cut at the last complete line (or rune) so no half character reaches the model.
	data = data[:maxInstructionBytes]
	if i := bytes.LastIndexByte(data, '\n'); i > 0 {
		data = data[:i+1]
	} else {
		for i := 0; i < utf8.UTFMax && len(data) > 0; i++ {
			if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size > 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	return string(data) + fmt.Sprintf("\n[… %s is longer than %d KiB: the rest was not read]", name, maxInstructionBytes/1024), nil
}

// subagentPrompt is a subagent's system instruction: the task comes as its first message.
const subagentPrompt = `You are a Reprise subagent working in the user's workspace: %s
All paths are relative to that root; you cannot leave it.

Another agent gave you the task in the first message; it sees nothing of your work but your last message.
- You can read, list and search files, and run commands: those outside the allowlist need the user's approval; if one is refused, do not retry it. You cannot edit files.
- Use search and list_files to find code instead of guessing paths; read only what the task needs.
- Long outputs are truncated (start and end kept); when a whole output was saved to a file, read_file or search that file for the part you need.
- End with one complete, self-contained report: file paths, line numbers, exact names and errors, concise, no questions.`

// buildSystemPrompt assembles the fixed part of every request. External tools come after the
// built-in ones, so that adding an MCP server leaves the start of the prefix as it was. A
// subagent gets its own instruction and tools; a session that may run subagents declares task.
func buildSystemPrompt(o *Options, instructions string, h head) systemPrompt {
	base := fmt.Sprintf(basePrompt, o.Workspace) + h.guide
	decls := tools.Declarations()
	ext := o.External
	switch {
	case o.parent != nil:
		base = fmt.Sprintf(subagentPrompt, o.Workspace)
		decls, ext = tools.DeclarationsOf(tools.SubagentTools), nil
	case !o.Subagents.Off:
		decls = append(decls, tools.TaskDeclaration())
	}
	j, _ := json.Marshal(decls)
	p := systemPrompt{text: base + instructions + h.workmap, base: base, instructions: instructions, workmap: h.workmap, decls: decls, toolsJSON: string(j)}
	if ext != nil {
		if more := ext.Declarations(); len(more) > 0 {
			m, _ := json.Marshal(more)
			p.decls = append(p.decls, more...)
			p.mcpJSON = string(m)
		}
	}
	return p
}

// estimate is the local estimate of the fixed part.
func (p systemPrompt) estimate() float64 {
	return contextwin.EstimateText(p.text) + contextwin.EstimateText(p.toolsJSON) + contextwin.EstimateText(p.mcpJSON)
}

// fixed is the breakdown's fixed categories, corrected like every other estimate.
func (p systemPrompt) fixed(e *contextwin.Estimator) contextwin.Fixed {
	return contextwin.Fixed{
		SystemPrompt:       e.Tokens(contextwin.EstimateText(p.base)),
		CustomInstructions: e.Tokens(contextwin.EstimateText(p.instructions)),
		WorkspaceMap:       e.Tokens(contextwin.EstimateText(p.workmap)),
		Tools:              e.Tokens(contextwin.EstimateText(p.toolsJSON)),
		MCPTools:           e.Tokens(contextwin.EstimateText(p.mcpJSON)),
	}
}
