package tools

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/sandbox"
)

// heapSampler records the peak of in-use heap (live objects plus unused span space, as
// MemStats.HeapInuse) while a benchmark runs, reading runtime/metrics, which does not stop the
// world.
type heapSampler struct {
	stop chan struct{}
	peak chan uint64
}

func sampleHeap() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), peak: make(chan uint64, 1)}
	go func() { // ends when done is called
		samples := []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
		}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var peak uint64
		for {
			metrics.Read(samples)
			peak = max(peak, samples[0].Value.Uint64()+samples[1].Value.Uint64())
			select {
			case <-s.stop:
				s.peak <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) done() uint64 {
	close(s.stop)
	return <-s.peak
}

func heapInuse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkRunCommandFlood pushes 1 GiB of text lines through run_command, saved output
// included (its default 64 MiB cap), and reports the peak heap above the starting point.
func BenchmarkRunCommandFlood(b *testing.B) {
	const size = 1 << 30
	env := &Env{
		Workspace: b.TempDir(),
		SpillDir:  filepath.Join(b.TempDir(), "tool-outputs"),
		Commands:  &cmdpolicy.Policy{AllowAll: true},
	}
	call := Call{ID: "bench", Name: "run_command", Args: map[string]any{"command": floodCommand(b, size)}}
	b.SetBytes(size)
	runtime.GC()
	base := heapInuse()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sampler := sampleHeap()
	b.ResetTimer()
	for b.Loop() {
		r := Run(b.Context(), env, call)
		if r.IsError || r.TotalChars != size {
			b.Fatalf("%d chars: %s", r.TotalChars, r.Output[:min(len(r.Output), 300)])
		}
	}
	b.StopTimer()
	peak := sampler.done()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "MiB-peak-heap")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
}

// BenchmarkCapture measures the head/tail writer alone on 256 KiB writes of text.
func BenchmarkCapture(b *testing.B) {
	chunk := bytes.Repeat([]byte("ok  \tgithub.com/x/y\t0.01s — ünïcödé\n"), readBufSize/40)
	c := newCapture(DefaultMaxOutputChars, nil)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		c.Write(chunk)
	}
	if text, _, _ := c.render(); len(text) == 0 {
		b.Fatal("empty render")
	}
}

// BenchmarkRunCommandSandbox measures what the supervisor and the sandbox add to a command that
// does nothing: the price of each re-executed process, paid once per call.
func BenchmarkRunCommandSandbox(b *testing.B) {
	ws, gitWS := b.TempDir(), b.TempDir()
	if err := os.Mkdir(filepath.Join(gitWS, ".git"), 0o755); err != nil { // kept read-only: one more process
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		sb   *sandbox.Sandbox
	}{
		{"workspace-write", sandbox.New(sandbox.Config{Workspace: ws})},
		{"off", sandbox.New(sandbox.Config{Mode: sandbox.Off, Workspace: ws})},
		{"workspace-write-with-.git", sandbox.New(sandbox.Config{Workspace: gitWS})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := &Env{Workspace: bc.sb.Config().Workspace, Commands: &cmdpolicy.Policy{AllowAll: true}, Sandbox: bc.sb}
			before := childCPU()
			for b.Loop() {
				if r := Run(b.Context(), env, Call{Name: "run_command", Args: map[string]any{"command": "true"}}); r.IsError {
					b.Fatal(r.Output)
				}
			}
			// The processes' own CPU time: what wall time measures too, but not the waits for a
			// machine that others load.
			b.ReportMetric(float64(childCPU()-before)/float64(b.N)/1e6, "child-cpu-ms/op")
		})
	}
	b.Run("sh-without-supervisor", func(b *testing.B) { // the floor: what the shell alone costs
		for b.Loop() {
			if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
