package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildVersion(t *testing.T) {
	const rev = "008a5ce1f2e3d4c5b6a79881726354453627180f"
	vcs := func(revision, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision}, {Key: "vcs.modified", Value: modified}}
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            build
	}{
		{
			name:    "stamped by scripts/release",
			version: "0.2.0", commit: rev,
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")},
			want: build{Version: "0.2.0", Commit: rev, Go: "go1.26.8", Platform: platform},
		},
		{
			name:    "stamped from a modified checkout",
			version: "0.2.0", commit: rev,
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Settings: vcs(rev, "true")},
			want: build{Version: "0.2.0", Commit: rev, Modified: true, Go: "go1.26.8", Platform: platform},
		},
		{
			name:    "stamped commit other than the checkout's",
			version: "0.2.0", commit: "1111111111111111111111111111111111111111",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Settings: vcs(rev, "true")},
			want: build{Version: "0.2.0", Commit: "1111111111111111111111111111111111111111", Go: "go1.26.8", Platform: platform},
		},
		{
			name: "go install …@v0.2.0",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/reprise-dev/reprise", Version: "v0.2.0"}},
			want: build{Version: "v0.2.0", Go: "go1.26.1", Platform: platform},
		},
		{
			name: "go build in a modified checkout",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20251130171800-008a5ce1f2e3+dirty"}, Settings: vcs(rev, "true")},
			want: build{Version: "v0.0.0-20251130171800-008a5ce1f2e3+dirty", Commit: rev, Modified: true, Go: "go1.26.8", Platform: platform},
		},
		{
			name: "go build without VCS information",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: build{Version: "dev", Go: "go1.26.8", Platform: platform},
		},
		{
			name: "no build info",
			want: build{Version: "dev", Go: runtime.Version(), Platform: platform},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildVersion(tt.version, tt.commit, tt.bi)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("buildVersion (-got +want):\n%s", diff)
			}
		})
	}
}

func TestBuildString(t *testing.T) {
	tests := []struct {
		b    build
		want string
	}{
		{build{Version: "0.2.0", Commit: "008a5ce1f2e3d4c5b6a79881726354453627180f", Go: "go1.26.8", Platform: "linux/amd64"},
			"reprise 0.2.0 (commit 008a5ce1f2e3, go1.26.8, linux/amd64)"},
		{build{Version: "0.2.0", Commit: "008a5ce1f2e3d4c5b6a79881726354453627180f", Modified: true, Go: "go1.26.8", Platform: "darwin/arm64"},
			"reprise 0.2.0 (commit 008a5ce1f2e3, modified, go1.26.8, darwin/arm64)"},
		{build{Version: "v0.2.0", Go: "go1.26.1", Platform: "windows/amd64"},
			"reprise v0.2.0 (go1.26.1, windows/amd64)"},
		{build{Version: "dev", Commit: "abc", Go: "go1.26.8", Platform: "linux/arm64"},
			"reprise dev (commit abc, go1.26.8, linux/arm64)"},
	}
	for _, tt := range tests {
		if got := tt.b.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestVersionStamped builds the binary with the -X flags of scripts/release (not -trimpath, which
// would rebuild every package) and runs `reprise version`.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	bin := filepath.Join(t.TempDir(), "reprise")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.version=9.8.7 -X main.commit="+rev, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("reprise version: %v\n%s", err, out)
	}
	// The stamped commit is not the checkout's: no "modified", whatever the checkout's state.
	want := "reprise 9.8.7 (commit 0123456789ab, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if got := string(out); got != want {
		t.Errorf("reprise version printed %q, want %q", got, want)
	}
}

// TestVersionCommand checks the subcommand's line comes from the build description.
func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-v"} {
		code, out, errOut := runMain(t, []string{arg}, env(nil))
		if want := currentBuild().String() + "\n"; code != 0 || out != want || errOut != "" {
			t.Errorf("reprise %s: exit %d, stdout %q, stderr %q; want 0 and %q", arg, code, out, errOut, want)
		}
		if !strings.HasPrefix(out, "reprise ") {
			t.Errorf("reprise %s printed %q", arg, out)
		}
	}
}
