package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/cmdpolicy"
	"github.com/reprise-dev/reprise/agent/tools"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// benchCmd measures what users feel, on this machine, and prints one table: start-up of the
// editor backend, memory at rest, output throughput, accounting and compaction costs, and the
// demo's billed input with and without compaction. The same figures come from go test -bench.
func benchCmd(ctx context.Context, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "measure\tvalue\tnote")
	row := func(name, value, note string) {
		fmt.Fprintf(w, "%s\t%s\t%s\n", name, value, note)
	}

	for _, mode := range []string{"serve", "acp"} {
		spawn, rss, err := benchSpawn(self, mode, 20)
		if err != nil {
			return fmt.Errorf("spawn %s: %w", mode, err)
		}
		row(mode+": spawn → initialize reply", fmt.Sprintf("%.1f ms", spawn.Seconds()*1000), "median of 20 runs of this binary")
		row(mode+": idle RSS", fmt.Sprintf("%.1f MiB", rss), "after initialize")
	}

	gbps, peak, err := benchFlood(ctx)
	if err != nil {
		return fmt.Errorf("run_command flood: %w", err)
	}
	row("run_command: 1 GiB of output", fmt.Sprintf("%.2f GB/s", gbps), fmt.Sprintf("peak extra heap %.2f MiB; the first 64 MiB saved to disk", peak))

	benchLedger(1000) // warm up
	for _, n := range []int{1000, 10000} {
		row(fmt.Sprintf("ledger: append + account, %d messages", n), fmt.Sprintf("%.0f ns/message", benchLedger(n)), "must not grow with the history")
	}
	if d, err := benchCompact(ctx); err != nil {
		row("compaction: plan + render 10,000 messages", "failed", err.Error())
	} else {
		row("compaction: plan + render 10,000 messages", fmt.Sprintf("%.1f ms", d.Seconds()*1000), "summarizer excluded")
	}
	if err := benchSearch(ctx, row, 5); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	switch outside, sandboxed, alone, ok, err := firstGoTest(ctx); {
	case err != nil:
		row("go test, first in a new workspace", "failed", err.Error())
	case !ok:
		row("go test, first in a new workspace", "—", "Go missing or commands not confined here")
	default:
		row("go test, first in a new workspace: sandboxed ÷ outside", fmt.Sprintf("%.2f×", sandboxed.Seconds()/outside.Seconds()),
			fmt.Sprintf("medians of %d: %.2f s against %.2f s with the user's cache warm; without reading it %.2f× (%.1f s)", goBenchPairs,
				sandboxed.Seconds(), outside.Seconds(), alone.Seconds()/outside.Seconds(), alone.Seconds()))
	}

	if err := w.Flush(); err != nil {
		return err
	}
	// What compaction costs, in dollars with the prefix cache, on scripted sessions: the same
	// figures as TestCompactionPaysForItself and BenchmarkCompactionCost.
	model := catalog.Builtin().DefaultModel()
	fmt.Fprintf(stdout, "\nCompaction cost on scripted sessions (fake Gemini billing implicit caching as the API does; %s at its prices of %s, %s-token cache minimum):\n",
		model, timeNow().Format(time.DateOnly), commas(catalog.Builtin().CacheMin(model)))
	if err := costTable(ctx, stdout); err != nil {
		return err
	}
	return delegationTable(ctx, stdout)
}

// initializeRequests are what an editor sends first: LSP's framed initialize (serve), ACP's
// newline-delimited one (acp).
var initializeRequests = map[string]struct {
	args []string
	body string
}{
	"serve": {[]string{"serve", "--stdio"}, framed(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)},
	"acp":   {[]string{"acp"}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"},
}

func framed(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// benchSpawn starts the binary as an editor would (mode "serve" or "acp") and times the
// initialize round trip.
func benchSpawn(bin, mode string, runs int) (time.Duration, float64, error) {
	req := initializeRequests[mode]
	home, err := os.MkdirTemp("", "reprise-bench-home-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(home)
	var times []time.Duration
	var rss float64
	for range runs {
		cmd := exec.Command(bin, req.args...)
		cmd.Env = append(os.Environ(), "REPRISE_HOME="+home)
		cmd.Dir = home
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		if _, err := io.WriteString(in, req.body); err != nil {
			return 0, 0, err
		}
		r := bufio.NewReader(out)
		if _, err := r.ReadString('}'); err != nil {
			return 0, 0, fmt.Errorf("no initialize reply: %w", err)
		}
		times = append(times, time.Since(start))
		rss = procRSS(cmd.Process.Pid)
		in.Close()
		_ = cmd.Wait() // serve exits on end of input without shutdown: status 1, as LSP says
	}
	slices.Sort(times)
	return times[len(times)/2], rss, nil
}

func procRSS(pid int) float64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb float64
			if _, err := fmt.Sscan(v, &kb); err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}

// benchFlood pushes 1 GiB through run_command and samples the heap meanwhile.
func benchFlood(ctx context.Context) (gbps, peakMiB float64, err error) {
	ws, err := os.MkdirTemp("", "reprise-bench-ws-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(ws)
	env := &tools.Env{Workspace: ws, Commands: &cmdpolicy.Policy{AllowAll: true}, SpillDir: filepath.Join(ws, ".out")}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := make(chan struct{})
	peak := make(chan uint64, 1)
	go func() { // samples until stop closes
		var m runtime.MemStats
		var top uint64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapInuse)
			}
		}
	}()
	start := time.Now()
	res := tools.Run(ctx, env, tools.Call{ID: "bench", Name: "run_command", Args: map[string]any{"command": "head -c 1073741824 /dev/zero"}})
	elapsed := time.Since(start)
	close(stop)
	top := <-peak
	if res.IsError || res.ExitCode != 0 {
		return 0, 0, fmt.Errorf("%s", firstLine(res.Output))
	}
	return float64(1<<30) / elapsed.Seconds() / 1e9, float64(max(top, base.HeapInuse)-base.HeapInuse) / (1 << 20), nil
}

func benchHistory(n int) []*genai.Content {
	h := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "task"}}}}
	for i := range n / 2 {
		id := fmt.Sprint(i)
		h = append(h,
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "read_file", Args: map[string]any{"path": "f" + id + ".go"}}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "read_file", Response: map[string]any{"output": strings.Repeat("x", 100)}}}}})
	}
	return h
}

func benchLedger(n int) float64 {
	h := benchHistory(n)
	const rounds = 20
	start := time.Now()
	for range rounds {
		var l contextwin.Ledger
		for i, c := range h {
			l.Append(c)
			if i%2 == 1 {
				l.Observe(1000 + i)
			}
			l.Used()
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(rounds*len(h))
}

func benchCompact(ctx context.Context) (time.Duration, error) {
	h := benchHistory(10000)
	summarize := func(context.Context, contextwin.SummaryRequest) (string, error) { return "**Objective:**\nx", nil }
	const rounds = 10
	start := time.Now()
	for range rounds {
		if _, err := contextwin.Compact(ctx, contextwin.Request{History: h, Task: "t", KeepRecentTurns: 3, MaxInputTokens: 1 << 20}, summarize); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / rounds, nil
}
