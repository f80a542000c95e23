// Package tools holds the tools a coding agent's model gets: read_file, list_files, search,
// edit_file, write_file and run_command, one file each with its declaration next to its code, and
// write_todos and save_note (memo.go), whose plan and notes the harness holds.
//
// Everything the model should learn from a failed call — a missing argument, a path outside the
// workspace, an ambiguous edit, a refused command — comes back as a Result with IsError set, never
// as a Go error: the model reads it and tries something else, and the loop goes on. Every output is
// bounded the same way (contextwin.Truncate: 40 % head, 60 % tail); one larger than
// LargeOutputBytes is also saved whole to SpillDir and the model is told where.
package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
)

// Defaults from the context window policy (DESIGN.md §2) and the run_command limits.
const (
	DefaultMaxOutputChars   = 4000              // toolOutputMaxChars
	DefaultLargeOutputBytes = 20480             // largeOutputThresholdBytes
	DefaultMaxSavedBytes    = 64 << 20          // a saved output is cut there
	DefaultMaxStoreBytes    = 256 << 20         // a session's saved outputs, all together
	DefaultTimeout          = 120 * time.Second // run_command without timeout_s
	MaxTimeout              = 600 * time.Second // the longest timeout_s honoured
)

// Env is what the tools may touch. It holds collaborators and limits, never a context; the zero
// value of every optional field means "none" or the default.
type Env struct {
	// Workspace is the absolute workspace root; every path the model gives is confined to it.
	Workspace string
	// Overlay returns an editor's unsaved buffer for a workspace-relative (slash) path, so that
	// read_file and search see what the user sees. Nil means no buffers.
	Overlay func(rel string) (content string, ok bool)
	// Guard may refuse a write to rel; its error message is what the model reads (for instance:
	// the user has unsaved changes in that file). Nil allows every write.
	Guard func(rel string) error
	// BeforeChange is called once before each write or edit with the previous content, so the
	// caller can keep restore points and the list of files modified. Nil means nobody listens.
	BeforeChange func(rel string, prev []byte, existed bool)
	// Commands is the command policy: which commands run without asking. Nil means
	// cmdpolicy.New(nil, nil) for each call, so an "always allow" is not remembered.
	Commands *cmdpolicy.Policy
	// Approver is asked about commands the policy neither allows nor denies; nil refuses them.
	Approver Approver
	// Secrets are replaced in every output before the model, the UI or a saved file gets it. Nil
	// redacts nothing.
	Secrets *secret.Redactor
	// Sandbox confines commands. Nil means the default sandbox (workspace-write, no network) for
	// the workspace.
	Sandbox *sandbox.Sandbox
	// SpillDir receives whole large outputs (the session's tool-outputs/). It is created on
	// demand with mode 0700, its files 0600; empty means large outputs are only truncated.
	// read_file and search may read it (read-only) by the absolute path they are given.
	SpillDir string
	// Temps records the temporary files of writes while they have a name (during the whole write
	// without O_TMPFILE, between link and rename with it), so a start-up after a kill removes
	// them (CleanTemps). Nil records nothing.
	Temps *Temps
	// MaxOutputChars bounds what the model gets from one call (DefaultMaxOutputChars if ≤ 0).
	MaxOutputChars int
	// LargeOutputBytes is the size past which an output is also saved whole
	// (DefaultLargeOutputBytes if ≤ 0).
	LargeOutputBytes int
	// MaxSavedBytes caps a saved output (DefaultMaxSavedBytes if ≤ 0).
	MaxSavedBytes int64
	// MaxStoreBytes caps SpillDir, all saved outputs together (DefaultMaxStoreBytes if 0, none
	// if negative): past it, outputs are only truncated, and the model is told why.
	MaxStoreBytes int64
	// DefaultTimeout applies to run_command without timeout_s (DefaultTimeout if ≤ 0, at most
	// MaxTimeout).
	DefaultTimeout time.Duration
	// External holds the tools of the user's MCP servers; nil means none.
	External External
	// MCPGrants are the MCP tools that run without asking; nil grants none, and an "Always
	// allow" is then not remembered.
	MCPGrants *MCPGrants
	// WriteGrants are the protected files written without asking; nil grants none, and an "Always
	// allow" is then not remembered.
	WriteGrants *WriteGrants
	// Memo holds the agent's plan and notes (write_todos, save_note); nil: those calls fail.
	Memo Memo
	// Only, when not nil, are the only tools Run runs (a subagent's, SubagentTools): a call to
	// another, declared or not, is refused.
	Only []string
}

// Call is one function call from the model.
type Call struct {
	ID   string // the model's call id; may be empty (Gemini often leaves it out)
	Name string
	Args map[string]any
	// Live, if set, receives run_command's output as it comes, for a UI; nil: nobody watches.
	Live *Live
}

// Result is what a call produced: Output for the model, the rest for the harness and the UI.
type Result struct {
	// Output is what the model gets, already bounded. When the whole output was larger than
	// LargeOutputBytes it starts with a line naming the file it was saved to.
	Output  string
	IsError bool
	// SavedPath is the absolute path of the saved whole output, if any.
	SavedPath string
	// TotalChars is the length in characters of the whole output; Omitted how many of them the
	// model did not get.
	TotalChars, Omitted int
	// Path is the workspace-relative (slash) file the tool read or changed, if any.
	Path string
	// Changed lists the workspace-relative files this call changed.
	Changed []string
	// Edit is the change a successful write_file or edit_file made, for showing it as a diff.
	Edit *Edit
	// Command, ExitCode and TimedOut describe a run_command call; ExitCode is -1 when the
	// command did not exit by itself.
	Command  string
	ExitCode int
	TimedOut bool
	// Refused is set when the policy, the user or the Guard refused the call.
	Refused bool
}

// Edit is a file before and after one write or edit.
type Edit struct {
	Path     string // workspace-relative, slash-separated
	Old, New []byte
	Existed  bool // false: the write created the file
}

// tool ties a declaration to its code; each tool's file defines one.
type tool struct {
	decl     func() *genai.FunctionDeclaration
	run      func(ctx context.Context, env *Env, call Call, a *args) Result
	describe func(a *args) string // the title for a UI
	kind     Kind
}

// Kind is what a tool call does, after the Agent Client Protocol's ToolKind: a UI picks an icon
// or a rendering by it.
type Kind string

// Tool kinds.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindThink   Kind = "think" // the agent's plan and notes
	KindOther   Kind = "other" // a call to no known tool
)

// registry lists the tools in the order the model sees them.
var registry = []struct {
	name string
	t    *tool
}{
	{"read_file", &readFileTool},
	{"list_files", &listFilesTool},
	{"search", &searchTool},
	{"edit_file", &editFileTool},
	{"write_file", &writeFileTool},
	{"run_command", &runCommandTool},
	{"write_todos", &writeTodosTool},
	{"save_note", &saveNoteTool},
}

func lookup(name string) *tool {
	for _, r := range registry {
		if r.name == name {
			return r.t
		}
	}
	return nil
}

func toolNames() string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return strings.Join(names, ", ")
}

// Declarations returns fresh declarations of the built-in tools, for GenerateContentConfig.Tools. They
// are kept short: every request pays for them.
func Declarations() []*genai.FunctionDeclaration {
	decls := make([]*genai.FunctionDeclaration, len(registry))
	for i, r := range registry {
		decls[i] = r.t.decl()
		decls[i].Name = r.name
	}
	return decls
}

// Run executes one call. It never returns a Go error and never panics on bad arguments: what
// went wrong is an error Result the model can act on.
func Run(ctx context.Context, env *Env, call Call) Result {
	if msg := env.refuseOutside(call.Name); msg != "" {
		res := failure(msg)
		res.Refused = true
		return res
	}
	t := lookup(call.Name)
	if t == nil && env != nil && env.External != nil {
		if x, ok := env.External.Lookup(call.Name, call.Args); ok {
			e := env.withDefaults()
			res := runExternal(ctx, &e, x, call)
			res.Output = e.Secrets.String(res.Output)
			return res
		}
	}
	if t == nil {
		return failure(fmt.Sprintf("unknown tool %q; available: %s", call.Name, toolNames()))
	}
	if env == nil || env.Workspace == "" {
		return failure("no workspace is open")
	}
	e := env.withDefaults()
	res := t.run(ctx, &e, call, &args{m: call.Args})
	res.Output = e.Secrets.String(res.Output) // notes and errors too: a refused command quotes its line
	res.Command = e.Secrets.String(res.Command)
	return res
}

// Describe gives a UI a title and a kind for a call, before or while it runs.
func Describe(call Call) (title string, kind Kind) {
	if call.Name == TaskTool {
		title = describeTask(call)
		if r := []rune(title); len(r) > 80 {
			title = string(r[:79]) + "…"
		}
		return title, KindOther
	}
	t := lookup(call.Name)
	if t == nil {
		return call.Name, KindOther
	}
	title = t.describe(&args{m: call.Args})
	if r := []rune(title); len(r) > 80 {
		title = string(r[:79]) + "…"
	}
	return title, t.kind
}

// Describe is the package's Describe, knowing the Env's external tools too.
func (e *Env) Describe(call Call) (title string, kind Kind) {
	if lookup(call.Name) == nil && e != nil && e.External != nil {
		if x, ok := e.External.Lookup(call.Name, call.Args); ok {
			title = x.Title
			if title == "" {
				title = x.Name
			}
			if r := []rune(title); len(r) > 80 {
				title = string(r[:79]) + "…"
			}
			return title, KindOther
		}
	}
	return Describe(call)
}

// sandbox is the Env's sandbox, or the default one for its workspace.
func (e *Env) sandbox() *sandbox.Sandbox {
	if e.Sandbox != nil {
		return e.Sandbox
	}
	return sandbox.New(sandbox.Config{Workspace: e.Workspace})
}

func (e *Env) withDefaults() Env {
	c := *e
	if c.MaxOutputChars <= 0 {
		c.MaxOutputChars = DefaultMaxOutputChars
	}
	if c.LargeOutputBytes <= 0 {
		c.LargeOutputBytes = DefaultLargeOutputBytes
	}
	if c.MaxSavedBytes <= 0 {
		c.MaxSavedBytes = DefaultMaxSavedBytes
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	c.DefaultTimeout = min(c.DefaultTimeout, MaxTimeout)
	if c.MCPGrants == nil {
		c.MCPGrants = &MCPGrants{}
	}
	return c
}

// failure is an error result the model reads.
func failure(msg string) Result {
	return Result{Output: msg, IsError: true, TotalChars: len([]rune(msg))}
}

func success(msg string) Result {
	return Result{Output: msg, TotalChars: len([]rune(msg))}
}

// object and prop build the small JSON schemas of the declarations.
func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}
