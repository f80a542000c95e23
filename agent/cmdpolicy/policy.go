package cmdpolicy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reprise-dev/reprise/agent/secret"
)

// Action is what the policy says about a command.
type Action int

const (
	Ask   Action = iota // neither allowed nor denied: the Approver decides
	Allow               // runs without asking
	Deny                // never runs, whatever the user or --yes says
)

// String names the action in logs and messages.
func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "ask"
}

// Verdict is the policy's answer with its reason, shown to the user when asking.
type Verdict struct {
	Action Action
	Reason string
}

// The reasons that tell who allowed a command: run_command lifts the allowlist when commands
// cannot be sandboxed, and lets commands the user approved write version-control metadata.
const (
	reasonApproved    = "approved for this session"
	reasonAllowlisted = "allowlisted"
)

// Approved reports whether the user allowed the command earlier in the session: run_command
// then lets it write version-control metadata.
func (v Verdict) Approved() bool { return v.Action == Allow && v.Reason == reasonApproved }

// Allowlisted reports whether a rule allowed the command without anyone seeing it: run_command
// asks instead when the command cannot be sandboxed.
func (v Verdict) Allowlisted() bool {
	return v.Action == Allow && strings.HasPrefix(v.Reason, reasonAllowlisted+" ")
}

// DefaultAllow are the commands that run without asking: builds, tests, vet/lint in check mode,
// and a few read-only looks at the workspace. A rule is a prefix on word boundaries ("go test"
// allows "go test ./..." but not "go testx"), and only ever allows a plain command whose options
// the policy reads as harmless (argvRisk: `go test -exec …`, `git log --output=…` are asked).
// `git diff` is deliberately absent: the seed's run shows it refused unless approved. These
// commands can run code the model wrote (a test can do anything); the allowlist spares the user
// questions about the usual loop, it is not a sandbox.
var DefaultAllow = []string{
	"go test", "go build", "go vet", "gofmt -l", "go list", "go version",
	"pytest", "python -m pytest", "python3 -m pytest",
	"npm test", "npm run test", "npx jest", "npx vitest run",
	"cargo test", "cargo build", "cargo check",
	"make test", "make check", "mvn test", "gradle test", "./gradlew test",
	"ls", "pwd", "git status", "git log",
}

// DefaultDeny are refused even when the user would approve and under --yes. Each is matched
// against every program the line runs (invocations: after `;`, `&&`, `|`, inside `$(…)`,
// `sh -c '…'`, eval, find -exec, xargs, behind wrappers such as env, nice, timeout, and git's
// global options and aliases), by basename: a prefix on word boundaries, or a glob when it holds
// `*`. Recursive deletion of /, a top-level directory or home, pipes of a download into a
// shell, fork bombs and writes to block devices are recognised on top.
var DefaultDeny = []string{
	"sudo", "su", "doas", "pkexec",
	"shutdown", "reboot", "halt", "poweroff", "init 0", "init 6", "systemctl poweroff", "systemctl reboot",
	"mkfs", "mkfs.*", "dd *if=*", "dd *of=*", "fdisk", "parted", "wipefs",
	"git push",
}

// Policy says which commands run, which are refused and which need the user. The lists are
// fixed by New (the zero Policy has the defaults); AllowAlways adds to them during the
// session. Safe for concurrent use.
type Policy struct {
	// AllowAll allows every command the denylist does not refuse (`--yes`). Set it before the
	// policy is shared.
	AllowAll bool
	// Home, Getenv and HidePaths say where the user's credentials are (secret.CredentialPaths,
	// HidePaths being the user's own additions) and what `~` and `$NAME` mean to the commands,
	// whose environment is the process's. Zero values: the environment's home (secret.HomeDir)
	// and the process's environment, no additions. Set them before the policy is shared.
	Home      string
	Getenv    func(string) string
	HidePaths []string

	shell shellKind // the language of the lines; the zero value is run_command's on this OS

	once  sync.Once // fills creds, and allow and deny with the defaults in a Policy not made by New
	built bool      // made by New
	allow []rule
	deny  []rule
	creds credentials

	mu      sync.Mutex // guards session
	session []rule     // AllowAlways additions
}

// New returns the default policy plus extra allow and deny patterns (`--allow`, settings).
// A pattern is a prefix on word boundaries, or a glob over the whole command when it holds `*`
// (`*` matches any characters, spaces and slashes included).
func New(allow, deny []string) *Policy {
	return &Policy{
		built: true,
		allow: rules(slices.Concat(DefaultAllow, allow)),
		deny:  rules(slices.Concat(DefaultDeny, deny)),
	}
}

func rules(patterns []string) []rule {
	var rs []rule
	for _, s := range patterns {
		if r, ok := newRule(s); ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// lists returns the allow and deny rules, the defaults for a zero Policy, and where the
// credentials are.
func (p *Policy) lists() (allow, deny []rule, creds credentials) {
	p.once.Do(func() {
		if !p.built {
			p.allow, p.deny = rules(DefaultAllow), rules(DefaultDeny)
		}
		getenv, home := p.Getenv, p.Home
		if getenv == nil {
			getenv = os.Getenv
		}
		if home == "" {
			home = secret.HomeDir(getenv)
		}
		p.creds = newCredentials(home, getenv, p.HidePaths)
	})
	return p.allow, p.deny, p.creds
}

// Check gives the verdict on a command run in an unknown directory: CheckIn without a
// workspace, so paths outside it are not judged, but credential locations still are.
func (p *Policy) Check(command string) Verdict { return p.CheckIn("", command) }

// CheckIn gives the verdict on a command run in workspace (absolute; "" when unknown). The
// denylist wins over everything, AllowAll included, and so does a path in a credential location
// (secret.CredentialPaths: `cat ~/.ssh/id_ed25519`, `git -C ~/.aws …`, `< ~/.netrc`), which is
// refused. A command using shell operators, redirections or substitutions (`;` `&` `|` `>` `<`
// backquote `$(` newline, quotes aside; `2>&1` is tolerated, output being merged anyway) is
// never allowed by a pattern — "go test && curl …" is not a test — only by AllowAll or an exact
// AllowAlways; it goes to Ask. So does a command whose name the shell computes (`$X`, a glob,
// `$(…)`): the denylist cannot read it, so it is asked, refused when its arguments fit a
// denylist entry (`$G push`), and refused under AllowAll, where nobody would be asked. With a
// workspace, a command naming a path outside it (absolute, `~`, `$HOME`, `..` climbing out, a
// symlink leading out; /dev/null and its kind aside) is asked too: neither the allowlist nor an
// "Always allow" prefix reaches there. Judging the workspace's paths follows their symlinks on
// disk.
//
// On Windows the line is PowerShell's, and only a line of plain words counts as one command (see
// parsePowerShell): anything else is complex.
func (p *Policy) CheckIn(workspace, command string) Verdict {
	sc := p.shell.parse(command)
	cmds, complex := sc.cmds, sc.complex
	allow, deny, creds := p.lists()
	var invs []invocation
	for _, c := range cmds {
		invs = append(invs, invocations(c)...)
	}
	if sc.hidden != "" {
		invs = append(invs, invocation{hidden: sc.hidden})
	}
	if reason, denied := denied(deny, command, invs); denied {
		return Verdict{Deny, reason}
	}
	psh := p.shell.resolved() == powerShell
	if !psh {
		if reason := lineDanger(command); reason != "" {
			return Verdict{Deny, reason}
		}
	}
	if path := creds.credentialNamed(workspace, cmds, invs, psh); path != "" {
		return Verdict{Deny, credentialReason(path)}
	}
	hidden := hiddenCommand(invs)
	if p.AllowAll {
		if hidden != "" {
			return Verdict{Deny, hidden + ": the denylist cannot check it"}
		}
		return Verdict{Allow, "all commands allowed but the denylist"}
	}
	p.mu.Lock()
	session := slices.Clone(p.session)
	p.mu.Unlock()
	for _, r := range session {
		if r.line && r.text == strings.TrimSpace(command) ||
			!complex && len(cmds) == 1 && r.argv != nil && slices.Equal(r.argv, cmds[0]) {
			return Verdict{Allow, reasonApproved}
		}
	}
	if workspace != "" {
		if path := creds.outsideNamed(workspace, invs, psh); path != "" {
			return Verdict{Ask, outsideReason(path)}
		}
	}
	switch {
	case complex:
		return Verdict{Ask, p.shell.complexReason()}
	case len(cmds) == 0:
		return Verdict{Ask, "not in the allowlist"}
	case hidden != "":
		return Verdict{Ask, hidden}
	}
	cmd := cmds[0]
	if risk := argvRisk(cmd); risk != "" {
		return Verdict{Ask, risk}
	}
	for _, r := range session {
		if r.argv == nil && !r.line && r.matches(cmd) {
			return Verdict{Allow, reasonApproved}
		}
	}
	for _, r := range allow {
		if r.matches(cmd) {
			return Verdict{Allow, fmt.Sprintf("%s (%s)", reasonAllowlisted, r.text)}
		}
	}
	return Verdict{Ask, "not in the allowlist"}
}

// AllowAlways lets command run without asking for the rest of the session; the rule it adds is
// the one RuleFor describes. The denylist still wins.
func (p *Policy) AllowAlways(command string) {
	r, ok := p.alwaysRule(command)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.session = append(p.session, r)
}

// AllowPattern adds an allow pattern, as New's, for the rest of the session: settings
// changed while it runs. Unlike AllowAlways it is a pattern, read with argvRisk like the others.
func (p *Policy) AllowPattern(pattern string) {
	r, ok := newRule(pattern)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.session = append(p.session, r)
}

// RuleFor says what AllowAlways(command) would remember, for the approval question.
func (p *Policy) RuleFor(command string) string {
	r, ok := p.alwaysRule(command)
	switch {
	case !ok:
		return ""
	case r.line || r.argv != nil:
		return r.text + " (exactly)"
	}
	return r.text + " (and any arguments)"
}

// alwaysRule is the rule an "Always allow" stores: the exact argv (or, with shell operators,
// the exact line) by default. A prefix rule — program and subcommand, so `git diff` then allows
// `git diff --stat` — only for the subcommands in prefixSafe, whose options argvRisk reads:
// the prefix never allows `git diff --output=…`. Nor is it made from a command naming a path
// that may be outside the workspace (`git diff /etc/passwd /dev/null`): a prefix does not reach
// there (CheckIn), so the user approved that command, which is remembered exactly. Never for wrappers, shells, interpreters,
// find, xargs or env (their arguments are other commands), nor for `git -c` or `npm run lint`
// (a script name says nothing of the next one).
func (p *Policy) alwaysRule(command string) (rule, bool) {
	sc := p.shell.parse(command)
	cmds, complex := sc.cmds, sc.complex
	line := strings.TrimSpace(command)
	switch {
	case line == "":
		return rule{}, false
	case complex || len(cmds) != 1:
		return rule{text: line, line: true}, true
	}
	cmd := cmds[0]
	if len(cmd) >= 2 && !cmd[0].dyn && !cmd[1].dyn && prefixSafe[cmd[0].s][cmd[1].s] &&
		argvRisk(cmd) == "" && hiddenCommand(invocations(cmd)) == "" && !p.mayLeave(cmd) {
		r, _ := newRule(cmd[0].s + " " + cmd[1].s)
		return r, true
	}
	return rule{text: joinText(cmd), argv: cmd}, true
}

// mayLeave reports whether cmd names a path that may be outside the workspace, whichever it
// is: absolute, `~`, `$HOME`, or with a `..`.
func (p *Policy) mayLeave(cmd []word) bool {
	_, _, creds := p.lists()
	psh := p.shell.resolved() == powerShell
	for _, r := range creds.pathsOf(cmd, "", false, psh) {
		if !harmlessPaths[filepath.ToSlash(r.abs)] {
			return true
		}
	}
	for _, w := range cmd[1:] {
		for _, s := range candidates(w) {
			if slices.Contains(strings.Split(filepath.ToSlash(s), "/"), "..") || strings.Contains(s, "$") {
				return true
			}
		}
	}
	return false
}

// prefixSafe are the subcommands an "Always allow" remembers as a prefix: they read, build or
// test, and argvRisk knows the options of theirs that write elsewhere or run other programs.
var prefixSafe = map[string]map[string]bool{
	"git": {"diff": true, "show": true, "log": true, "status": true, "blame": true, "grep": true,
		"ls-files": true, "ls-tree": true, "rev-parse": true, "describe": true, "shortlog": true},
	"go":    {"test": true, "build": true, "vet": true, "list": true, "version": true, "doc": true},
	"cargo": {"test": true, "build": true, "check": true, "clippy": true},
}

// rule is one allow or deny pattern, or a remembered "Always allow".
type rule struct {
	text  string   // words joined by single spaces; the trimmed line for a line rule
	words []string // text's words
	glob  bool
	line  bool   // matches this exact line (AllowAlways of a line with operators)
	argv  []word // matches this exact simple command (AllowAlways by default)
}

func newRule(s string) (rule, bool) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return rule{}, false
	}
	text := strings.Join(words, " ")
	return rule{text: text, words: words, glob: strings.Contains(text, "*")}, true
}

// matches applies an allow pattern to a simple command: its words, as written, start with the
// rule's (or match its glob). The name is compared as written, not by basename: `./ls` is the
// workspace's script, not ls.
func (r rule) matches(cmd []word) bool {
	if r.glob {
		return globMatch(r.text, joinText(cmd))
	}
	if len(cmd) < len(r.words) {
		return false
	}
	for i, w := range r.words {
		if cmd[i].dyn || cmd[i].s != w {
			return false
		}
	}
	return true
}

// denies applies a deny pattern to a program the line runs, by basename (/usr/bin/git is git).
// A word the shell computes matches any word of the pattern, one that may split matches any run
// of them, and xargs's appended arguments match the rest; but some word of the pattern must
// match a written word, or every `$X` would be denied.
func (r rule) denies(inv invocation) bool {
	argv := inv.argv
	if len(argv) == 0 {
		return false
	}
	if r.glob {
		base := append([]word{{s: program(argv[0].s)}}, argv[1:]...)
		return globMatch(r.text, joinText(argv)) || globMatch(r.text, joinText(base))
	}
	n, m := len(r.words), len(argv)
	seen := make(map[[3]int]bool)
	var match func(ri, wi int, lit bool) bool
	match = func(ri, wi int, lit bool) bool {
		switch {
		case ri == n:
			return lit
		case wi == m:
			return inv.open && lit
		}
		key := [3]int{ri, wi, 0}
		if lit {
			key[2] = 1
		}
		if seen[key] {
			return false
		}
		seen[key] = true
		w := argv[wi]
		if !w.dyn {
			same := w.s == r.words[ri] || wi == 0 && program(w.s) == r.words[ri]
			return same && match(ri+1, wi+1, true)
		}
		if match(ri+1, wi+1, lit) {
			return true
		}
		if w.split {
			for k := ri; k <= n; k++ { // the word expands to words ri..k-1, possibly none
				if k != ri+1 && match(k, wi+1, lit) {
					return true
				}
			}
		}
		return false
	}
	return match(0, 0, false)
}

// globMatch matches s against a pattern whose only special character is `*` (any run).
func globMatch(pattern, s string) bool {
	star, back := -1, 0
	i, j := 0, 0
	for j < len(s) {
		switch {
		case i < len(pattern) && pattern[i] == '*':
			star, back = i, j
			i++
		case i < len(pattern) && pattern[i] == s[j]:
			i++
			j++
		case star >= 0:
			back++
			i, j = star+1, back
		default:
			return false
		}
	}
	for i < len(pattern) && pattern[i] == '*' {
		i++
	}
	return i == len(pattern)
}

var (
	// The raw line is read too, as a net under the parsed checks (destructive, lineDanger):
	// it sees into quoted command strings however they are nested.
	pipeToShell = regexp.MustCompile(`\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(env\s+)?(\S*/)?((ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node)\b\s*($|[|;&)'"]|-\s|-$|-s\b)`)
	blockDevice = regexp.MustCompile(`>\|?\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk/|dm-|md|mapper/|loop|nbd)`)
	topLevelDir = regexp.MustCompile(`^/[^/]*/?\*?$`)
)

// denied checks the raw line and every program it runs against the denylist and the
// destructive forms.
func denied(deny []rule, line string, invs []invocation) (string, bool) {
	switch {
	case strings.Contains(strings.Join(strings.Fields(line), ""), ":(){"):
		return "a fork bomb", true
	case pipeToShell.MatchString(line) || substitutedDownload.MatchString(line):
		return "runs a downloaded script", true
	case blockDevice.MatchString(line):
		return "writes to a block device", true
	}
	through := func(reason string, inv invocation) (string, bool) {
		if inv.via != "" {
			return reason + ", through " + inv.via, true
		}
		return reason, true
	}
	for _, inv := range invs {
		if inv.danger != "" {
			return through(inv.danger, inv)
		}
		if rmRoot(texts(inv.argv)) {
			return through("deletes /, a top-level directory or home", inv)
		}
		for _, r := range deny {
			if r.denies(inv) {
				if inv.via != "" {
					return fmt.Sprintf("matches the denylist (%s) through %s", r.text, inv.via), true
				}
				return fmt.Sprintf("matches the denylist (%s)", r.text), true
			}
		}
		if reason := destructive(inv.argv); reason != "" {
			return through(reason, inv)
		}
	}
	return "", false
}

// hiddenCommand names the first program of the line that the line does not show: a command
// name the shell computes, or a command string that is.
func hiddenCommand(invs []invocation) string {
	for _, inv := range invs {
		switch {
		case inv.hidden != "" && inv.via == "":
			return inv.hidden
		case inv.hidden != "":
			return fmt.Sprintf("what %s runs is computed by the shell (%s)", inv.via, inv.hidden)
		case len(inv.argv) > 0 && inv.argv[0].dyn:
			return fmt.Sprintf("the command name is computed by the shell (%s)", inv.argv[0].s)
		}
	}
	return ""
}

// rmRoot recognises a recursive rm of /, a top-level directory or the home directory.
func rmRoot(words []string) bool {
	if len(words) == 0 || program(words[0]) != "rm" {
		return false
	}
	recursive := false
	for _, w := range words[1:] {
		if w == "--recursive" || w == "--no-preserve-root" ||
			strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsAny(w, "rR") {
			recursive = true
		}
	}
	if !recursive {
		return false
	}
	for _, w := range words[1:] {
		if !strings.HasPrefix(w, "-") && rootish(w) {
			return true
		}
	}
	return false
}
