package tools

import (
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/sandbox"
)

// The version-control directories (sandbox.VCSDirs) hold a repository's metadata. Writing there is
// running code later: `.git/config` sets core.fsmonitor, core.pager or aliases that git runs on
// the user's next `git status`, and `.git/hooks/*` run on commit. The model edits the work tree,
// never these.

// vcsRefusal refuses a write_file or edit_file whose resolved path has a component equal to a
// version-control directory. p.rel is already cleaned of `..` and free of symlinks (locate
// resolved them), so `a/../.git/config` and a link to .git are caught too. The comparison ignores
// case and the characters HFS+ ignores in names, as git itself does (CVE-2014-9390): on macOS
// `.GIT` and `.g\u200cit` are the same directory; on Windows, so are `.git.`, `GIT~1` and
// `.git::$INDEX_ALLOCATION` (see fsName).
func vcsRefusal(p *place, given string) (Result, bool) {
	if p.spill {
		return Result{}, false
	}
	for _, part := range strings.Split(filepath.ToSlash(p.rel), "/") {
		if isVCSDir(part) {
			r := failure("refused: " + given + " is version-control metadata")
			r.Refused, r.Path = true, p.key
			return r, true
		}
	}
	return Result{}, false
}

func isVCSDir(name string) bool {
	name = foldName(name)
	for _, d := range sandbox.VCSDirs {
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

// foldName is a name as the file system may compare it, but for case: without the characters
// HFS+ ignores, and on Windows without what fsName drops.
func foldName(name string) string {
	return fsName(strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, name))
}

// hfsIgnored are the code points HFS+ drops when comparing names.
func hfsIgnored(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
