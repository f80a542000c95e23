package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are stamped by scripts/release (-ldflags "-X main.version=… -X main.commit=…").
// Other builds leave them empty: `go install …@vX` and a build from a checkout still record their
// module version and VCS revision in the build info, which buildVersion reads instead.
var (
	version string
	commit  string
)

// build describes what this binary was built from, for `reprise version` and serverInfo.
type build struct {
	Version  string // "0.2.0" when stamped, "v0.2.0" from go install, "dev" when nothing says
	Commit   string // full revision, "" when unknown (a go install from the module proxy)
	Modified bool   // built from a checkout with uncommitted changes
	Go       string // the toolchain, "go1.26.8"
	Platform string // GOOS/GOARCH
}

// currentBuild is the build of the running binary.
func currentBuild() build {
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(version, commit, bi)
}

// buildVersion prefers the stamped values and falls back to the build info (nil when the binary
// has none). The platform is the one compiled in, so a cross-built binary reports its target.
func buildVersion(stampedVersion, stampedCommit string, bi *debug.BuildInfo) build {
	b := build{Version: stampedVersion, Commit: stampedCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if b.Version == "" {
			b.Version = "dev"
		}
		return b
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if b.Commit == "" {
		b.Commit = revision
	}
	// The checkout's state says something only about the revision it was at.
	b.Modified = modified == "true" && b.Commit == revision
	return b
}

// String is one line, so that an editor's health check can show it as is:
// "reprise 0.2.0 (commit 008a5ce1f2e3, go1.26.8, linux/amd64)".
func (b build) String() string {
	var parts []string
	if b.Commit != "" {
		c := "commit " + b.Commit[:min(12, len(b.Commit))]
		if b.Modified {
			c += ", modified"
		}
		parts = append(parts, c)
	}
	parts = append(parts, b.Go, b.Platform)
	return fmt.Sprintf("reprise %s (%s)", b.Version, strings.Join(parts, ", "))
}
