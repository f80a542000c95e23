// Package diff computes line diffs and renders them in the unified format of diff -u, for showing
// what the agent changed. It is bounded: past a number of edit steps it gives up on minimality (not
// on correctness), so a rewritten large file costs time linear in its size, not quadratic.
package diff

import (
	"fmt"
	"slices"
	"strings"
)

// MaxEdits is the edit distance past which Lines stops searching for the shortest script and
// replaces the rest in one block: the search keeps O(D²) state.
const MaxEdits = 1000

// Op is one line of an edit script.
type Op struct {
	Kind byte // ' ' kept, '-' removed, '+' added
	Line string
}

// Split cuts s into lines, each keeping its "\n"; a last line without one stays without, so that
// "a" and "a\n" differ as they do for diff.
func Split(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Lines returns an edit script turning a into b: the shortest one (Myers' algorithm) when their
// distance is at most MaxEdits, otherwise a correct but longer one.
func Lines(a, b []string) []Op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []Op
	for _, l := range a[:pre] {
		ops = append(ops, Op{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if mid, ok := myers(ma, mb, MaxEdits); ok {
		ops = append(ops, mid...)
	} else {
		for _, l := range ma {
			ops = append(ops, Op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, Op{'+', l})
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, Op{' ', l})
	}
	return ops
}

// myers is the greedy O((N+M)D) algorithm, keeping each step's frontier to walk the path back.
// It reports false when the distance exceeds maxD.
func myers(a, b []string, maxD int) ([]Op, bool) {
	n, m := len(a), len(b)
	limit := n + m
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int // trace[d]: v over diagonals -d-1..d+1 before step d
	for d := 0; d <= limit; d++ {
		if d > maxD {
			return nil, false
		}
		trace = append(trace, slices.Clone(v[off-d-1:off+d+2]))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace), true
			}
		}
	}
	return backtrack(a, b, trace), true // unreachable: d = n+m always ends
}

func backtrack(a, b []string, trace [][]int) []Op {
	var ops []Op
	x, y := len(a), len(b)
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		get := func(k int) int { return vd[k+d+1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			prevK = k + 1
		}
		prevX := get(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			ops = append(ops, Op{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if d > 0 {
			if x == prevX {
				ops = append(ops, Op{'+', b[y-1]})
			} else {
				ops = append(ops, Op{'-', a[x-1]})
			}
		}
		x, y = prevX, prevY
	}
	slices.Reverse(ops)
	return ops
}

// Count returns the lines added and removed by a script.
func Count(ops []Op) (added, removed int) {
	for _, o := range ops {
		switch o.Kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

// Unified renders a script as diff -u does, with context lines of context around each change,
// under the headers "--- from" and "+++ to". It is empty when nothing changed.
func Unified(from, to string, ops []Op, context int) string {
	var sb strings.Builder
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].Kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		// A hunk runs from the first change to the last one followed by more than 2×context kept
		// lines (or by the end).
		start := max(0, i-context)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].Kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*context {
				break
			}
		}
		stop := min(len(ops), end+context)
		if sb.Len() == 0 {
			fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
		}
		hunk(&sb, ops, start, stop)
		i = stop
	}
	return sb.String()
}

// hunk writes ops[start:stop] with its header; line numbers count the ops before start.
func hunk(sb *strings.Builder, ops []Op, start, stop int) {
	oldLine, newLine := 1, 1
	for _, o := range ops[:start] {
		if o.Kind != '+' {
			oldLine++
		}
		if o.Kind != '-' {
			newLine++
		}
	}
	var oldN, newN int
	for _, o := range ops[start:stop] {
		if o.Kind != '+' {
			oldN++
		}
		if o.Kind != '-' {
			newN++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", span(oldLine, oldN), span(newLine, newN))
	for _, o := range ops[start:stop] {
		sb.WriteByte(o.Kind)
		sb.WriteString(o.Line)
		if !strings.HasSuffix(o.Line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// span is diff's range: "l,n", "l" when n is 1, and the line before when n is 0.
func span(l, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", l-1)
	case 1:
		return fmt.Sprint(l)
	}
	return fmt.Sprintf("%d,%d", l, n)
}
