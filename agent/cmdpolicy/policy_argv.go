package cmdpolicy

import (
	"fmt"
	"strings"
)

// argvRisk names what keeps a simple command from being allowed by a pattern (the allowlist,
// --allow, an "Always allow" prefix), or returns "". A pattern says "go test and any
// arguments", but some arguments make another program run (`go test -exec`, a wrapper's
// command), write outside the workspace (`go build -o /elsewhere`) or hide what the command
// will be (`$X`, a leading glob); those are asked.
func argvRisk(cmd []word) string {
	if isAssignment(cmd[0]) {
		return fmt.Sprintf("sets the command's environment (%s)", cmd[0].s)
	}
	if cmd[0].dyn {
		return fmt.Sprintf("the command name is computed by the shell (%s)", cmd[0].s)
	}
	for _, w := range cmd[1:] {
		if w.split {
			return fmt.Sprintf("an argument computed by the shell may become options (%s)", w.s)
		}
	}
	name := program(cmd[0].s)
	switch {
	case wrappers[name] != nil || name == "eval" || name == "watch":
		return name + " runs another command"
	case shells[name] || isOSShell(name):
		return name + " runs a shell"
	}
	if f := argvRules[name]; f != nil {
		return f(texts(cmd[1:]))
	}
	return ""
}

// argvRules are the per-program option rules, by basename.
var argvRules = map[string]func(args []string) string{
	"go":      goRisk,
	"gofmt":   gofmtRisk,
	"git":     func(args []string) string { return gitRisk(literal(args...)) },
	"make":    makeRisk,
	"npm":     npmRisk,
	"pytest":  pytestRisk,
	"python":  pythonRisk,
	"python3": pythonRisk,
	"cargo":   cargoRisk,
	"mvn":     mvnRisk,
	"gradle":  gradleRisk,
	"gradlew": gradleRisk,
	"find":    findRisk,
}

// optionName returns an option's name without its dashes and value, "" for an operand:
// -o, --o, -o=x and --o=x are all "o", as the Go flag package reads them.
func optionName(s string) string {
	if len(s) < 2 || s[0] != '-' || s == "--" {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(s[1:], "-"), "=")
	return name
}

// goRisk: options that run another program (-exec, -toolexec, -vettool, an external linker),
// write files where the user did not ask (-o, -c, profiles, traces, -outputdir, -pkgdir), or read
// the module or the build from elsewhere (-C, -modfile, -overlay). -pgo only reads a profile
// that tunes optimisation: allowed.
func goRisk(args []string) string {
	for i, s := range args {
		name := optionName(s)
		test, isTest := strings.CutPrefix(name, "test.")
		if isTest {
			name = test
		}
		switch {
		case name == "exec", name == "toolexec", name == "vettool", name == "o", name == "c",
			name == "C", name == "trace", name == "modfile", name == "overlay", name == "pkgdir",
			name == "outputdir", name == "testlogfile", name == "gocoverdir", name == "debug-actiongraph",
			name == "debug-trace", name == "debug-runtime-trace",
			strings.HasSuffix(name, "profile"):
			return "go option " + s + " runs another program or writes files"
		case name == "ldflags":
			value := optionValue(args, i)
			if strings.Contains(value, "extld") || strings.Contains(value, "tmpdir") {
				return "go -ldflags " + value + " runs another linker or writes files"
			}
		}
	}
	return ""
}

// optionValue is the value of the option at args[i]: after `=` or the next word.
func optionValue(args []string, i int) string {
	if _, v, ok := strings.Cut(args[i], "="); ok {
		return v
	}
	if i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// gofmtRisk: only the read-only modes; -w rewrites files (`gofmt -w ../x.go`), profiles write.
func gofmtRisk(args []string) string {
	for _, s := range args {
		switch optionName(s) {
		case "", "l", "d", "e", "s":
		default:
			return "gofmt option " + s + " writes files"
		}
	}
	return ""
}

// makeRisk: another makefile or directory, --eval, and variable assignments (`CC=…`, `SHELL=…`)
// change what the recipes run.
func makeRisk(args []string) string {
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case strings.HasPrefix(s, "--"):
			switch optionName(s) {
			case "file", "makefile", "directory", "eval", "include-dir":
				return "make option " + s + " changes what make runs"
			}
		case strings.HasPrefix(s, "-"):
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'f', 'C', 'E', 'I':
					return "make option " + s + " changes what make runs"
				case 'j', 'l', 'O', 'o', 'W': // an argument follows, glued or not
					if j == len(s)-1 && s[j] != 'j' && s[j] != 'l' && s[j] != 'O' {
						i++
					}
					j = len(s)
				}
			}
		case strings.Contains(s, "="):
			return "make variable " + s + " changes what the recipes run"
		}
	}
	return ""
}

// npmRisk: npm's own options that choose the shell, node's options or another package; what
// follows `--` goes to the script.
func npmRisk(args []string) string {
	for _, s := range args {
		if s == "--" {
			break
		}
		switch optionName(s) {
		case "script-shell", "node-options", "prefix", "C", "userconfig", "globalconfig", "call", "c":
			return "npm option " + s + " changes what npm runs"
		}
	}
	return ""
}

// pytestRisk: files written where the model says (--basetemp is emptied first), other
// configuration, and ini overrides.
func pytestRisk(args []string) string {
	for _, s := range args {
		if strings.HasPrefix(s, "--") {
			switch optionName(s) {
			case "basetemp", "junitxml", "junit-xml", "resultlog", "result-log", "report-log", "log-file",
				"debug", "html", "override-ini", "rootdir", "confcutdir", "config-file", "cov-report":
				return "pytest option " + s + " writes files or changes the configuration"
			}
			continue
		}
		if len(s) > 1 && s[0] == '-' {
			for _, c := range s[1:] {
				if c == 'o' || c == 'c' {
					return "pytest option " + s + " changes the configuration"
				}
				if strings.ContainsRune("kmpWn", c) { // an argument follows
					break
				}
			}
		}
	}
	return ""
}

// pythonRisk applies pytest's rules to `python -m pytest`.
func pythonRisk(args []string) string {
	if len(args) >= 2 && args[0] == "-m" && args[1] == "pytest" {
		return pytestRisk(args[2:])
	}
	return ""
}

// cargoRisk: configuration that picks runners or wrappers (--config, -Z), other manifests and
// output directories; after `--`, the test binary's --logfile.
func cargoRisk(args []string) string {
	for i, s := range args {
		if s == "--" {
			for _, t := range args[i+1:] {
				if optionName(t) == "logfile" {
					return "test option " + t + " writes a file"
				}
			}
			break
		}
		switch optionName(s) {
		case "config", "Z", "C", "target-dir", "manifest-path", "out-dir", "artifact-dir", "lockfile-path":
			return "cargo option " + s + " changes what cargo runs or writes files elsewhere"
		}
		if strings.HasPrefix(s, "-Z") || strings.HasPrefix(s, "-C") {
			return "cargo option " + s + " changes what cargo runs"
		}
	}
	return ""
}

// mvnRisk: another POM, settings or toolchains.
func mvnRisk(args []string) string {
	for _, s := range args {
		switch optionName(s) {
		case "f", "file", "s", "settings", "gs", "global-settings", "t", "toolchains", "gt", "global-toolchains":
			return "mvn option " + s + " changes what maven runs"
		}
	}
	return ""
}

// gradleRisk: init scripts, other builds, settings or homes.
func gradleRisk(args []string) string {
	for _, s := range args {
		name := optionName(s)
		switch name {
		case "I", "init-script", "p", "project-dir", "c", "settings-file", "b", "build-file", "g",
			"gradle-user-home", "project-cache-dir", "include-build":
			return "gradle option " + s + " changes what gradle runs"
		}
		if len(name) > 1 && strings.Contains("Ipcbg", name[:1]) && !strings.HasPrefix(s, "--") {
			return "gradle option " + s + " changes what gradle runs"
		}
	}
	return ""
}

// findRisk: the actions that run commands, delete or write files.
func findRisk(args []string) string {
	for _, s := range args {
		switch s {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return "find " + s + " runs commands, deletes or writes files"
		}
	}
	return ""
}
