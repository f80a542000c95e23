package diff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnified(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"same", "a\nb\n", "a\nb\n", ""},
		{"one line", "a\nb\nc\n", "a\nB\nc\n", "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"created", "", "a\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n"},
		{"no newline", "a\n", "a", "--- x\n+++ y\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "0\n2\n3\n4\n5\n6\n7\n8\n9\n11\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+0\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+11\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Unified("x", "y", Lines(Split(tc.a), Split(tc.b)), 3)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Unified (-want +got):\n%s", d)
			}
		})
	}
}

// TestAgainstDiffU compares random edits with diff -u: the counts must match (both scripts are
// shortest), and patch must turn the old file into the new one with our output.
func TestAgainstDiffU(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("diff is not installed")
	}
	_, perr := exec.LookPath("patch")
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for i := range 200 {
		a := randomLines(rng, rng.IntN(30))
		b := mutate(rng, a)
		ops := Lines(a, b)
		if got := apply(ops); got != strings.Join(b, "") {
			t.Fatalf("case %d: the script does not rebuild b", i)
		}
		pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		write(t, pa, strings.Join(a, ""))
		write(t, pb, strings.Join(b, ""))
		out, err := exec.Command("diff", "-u", pa, pb).Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("diff: %v", err)
		}
		wantAdd, wantDel := countUnified(string(out))
		gotAdd, gotDel := Count(ops)
		if gotAdd != wantAdd || gotDel != wantDel {
			t.Fatalf("case %d: +%d -%d, diff -u says +%d -%d\n%s", i, gotAdd, gotDel, wantAdd, wantDel, out)
		}
		u := Unified("a", "b", ops, 3)
		if perr != nil || u == "" {
			continue
		}
		cmd := exec.Command("patch", "-s", "-o", "-", pa)
		cmd.Stdin = strings.NewReader(u)
		patched, err := cmd.Output()
		if err != nil {
			t.Fatalf("case %d: patch: %v\n%s", i, err, u)
		}
		if string(patched) != strings.Join(b, "") {
			t.Fatalf("case %d: patch with our diff gives\n%q\nwant\n%q\n%s", i, patched, strings.Join(b, ""), u)
		}
	}
}

func TestBoundedFallback(t *testing.T) {
	var a, b []string
	for i := range 3 * MaxEdits {
		a = append(a, fmt.Sprintf("a%d\n", i))
		b = append(b, fmt.Sprintf("b%d\n", i))
	}
	ops := Lines(a, b)
	if add, del := Count(ops); add != len(b) || del != len(a) {
		t.Errorf("Count = +%d -%d, want +%d -%d", add, del, len(b), len(a))
	}
	if apply(ops) != strings.Join(b, "") {
		t.Error("the fallback script does not rebuild b")
	}
}

func apply(ops []Op) string {
	var sb strings.Builder
	for _, o := range ops {
		if o.Kind != '-' {
			sb.WriteString(o.Line)
		}
	}
	return sb.String()
}

func countUnified(u string) (added, removed int) {
	for _, l := range strings.Split(u, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

func randomLines(rng *rand.Rand, n int) []string {
	var out []string
	for range n {
		out = append(out, fmt.Sprintf("l%d\n", rng.IntN(6)))
	}
	return out
}

// mutate deletes, inserts and replaces lines at random, and sometimes drops the final newline.
func mutate(rng *rand.Rand, a []string) []string {
	var b []string
	for _, l := range a {
		switch rng.IntN(6) {
		case 0: // deleted
		case 1:
			b = append(b, fmt.Sprintf("n%d\n", rng.IntN(4)), l)
		case 2:
			b = append(b, fmt.Sprintf("r%d\n", rng.IntN(4)))
		default:
			b = append(b, l)
		}
	}
	if rng.IntN(4) == 0 {
		b = append(b, "tail")
	}
	return b
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
