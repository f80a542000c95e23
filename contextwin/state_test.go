package contextwin

import (
	"strings"
	"testing"
)

func TestExtractVerdict(t *testing.T) {
	tests := []struct {
		name, out, want string
	}{
		{"pytest", "collected 6 items\n\ntest_a.py ....F.\n=========== 1 failed, 5 passed in 0.12s ===========\n", "=========== 1 failed, 5 passed in 0.12s ==========="},
		{"pytest -q", "......\n6 passed in 0.03s\n", "6 passed in 0.03s"},
		{"go test ok", "ok  \texample.com/facturation\t0.004s\n", "ok  \texample.com/facturation\t0.004s"},
		{"go test fail", "--- FAIL: TestRemise (0.00s)\n    remises_test.go:12: got 0, want 10\nFAIL\nFAIL\texample.com/facturation\t0.003s\nFAIL\n", "FAIL"},
		{"go test multi", "ok  \ta/b\t0.1s\nFAIL\ta/c\t0.2s\n", "FAIL\ta/c\t0.2s"},
		{"cargo", "running 3 tests\ntest a ... ok\n\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n", "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"},
		{"jest", "PASS src/a.test.js\nTests:       1 failed, 4 passed, 5 total\nSnapshots:   0 total\nTime:        1.2 s\n", "Tests:       1 failed, 4 passed, 5 total"},
		{"node tap", "TAP version 13\n# tests 4\n# suites 0\n# pass 3\n# fail 1\n# cancelled 0\n# duration_ms 40\n", "# pass 3 · # fail 1"},
		{"node spec", "ℹ tests 2\nℹ pass 2\nℹ fail 0\nℹ duration_ms 30\n", "ℹ pass 2 · ℹ fail 0"},
		{"none", "build finished\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ExtractVerdict(tt.out)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("ExtractVerdict() = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestStateRender(t *testing.T) {
	got := State{FilesModified: []string{"facturation/remises.go", "facturation/montants.go"}, LastVerdict: "6 passed"}.Render()
	for _, want := range []string{"State held by the harness", "facturation/remises.go, facturation/montants.go", "Last test verdict: 6 passed"} {
		if !strings.Contains(got, want) {
			t.Errorf("Render() = %q, missing %q", got, want)
		}
	}
	empty := State{}.Render()
	for _, want := range []string{"since the session began: none", "no test run yet"} {
		if !strings.Contains(empty, want) {
			t.Errorf("Render() of empty state = %q, missing %q", empty, want)
		}
	}
}

func TestKilo(t *testing.T) {
	for n, want := range map[int]string{950: "950", 1000: "1k", 10100: "10.1k", 1_234_567: "1.2M"} {
		if got := Kilo(n); got != want {
			t.Errorf("Kilo(%d) = %q, want %q", n, got, want)
		}
	}
}
