package ignore

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// The benchmark tree is shared by the benchmarks of one run and removed with it.
	if benchTree.dir != "" {
		os.RemoveAll(benchTree.dir)
	}
	os.Exit(code)
}
