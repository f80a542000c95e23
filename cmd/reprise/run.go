package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/mcp"
	"github.com/reprise-dev/reprise/agent/roots"
	"github.com/reprise-dev/reprise/agent/runner"
	"github.com/reprise-dev/reprise/agent/sandbox"
	"github.com/reprise-dev/reprise/agent/secret"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// runFlags are the settings of a headless run.
type runFlags struct {
	workspace, model string
	thinking         string
	compactionModel  string
	subagentFlags    subagentFlags
	providerFlags    providerFlags
	subagents        agent.SubagentSettings
	compactionTier   string
	maxTurnRequests  int
	policy           contextwin.Policy
	allow            listFlag
	yes, verbose     bool
	allowBroad       bool
	stream           bool
	prices           string
	resume           string
	sandbox          string
	allowNetwork     bool
	mcpConfig        listFlag
	allowMCP         listFlag
	hidePaths        listFlag
	readPaths        listFlag
	pins, pinTexts   listFlag // --pin and --pin-text, in the order given
	trustMCP         bool
	mcpToolBudget    int
	maxMemory        memoryFlag
}

// memoryFlag is a size in bytes written with an optional K, M or G suffix (powers of 1024);
// 0 is the sandbox's default, "none" no bound.
type memoryFlag int64

func (m *memoryFlag) String() string {
	switch {
	case *m == 0:
		return "0"
	case *m < 0:
		return "none"
	}
	return strconv.FormatInt(int64(*m)>>20, 10) + "M"
}

func (m *memoryFlag) Set(v string) error {
	if v == "none" {
		*m = -1
		return nil
	}
	num, unit := v, int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'K', 'k':
			num, unit = v[:n-1], 1<<10
		case 'M', 'm':
			num, unit = v[:n-1], 1<<20
		case 'G', 'g':
			num, unit = v[:n-1], 1<<30
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return fmt.Errorf("want a size such as 512M or 4G, or none: %q", v)
	}
	if n*unit != 0 && n*unit < sandbox.MinMemory {
		return fmt.Errorf("at least %dM", sandbox.MinMemory>>20)
	}
	*m = memoryFlag(n * unit)
	return nil
}

func parseRunFlags(args []string, stdout, stderr io.Writer) (runFlags, []string, error) {
	f := runFlags{policy: contextwin.DefaultPolicy()}
	fs := flag.NewFlagSet("reprise run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: reprise run [flags] \"task\"")
		printFlags(fs)
	}
	fs.StringVar(&f.workspace, "workspace", ".", "workspace directory the agent works in")
	fs.StringVar(&f.model, "model", catalog.Builtin().DefaultModel(), "Gemini model (reprise models lists them)")
	fs.StringVar(&f.thinking, "thinking", catalog.Auto, thinkingUsage)
	fs.StringVar(&f.compactionModel, "compaction-model", "", compactionModelUsage)
	fs.StringVar(&f.compactionTier, "compaction-tier", string(catalog.TierStandard), compactionTierUsage)
	f.subagentFlags.register(fs)
	f.providerFlags.register(fs)
	fs.IntVar(&f.policy.ContextBudget, "budget", f.policy.ContextBudget, "context budget in tokens (capped by the model's input limit)")
	fs.IntVar(&f.policy.KeepRecentTurns, "keep-recent", f.policy.KeepRecentTurns, "model calls, with their tool results, kept verbatim by a compaction")
	fs.Float64Var(&f.policy.CompactAt, "compact-at", f.policy.CompactAt, "start compacting when the prompt passes this fraction of the budget")
	fs.Float64Var(&f.policy.BlockAt, "block-at", f.policy.BlockAt, "wait for the compaction when the prompt reaches this fraction")
	fs.IntVar(&f.policy.SessionTokenCap, "cap", f.policy.SessionTokenCap, "session cap on tokens, counted at their price in input tokens (a cached token counts a tenth, an output or thinking token its price's multiple)")
	fs.Float64Var(&f.policy.MaxCostUSD, "max-cost", 0, "stop the session once it has cost this many US dollars (0: no dollar cap)")
	explicitCacheFlags(fs, &f.policy, false)
	fs.IntVar(&f.policy.ToolOutputMaxChars, "max-output-chars", f.policy.ToolOutputMaxChars, "a longer tool output keeps its first 40 % and last 60 %")
	fs.IntVar(&f.maxTurnRequests, "max-turn-requests", agent.DefaultMaxTurnRequests, "model calls one turn may make before it stops (the loop guard stops an agent going in circles sooner)")
	fs.Var(&f.allow, "allow", "allow commands starting with PATTERN without asking (repeatable; * globs)")
	fs.BoolVar(&f.yes, "yes", false, "allow every command except the denylist, without asking")
	fs.BoolVar(&f.allowBroad, "allow-broad-workspace", false, "let the workspace be the file system's root, your home directory, a system directory or the temp directory (asked on a terminal otherwise; never implied by --yes)")
	fs.BoolVar(&f.verbose, "verbose", false, "print each tool result's first line and the model's remarks")
	fs.BoolVar(&f.stream, "stream", true, "stream the model's replies")
	fs.StringVar(&f.sandbox, "sandbox", string(sandbox.WorkspaceWrite), `"workspace-write": commands write only to the workspace, temp and build caches; "off": no sandbox`)
	fs.BoolVar(&f.allowNetwork, "allow-network", false, "let sandboxed commands open network connections")
	fs.Var(&f.maxMemory, "max-memory", "the most memory each process of a command may allocate, e.g. 4G (0: half the machine's; none: no bound)")
	fs.Var(&f.hidePaths, "hide-path", "a file or directory sandboxed commands may not read, besides the credential files (repeatable; ~/ is home)")
	fs.Var(&f.readPaths, "read-path", "a file or directory under your home that sandboxed commands may read, besides the toolchains' (repeatable; ~/ is home)")
	fs.Var(&f.pins, "pin", "pin this workspace file: read again at each compaction, kept verbatim in every prompt, never cleared or summarized (repeatable)")
	fs.Var(&f.pinTexts, "pin-text", "pin this text: kept verbatim in every prompt, never cleared or summarized (repeatable)")
	fs.StringVar(&f.resume, "resume", "", "continue the saved session with this id (see reprise sessions)")
	fs.Var(&f.mcpConfig, "mcp-config", "read MCP servers from this file (VS Code's mcp.json format; repeatable)")
	fs.Var(&f.allowMCP, "allow-mcp", "let the tools of this MCP server, or this one tool (SERVER__TOOL), run without asking (repeatable)")
	fs.BoolVar(&f.trustMCP, "trust-mcp", false, "start the MCP servers the workspace's .vscode/mcp.json declares")
	fs.IntVar(&f.mcpToolBudget, "mcp-tool-budget", mcp.DefaultToolBudget, "tokens all MCP tool declarations may cost per request (0: no cap); the rest are found with mcp_find_tools")
	fs.StringVar(&f.prices, "prices", "", `JSON file of prices per million tokens by model, over the model catalogue's: {"model": {"input": 0.75, "cachedInput": 0.075, "output": 3.75}}`)
	var rest []string
	for {
		if err := parseFlags(fs, args, stdout, stderr); err != nil {
			return f, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if err := f.check(); err != nil {
		fmt.Fprintln(stderr, "reprise run:", err)
		return f, nil, errUsage
	}
	return f, rest, nil
}

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	f, rest, err := parseRunFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) != 1 || strings.TrimSpace(rest[0]) == "" {
		fmt.Fprintln(stderr, "reprise run: give the task as one quoted argument")
		return errUsage
	}
	ws, err := filepath.Abs(f.workspace)
	if err != nil {
		return err
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return fmt.Errorf("workspace %s is not a directory", ws)
	}
	if err := confirmBroad(ctx, ws, homeDir(getenv), f, stdin, stderr); err != nil {
		return err
	}
	// The MCP configuration and the prices are read before the model is reached: a mistake in
	// them fails at once.
	servers, err := runMCP(ws, f, getenv, stderr, nil)
	if err != nil {
		return err
	}
	if servers != nil {
		defer func() {
			if err := servers.Close(); err != nil {
				fmt.Fprintln(stderr, "reprise: warning: MCP servers:", err)
			}
		}()
	}
	prices, err := loadPrices(f.prices)
	if err != nil {
		return err
	}
	client, limit, err := runModel(ctx, f, getenv, stderr)
	if err != nil {
		return err
	}
	var approver tools.Approver = terminalApprover{in: stdin, out: stderr}
	if f.yes {
		approver = allowAll{out: stderr}
	}
	spec := runner.Spec{
		Config: agent.Config{
			ContextPolicy: f.policy, Prices: prices, Approver: approver, Stream: f.stream, MaxTurnRequests: f.maxTurnRequests,
			Secrets: secret.FromEnv(getenv, f.hidePaths...), Subagents: f.subagents,
		},
		Workspace: ws, Model: client.Model(), Thinking: f.thinking, CompactionModel: f.compactionModel,
		Allow: f.allow, Yes: f.yes, MCPGrants: f.allowMCP,
		Sandbox: sandbox.Config{Mode: sandbox.Mode(f.sandbox), AllowNetwork: f.allowNetwork, HidePaths: f.hidePaths, ReadPaths: f.readPaths,
			MaxMemory: int64(f.maxMemory)},
	}
	if servers != nil {
		spec.External = servers
	}
	return runSession(ctx, spec, f, rest[0], client, limit, stdout, stderr, getenv)
}

// runModel builds the model client and reads its input limit: a retired model, or an endpoint
// that cannot be reached, ends the run here, before a session exists.
func runModel(ctx context.Context, f runFlags, getenv func(string) string, stderr io.Writer) (namedModel, int, error) {
	if f.providerFlags.provider == providerOpenAI {
		return openaiModel(ctx, f.providerFlags, f.model, getenv, stderr)
	}
	cfg := gemini.ConfigFromEnv(getenv)
	cfg.Model = f.model
	if w := gemini.CheckBaseURL(cfg.BaseURL); w != "" {
		fmt.Fprintln(stderr, "reprise: warning:", w)
	}
	client, err := gemini.New(ctx, cfg)
	if err != nil {
		return nil, 0, err
	}
	limit, err := client.InputTokenLimit(ctx)
	if gemini.IsModelNotFound(err) { // retired, or never served to this key: it ends here
		return nil, 0, err
	}
	if why := unreachable(err); why != "" { // every model call would wait out its retries, then fail
		return nil, 0, fmt.Errorf("%s: check GOOGLE_GEMINI_BASE_URL and the network", why)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reprise: %s; assuming %d tokens\n", shortError(err.Error()), limit)
	}
	return client, limit, nil
}

// runSession opens the session (or resumes --resume), says what its sandbox cannot do here, runs
// the task and prints its table. A new session whose first model call failed is not kept.
func runSession(ctx context.Context, spec runner.Spec, f runFlags, task string, client namedModel, limit int, stdout, stderr io.Writer, getenv func(string) string) error {
	home, err := stateHome(getenv)
	if err != nil {
		return err
	}
	models := func(ctx context.Context, name string) (agent.Model, int, error) {
		if name == client.Model() {
			return client, limit, nil
		}
		other := f // the compaction model: built as the session's, its own checks included
		other.model = name
		return runModel(ctx, other, getenv, stderr)
	}
	h := &runner.Runner{StateHome: home, Now: timeNow, Observe: observeSessions, ObserveEvents: observeEvents, Models: models}
	s, err := openSession(ctx, h, spec, f.resume)
	if err != nil {
		return err
	}
	discard := false
	defer func() {
		if err := h.Close(context.WithoutCancel(ctx), s.ID()); err != nil {
			fmt.Fprintln(stderr, "reprise: warning: the session log may lack the last records:", err)
		}
		switch {
		case discard && s.Log != nil:
			if err := os.RemoveAll(s.Log.Dir()); err != nil {
				fmt.Fprintln(stderr, "reprise: warning: remove the unused session:", err)
				return
			}
			fmt.Fprintf(stderr, "reprise: session %s not kept: no model call was answered\n", s.ID())
		case s.Log != nil:
			// Said once the run is over, when the session is kept: not before a failed first call.
			fmt.Fprintf(stderr, "reprise: session %s (continue it with --resume %s)\n", s.ID(), s.ID())
		}
	}()
	for _, w := range s.Warnings {
		fmt.Fprintln(stderr, "reprise: warning:", w)
	}
	sandboxNotes(s.Sandbox, f.verbose, stderr)
	if err := pinAll(ctx, h, s, f, stderr); err != nil {
		discard = f.resume == ""
		return err
	}
	end, err := printRun(ctx, s, task, stdout, f.verbose)
	discard = f.resume == "" && (end == nil || end.Calls == 0)
	if err != nil {
		return shortErr{err}
	}
	if end.StopReason != agent.StopEndTurn {
		return fmt.Errorf("the run stopped: %s", end.StopReason)
	}
	return nil
}

// sandboxNotes says what the commands' sandbox cannot do here, or with verbose what it does.
func sandboxNotes(box *sandbox.Sandbox, verbose bool, stderr io.Writer) {
	if ok, reason := box.Confined(); !ok && box.Mode() == sandbox.WorkspaceWrite {
		fmt.Fprintf(stderr, "reprise: warning: commands cannot be sandboxed here (%s); every command will be asked\n", reason)
	} else if open := box.NetworkOpen(); open != "" {
		fmt.Fprintln(stderr, "reprise: note:", open)
	} else if verbose {
		fmt.Fprintln(stderr, "reprise:", box.Describe())
	}
	if none := box.NoProcessLimit(); none != "" {
		fmt.Fprintln(stderr, "reprise: warning:", none)
	}
	if perProcess := box.NoMemoryLimit(); perProcess != "" && verbose {
		fmt.Fprintln(stderr, "reprise: note:", perProcess)
	}
}

// explicitCacheFlags adds the explicit-cache flags to fs, the same in run and acp; idle adds the
// one that keeps a cache alive between turns, acp's alone: a run ends with its task, and deletes
// its cache then.
func explicitCacheFlags(fs *flag.FlagSet, p *contextwin.Policy, idle bool) {
	fs.BoolVar(&p.ExplicitCache, "explicit-cache", false, "put the stable prefix in an explicit cache when the measured implicit-cache misses make it pay: "+
		"billed as input when made, then per token-hour stored (models with explicit caching; experimental)")
	fs.BoolFunc("cache-head", "on by default (--cache-head=false leaves it out): a guide to the tools and a map of the workspace in the system instruction, sized to the model's cache "+
		"minimum, so that it is cached from the second call on (left out for a workspace too small to fill it, or a budget under four times it)", func(v string) error {
		on, err := strconv.ParseBool(v)
		p.PlainHead = !on
		return err
	})
	if idle {
		fs.BoolVar(&p.ExplicitCacheIdle, "explicit-cache-idle", false, "with --explicit-cache: keep the explicit cache alive between turns while storing it costs less "+
			"than rebuilding it (input price ÷ storage price per hour: 90 minutes on gemini-3.8-flash; experimental)")
	}
}

// policyFlags names, in a policy's errors, each setting by the flag that sets it: the user wrote
// --budget, not contextBudget.
var policyFlags = strings.NewReplacer(
	"contextBudget", "--budget", "compactAt", "--compact-at", "blockAt", "--block-at",
	"keepRecentTurns", "--keep-recent", "toolOutputMaxChars", "--max-output-chars",
	"sessionTokenCap", "--cap", "maxCostUSD", "--max-cost", "compactionTier", "--compaction-tier", " = ", " ",
)

// policyError is a policy's validation error in the words of the command line.
func policyError(err error) string {
	return policyFlags.Replace(err.Error())
}

// confirmBroad lets a run go on in ws, or returns why it does not: a workspace roots.Broad judges
// too broad (/, the home directory, a system directory) is used with --allow-broad-workspace, or
// once the user says yes on the terminal. --yes does not stand for that yes: it answers for the
// commands, and an unattended run started from ~ would give the model every file of the user.
func confirmBroad(ctx context.Context, ws, home string, f runFlags, stdin io.Reader, stderr io.Writer) error {
	why := roots.Broad(ws, home)
	if why == "" || f.allowBroad {
		return nil
	}
	refused := fmt.Errorf("the workspace %s is %s: the agent reads, searches and changes files anywhere in its workspace, "+
		"and its commands may write there. Run it in a project folder (--workspace DIR), or pass --allow-broad-workspace", ws, why)
	in, ok := stdin.(*os.File)
	if f.yes || !ok || !isTerminal(in) {
		return refused
	}
	fmt.Fprintf(stderr, "reprise: the workspace %s is %s. The agent reads, searches and changes files anywhere in its workspace, "+
		"and its commands may write there. Use %s as the workspace? [y/N]: ", ws, why, ws)
	if answer, err := readAnswer(ctx, in); err != nil || (answer != "y" && answer != "yes") {
		return refused
	}
	return nil
}

// readAnswer reads a line from the terminal, trimmed and lower-cased; it gives up when ctx ends.
func readAnswer(ctx context.Context, in *os.File) (string, error) {
	answer := make(chan string, 1)
	go func() { // ends when a line is read or stdin closes
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case s := <-answer:
		return s, nil
	}
}

// homeDir is the user's home directory as the environment gives it ("" if unknown).
func homeDir(getenv func(string) string) string {
	if runtime.GOOS == "windows" {
		return getenv("USERPROFILE")
	}
	return getenv("HOME")
}

// openSession opens a session through the runner, or with resume set reopens a saved one.
func openSession(ctx context.Context, h *runner.Runner, spec runner.Spec, resume string) (*runner.Live, error) {
	if resume != "" {
		return h.Resume(ctx, resume, spec)
	}
	return h.Open(ctx, spec)
}

// compactionModelUsage and compactionTierUsage document --compaction-model and --compaction-tier
// in run and acp.
const (
	compactionModelUsage = "model the compaction summaries are asked of (default: the session's; another model's cache holds none of the session's prefix, so its summary is asked over a rendered transcript and billed in full at its prices)"
	compactionTierUsage  = `"flex": background summaries ask Gemini's Flex tier (half price, best-effort, minutes of latency) where the model offers it, falling back to the standard tier once when shed or waited for; "standard": never`
)

// compactionFlags checks --compaction-model and puts --compaction-tier in the policy.
func compactionFlags(model *string, tier string, p *contextwin.Policy) error {
	name, err := catalog.ParseModelName(*model)
	if err != nil {
		return fmt.Errorf("--compaction-model: %w", err)
	}
	t, err := catalog.ParseTier(tier)
	if err != nil {
		return fmt.Errorf("--compaction-tier: %w", err)
	}
	if t == catalog.TierStandard {
		t = "" // the policy's default
	}
	*model, p.CompactionTier = name, t
	return nil
}

// thinkingUsage documents --thinking in run and acp.
const thinkingUsage = `how much the model thinks: "auto" (the model's default) or a level it accepts (minimal, low, medium, high, xhigh; reprise models lists each model's), sent as thinkingLevel, or as a thinking budget on 2.5 models`

// loadPrices reads a price file: prices by model that override the catalogue's.
func loadPrices(path string) (contextwin.PriceTable, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	var t contextwin.PriceTable
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("prices file %s: %w", path, err)
	}
	return t, nil
}

// printRun runs one turn and prints its table and closing line.
func printRun(ctx context.Context, s *runner.Live, task string, stdout io.Writer, verbose bool) (*agent.TurnEnd, error) {
	r := s.Context()
	fmt.Fprintf(stdout, "fixed prompt sent with every call: %d tokens (system %d, instructions %d, tools %d)\n",
		r.FixedTokens, r.Breakdown.SystemPrompt, r.Breakdown.CustomInstructions, r.Breakdown.Tools)
	t := newTable(stdout, verbose)
	var runErr error
	for ev, err := range s.Run(ctx, task) {
		if err != nil {
			runErr = err
			continue
		}
		t.handle(ev)
	}
	if t.end == nil {
		return nil, runErr
	}
	if t.answer != "" && t.end.StopReason == agent.StopEndTurn {
		fmt.Fprintf(stdout, "\n%s\n\n", t.answer)
	}
	fmt.Fprintln(stdout, status(t.end))
	return t.end, runErr
}

// stateHome is where sessions live: $REPRISE_HOME, else $XDG_STATE_HOME/reprise, else
// ~/.local/state/reprise.
func stateHome(getenv func(string) string) (string, error) {
	if h := getenv("REPRISE_HOME"); h != "" {
		return h, nil
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "reprise"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find a state directory (set REPRISE_HOME): %w", err)
	}
	return filepath.Join(home, ".local", "state", "reprise"), nil
}

// allowAll is the --yes approver: every command the policy does not deny runs. MCP tools are
// not commands: they run when --allow-mcp names them.
type allowAll struct{ out io.Writer }

func (a allowAll) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	if req.Tool != "" {
		return mcpRefused(ctx, a.out, req)
	}
	return tools.AllowOnce, nil
}

// terminalApprover asks on the terminal; without one (a pipe, CI) it refuses.
type terminalApprover struct {
	in  io.Reader
	out io.Writer
}

func (a terminalApprover) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	f, ok := a.in.(*os.File)
	if !ok || !isTerminal(f) {
		hint := "use --allow or --yes"
		switch {
		case req.Tool != "":
			hint = "use --allow-mcp " + req.Tool
		case req.File != "":
			hint = "use --yes"
		}
		fmt.Fprintf(a.out, "reprise: %s needs approval and there is no terminal to ask: refused (%s)\n", shownCommand(req.Command), hint)
		return tools.Reject, nil
	}
	verb := "Run"
	switch {
	case req.Tool != "":
		verb = "Use the MCP tool"
	case req.File != "":
		verb = "Allow:" // the command reads "write FILE" or "edit FILE"
	}
	fmt.Fprintf(a.out, "%s %s (%s)? [y] once, [a] always this session: %s, [N] no: ", verb, shownCommand(req.Command),
		tools.DisplayCommand(req.Reason), tools.DisplayCommand(req.Rule))
	s, err := readAnswer(ctx, f)
	if err != nil {
		return tools.Reject, err
	}
	switch s {
	case "y", "yes":
		return tools.AllowOnce, nil
	case "a", "always":
		return tools.AlwaysAllow, nil
	}
	return tools.Reject, nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// timeNow is the clock sessions are created with.
var timeNow = time.Now

// pinAll pins what --pin and --pin-text name before the task runs. A file that cannot be pinned
// is a command-line mistake (exit 2), as a bad flag value is.
func pinAll(ctx context.Context, h *runner.Runner, s *runner.Live, f runFlags, stderr io.Writer) error {
	pin := func(flag, arg string, r agent.PinRequest) error {
		out, err := h.Do(ctx, s, runner.Verb{Kind: runner.Pin, Pin: r}, nil)
		if err != nil {
			fmt.Fprintf(stderr, "reprise run: --%s %s: %v\n", flag, arg, err)
			return errUsage
		}
		p := out.Pin
		fmt.Fprintf(stderr, "reprise: pinned %s %s (%s tokens)\n", p.ID, p.Label, contextwin.Kilo(p.Tokens))
		return nil
	}
	for _, path := range f.pins {
		if err := pin("pin", path, agent.PinRequest{Kind: contextwin.PinFile, Path: path}); err != nil {
			return err
		}
	}
	for _, text := range f.pinTexts {
		if err := pin("pin-text", strconv.Quote(text), agent.PinRequest{Kind: contextwin.PinMessage, Text: text}); err != nil {
			return err
		}
	}
	return nil
}

// check validates the flags once parsed, and sets what follows from them.
func (f *runFlags) check() error {
	if err := f.providerFlags.check(); err != nil {
		return err
	}
	if f.providerFlags.provider == providerOpenAI && f.model == catalog.Builtin().DefaultModel() {
		return errors.New("--provider openai needs --model: the model as the server names it (its /v1/models lists them)")
	}
	if err := compactionFlags(&f.compactionModel, f.compactionTier, &f.policy); err != nil {
		return err
	}
	var err error
	if f.subagents, err = f.subagentFlags.settings(); err != nil {
		return err
	}
	if err := f.policy.Validate(); err != nil {
		return errors.New(policyError(err))
	}
	switch {
	case f.mcpToolBudget < 0:
		return errors.New("--mcp-tool-budget must be 0 (no cap) or a number of tokens")
	case f.maxTurnRequests < 1:
		return errors.New("--max-turn-requests must be at least 1")
	}
	if _, err := catalog.Builtin().Thinking(f.model, f.thinking); err != nil {
		return fmt.Errorf("--thinking: %w", err)
	}
	_, err = sandbox.ParseMode(f.sandbox)
	return err
}
