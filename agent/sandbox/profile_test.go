package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeatbeltProfile(t *testing.T) {
	sp := spec{Confine: true, Workspace: "/nonexistent/ws \"q\"", Writable: []string{"/nonexistent/tmp"},
		ReadOnly: []string{"/nonexistent/ws \"q\"/.git"}, Hide: []string{"/nonexistent/home/.ssh"},
		Home: "/nonexistent/home", Keep: []string{"/nonexistent/home/go"}}
	want := `(version 1)
(allow default)
(deny file-write*)
(allow file-write*
  (subpath "/nonexistent/ws \"q\"")
  (subpath "/nonexistent/tmp")
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/full")
  (literal "/dev/random")
  (literal "/dev/urandom"))
(deny file-read-data (subpath "/nonexistent/home"))
(allow file-read-data
  (subpath "/nonexistent/ws \"q\"")
  (subpath "/nonexistent/tmp")
  (subpath "/nonexistent/home/go"))
(deny file-write* (subpath "/nonexistent/ws \"q\"/.git"))
(deny file-read* file-write* (subpath "/nonexistent/home/.ssh"))
(deny network-outbound (remote ip))
(deny network-bind (local ip))
(deny network-outbound (remote unix-socket))
(allow network-outbound (remote unix-socket
  (subpath "/nonexistent/ws \"q\"")
  (subpath "/nonexistent/tmp")))
`
	if diff := cmp.Diff(seatbeltProfile(sp), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	sp.Network = true
	if got := seatbeltProfile(sp); cmp.Diff(got, want) == "" || len(got) >= len(want) {
		t.Errorf("the network rules stay with the network allowed:\n%s", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": WorkspaceWrite, "workspace-write": WorkspaceWrite, "off": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("read-only"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
