package cmdpolicy

import (
	"regexp"
	"slices"
	"strings"
)

// invocation is one program a line runs, as far as the line shows it.
type invocation struct {
	argv []word
	// open is set when arguments the line does not show follow: xargs appends its input.
	open bool
	// via names what runs it ("nice", "sh -c", "find -exec", "git alias"); "" for a command
	// written in the line itself.
	via string
	// hidden is set when what runs cannot be read from the line: the text of `sh -c "$X"`, an
	// alias taken from the environment. It names what hides it.
	hidden string
	// danger is set when the command line argv runs holds a destructive form that only its
	// structure shows (lineDanger: a download piped into a shell, a redirection to a disk).
	danger string
}

// maxDepth bounds the nesting of wrappers and shells followed; deeper is hidden.
const maxDepth = 8

// invocations lists every program the simple command cmd runs: itself, and what it runs through
// wrappers, shells, eval, find -exec, xargs, git aliases and git settings that hold commands.
// The denylist is checked against each of them.
func invocations(cmd []word) []invocation {
	var out []invocation
	collect(cmd, "", false, 0, &out)
	return out
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// isAssignment tells a leading NAME=value word, which sets the command's environment.
func isAssignment(w word) bool { return assignment.MatchString(w.s) }

func dropAssignments(cmd []word) []word {
	for len(cmd) > 0 && isAssignment(cmd[0]) {
		cmd = cmd[1:]
	}
	return cmd
}

func collect(cmd []word, via string, open bool, depth int, out *[]invocation) {
	cmd = dropAssignments(cmd)
	if len(cmd) == 0 {
		return
	}
	if depth > maxDepth {
		*out = append(*out, invocation{argv: cmd, via: via, hidden: "nested too deeply"})
		return
	}
	*out = append(*out, invocation{argv: cmd, via: via, open: open})
	if cmd[0].dyn {
		return
	}
	// read follows a command line given as one argument, in shell k's language; line, in sh's.
	read := func(k shellKind, via string, w word) {
		if w.dyn {
			*out = append(*out, invocation{argv: cmd, via: via, hidden: w.s})
			return
		}
		inner := k.parse(w.s)
		if inner.hidden != "" {
			*out = append(*out, invocation{argv: cmd, via: via, hidden: inner.hidden})
		}
		if k.resolved() != powerShell {
			if d := lineDanger(w.s); d != "" {
				*out = append(*out, invocation{argv: cmd, via: via, danger: d})
			}
		}
		for _, c := range inner.cmds {
			collect(c, via, false, depth+1, out)
		}
	}
	line := func(via string, w word) { read(posixShell, via, w) }
	name := program(cmd[0].s)
	args := cmd[1:]
	switch {
	case wrappers[name] != nil:
		if inner := wrappers[name](args); len(inner) > 0 {
			collect(inner, name, open || name == "xargs", depth+1, out)
		}
	case shells[name]:
		if w, ok := shellCommand(args); ok {
			line(name+" -c", w)
		}
	case isOSShell(name):
		if w, ok := osShellLine(name, args); ok {
			read(powerShell, name, w)
		}
	case name == "eval" && len(args) > 0:
		line("eval", joinWord(args))
	case name == "alias": // dash expands aliases in the lines that follow: the value is a line
		for _, a := range args {
			if _, value, ok := strings.Cut(a.s, "="); ok {
				line("alias", word{s: value, dyn: a.dyn})
			}
		}
	case name == "watch":
		if i := skipOptions(args, "nq", "interval", "equexit"); i < len(args) {
			line("watch", joinWord(args[i:]))
		}
	case name == "find":
		for _, seg := range findCommands(args) {
			collect(seg, "find -exec", false, depth+1, out)
		}
	case name == "npx" || name == "npm":
		for _, w := range optionValues(args, "c", "call", "script-shell") {
			line(name, w)
		}
	case name == "git" || strings.HasPrefix(name, "git-"):
		gitInvocations(cmd, depth, out)
	}
}

// joinWord joins words into one, dynamic when any of them is.
func joinWord(ws []word) word {
	j := word{s: joinText(ws)}
	for _, w := range ws {
		j.dyn = j.dyn || w.dyn
	}
	return j
}

// shells take a command line with -c. fish and zsh too: a denylist that stops at sh would be
// one word away from useless.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "fish": true}

// shellCommand finds the command string of a shell invoked with -c in any option cluster
// (`-c`, `-xc`, `-ec`, `--norc -c`, `-o pipefail -c`): the first operand after the options.
func shellCommand(args []word) (word, bool) {
	hasC := false
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--" || s == "-":
			if hasC && i+1 < len(args) {
				return args[i+1], true
			}
			return word{}, false
		case s == "--rcfile" || s == "--init-file":
			i++
		case strings.HasPrefix(s, "--command="): // fish
			return word{s: s[len("--command="):], dyn: args[i].dyn}, true
		case s == "--command":
			hasC = true
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			for _, c := range s[1:] {
				switch c {
				case 'c':
					hasC = true
				case 'o', 'O': // -o pipefail: the option takes the next word
					i++
				}
			}
		default:
			if hasC {
				return args[i], true
			}
			return word{}, false // a script file, or stdin
		}
	}
	return word{}, false
}

// skipOptions returns the index of the first operand in args, for a program that stops at its
// first operand (getopt's "+") and whose short options in withArg and long options in longArg
// take an argument, glued or as the next word.
func skipOptions(args []word, withArg string, longArg ...string) int {
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "--":
			return i + 1
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			if !hasValue && slices.Contains(longArg, name) {
				i++
			}
		case len(s) > 1 && s[0] == '-' && !args[i].dyn:
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(withArg, s[j]) >= 0 {
					if j == len(s)-1 {
						i++
					}
					break
				}
			}
		default:
			return i
		}
	}
	return len(args)
}

// after returns the command a wrapper runs: what follows its options and skip more operands.
func after(args []word, skip int, withArg string, longArg ...string) []word {
	i := skipOptions(args, withArg, longArg...) + skip
	if i >= len(args) {
		return nil
	}
	return args[i:]
}

// wrappers run the command that follows their options; each returns that command.
var wrappers = map[string]func(args []word) []word{
	"nice":    func(a []word) []word { return after(a, 0, "n", "adjustment") },
	"timeout": func(a []word) []word { return after(a, 1, "ks", "kill-after", "signal") }, // then a duration
	"xargs": func(a []word) []word {
		return after(a, 0, "aEIdnPLs", "arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var")
	},
	"stdbuf": func(a []word) []word { return after(a, 0, "ioe", "input", "output", "error") },
	"nohup":  func(a []word) []word { return after(a, 0, "") },
	"time":   func(a []word) []word { return after(a, 0, "fo", "format", "output") },
	"command": func(a []word) []word { // -v and -V only look the name up
		for _, w := range a {
			if w.s == "-v" || w.s == "-V" {
				return nil
			}
		}
		return after(a, 0, "")
	},
	"builtin": func(a []word) []word { return after(a, 0, "") },
	"exec":    func(a []word) []word { return after(a, 0, "a") },
	"chrt": func(a []word) []word {
		inner := after(a, 0, "TPD", "sched-runtime", "sched-deadline", "sched-period")
		if len(inner) > 0 && strings.Trim(inner[0].s, "0123456789") == "" { // the priority
			inner = inner[1:]
		}
		return inner
	},
	"ionice":  func(a []word) []word { return after(a, 0, "cnpP", "class", "classdata", "pid", "pgid", "uid") },
	"setsid":  func(a []word) []word { return after(a, 0, "") },
	"taskset": func(a []word) []word { return after(a, 1, "") }, // then a mask or CPU list
	// busybox and toybox run the applet named first: `busybox rm -rf /` is rm.
	"busybox": func(a []word) []word { return after(a, 0, "") },
	"toybox":  func(a []word) []word { return after(a, 0, "") },
	// Shell keywords that a command follows.
	"!": keyword, "{": keyword, "if": keyword, "then": keyword, "elif": keyword, "else": keyword,
	"while": keyword, "until": keyword, "do": keyword,
}

func keyword(a []word) []word { return a }

// env's rule refers to the reading of a line, which refers to wrappers: set after both exist.
func init() { wrappers["env"] = envCommand }

// splitWords splits a string into words as sh does (env -S and git aliases split that way, not
// running a shell), or reports that it cannot.
func splitWords(s string) ([]word, bool) {
	sc := readScript(s)
	var ws []word
	for _, c := range sc.cmds {
		ws = append(ws, c...)
	}
	return ws, sc.hidden == ""
}

// envCommand skips env's options and assignments; `-S`/`--split-string` splits its argument
// into words that come first, as env does.
func envCommand(args []word) []word {
	for i := 0; i < len(args); i++ {
		s := args[i].s
		var split *word
		switch {
		case s == "--":
			return args[i+1:]
		case strings.HasPrefix(s, "--split-string="):
			split = &word{s: s[len("--split-string="):], dyn: args[i].dyn}
		case s == "--split-string" || s == "--unset" || s == "--chdir":
			if s == "--split-string" && i+1 < len(args) {
				split = &args[i+1]
			}
			i++
		case strings.HasPrefix(s, "--"), s == "-", isAssignment(args[i]):
		case len(s) > 1 && s[0] == '-' && !args[i].dyn:
		cluster:
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'u', 'C':
					if j == len(s)-1 {
						i++
					}
					break cluster
				case 'S':
					if j < len(s)-1 {
						split = &word{s: s[j+1:], dyn: args[i].dyn}
					} else if i+1 < len(args) {
						i++
						split = &args[i]
					}
					break cluster
				}
			}
		default:
			return args[i:]
		}
		if split != nil {
			if split.dyn {
				return append([]word{*split}, args[i+1:]...)
			}
			ws, ok := splitWords(split.s)
			if !ok { // unreadable: a command the policy cannot know
				return append([]word{{s: split.s, dyn: true, split: true}}, args[i+1:]...)
			}
			return envCommand(append(ws, args[i+1:]...))
		}
	}
	return nil
}

// findCommands returns the commands find runs with -exec, -execdir, -ok and -okdir. `{}` is a
// file name find chooses: unknown to the policy.
func findCommands(args []word) [][]word {
	var cmds [][]word
	for i := 0; i < len(args); i++ {
		switch args[i].s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		var c []word
		for i++; i < len(args) && args[i].s != ";" && args[i].s != "+"; i++ {
			w := args[i]
			if strings.Contains(w.s, "{}") {
				w.dyn = true
			}
			c = append(c, w)
		}
		if len(c) > 0 {
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// optionValues returns the values of the given options in args, in any of the forms -x V, -xV,
// --name V, --name=V. Single letters are short options.
func optionValues(args []word, names ...string) []word {
	var vals []word
	for i := 0; i < len(args); i++ {
		s := args[i].s
		for _, n := range names {
			dashes := "--"
			if len(n) == 1 {
				dashes = "-"
			}
			switch {
			case s == dashes+n && i+1 < len(args):
				vals = append(vals, args[i+1])
			case len(n) > 1 && strings.HasPrefix(s, dashes+n+"="):
				vals = append(vals, word{s: s[len(dashes+n+"="):], dyn: args[i].dyn})
			case len(n) == 1 && strings.HasPrefix(s, dashes+n) && len(s) > 2:
				vals = append(vals, word{s: s[2:], dyn: args[i].dyn})
			}
		}
	}
	return vals
}
