package scenarios

import (
	"fmt"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
)

const testsTask = "TestLimit fails. Fix Limit in tiers/tiers.go so that every tier's ceiling follows RULES.md, running the tests as you go."

// testsWorkspace is a Go module whose test fails 8 cases per bug, with a long message each, so
// that a run's output is about 3,500 characters at first and shrinks as the bugs are fixed.
func testsWorkspace(dir string) error {
	var src strings.Builder
	src.WriteString("// Limit is the ceiling of tier i: three times its index (RULES.md).\nfunc Limit(i int) int {\n\tswitch {\n\tcase i < 8:\n\t\treturn i * 3\n")
	for b := 1; b <= 4; b++ {
		fmt.Fprintf(&src, "\tcase i < %d:\n\t\treturn i*3 + %d // tier group %d\n", 8*(b+1), b, b)
	}
	src.WriteString("\t}\n\treturn i * 3\n}\n\n")
	files := map[string]string{
		"go.mod":         "module example.com/tiers\n\ngo 1.22\n",
		"RULES.md":       "# Tier rules\n\nThe ceiling of tier i is exactly 3 × i, for every tier from 0 to 39. There is no bonus for any tier group.\n",
		"tiers/tiers.go": goFile("tiers", "tier", src.String(), 3000),
		"tiers/types.go": "package tiers\n\n// Record is one line of the ledger.\ntype Record struct{ Qty, Base int }\n",
		"tiers/tiers_test.go": "package tiers\n\nimport \"testing\"\n\nfunc TestLimit(t *testing.T) {\n\tfor i := range 40 {\n\t\tif got := Limit(i); got != i*3 {\n" +
			"\t\t\tt.Errorf(\"Limit(%d) = %d, want %d: the ceiling of tier %d must be three times its index, with no bonus for its group (RULES.md)\", i, got, i*3, i)\n\t\t}\n\t}\n}\n",
	}
	return writeFiles(dir, files)
}

func testsScript() geminitest.Script {
	fix := func(b int) geminitest.Turn {
		return call(fmt.Sprintf("Tier group %d adds a bonus the rules do not have.", b), "edit_file", map[string]any{
			"path": "tiers/tiers.go", "old": fmt.Sprintf("return i*3 + %d // tier group %d", b, b), "new": "return i * 3",
		})
	}
	test := func(cmd string) geminitest.Turn { return call("", "run_command", map[string]any{"command": cmd}) }
	read := func(path string) geminitest.Turn { return call("", "read_file", map[string]any{"path": path}) }
	turns := []geminitest.Turn{
		call("Layout first.", "list_files", map[string]any{}),
		read("RULES.md"), read("tiers/tiers.go"), read("tiers/tiers_test.go"),
		test("go test ./..."),
		fix(1), test("go test ./..."),
		read("tiers/tiers.go"),
		fix(2), test("go test ./..."),
		fix(3), test("go test ./..."),
		test("go test -v ./..."),
		read("tiers/tiers.go"),
		fix(4), test("go test ./..."),
		test("go vet ./..."),
		test("go test -count=1 ./..."),
		answer("`Limit` added a bonus of 1 to 4 for tier groups 1 to 4, which RULES.md does not have; every tier now returns `i * 3` and `go test ./...` passes."),
	}
	return withSummaries(turns, "**Objective:**\nFix `Limit` in `tiers/tiers.go` so that every ceiling is 3 × i (RULES.md) and `go test ./...` passes.\n"+
		"**Files read and what mattered:**\n- `RULES.md`: ceiling of tier i is exactly 3 × i, no group bonus.\n- `tiers/tiers.go`: `Limit` adds `+ b` for tier group b (1–4).\n- `tiers/tiers_test.go`: `TestLimit` checks tiers 0–39.\n"+
		"**Modifications made:**\nsome tier-group bonuses removed in `tiers/tiers.go`\n**Last tests:**\n`go test ./...`: FAIL (TestLimit, the remaining groups)\n"+
		"**Hypotheses ruled out:**\nnone\n**Remaining work:**\nremove the remaining group bonuses, rerun `go test ./...` until it passes.")
}
