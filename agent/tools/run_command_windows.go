package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// A command line runs in PowerShell, as in Gemini CLI and Copilot on Windows: the model writes
// for it there, and its aliases (ls, cat, rm, pwd) take the usual Unix commands. PowerShell 7
// (pwsh) when it is on PATH: Windows PowerShell 5.1 strips the double quotes inside arguments it
// passes to programs, and has no && or ||. See docs/decisions.md.

// installedPowerShell is the PowerShell run_command uses, found once.
var installedPowerShell = sync.OnceValue(func() windowsShell { return findPowerShell(exec.LookPath, os.Getenv) })

// windowsShell is a PowerShell executable, and whether it is PowerShell 7 or later.
type windowsShell struct {
	path  string
	seven bool
}

// findPowerShell prefers pwsh, then powershell.exe from PATH, then the one every Windows has.
func findPowerShell(lookPath func(string) (string, error), getenv func(string) string) windowsShell {
	if p, err := lookPath("pwsh.exe"); err == nil {
		return windowsShell{path: p, seven: true}
	}
	if p, err := lookPath("powershell.exe"); err == nil {
		return windowsShell{path: p}
	}
	root := getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	return windowsShell{path: filepath.Join(root, `System32\WindowsPowerShell\v1.0\powershell.exe`)}
}

// shellArgv is how run_command runs a command line: no profile (the user's would run first, and
// differ from machine to machine), and nothing waits for input.
func shellArgv(command string) []string {
	return []string{installedPowerShell().path, "-NoProfile", "-NonInteractive", "-Command", command}
}

// shellIntro opens run_command's description: it names the shell the model writes for.
func shellIntro() string {
	if installedPowerShell().seven {
		return "Run a PowerShell 7 command (pwsh -Command)"
	}
	return "Run a Windows PowerShell 5.1 command (powershell -Command; no && or ||, use ;)"
}

// sandboxNote ends the description: Windows has no sandbox.
const sandboxNote = ""
