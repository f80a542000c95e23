package tools

import (
	"slices"
	"strings"

	"google.golang.org/genai"
)

// The task tool hands a self-contained piece of work to a subagent: a session of its own with a
// fresh context and read-only tools. The session runs it (it needs sessions, which this package
// does not know); the declaration and the title are here with the other tools'.

// TaskTool is the task tool's name.
const TaskTool = "task"

// SubagentTools are the tools a subagent has: reading and searching, and commands under the
// same policy, sandbox and approvals as its parent's. No edits, no plan, no task of its own.
var SubagentTools = []string{"read_file", "list_files", "search", "run_command"}

// TaskDeclaration declares task. Every request pays for it: the description says when it pays.
func TaskDeclaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name: TaskTool,
		Description: "Hand a self-contained investigation (find where X is handled, read many files, run the tests) to a subagent " +
			"with a fresh context and read-only tools; only its report comes back. Several calls run in parallel.",
		ParametersJsonSchema: object(map[string]any{
			"description": prop("string", "3-6 words for the user"),
			"prompt":      prop("string", "the whole task and what to report; it sees nothing else"),
		}, "description", "prompt"),
	}
}

// DeclarationsOf returns fresh declarations of the built-in tools named, in the registry's order.
func DeclarationsOf(names []string) []*genai.FunctionDeclaration {
	var decls []*genai.FunctionDeclaration
	for _, d := range Declarations() {
		if slices.Contains(names, d.Name) {
			decls = append(decls, d)
		}
	}
	return decls
}

// describeTask is the title of a task call: its description.
func describeTask(call Call) string {
	d, _ := call.Args["description"].(string)
	if d = strings.TrimSpace(d); d == "" {
		return "Subagent"
	}
	return "Subagent: " + d
}

// refuseOutside answers a call to a tool the Env does not offer (Env.Only), or "" when it does.
func (e *Env) refuseOutside(name string) string {
	if e == nil || e.Only == nil || slices.Contains(e.Only, name) {
		return ""
	}
	return name + " is not available here; your tools: " + strings.Join(e.Only, ", ")
}
