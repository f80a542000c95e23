package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent"
	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// chunkModel streams whatever the benchmark sends it, then finishes the reply when the channel
// closes.
type chunkModel struct{ chunks chan string }

func (m *chunkModel) Generate(ctx context.Context, req *gemini.Request) iter.Seq2[gemini.Chunk, error] {
	return func(yield func(gemini.Chunk, error) bool) {
		for {
			select {
			case s, ok := <-m.chunks:
				if !ok {
					yield(gemini.Chunk{Done: &gemini.Response{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "done"}}}, Usage: gemini.Usage{Prompt: 100, Candidates: 1}}}, nil)
					return
				}
				if !yield(gemini.Chunk{Text: s}, nil) {
					return
				}
			case <-ctx.Done():
				yield(gemini.Chunk{}, ctx.Err())
				return
			}
		}
	}
}

// benchEnv starts a server whose model is m, with an editor taking the custom notifications.
func benchEnv(b *testing.B, m agent.Model) (*lsptest.Editor, context.Context, string) {
	b.Helper()
	serve := func(ctx context.Context, rwc io.ReadWriteCloser) error {
		return Serve(ctx, rwc, Options{
			NewModel:  func(context.Context, string) (agent.Model, int, error) { return m, 1 << 20, nil },
			StateHome: b.TempDir(),
			Logger:    slog.New(slog.DiscardHandler),
			NoWatch:   true,
		})
	}
	ed := lsptest.Pipe(b, serve, lsptest.Options{Root: b.TempDir(), Experimental: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	if _, err := ed.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	var res SessionResult
	if err := ed.Execute(ctx, CommandAsk, AskArgs{Text: "stream"}, &res); err != nil {
		b.Fatal(err)
	}
	return ed, ctx, res.SessionID
}

// BenchmarkChunkToNotification measures the latency from a model chunk arriving in the agent loop
// to its reprise/sessionUpdate notification read by the editor.
func BenchmarkChunkToNotification(b *testing.B) {
	m := &chunkModel{chunks: make(chan string)}
	ed, ctx, _ := benchEnv(b, m)
	i := 0
	var total time.Duration
	for b.Loop() {
		marker := fmt.Sprintf("chunk-%d|", i)
		i++
		start := time.Now()
		m.chunks <- marker
		if err := ed.Await(ctx, marker, func(msgs []lsptest.Message) bool {
			last := msgs[len(msgs)-1]
			return bytes.Contains(last.Params, []byte(marker))
		}); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	close(m.chunks)
	b.ReportMetric(float64(total.Microseconds())/float64(i), "µs/chunk")
}

// BenchmarkNotificationThroughput streams chunks as fast as the model gives them and reports the
// notifications the editor receives per second.
func BenchmarkNotificationThroughput(b *testing.B) {
	const n = 5000
	for b.Loop() {
		m := &chunkModel{chunks: make(chan string, n)}
		ed, ctx, id := benchEnv(b, m)
		start := time.Now()
		for i := range n {
			m.chunks <- fmt.Sprintf("%d ", i)
		}
		close(m.chunks)
		if _, err := ed.AwaitTurnEnd(ctx, id); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		count := 0
		for _, raw := range ed.Notifications(MethodSessionUpdate) {
			var p sessionUpdateParams
			if json.Unmarshal(raw, &p) == nil && p.Update.SessionUpdate == UpdateMessageChunk {
				count++
			}
		}
		if count < n {
			b.Fatalf("%d chunk notifications, want %d", count, n)
		}
		b.ReportMetric(float64(count)/elapsed.Seconds(), "notifications/s")
	}
}

// BenchmarkInflightAccounting measures what the bound on calls in flight adds to each call:
// taking and giving back a slot, beside the table of cancel functions kept already. Compare with
// BenchmarkCallRoundTrip.
func BenchmarkInflightAccounting(b *testing.B) {
	_, cancel := context.WithCancel(b.Context())
	defer cancel()
	b.Run("table", func(b *testing.B) {
		f := newInflight(defaultMaxInflightCalls)
		for b.Loop() {
			f.add("n:1", cancel)
			f.remove("n:1")
		}
	})
	b.Run("table+slot", func(b *testing.B) {
		f := newInflight(defaultMaxInflightCalls)
		ctx := b.Context()
		for b.Loop() {
			f.acquire(ctx)
			f.add("n:1", cancel)
			f.remove("n:1")
			f.release()
		}
	})
	b.Run("table+slot-parallel", func(b *testing.B) {
		f := newInflight(defaultMaxInflightCalls)
		ctx := b.Context()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				f.acquire(ctx)
				f.add("n:1", cancel)
				f.remove("n:1")
				f.release()
			}
		})
	})
}

// BenchmarkCallRoundTrip is one request answered by the server over the pipe (an unknown method,
// the cheapest answer), for scale.
func BenchmarkCallRoundTrip(b *testing.B) {
	ed, ctx, _ := benchEnv(b, &chunkModel{chunks: make(chan string)})
	for b.Loop() {
		if err := ed.Call(ctx, "reprise/bench.nop", nil, nil); err == nil {
			b.Fatal("want MethodNotFound")
		}
	}
}
