package tools

import "context"

// Approver decides about a command the policy neither allows nor denies, an MCP tool, or a write
// to a protected path: the editor asks the user, `--yes` approves everything. Declared here because
// the tools are its consumers.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ApprovalRequest is what the user is asked about. Command, Reason and Rule are display text:
// the tools pass them through DisplayCommand before asking, so every front-end shows them inert,
// on one line and with the end of the command in view, as they are (DisplayCommand again is a
// no-op). The exact command is the tool call's arguments.
type ApprovalRequest struct {
	CallID  string
	Command string
	Reason  string // why the policy asks, e.g. "not in the allowlist"
	// Rule is what "Always allow" would remember, in words: `git diff (and any arguments)` or
	// `npm run lint (exactly)`. The user should know what they grant beyond this one run.
	Rule string
	// Tool is set for an MCP tool: its declared name (Command is then the tool and its arguments).
	Tool string
	// Subagent is set when a subagent asks: the task it was given (its description).
	Subagent string
	// File is set for a write_file or edit_file to a protected path: the workspace-relative file
	// (Command is then "write FILE" or "edit FILE", Reason what the file holds).
	File string
}

// displayed returns r with its texts as DisplayCommand shows them.
func (r ApprovalRequest) displayed() ApprovalRequest {
	r.Command, r.Reason, r.Rule, r.Subagent = DisplayCommand(r.Command), DisplayCommand(r.Reason), DisplayCommand(r.Rule), DisplayCommand(r.Subagent)
	return r
}

// Decision is the user's answer; the zero value rejects, so a lost answer refuses.
type Decision int

const (
	Reject Decision = iota
	AllowOnce
	AlwaysAllow // also cmdpolicy.Policy.AllowAlways for the rest of the session
)
