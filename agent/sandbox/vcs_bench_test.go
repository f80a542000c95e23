package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkVCSSnapshot measures the walk done before and after each unasked command, which finds
// repositories at any depth: a workspace of 100 packages with a node_modules of 2,000
// dependencies of 4 directories each (about 10,000 directories).
func BenchmarkVCSSnapshot(b *testing.B) {
	ws := b.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(ws, p), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		mk(fmt.Sprintf("pkg%d/internal", i))
	}
	for i := range 2000 {
		mk(fmt.Sprintf("node_modules/dep%d/lib/sub", i))
		mk(fmt.Sprintf("node_modules/dep%d/dist", i))
	}
	mk(".git/objects")
	mk("node_modules/dep7/.git/hooks")
	sb := &Sandbox{cfg: Config{Workspace: ws}}
	b.ResetTimer()
	for b.Loop() {
		if got := sb.VCSSnapshot(); len(got) != 2 {
			b.Fatalf("found %v", got)
		}
	}
}
