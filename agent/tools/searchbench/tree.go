// Package searchbench builds the trees search is measured on and runs ripgrep beside it, for
// the benchmarks of agent/tools and reprise bench.
package searchbench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Patterns are the three kinds of search the issue of repository scale names: a literal, a
// case-insensitive literal and a regexp.
var Patterns = []struct{ Name, Pattern string }{
	{"literal", "deadline exceeded"},
	{"case-insensitive", "(?i)deadline exceeded"},
	{"regexp", `func \w+Handler\(`},
}

// Files is the size of the generated tree: half of it under ignored directories.
const Files = 100_000

// treeVersion changes when Generate would write a different tree, so a cached one is rebuilt.
const treeVersion = "v1"

// Generated returns a tree of Files files under dir (reused when it is there already, complete):
// directories of 100 files of Go-like text, about 1.5 KB each, a .gitignore hiding the build/
// and vendor/ halves, and a few matches of each pattern.
func Generated(dir string) (string, error) { return GeneratedN(dir, Files) }

// GeneratedN is Generated with files files (a multiple of 100).
func GeneratedN(dir string, files int) (string, error) {
	root := filepath.Join(dir, fmt.Sprintf("reprise-search-tree-%s-%d", treeVersion, files))
	done := filepath.Join(root, ".complete")
	if _, err := os.Stat(done); err == nil {
		return root, nil
	}
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(7, 11))
	words := strings.Fields("ctx err return if nil func value name config request response client server " +
		"handler timeout deadline retry buffer index count result error string int bool map slice")
	var b bytes.Buffer
	for d := range files / 100 {
		top := "src"
		if d%2 == 1 {
			top = []string{"build", "vendor"}[d/2%2]
		}
		sub := filepath.Join(root, top, fmt.Sprintf("pkg%03d", d/10), fmt.Sprintf("mod%d", d%10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return "", err
		}
		for f := range 100 {
			b.Reset()
			fmt.Fprintf(&b, "package mod%d\n\n", d%10)
			for l := range 40 {
				switch {
				case (d*100+f)%997 == 0 && l == 20:
					b.WriteString("\treturn errors.New(\"context deadline exceeded\")\n")
				case (d*100+f)%1499 == 0 && l == 21:
					b.WriteString("// Deadline Exceeded is reported as such.\n")
				case (d*100+f)%1201 == 0 && l == 22:
					fmt.Fprintf(&b, "func foo%dHandler(w http.ResponseWriter) {}\n", f)
				default:
					b.WriteByte('\t')
					for range 3 + rng.IntN(6) {
						b.WriteString(words[rng.IntN(len(words))])
						b.WriteByte(' ')
					}
					b.WriteByte('\n')
				}
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.go", f)), b.Bytes(), 0o644); err != nil {
				return "", err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/build/\nvendor/\n"), 0o644); err != nil {
		return "", err
	}
	// A repository: ripgrep applies .gitignore only inside one.
	if err := os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755); err != nil {
		return "", err
	}
	return root, os.WriteFile(done, nil, 0o644)
}

// GoSource is the source tree of the Go on PATH, the other tree measured; "" without Go.
func GoSource() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

// Ripgrep runs rg as the search tool would need it (line numbers, no colour, no heading) and
// returns how many lines it printed; ok is false when rg is not installed.
func Ripgrep(ctx context.Context, dir, pattern string) (lines int, ok bool, err error) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		return 0, false, nil
	}
	cmd := exec.CommandContext(ctx, rg, "--line-number", "--no-heading", "--color=never", "--no-messages", "--", pattern, ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if ee, isExit := err.(*exec.ExitError); isExit && ee.ExitCode() == 1 {
		err = nil // no match
	}
	return bytes.Count(out, []byte{'\n'}), true, err
}
