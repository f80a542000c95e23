package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/reprise-dev/reprise/agent/sandbox/gocacheprog"
)

// gocacheprogCmd is `reprise gocacheprog --read DIR --write DIR`, the GOCACHEPROG program the
// sandbox gives the go command: the user's build cache read, the workspace's written. It is not a
// command for people, so the help does not list it.
func gocacheprogCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reprise gocacheprog", flag.ContinueOnError)
	fs.SetOutput(stderr)
	read := fs.String("read", "", "the build cache read (the user's)")
	write := fs.String("write", "", "the build cache written (the workspace's)")
	if err := fs.Parse(args); err != nil || *write == "" {
		fmt.Fprintln(stderr, "usage: reprise gocacheprog --read DIR --write DIR (started by the go command in the sandbox)")
		return 2
	}
	c := &gocacheprog.Cache{Read: *read, Write: *write}
	if err := c.Serve(stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "reprise gocacheprog:", err)
		return 1
	}
	return 0
}
