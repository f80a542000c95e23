package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Approver decides about a command the policy neither allows nor denies: the editor asks the
// user, `--yes` approves everything. Declared here because run_command is its consumer.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// ApprovalRequest is what the user is asked about.
type ApprovalRequest struct {
	CallID  string
	Command string
	Reason  string // why the policy asks, e.g. "not in the allowlist"
}

// Decision is the user's answer; the zero value rejects, so a lost answer refuses.
type Decision int

const (
	Reject Decision = iota
	AllowOnce
	AlwaysAllow // also Policy.AllowAlways for the rest of the session
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

// DefaultAllow are the commands that run without asking: builds, tests, vet/lint in check mode,
// and a few read-only looks at the workspace. A rule is a prefix on word boundaries ("go test"
// allows "go test ./..." but not "go testx"). `git diff` is deliberately absent: the seed's run
// shows it refused unless approved. These commands can run code the model wrote (a test can do
// anything); the allowlist spares the user questions about the usual loop, it is not a sandbox.
var DefaultAllow = []string{
	"go test", "go build", "go vet", "gofmt -l", "go list", "go version",
	"pytest", "python -m pytest", "python3 -m pytest",
	"npm test", "npm run test", "npx jest", "npx vitest run",
	"cargo test", "cargo build", "cargo check",
	"make test", "make check", "mvn test", "gradle test", "./gradlew test",
	"ls", "pwd", "git status", "git log",
}

// DefaultDeny are refused even when the user would approve and under --yes. Each is matched
// against every simple command of the line (after `;`, `&&`, `|`, inside `$(…)`, `sh -c '…'`,
// behind wrappers such as env, nohup, time, exec): a prefix on word boundaries, or a
// glob when it holds `*`. Recursive deletion of /, a top-level directory or home, pipes of a
// download into a shell, fork bombs and writes to block devices are recognised on top.
var DefaultDeny = []string{
	"sudo", "su", "doas", "pkexec",
	"shutdown", "reboot", "halt", "poweroff", "init 0", "init 6", "systemctl poweroff", "systemctl reboot",
	"mkfs", "mkfs.*", "dd *if=*", "dd *of=*", "fdisk", "parted", "wipefs",
	"git push",
}

// Policy says which commands run, which are refused and which need the user. The lists are
// fixed by NewPolicy (the zero Policy has the defaults); AllowAlways adds to them during the
// session. Safe for concurrent use.
type Policy struct {
	// AllowAll allows every command the denylist does not refuse (`--yes`). Set it before the
	// policy is shared.
	AllowAll bool

	once  sync.Once // fills allow and deny with the defaults in a Policy not made by NewPolicy
	built bool      // made by NewPolicy
	allow []rule
	deny  []rule

	mu      sync.Mutex // guards session
	session []rule     // AllowAlways additions
}

// NewPolicy returns the default policy plus extra allow and deny patterns (`--allow`, settings).
// A pattern is a prefix on word boundaries, or a glob over the whole command when it holds `*`
// (`*` matches any characters, spaces and slashes included).
func NewPolicy(allow, deny []string) *Policy {
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

// lists returns the allow and deny rules, the defaults for a zero Policy.
func (p *Policy) lists() (allow, deny []rule) {
	p.once.Do(func() {
		if !p.built {
			p.allow, p.deny = rules(DefaultAllow), rules(DefaultDeny)
		}
	})
	return p.allow, p.deny
}

// Check gives the verdict on a command. The denylist wins over everything. A command using shell
// operators, redirections or substitutions (`;` `&` `|` `>` `<` backquote `$(` newline, quotes
// aside; `2>&1` is tolerated, output being merged anyway) is never allowed by a pattern —
// "go test && curl …" is not a test — only by AllowAll or an exact AllowAlways; it goes to Ask.
func (p *Policy) Check(command string) Verdict {
	cmds, complex := parseShell(command)
	allow, deny := p.lists()
	if reason, denied := denied(deny, command, cmds); denied {
		return Verdict{Deny, reason}
	}
	if p.AllowAll {
		return Verdict{Allow, "all commands allowed but the denylist"}
	}
	line := strings.TrimSpace(command)
	p.mu.Lock()
	session := slices.Clone(p.session)
	p.mu.Unlock()
	for _, r := range session {
		if r.exact && r.text == line || !r.exact && !complex && r.match(joinWords(cmds)) {
			return Verdict{Allow, "approved for this session"}
		}
	}
	if complex {
		return Verdict{Ask, "uses shell operators, redirections or substitutions"}
	}
	words := joinWords(cmds)
	for _, r := range allow {
		if r.match(words) {
			return Verdict{Allow, fmt.Sprintf("allowlisted (%s)", r.text)}
		}
	}
	return Verdict{Ask, "not in the allowlist"}
}

// AllowAlways lets command run without asking for the rest of the session. A simple command
// becomes a prefix rule ("git diff" then allows "git diff --stat"), as an "always allow" in
// Claude Code does; a line with shell operators is remembered exactly. The denylist still wins.
func (p *Policy) AllowAlways(command string) {
	cmds, complex := parseShell(command)
	r := rule{text: strings.TrimSpace(command), exact: true}
	if !complex {
		r = rule{text: joinWords(cmds)}
	}
	if r.text == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.session = append(p.session, r)
}

// rule is one allow or deny pattern.
type rule struct {
	text  string // words joined by single spaces
	glob  bool
	exact bool // the raw line, trimmed (AllowAlways of a complex line)
}

func newRule(s string) (rule, bool) {
	text := strings.Join(strings.Fields(s), " ")
	if text == "" {
		return rule{}, false
	}
	return rule{text: text, glob: strings.Contains(text, "*")}, true
}

// match applies the rule to a command given as words joined by single spaces.
func (r rule) match(words string) bool {
	switch {
	case r.exact:
		return r.text == words
	case r.glob:
		return globMatch(r.text, words)
	}
	return words == r.text || strings.HasPrefix(words, r.text+" ")
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
	pipeToShell     = regexp.MustCompile(`\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(env\s+)?(\S*/)?(ba|z|da|k|fi)?sh\b`)
	shellOfDownload = regexp.MustCompile(`\b(ba|z|da|k|fi)?sh\b[^|;&]*(<\(|\$\(|` + "`" + `)\s*(curl|wget|fetch)\b`)
	blockDevice     = regexp.MustCompile(`>\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk)`)
	topLevelDir     = regexp.MustCompile(`^/[^/]*/?\*?$`)
)

// denied checks the raw line and each simple command against the denylist.
func denied(deny []rule, line string, cmds [][]string) (string, bool) {
	switch {
	case strings.Contains(strings.Join(strings.Fields(line), ""), ":(){"):
		return "a fork bomb", true
	case pipeToShell.MatchString(line) || shellOfDownload.MatchString(line):
		return "runs a downloaded script", true
	case blockDevice.MatchString(line):
		return "writes to a block device", true
	}
	for _, words := range cmds {
		words = unwrap(words)
		if len(words) == 0 {
			continue
		}
		if rmRoot(words) {
			return "deletes /, a top-level directory or home", true
		}
		joined := strings.Join(words, " ")
		for _, r := range deny {
			if r.match(joined) {
				return fmt.Sprintf("matches the denylist (%s)", r.text), true
			}
		}
	}
	return "", false
}

// wrappers run the command that follows them; the denylist looks behind them.
var wrappers = map[string]bool{
	"exec": true, "command": true, "builtin": true, "nohup": true, "time": true, "nice": true,
	"env": true, "xargs": true, "timeout": true, "stdbuf": true, "then": true, "do": true,
	"else": true, "if": true, "elif": true, "while": true, "until": true, "!": true, "{": true,
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// unwrap drops leading variable assignments, wrappers and their options (and timeout's
// duration), leaving the command that really runs.
func unwrap(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case assignment.MatchString(w):
			words = words[1:]
		case wrappers[w]:
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || assignment.MatchString(words[0])) {
				words = words[1:]
			}
			if w == "timeout" && len(words) > 0 {
				words = words[1:]
			}
		default:
			return words
		}
	}
	return words
}

// rmRoot recognises a recursive rm of /, a top-level directory or the home directory.
func rmRoot(words []string) bool {
	if words[0] != "rm" && !strings.HasSuffix(words[0], "/rm") {
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
		if strings.HasPrefix(w, "-") {
			continue
		}
		home := strings.TrimSuffix(strings.TrimSuffix(w, "*"), "/")
		if topLevelDir.MatchString(w) || home == "~" || home == "$HOME" || home == "${HOME}" {
			return true
		}
	}
	return false
}

func joinWords(cmds [][]string) string {
	if len(cmds) == 0 {
		return ""
	}
	return strings.Join(cmds[0], " ")
}

// parseShell splits a command line into simple commands, each a list of words with quotes
// removed, and reports whether the line is more than one simple command: control operators,
// pipes, redirections, substitutions, comments or an unclosed quote. It is not a full shell
// parser; it is enough to tell "go test ./..." from "go test && rm …" and to find what a line
// runs. The argument of `sh -c`/`bash -c` and of eval is parsed as a line of its own.
func parseShell(line string) (cmds [][]string, complex bool) {
	var (
		words []string
		word  strings.Builder
		in    bool // a word is open (possibly empty: "")
		quote byte
		subst []byte // the quote to return to after a $( … ) or `…` inside double quotes
	)
	endWord := func() {
		if in {
			words = append(words, word.String())
			word.Reset()
			in = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch quote {
		case '\'':
			if c == '\'' {
				quote = 0
			} else {
				word.WriteByte(c)
			}
			continue
		case '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0:
				i++
				word.WriteByte(line[i])
			case c == '`' || c == '$' && i+1 < len(line) && line[i+1] == '(':
				complex = true
				endCmd()
				subst = append(subst, '"')
				quote = 0
				if c == '$' {
					i++
				}
			default:
				word.WriteByte(c)
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r':
			endWord()
		case '\\':
			if i+1 < len(line) {
				i++
				if line[i] != '\n' {
					word.WriteByte(line[i])
					in = true
				}
			}
		case '\'', '"':
			quote, in = c, true
		case ';', '&', '|', '\n', '(', ')', '`', '<', '>':
			if c == '>' && in && word.String() == "2" && strings.HasPrefix(line[i+1:], "&1") &&
				(i+3 == len(line) || line[i+3] == ' ' || line[i+3] == '\t') {
				word.Reset() // 2>&1: stderr is merged anyway
				in = false
				i += 2
				continue
			}
			complex = true
			endCmd()
			if (c == ')' || c == '`') && len(subst) > 0 {
				quote, in = subst[len(subst)-1], true
				subst = subst[:len(subst)-1]
			}
		case '#':
			if in {
				word.WriteByte(c)
				continue
			}
			complex = true
			for i < len(line) && line[i] != '\n' {
				i++
			}
			endCmd()
		case '$':
			if i+1 < len(line) && line[i+1] == '(' {
				complex = true
				endCmd()
				i++
				continue
			}
			word.WriteByte(c)
			in = true
		default:
			word.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		complex = true
	}
	endCmd()
	var nested [][]string
	for _, words := range cmds {
		w := unwrap(words)
		switch {
		case len(w) >= 3 && w[1] == "-c" && isShell(w[0]):
			inner, _ := parseShell(w[2])
			nested = append(nested, inner...)
		case len(w) >= 2 && w[0] == "eval":
			inner, _ := parseShell(strings.Join(w[1:], " "))
			nested = append(nested, inner...)
		}
	}
	if len(cmds) > 1 {
		complex = true
	}
	return append(cmds, nested...), complex
}

func isShell(w string) bool {
	switch w[strings.LastIndexByte(w, '/')+1:] {
	case "sh", "bash", "zsh", "dash", "ksh", "fish":
		return true
	}
	return false
}
