package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
)

// errHelp marks a command that printed its usage because it was asked to: exit code 0.
var errHelp = errors.New("help")

// parseFlags parses a command's flags. Asked for with -h or --help, the usage goes to stdout and
// the error is errHelp; a mistake is one line on stderr, and where the help is, as gh and kubectl
// say it (not the whole usage), and the error is errUsage. The flag package writes to one output
// as it parses, so it writes to a buffer sent on after.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = buf.WriteTo(stdout)
		return errHelp
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\nSee '%s --help'.\n", fs.Name(), flagMistake(err), fs.Name())
		return errUsage
	}
	return nil
}

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	singleDash    = regexp.MustCompile(`(^|[ :])-([A-Za-z][\w-]*)`)
)

// flagMistake words the flag package's error with the flags as the help writes them (--name).
func flagMistake(err error) string {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		return "unknown flag --" + m[1]
	}
	return singleDash.ReplaceAllString(msg, "$1--$2")
}

// withUsage gives fs a usage that starts with line, then lists the flags.
func withUsage(fs *flag.FlagSet, line string) *flag.FlagSet {
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), line)
		printFlags(fs)
	}
	return fs
}

// printFlags lists fs's flags as the README and the messages write them, --name (the flag package
// accepts both, and prints -name).
func printFlags(fs *flag.FlagSet) {
	var buf bytes.Buffer
	out := fs.Output()
	fs.SetOutput(&buf)
	fs.PrintDefaults()
	fs.SetOutput(out)
	_, _ = io.WriteString(out, flagLine.ReplaceAllString(buf.String(), "$1--"))
}

var flagLine = regexp.MustCompile(`(?m)^(  )-`)

// askedHelp reports whether args, up to a "--", hold -h, -help or --help.
func askedHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// demoHelp prints demo's usage to stdout: its flags are parsed where -h is a mistake, so its
// usage is asked for alone and its error output taken as the help.
func demoHelp(ctx context.Context, stdout io.Writer, getenv func(string) string) error {
	var buf bytes.Buffer
	err := demoCmd(ctx, []string{"-h"}, &buf, &buf, getenv)
	if err != nil && !errors.Is(err, errHelp) {
		return err
	}
	_, err = buf.WriteTo(stdout)
	return err
}

const benchUsage = `Usage: reprise bench

Measures, on this machine, the editor backend's start-up and memory at rest, run_command's output
throughput, the costs of accounting and compaction, and the demo's billed input with and without
compaction, and prints them as one table. It takes a few minutes and no flags.
`

// benchMain runs the benchmark unless it was asked for its usage.
func benchMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reprise bench", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), benchUsage) }
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reprise bench: unexpected argument %q\n\n%s", fs.Arg(0), benchUsage)
		return errUsage
	}
	return benchCmd(ctx, stdout)
}
