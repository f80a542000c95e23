package cmdpolicy

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// The destructive forms the policy denies under --yes too, wherever the line runs them (the
// invocation walk: wrappers, busybox, shells, eval, find -exec, xargs). Each is read from argv,
// so quoting and paths do not hide them; none is what a coding task needs, and the few legitimate
// uses (wiping a disk, killing a session) are the user's to run.
//
//   - deleting, or changing the mode or owner of, /, a top-level directory or home, recursively
//     (rm, chmod, chown, chgrp, find -delete or find -exec rm from there);
//   - writing to a block device (or /dev/mem and its kind): a redirection opened for writing
//     (`>`, `>>`, `>|`, `&>`, `<>`), tee, the destination of cp, mv, install or rsync, dd's of=,
//     an output option's value, or an operand of a program that writes a device whatever it is
//     given (shred, blkdiscard, mkswap…);
//   - signalling every process (`kill -9 -1`, `kill -KILL -1`, `kill -- -1`, killall5), or every
//     process of a user (`pkill -u USER` or `killall -u USER` with no name, or a name that
//     matches all);
//   - a download piped into an interpreter that reads its program from stdin (`curl … | sh`,
//     `| python3`, `| node`, through tee or gunzip too), or run from a substitution
//     (`bash <(curl …)`, `sh -c "$(curl …)"`). Data piped into a program given elsewhere
//     (`curl … | python3 -m json.tool`, `| python3 -c '…'`, `| jq`) is not code and runs.

// destructive names the destructive form argv is, or "".
func destructive(argv []word) string {
	if len(argv) == 0 || argv[0].dyn {
		return ""
	}
	args := texts(argv[1:])
	switch name := program(argv[0].s); name {
	case "rm":
		if rmRoot(texts(argv)) {
			return "deletes /, a top-level directory or home"
		}
	case "chmod", "chown", "chgrp":
		if modeRoot(args) {
			return "changes the mode or owner of /, a top-level directory or home, recursively"
		}
	case "find":
		if r := findRoot(argv[1:]); r != "" {
			return r
		}
	case "kill":
		if killsAll(args) {
			return "signals every process (pid -1)"
		}
	case "killall5":
		return "signals every process"
	case "pkill", "killall":
		if killsUser(name, args) {
			return "kills every process of a user"
		}
	}
	if dev := deviceWritten(argv); dev != "" {
		return "writes to a block device (" + dev + ")"
	}
	return ""
}

// blockDevice matches the devices whose writing destroys data: disks and their partitions,
// device-mapper and RAID volumes, loop and network block devices, their /dev/disk and /dev/block
// links, and the memory devices.
var blockDevicePath = regexp.MustCompile(`^/dev/(sd|hd|vd|xvd|nvme|mmcblk|dm-|md|loop|nbd|rbd|zd|bcache|mapper/|disk/|block/|root$|mem$|kmem$|port$)`)

// isBlockDevice reports whether the word names such a device ("/dev/../dev/sda" too).
func isBlockDevice(s string) bool {
	return strings.HasPrefix(s, "/") && blockDevicePath.MatchString(path.Clean(s))
}

// deviceWriters write to every operand they are given.
var deviceWriters = map[string]bool{
	"tee": true, "shred": true, "wipe": true, "blkdiscard": true, "mkswap": true, "truncate": true,
	"fallocate": true, "sgdisk": true, "sfdisk": true, "gdisk": true, "cfdisk": true, "hdparm": true,
	"badblocks": true,
}

// copiers write their last operand (or -t's value).
var copiers = map[string]bool{"cp": true, "mv": true, "install": true, "rsync": true}

// deviceWritten returns the block device argv writes to, or "".
func deviceWritten(argv []word) string {
	name := program(argv[0].s)
	args := argv[1:]
	var operands []string
	for i, w := range args {
		s := w.s
		switch {
		case strings.HasPrefix(s, "of=") && isBlockDevice(s[3:]): // dd
			return s[3:]
		case strings.HasPrefix(s, "--output=") && isBlockDevice(s[len("--output="):]):
			return s[len("--output="):]
		case strings.HasPrefix(s, "--target-directory=") && isBlockDevice(s[len("--target-directory="):]):
			return s[len("--target-directory="):]
		case (s == "-o" || s == "-O" || s == "--output" || s == "--output-document" || s == "-t" && copiers[name]) &&
			i+1 < len(args) && isBlockDevice(args[i+1].s):
			return args[i+1].s
		case !strings.HasPrefix(s, "-") || s == "-":
			operands = append(operands, s)
		}
	}
	switch {
	case deviceWriters[name]:
		for _, s := range operands {
			if isBlockDevice(s) {
				return s
			}
		}
	case copiers[name] && len(operands) >= 2 && isBlockDevice(operands[len(operands)-1]):
		return operands[len(operands)-1]
	}
	return ""
}

// rootish reports whether a path operand is /, a top-level directory or home (or all in it: `/*`,
// `~/*`), however spelt (`//`, `/usr/..`, `$HOME/`).
func rootish(s string) bool {
	home := strings.TrimSuffix(strings.TrimSuffix(s, "*"), "/")
	switch home {
	case "~", "$HOME", "${HOME}":
		return true
	}
	if topLevelDir.MatchString(s) {
		return true
	}
	return strings.HasPrefix(s, "/") && topLevelDir.MatchString(path.Clean(strings.TrimSuffix(s, "*")))
}

// recursiveFlag reports whether a chmod/chown/chgrp argument asks for recursion.
func recursiveFlag(s string) bool {
	return s == "--recursive" || len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s, "R")
}

// modeRoot recognises `chmod -R MODE /`, `chown -R OWNER ~`, and any of them on / itself.
func modeRoot(args []string) bool {
	recursive := slices.ContainsFunc(args, recursiveFlag)
	for _, s := range args {
		if strings.HasPrefix(s, "-") {
			continue
		}
		if recursive && rootish(s) || path.Clean(s) == "/" && strings.HasPrefix(s, "/") {
			return true
		}
	}
	return false
}

// findRoot recognises a find from /, a top-level directory or home that deletes, or runs rm,
// shred, unlink, truncate, chmod, chown or chgrp on what it finds.
func findRoot(args []word) string {
	fromRoot := false
	for _, w := range args {
		if strings.HasPrefix(w.s, "-") || w.s == "!" || w.s == "(" {
			break // the expression begins
		}
		fromRoot = fromRoot || rootish(w.s)
	}
	if !fromRoot {
		return ""
	}
	if slices.ContainsFunc(args, func(w word) bool { return w.s == "-delete" }) {
		return "deletes files under /, a top-level directory or home (find -delete)"
	}
	for _, c := range findCommands(args) {
		switch program(c[0].s) {
		case "rm", "shred", "unlink", "truncate", "chmod", "chown", "chgrp":
			return fmt.Sprintf("runs %s on every file under /, a top-level directory or home", program(c[0].s))
		}
	}
	return ""
}

// killsAll recognises kill's pid -1 (every process the user may signal): `kill -9 -1`,
// `kill -s KILL -1`, `kill -- -1`, and a lone `kill -1`, which some kills read as the pid.
func killsAll(args []string) bool {
	i := 0
	if i < len(args) {
		switch s := args[i]; {
		case s == "-l" || s == "-L" || s == "--list" || s == "--table":
			return false
		case s == "-s" || s == "-n" || s == "--signal":
			i += 2
		case len(args) == 1 && s == "-1":
			return true
		case strings.HasPrefix(s, "-") && s != "--":
			i++
		}
	}
	if i < len(args) && args[i] == "--" {
		i++
	}
	for _, s := range args[min(i, len(args)):] {
		if s == "-1" {
			return true
		}
	}
	return false
}

// matchesAll are pkill and killall patterns that match every name.
var matchesAll = map[string]bool{"": true, ".": true, ".*": true, ".+": true, "^": true, "$": true, "^.*$": true, "^.*": true}

// killsUser recognises pkill or killall choosing processes by user alone (`pkill -9 -u $USER`,
// `killall -u me`), or with a pattern that matches all.
func killsUser(name string, args []string) bool {
	// Options that take a value, as the next word or glued.
	withValue := map[string]bool{"-u": true, "-U": true, "-g": true, "-G": true, "-P": true, "-s": true, "-t": true,
		"-F": true, "--signal": true, "--euid": true, "--uid": true, "--pgroup": true, "--group": true, "--parent": true,
		"--session": true, "--terminal": true, "--pidfile": true, "--ns": true, "--nslist": true, "--user": true,
		"-o": true, "-y": true, "--older-than": true, "--younger-than": true, "-n": true, "--context": true, "-Z": true}
	byUser := false
	var patterns []string
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "-u" || s == "-U" || s == "--euid" || s == "--uid" || s == "--user" ||
			strings.HasPrefix(s, "--euid=") || strings.HasPrefix(s, "--uid=") || strings.HasPrefix(s, "--user=") ||
			len(s) > 2 && (strings.HasPrefix(s, "-u") || strings.HasPrefix(s, "-U")) && name == "pkill":
			byUser = true
			if withValue[s] {
				i++
			}
		case withValue[s]:
			i++
		case s == "--":
			patterns = append(patterns, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(s, "-") && s != "-":
		default:
			patterns = append(patterns, s)
		}
	}
	if byUser && len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if matchesAll[p] {
			return true
		}
	}
	return false
}

// downloaders print what they fetch.
var downloaders = map[string]bool{"curl": true, "wget": true, "fetch": true, "http": true, "https": true, "xh": true,
	"xhs": true, "lwp-request": true, "GET": true, "aria2c": true, "nc": true, "ncat": true, "netcat": true, "socat": true}

var (
	pythonName      = regexp.MustCompile(`^(python|pypy)[0-9.]*$`)
	interpreterName = regexp.MustCompile(`^(perl|ruby|php|lua|luajit|node|nodejs|deno|bun|Rscript|osascript|tclsh|wish)[0-9.]*$`)
)

// interpreterFamily names the language of an interpreter program, or "".
func interpreterFamily(name string) string {
	switch {
	case shells[name]:
		return "sh"
	case pythonName.MatchString(name):
		return "python"
	case interpreterName.MatchString(name):
		return strings.TrimRight(name, "0123456789.")
	}
	return ""
}

// readsProgramFromStdin reports whether argv is an interpreter that would run its standard input
// as a program: no program given with -c/-e/-m/-r…, no script operand, or `-`/`/dev/stdin`.
func readsProgramFromStdin(argv []word) bool {
	if len(argv) == 0 || argv[0].dyn {
		return false
	}
	family := interpreterFamily(program(argv[0].s))
	if family == "" {
		return false
	}
	args := argv[1:]
	if family == "sh" {
		if _, ok := shellCommand(args); ok {
			return false
		}
	}
	// The options that give the program, per language; a cluster (`-Sc`) counts.
	given := map[string]string{"sh": "c", "python": "cm", "perl": "eE", "ruby": "e", "php": "rfB", "lua": "e",
		"luajit": "e", "node": "ep", "nodejs": "ep", "deno": "", "bun": "e", "Rscript": "e", "osascript": "e"}[family]
	for i := 0; i < len(args); i++ {
		s := args[i].s
		switch {
		case s == "-" || s == "/dev/stdin" || s == "/dev/fd/0":
			return true
		case s == "-s" && family == "sh":
			return true
		case s == "--":
			return i+1 >= len(args) || args[i+1].s == "-"
		case s == "--eval" || s == "--print" || s == "--command" || strings.HasPrefix(s, "--eval="):
			return false
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && s[0] == '-':
			if strings.ContainsAny(s[1:], given) && given != "" {
				return false
			}
			if family == "python" && (s == "-W" || s == "-X") {
				i++
			}
		default:
			return family == "deno" && s != "run" && s != "eval" // a script file, or deno's subcommand
		}
	}
	return true
}

// lineDanger checks what only the structure of line (sh's) shows: a redirection that writes a
// block device, and a download piped into an interpreter.
func lineDanger(line string) string {
	sc := readScript(line)
	cmds, info := sc.cmds, sc.info
	for i, c := range cmds {
		if info[i].writes && c[0].redir && isBlockDevice(c[0].s) {
			return "writes to a block device (" + c[0].s + ")"
		}
	}
	downloaded := map[int]bool{} // pipelines in which a download was written before
	for i, c := range cmds {
		if c[0].redir {
			continue
		}
		p := info[i].pipeline
		for _, inv := range invocations(c) {
			if len(inv.argv) == 0 || inv.argv[0].dyn {
				continue
			}
			if downloaded[p] && readsProgramFromStdin(inv.argv) {
				return "runs a downloaded script"
			}
			if downloaders[program(inv.argv[0].s)] {
				downloaded[p] = true
			}
		}
	}
	return ""
}

// substitutedDownload matches an interpreter running a download given by substitution:
// `bash <(curl …)`, `sh -c "$(curl …)"`, `python3 <(wget -O- …)`, `source <(curl …)`,
// `eval "$(curl …)"`.
var substitutedDownload = regexp.MustCompile(`(\b((ba|z|da|k|mk|fi)?sh|python[0-9.]*|perl|ruby|node|php|source|eval)\b|(^|[;&|(\s])\.\s)[^|;&]*(<\(|\$\(|` + "`" + `)\s*(\S*/)?(curl|wget|fetch)\b`)
