package cmdpolicy

import "strings"

// gitGlobalArg are git's global options that take the next word as their argument; they come
// before the subcommand, which is found only by skipping them (`git -C . push` pushes).
var gitGlobalArg = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--config-env": true, "--super-prefix": true, "--attr-source": true,
}

// gitGlobalUnsafe are the global options that change which repository, configuration or
// programs git uses; a command with one is never allowed by a pattern.
var gitGlobalUnsafe = []string{"-C", "-c", "--git-dir", "--work-tree", "--exec-path", "--namespace", "--config-env", "--super-prefix", "--attr-source"}

// gitSplit parses git's global options: the index in args (after "git") of the subcommand, the
// global options seen, and the -c settings and --config-env settings as given.
func gitSplit(args []word) (sub int, globals []string, settings, fromEnv []word) {
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case gitGlobalArg[s]:
			globals = append(globals, s)
			if i+1 < len(args) {
				switch s {
				case "-c":
					settings = append(settings, args[i+1])
				case "--config-env":
					fromEnv = append(fromEnv, args[i+1])
				}
			}
			i++
		case strings.HasPrefix(s, "-") && !args[i].dyn:
			name, value, _ := strings.Cut(s, "=")
			globals = append(globals, name)
			if name == "--config-env" {
				fromEnv = append(fromEnv, word{s: value})
			}
		default:
			return i, globals, settings, fromEnv
		}
	}
	return len(args), globals, settings, fromEnv
}

// gitInvocations adds what a git command runs besides itself: the subcommand without the global
// options (so the denylist's "git push" sees `git -C . push` and `/usr/lib/git-core/git-push`),
// aliases and command-valued settings given with -c or set with `git config`, the programs
// named by --upload-pack, --receive-pack and --exec, and send-pack as the push it is.
func gitInvocations(cmd []word, depth int, out *[]invocation) {
	add := func(argv []word, via string) { collect(argv, via, false, depth+1, out) }
	git := literal("git")
	if name := program(cmd[0].s); name != "git" { // git-push, as git-core installs it
		*out = append(*out, invocation{argv: append(append(git, word{s: strings.TrimPrefix(name, "git-")}), cmd[1:]...), via: "git"})
		return
	}
	args := cmd[1:]
	i, _, settings, fromEnv := gitSplit(args)
	if i >= len(args) {
		return
	}
	sub, rest := args[i], args[i+1:]
	if i > 0 {
		*out = append(*out, invocation{argv: append(git, args[i:]...), via: "git"})
	}
	for _, kv := range settings {
		key, value, _ := strings.Cut(kv.s, "=")
		gitSetting(key, word{s: value, dyn: kv.dyn}, sub, rest, add, out)
	}
	for _, kv := range fromEnv { // the value is in the environment: not to be seen
		key, _, _ := strings.Cut(kv.s, "=")
		if gitCommandKey(key) {
			*out = append(*out, invocation{argv: cmd, via: "git --config-env", hidden: key})
		}
	}
	switch sub.s {
	case "config":
		if key, value, ok := gitConfigSet(rest); ok {
			gitSetting(key.s, value, word{}, nil, add, out)
		}
	case "send-pack":
		*out = append(*out, invocation{argv: append(append(git, word{s: "push"}), rest...), via: "git send-pack"})
	}
	programs := optionValues(rest, "upload-pack", "receive-pack", "exec")
	if sub.s == "clone" || sub.s == "ls-remote" || sub.s == "archive" {
		programs = append(programs, optionValues(rest, "u")...)
	}
	for _, w := range programs {
		gitLine("git "+sub.s, w, add, out, cmd)
	}
}

// gitSetting follows a configuration value that git runs: an alias used by this very command
// (sub) or any command-valued key.
func gitSetting(key string, value, sub word, rest []word, add func([]word, string), out *[]invocation) {
	k := strings.ToLower(key)
	alias, isAlias := strings.CutPrefix(k, "alias.")
	if isAlias && sub.s != "" && !strings.EqualFold(sub.s, alias) {
		return // set with -c for a command that does not use it
	}
	switch {
	case isAlias && strings.HasPrefix(value.s, "!"):
		gitLine("git alias", word{s: value.s[1:], dyn: value.dyn}, add, out, nil)
	case isAlias:
		if value.dyn {
			*out = append(*out, invocation{argv: literal("git", alias), via: "git alias", hidden: value.s})
			return
		}
		ws, ok := splitWords(value.s)
		if !ok {
			*out = append(*out, invocation{argv: literal("git", alias), via: "git alias", hidden: value.s})
			return
		}
		add(append(append(literal("git"), ws...), rest...), "git alias")
	case gitCommandKey(key):
		gitLine("git "+key, word{s: strings.TrimPrefix(value.s, "!"), dyn: value.dyn}, add, out, nil)
	}
}

func gitLine(via string, w word, add func([]word, string), out *[]invocation, argv []word) {
	if w.dyn {
		*out = append(*out, invocation{argv: argv, via: via, hidden: w.s})
		return
	}
	sc := readScript(w.s)
	if sc.hidden != "" {
		*out = append(*out, invocation{argv: argv, via: via, hidden: sc.hidden})
	}
	for _, c := range sc.cmds {
		add(c, via)
	}
}

// gitCommandKey tells the configuration keys whose value git runs as a command.
func gitCommandKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.fsmonitor", "core.pager", "core.sshcommand", "core.editor", "core.askpass", "core.gitproxy",
		"sequence.editor", "diff.external", "gpg.program", "credential.helper", "uploadpack.packobjectshook":
		return true
	}
	section, _, _ := strings.Cut(k, ".")
	name := k[strings.LastIndexByte(k, '.')+1:]
	switch section {
	case "alias", "pager":
		return true
	case "diff":
		return name == "textconv" || name == "command"
	case "merge":
		return name == "driver"
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "remote":
		return name == "uploadpack" || name == "receivepack"
	case "gpg", "credential":
		return name == "program" || name == "helper"
	}
	return false
}

// gitConfigSet finds the key and value of `git config [options] KEY VALUE` and of
// `git config set KEY VALUE`.
func gitConfigSet(args []word) (key, value word, ok bool) {
	var operands []word
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "-f" || s == "--file" || s == "--blob" || s == "--type" || s == "--default" || s == "--comment" || s == "--value":
			i++
		case strings.HasPrefix(s, "-") && !args[i].dyn:
		default:
			operands = append(operands, args[i])
		}
	}
	if len(operands) > 0 && operands[0].s == "set" {
		operands = operands[1:]
	}
	if len(operands) < 2 {
		return word{}, word{}, false
	}
	return operands[0], operands[1], true
}

// gitRisk names what keeps a git command from being allowed by a pattern: a global option
// that changes the repository, configuration or programs, or an option of the subcommand that
// writes a file (--output), runs a program (--ext-diff, -O, --upload-pack…) or reads outside
// the repository (--no-index).
func gitRisk(args []word) string {
	i, globals, _, _ := gitSplit(args)
	for _, g := range globals {
		for _, u := range gitGlobalUnsafe {
			if g == u {
				return "git " + g + " changes the repository, configuration or programs git uses"
			}
		}
	}
	if i >= len(args) {
		return ""
	}
	sub := args[i].s
	if sub == "send-pack" {
		return "git send-pack pushes"
	}
	for _, w := range args[i+1:] {
		s := w.s
		if s == "--" {
			break
		}
		name, _, _ := strings.Cut(s, "=")
		switch name {
		case "--output", "--ext-diff", "--no-index", "--open-files-in-pager", "--upload-pack", "--receive-pack", "--exec":
			return "git " + sub + " " + name + " writes a file, runs a program or reads outside the repository"
		}
		if strings.HasPrefix(s, "-O") && sub == "grep" {
			return "git grep -O runs a program"
		}
		if s == "-u" && (sub == "clone" || sub == "ls-remote" || sub == "archive") {
			return "git " + sub + " -u runs a program"
		}
	}
	return ""
}
