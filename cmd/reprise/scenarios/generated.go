package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// Generated is a session shape drawn from seed, for the tests that hold the policy on sessions it
// was not tuned on: a Go module of 3 to 8 packages whose files range from 300 bytes to 12 KB, a
// build log of 10 to 60 KB, and 20 to 150 model calls over 1 to 3 user turns. Each call is drawn:
// a file read for the first time, a file read again (after an edit, or just again), a search, a
// listing, an edit followed by the package's tests, or a look at the build log. What the tools
// return is real: they run on the workspace.
func Generated(seed uint64) Scenario {
	g := newShape(seed)
	return Scenario{
		Name:      fmt.Sprintf("generated-%d", seed),
		About:     fmt.Sprintf("%d calls over %d turns, %d files", g.calls, len(g.asks), len(g.files)),
		Task:      g.asks[0],
		FollowUps: g.asks[1:],
		Workspace: func(dir string) error { return writeFiles(dir, g.files) },
		Script:    g.script,
	}
}

// shape is a generated session: its workspace, its user turns and, drawn once, its calls.
type shape struct {
	seed  uint64
	files map[string]string
	pkgs  []string
	srcs  []string          // the source files, in order
	funcs map[string]string // a source file's seed, for funcName
	asks  []string
	calls int
	turns [][]geminitest.Turn // the model's side, by user turn
}

func newShape(seed uint64) *shape {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	g := &shape{seed: seed, files: map[string]string{"go.mod": "module example.com/gen\n\ngo 1.22\n"}, funcs: map[string]string{}}
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	g.pkgs = names[:3+r.IntN(6)]
	for i, pkg := range g.pkgs {
		g.files[pkg+"/types.go"] = fmt.Sprintf("package %s\n\n// Record is one line of the ledger.\ntype Record struct{ Qty, Base int }\n", pkg)
		for j := range 1 + r.IntN(4) {
			// Sizes spread over a factor of 40, as a real tree's do: log-uniform.
			size := int(300 * math.Exp(r.Float64()*math.Log(40)))
			fseed := fmt.Sprintf("g%dp%df%d", seed, i, j)
			name := fmt.Sprintf("%s/f%d.go", pkg, j)
			g.files[name] = goSource(pkg, fseed, size)
			g.srcs = append(g.srcs, name)
			g.funcs[name] = fseed
		}
	}
	var log strings.Builder
	for i := 0; log.Len() < 10_000+r.IntN(50_000); i++ {
		fmt.Fprintf(&log, "2026-12-07T09:%02d:%02dZ step %d: built example.com/gen/%s in %d ms, %d objects\n", i/60%60, i%60, i, g.pkgs[i%len(g.pkgs)], 100+i*13%400, i%17)
	}
	g.files["build.log"] = log.String()
	g.calls = 20 + r.IntN(131)
	n := 1 + r.IntN(3)
	for t := range n {
		g.asks = append(g.asks, fmt.Sprintf("Part %d of %d: go through the ledger packages, fix the error wording where needed, and keep the tests passing.", t+1, n))
	}
	g.draw(r)
	return g
}

// draw deals the calls to the turns and draws each.
func (g *shape) draw(r *rand.Rand) {
	read := map[string]bool{}
	edited := map[string]int{} // how many functions of a file were edited
	left := g.calls
	g.turns = make([][]geminitest.Turn, len(g.asks))
	for t := range g.asks {
		share := left / (len(g.asks) - t)
		if t < len(g.asks)-1 {
			share = max(2, share+r.IntN(share/2+1)-share/4)
		}
		left -= share
		var turns []geminitest.Turn
		for len(turns) < share-1 {
			turns = append(turns, g.step(r, read, edited, share-1-len(turns))...)
		}
		turns = append(turns, answer(fmt.Sprintf("Done with part %d.", t+1)))
		g.turns[t] = turns
	}
}

// step draws one action: one call, or two for an edit and its test when room is left.
func (g *shape) step(r *rand.Rand, read map[string]bool, edited map[string]int, room int) []geminitest.Turn {
	readFile := func(path string) geminitest.Turn {
		read[path] = true
		return call("", "read_file", map[string]any{"path": path})
	}
	unread := slices.DeleteFunc(slices.Clone(g.srcs), func(s string) bool { return read[s] })
	var seen []string
	for _, s := range g.srcs {
		if read[s] {
			seen = append(seen, s)
		}
	}
	switch x := r.Float64(); {
	case x < 0.30 && len(unread) > 0:
		return []geminitest.Turn{readFile(unread[r.IntN(len(unread))])}
	case x < 0.45 && len(seen) > 0:
		return []geminitest.Turn{readFile(seen[r.IntN(len(seen))])}
	case x < 0.55:
		return []geminitest.Turn{call("", "search", map[string]any{"pattern": fmt.Sprintf(`\w*%d\(`, r.IntN(20))})}
	case x < 0.60:
		return []geminitest.Turn{call("", "list_files", map[string]any{"path": g.pkgs[r.IntN(len(g.pkgs))]})}
	case x < 0.88 && len(seen) > 0 && room >= 2:
		path := seen[r.IntN(len(seen))]
		i := edited[path]
		if !strings.Contains(g.files[path], fmt.Sprintf("negative quantity in %s\")", funcName(g.funcs[path], i))) {
			return []geminitest.Turn{readFile(path)}
		}
		edited[path]++
		pkg := path[:strings.IndexByte(path, '/')]
		name := funcName(g.funcs[path], i)
		return []geminitest.Turn{
			call("", "edit_file", map[string]any{"path": path, "old": fmt.Sprintf("negative quantity in %s\")", name), "new": fmt.Sprintf("quantity below zero in %s\")", name)}),
			call("", "run_command", map[string]any{"command": "go vet ./" + pkg + "/"}),
		}
	default:
		return []geminitest.Turn{readFile("build.log")}
	}
}

// script is the model's side: every turn's calls and answer, then summaries wherever asked.
func (g *shape) script() geminitest.Script {
	var turns []geminitest.Turn
	for _, t := range g.turns {
		turns = append(turns, t...)
	}
	return withSummaries(turns, "**Objective:**\nFix the ledger's error wording, keep the tests passing.\n"+
		"**Files read and what mattered:**\nthe packages' sources.\n**Modifications made:**\nsome messages reworded.\n"+
		"**Last tests:**\n`go vet` of the last package: ok\n**Hypotheses ruled out:**\nnone\n**Remaining work:**\nthe rest of the packages.")
}
