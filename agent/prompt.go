package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
- After a compaction, the first message summarizes earlier work; the messages after it take precedence, and the harness's state section is authoritative.
- Be concise. When done, say what you changed and the test verdict.`

// systemPrompt is the fixed part of every request.
type systemPrompt struct {
	text         string // the whole system instruction
	base         string
	instructions string
	decls        []*genai.FunctionDeclaration
	toolsJSON    string
}

// instructions holds the custom-instruction files found, each under its name.
func loadInstructions(workspace string) string {
	var b strings.Builder
	for _, name := range InstructionFiles {
		data, err := os.ReadFile(filepath.Join(workspace, name))
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		text, _ := contextwin.Truncate(string(data), maxInstructionBytes)
		fmt.Fprintf(&b, "\n\n# Instructions from %s\n%s", name, strings.TrimSpace(text))
	}
	return b.String()
}

func buildSystemPrompt(workspace, instructions string) systemPrompt {
	base := fmt.Sprintf(basePrompt, workspace)
	decls := tools.Declarations()
	j, _ := json.Marshal(decls)
	return systemPrompt{text: base + instructions, base: base, instructions: instructions, decls: decls, toolsJSON: string(j)}
}

// estimate is the local estimate of the fixed part.
func (p systemPrompt) estimate() float64 {
	return contextwin.EstimateText(p.text) + contextwin.EstimateText(p.toolsJSON)
}

// fixed is the breakdown's fixed categories, corrected like every other estimate.
func (p systemPrompt) fixed(e *contextwin.Estimator) contextwin.Fixed {
	return contextwin.Fixed{
		SystemPrompt:       e.Tokens(contextwin.EstimateText(p.base)),
		CustomInstructions: e.Tokens(contextwin.EstimateText(p.instructions)),
		Tools:              e.Tokens(contextwin.EstimateText(p.toolsJSON)),
	}
}
