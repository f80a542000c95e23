package scenarios

import (
	"fmt"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

// The refactor scenarios are long sessions of another shape than the investigation: files read
// again after they are edited, edit-and-test cycles package by package, and a long build log
// read now and then. One has 6 packages (64 calls), the other 12 (118 calls): one user turn
// each, as a real long task is.

const refactorTask = "Our error messages say \"negative quantity\"; the style guide (STYLE.md) wants \"quantity below zero\". " +
	"Change every package, test each one as you go, keep an eye on the build log, and run the whole suite at the end."

func refactorPackages(n int) []string {
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike"}
	return names[:n]
}

// refactorWorkspace is a Go module of n packages, each with two source files of 3 to 5 KB, a
// type file and a passing test, a style guide, and a build log of about 30 KB.
func refactorWorkspace(n int) func(dir string) error {
	return func(dir string) error {
		files := map[string]string{
			"go.mod":   "module example.com/ledger\n\ngo 1.22\n",
			"STYLE.md": "# Style\n\nError messages say \"quantity below zero\", never \"negative quantity\".\n",
		}
		var log strings.Builder
		for i := 0; log.Len() < 30_000; i++ {
			fmt.Fprintf(&log, "2026-11-30T10:%02d:%02dZ build step %d: compiled example.com/ledger/%s in %d ms, cache miss on %d objects\n",
				i/60%60, i%60, i, refactorPackages(n)[i%n], 120+i*7%300, i%13)
		}
		files["build.log"] = log.String()
		for i, pkg := range refactorPackages(n) {
			files[pkg+"/types.go"] = fmt.Sprintf("package %s\n\n// Record is one line of the ledger.\ntype Record struct{ Qty, Base int }\n", pkg)
			files[pkg+"/a.go"] = goSource(pkg, pkg+"a", 3000+i*311%2000)
			files[pkg+"/b.go"] = goSource(pkg, pkg+"b", 3000+i*577%2000)
			files[pkg+"/"+pkg+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestRefuses(t *testing.T) {\n"+
				"\tif _, err := %s(Record{Qty: -1}); err == nil {\n\t\tt.Fatal(\"a negative quantity must be refused\")\n\t}\n}\n", pkg, funcName(pkg+"a", 0))
		}
		return writeFiles(dir, files)
	}
}

// funcName is the name goSource gives the i-th function of seed.
func funcName(seed string, i int) string {
	return fmt.Sprintf("%s%s%d", strings.ToUpper(seed[:1]), seed[1:], i)
}

func refactorScript(n int) func() geminitest.Script {
	return func() geminitest.Script {
		read := func(path string) geminitest.Turn { return call("", "read_file", map[string]any{"path": path}) }
		run := func(cmd string) geminitest.Turn { return call("", "run_command", map[string]any{"command": cmd}) }
		edit := func(path, seed string) geminitest.Turn {
			name := funcName(seed, 0)
			return call("", "edit_file", map[string]any{"path": path,
				"old": fmt.Sprintf("negative quantity in %s\")", name), "new": fmt.Sprintf("quantity below zero in %s\")", name)})
		}
		turns := []geminitest.Turn{call("Layout first.", "list_files", map[string]any{}), read("STYLE.md")}
		for i, pkg := range refactorPackages(n) {
			turns = append(turns,
				read(pkg+"/a.go"), read(pkg+"/b.go"), read(pkg+"/types.go"),
				edit(pkg+"/a.go", pkg+"a"), run("go test ./"+pkg+"/..."),
				read(pkg+"/a.go"), // read again after the edit
				edit(pkg+"/b.go", pkg+"b"), run("go test ./"+pkg+"/..."),
			)
			if i%2 == 1 {
				turns = append(turns, read("build.log"), call("", "search", map[string]any{"pattern": "negative quantity in", "path": pkg}))
			}
		}
		turns = append(turns, run("go vet ./..."), run("go test ./..."),
			answer(fmt.Sprintf("The first function of each file in the %d packages now says \"quantity below zero\"; every package's tests pass, and so does the whole suite.", n)))
		return withSummaries(turns, fmt.Sprintf("**Objective:**\nReword the \"negative quantity\" error messages to \"quantity below zero\" (STYLE.md) in every one of the %d packages, testing each.\n"+
			"**Files read and what mattered:**\n- `STYLE.md`: the wording.\n- each package's `a.go` and `b.go`: the first function's message.\n"+
			"**Modifications made:**\nthe packages done so far, `a.go` and `b.go`\n**Last tests:**\n`go test` of the last package: ok\n"+
			"**Hypotheses ruled out:**\nnone\n**Remaining work:**\nthe packages not yet done, in order, then `go vet ./...` and `go test ./...`.", n))
	}
}
