package cmdpolicy

import "strings"

// osShell is the language of run_command's lines here.
const osShell = powerShell

// program is the name a command is known by, as Windows finds it: its base name (after any /, \
// or drive), in lower case, without the extension Windows or PowerShell adds when looking it up.
// C:\Git\cmd\GIT.EXE is git, and so is git.cmd.
func program(name string) string {
	if i := strings.LastIndexAny(name, `/\:`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToLower(name)
	for _, ext := range []string{".exe", ".com", ".bat", ".cmd", ".ps1"} {
		if base, ok := strings.CutSuffix(name, ext); ok && base != "" {
			return base
		}
	}
	return name
}

// isOSShell tells the programs of Windows that run a command line given as arguments.
func isOSShell(name string) bool {
	switch name {
	case "cmd", "powershell", "pwsh", "iex", "invoke-expression":
		return true
	}
	return false
}

// osShellLine finds the line such a program runs: cmd /c (or /k, /r) LINE, powershell or pwsh
// -Command LINE (any abbreviation, - or /), powershell's first operand (its default is -Command),
// and Invoke-Expression's argument. A line given base64-encoded (-EncodedCommand) is hidden. The
// line is read as PowerShell's, cmd's too: they share & && || | ( ) < >, though not cmd's ^ escape.
func osShellLine(name string, args []word) (line word, ok bool) {
	rest := func(i int) (word, bool) { return joinWord(args[i:]), i < len(args) }
	switch name {
	case "cmd":
		for i, a := range args {
			o := strings.ToLower(a.s)
			if len(o) >= 2 && o[0] == '/' && strings.IndexByte("ckr", o[1]) >= 0 {
				if len(o) > 2 { // glued: /cgit push
					return joinWord(append([]word{{s: a.s[2:], dyn: a.dyn}}, args[i+1:]...)), true
				}
				return rest(i + 1)
			}
		}
	case "iex", "invoke-expression":
		if len(args) > 0 && isParam(args[0].s, "command", 1) {
			return rest(1)
		}
		return rest(0)
	case "powershell", "pwsh":
		for i := 0; i < len(args); i++ {
			s := args[i].s
			switch {
			case isParam(s, "command", 1):
				return rest(i + 1)
			case isParam(s, "encodedcommand", 1) || isParam(s, "ec", 2):
				return word{s: s, dyn: true}, true
			case isParam(s, "file", 1):
				return word{}, false // a script: its text is not in the line
			case psValueParam(s):
				i++
			case s != "" && (s[0] == '-' || s[0] == '/'):
			case name == "powershell":
				return rest(i)
			default:
				return word{}, false
			}
		}
	}
	return word{}, false
}

// isParam reports whether s names the parameter full (with - or /), abbreviated to at least min
// letters.
func isParam(s, full string, min int) bool {
	if len(s) < 2 || s[0] != '-' && s[0] != '/' {
		return false
	}
	s = strings.ToLower(s[1:])
	return len(s) >= min && strings.HasPrefix(full, s)
}

// psValueParam tells the parameters of powershell and pwsh that take a value, by their shortest
// abbreviations.
func psValueParam(s string) bool {
	for _, p := range []struct {
		full string
		min  int
	}{
		{"executionpolicy", 2}, {"ep", 2}, {"windowstyle", 1}, {"configurationname", 2}, {"outputformat", 1},
		{"of", 2}, {"inputformat", 3}, {"if", 2}, {"workingdirectory", 2}, {"wd", 2}, {"psconsolefile", 2},
		{"version", 1}, {"settingsfile", 2}, {"custompipename", 2},
	} {
		if isParam(s, p.full, p.min) {
			return true
		}
	}
	return false
}
