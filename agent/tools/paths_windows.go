package tools

import (
	"regexp"
	"strings"
)

// shortVCS is the 8.3 short name NTFS may give .git, .hg or .svn (GIT~1).
var shortVCS = regexp.MustCompile(`(?i)^(git|hg|svn)~[0-9]+$`)

// fsName is the name Windows opens for a path component: without a stream (`:…`), without the
// trailing dots and spaces Win32 drops, and for a VCS directory's short name, its long name. Git
// for Windows refuses the same spellings of .git (CVE-2019-1352, CVE-2019-1353).
func fsName(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimRight(name, ". ")
	if m := shortVCS.FindStringSubmatch(name); m != nil {
		return "." + strings.ToLower(m[1])
	}
	return name
}
