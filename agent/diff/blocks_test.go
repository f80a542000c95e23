package diff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomText draws n lines from a small alphabet, so that generated pairs share lines.
func randomText(r *rand.Rand, n int) string {
	words := []string{"a\n", "b\n", "c\n", "func f() {\n", "}\n", "\n", "return x\n"}
	var sb strings.Builder
	for range n {
		sb.WriteString(words[r.IntN(len(words))])
	}
	if r.IntN(4) == 0 {
		sb.WriteString("no newline")
	}
	return sb.String()
}

func TestBlocksRevertOnGeneratedPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 35))
	for n := range 500 {
		a, b := randomText(r, r.IntN(30)), randomText(r, r.IntN(30))
		ops := Lines(Split(a), Split(b))
		blocks := Blocks(ops)
		if got := Revert(ops, blocks, func(int) bool { return false }); got != b {
			t.Fatalf("%d: nothing undone gives %q, want the new side %q", n, got, b)
		}
		if got := Revert(ops, blocks, func(int) bool { return true }); got != a {
			t.Fatalf("%d: everything undone gives %q, want the old side %q", n, got, a)
		}
		for k := range blocks {
			mid := Revert(ops, blocks, func(i int) bool { return i == k })
			rest := Blocks(Lines(Split(a), Split(mid)))
			if len(rest) >= len(blocks) {
				t.Fatalf("%d: undoing block %d of %d leaves %d", n, k, len(blocks), len(rest))
			}
		}
		// The header numbers match the unified diff's when each block is its own hunk.
		for _, bl := range blocks {
			old, added := bl.Lines(ops, true), bl.Lines(ops, false)
			if len(old) != bl.OldLines || len(added) != bl.NewLines || bl.OldLines+bl.NewLines == 0 {
				t.Fatalf("%d: block %+v holds %d removed and %d added lines", n, bl, len(old), len(added))
			}
			if bl.OldLines > 0 && Split(a)[bl.OldStart-1] != old[0] {
				t.Fatalf("%d: block %+v does not start at its old line", n, bl)
			}
			if bl.NewLines > 0 && Split(b)[bl.NewStart-1] != added[0] {
				t.Fatalf("%d: block %+v does not start at its new line", n, bl)
			}
		}
	}
}

func TestBlocksNumbersAsUnified(t *testing.T) {
	ops := Lines(Split("a\nb\nc\nd\n"), Split("a\nB\nc\nd\ne\n"))
	got := Blocks(ops)
	want := []Block{{From: 1, To: 3, OldStart: 2, OldLines: 1, NewStart: 2, NewLines: 1}, {From: 5, To: 6, OldStart: 4, OldLines: 0, NewStart: 5, NewLines: 1}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("blocks %+v, want %+v", got, want)
	}
}
