package cmdpolicy

import "strings"

// shellKind is the language of the lines run_command runs, which the policy must read as that
// shell will.
type shellKind int

const (
	hostShell  shellKind = iota // the shell run_command uses on this OS (osShell)
	posixShell                  // sh -c
	powerShell                  // PowerShell -Command (Windows)
)

// parse reads a command line in k's language (see readScript and parsePowerShell).
func (k shellKind) parse(line string) script {
	if k.resolved() == powerShell {
		cmds, complex := parsePowerShell(line)
		return script{cmds: cmds, complex: complex}
	}
	return readScript(line)
}

// complexReason is why a complex line is asked.
func (k shellKind) complexReason() string {
	if k.resolved() == powerShell {
		return "uses PowerShell syntax beyond plain words (operators, quotes, variables, escapes…)"
	}
	return "uses shell operators, redirections or substitutions"
}

func (k shellKind) resolved() shellKind {
	if k == hostShell {
		return osShell
	}
	return k
}

// parsePowerShell reads a PowerShell line. PowerShell's grammar is much larger than sh's, and a
// mistake here lets a line run without a question, so only a plain line is one simple command:
// words made of ASCII letters, digits and - _ . / \ : = +, taken literally (see plainPowerShell).
// Any other line is complex: no pattern allows it, the user is asked. That covers the operators
// and separators (; | & && || > <), quotes, the backtick escape, $variables and $( ), @( ) and
// splatting, script blocks { }, the array comma, comments, --% and the Unicode dashes and quotes
// PowerShell takes for ASCII ones.
//
// The words of a complex line, for the denylist, are lexWords' tolerant reading of it (sh's
// grammar rejects most PowerShell, so it cannot serve here): PowerShell shares sh's
// separators and substitutions, its escape is the backtick where sh's is the backslash, a
// backslash separates paths, and a script block, wherever it is, holds commands of its own. A
// leading `.` (dot-sourcing) runs the word after it. The denylist stays best effort here, as in
// sh.
func parsePowerShell(line string) (cmds [][]word, complex bool) {
	if words, ok := plainPowerShell(line); ok {
		if len(words) == 0 {
			return nil, false
		}
		return [][]word{literal(words...)}, false
	}
	read := lexWords(strings.NewReplacer(`\`, `/`, "`", `\`, "{", ";", "}", ";").Replace(line))
	for _, c := range read {
		if !c[0].dyn && c[0].s == "." {
			c = c[1:]
		}
		if len(c) > 0 {
			cmds = append(cmds, c)
		}
	}
	return cmds, true
}

// plainPowerShell returns the words of a line PowerShell passes on as written, or false. Besides
// the characters it allows, it refuses what PowerShell itself may rewrite: `--`, which it
// consumes before a script's arguments (npm is npm.ps1 when that is installed: `npm run test --
// --script-shell=x` would reach npm as its own option, npm/cli#4903); an option holding
// . : / \ or +, which it may split in two (`-exec.x` reaches the program as `-exec` `.x`,
// PowerShell#6291); a leading `.`, which runs the next word; and `\\` or `//`, a network path
// that would send the user's credentials to its server.
func plainPowerShell(line string) ([]string, bool) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(" \t-_./\\:=+", c) >= 0) {
			return nil, false
		}
	}
	words := strings.Fields(line)
	for i, w := range words {
		switch {
		case i == 0 && w == ".", w == "--",
			w[0] == '-' && strings.ContainsAny(w, `.:/\+`),
			strings.HasPrefix(w, `\\`) || strings.HasPrefix(w, `//`):
			return nil, false
		}
	}
	return words, true
}
