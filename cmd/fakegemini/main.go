// Command fakegemini serves a scripted fake of the Gemini API (package geminitest) as its own
// process, for end-to-end tests that are not written in Go: the Neovim and VS Code tests start
// it, read the base URL from its first line of output, and point reprise at it with
// GOOGLE_GEMINI_BASE_URL.
//
// Usage:
//
//	fakegemini --script FILE [--addr 127.0.0.1:0] [--log FILE] [--watch-stdin=true] [--api openai]
//
// With --api openai it serves the same script as an OpenAI-compatible server (package
// openaitest): Chat Completions, the script's models in /v1/models, and Ollama's /api/show with
// the script's inputTokenLimit as the models' num_ctx; its first line is then the /v1 base URL,
// and --log is not written.
//
// It serves until SIGINT or SIGTERM, or until its stdin closes, so that a test runner that dies
// does not leave it running; then it exits 0. Start it with stdin on a pipe (not /dev/null), or
// pass --watch-stdin=false.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/openai/openaitest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakegemini", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scriptPath := fs.String("script", "", "JSON script of the replies to serve (required)")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	logPath := fs.String("log", "", "on exit, write the requests received to this file as JSON lines")
	watchStdin := fs.Bool("watch-stdin", true, "exit when stdin closes")
	api := fs.String("api", "gemini", `"gemini", or "openai": the script served as an OpenAI-compatible server`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scriptPath == "" || fs.NArg() > 0 || (*api != "gemini" && *api != "openai") {
		fmt.Fprintln(stderr, "usage: fakegemini --script FILE [--addr 127.0.0.1:0] [--log FILE] [--api gemini|openai]")
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	script, err := geminitest.LoadScript(*scriptPath)
	if err != nil {
		log.Error("fakegemini: cannot start", "err", err)
		return 1
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("fakegemini: cannot start", "err", fmt.Errorf("listen on %s: %w", *addr, err))
		return 1
	}
	// Signals are caught before the URL goes out: a parent may stop the server as soon as it
	// has read it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *api == "openai" {
		return serveOpenAI(ctx, stop, script, l, stdin, stdout, *watchStdin, log)
	}
	srv := geminitest.NewListener(script, l)
	// The first line of stdout is the protocol with the parent: nothing else goes there.
	fmt.Fprintln(stdout, srv.URL())
	log.Info("fakegemini: serving", "url", srv.URL(), "turns", len(script.Turns))

	waitEnd(ctx, stop, stdin, *watchStdin)
	srv.Close()

	reqs := srv.Requests()
	log.Info("fakegemini: stopped", "requests", len(reqs), "turns_left", srv.Pending())
	if *logPath != "" {
		if err := writeLog(*logPath, reqs); err != nil {
			log.Error("fakegemini: request log", "err", err)
			return 1
		}
	}
	return 0
}

// waitEnd returns when ctx ends (a signal), or when stdin closes if watch is set.
func waitEnd(ctx context.Context, stop func(), stdin io.Reader, watch bool) {
	if watch {
		// Ends when stdin reaches EOF or fails; if a signal comes first, the process exits with
		// it still blocked on the read, which is harmless.
		go func() {
			_, _ = io.Copy(io.Discard, stdin) // end of input or a broken pipe: the parent is gone either way
			stop()
		}()
	}
	<-ctx.Done()
}

// serveOpenAI serves script as an OpenAI-compatible server on l until the end (waitEnd).
func serveOpenAI(ctx context.Context, stop func(), script geminitest.Script, l net.Listener, stdin io.Reader, stdout io.Writer, watch bool, log *slog.Logger) int {
	turns, err := openaitest.FromGemini(script)
	if err != nil {
		l.Close()
		log.Error("fakegemini: cannot start", "err", err)
		return 1
	}
	srv := openaitest.NewListener(l, turns...)
	if len(script.Models) > 0 {
		srv.Models = script.Models
	}
	if script.InputTokenLimit > 0 {
		// The model's maximum, and its Modelfile's num_ctx: the window Reprise then uses.
		srv.ContextLength, srv.NumCtx = script.InputTokenLimit, script.InputTokenLimit
	}
	fmt.Fprintln(stdout, srv.URL())
	log.Info("fakegemini: serving as an OpenAI-compatible server", "url", srv.URL(), "turns", len(turns))
	waitEnd(ctx, stop, stdin, watch)
	srv.Close()
	log.Info("fakegemini: stopped", "requests", len(srv.Requests()))
	return 0
}

// logEntry is one line of --log: the request as the fake saw it, the body as JSON. The API key
// is not in the record.
type logEntry struct {
	Method    string `json:"method"`
	Path      string `json:"path"`
	Model     string `json:"model"`
	Stream    bool   `json:"stream"`
	HasAPIKey bool   `json:"hasApiKey"`
	Turn      int    `json:"turn"`
	// Usage is the usageMetadata the reply carried, cached tokens included.
	Usage *geminitest.Usage `json:"usage,omitempty"`
	Body  json.RawMessage   `json:"body,omitempty"`
}

func writeLog(path string, reqs []geminitest.Request) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write request log: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, r := range reqs {
		e := logEntry{Method: r.Method, Path: r.Path, Model: r.Model, Stream: r.Stream, HasAPIKey: r.HasAPIKey, Turn: r.Turn, Usage: r.Usage}
		if json.Valid(r.Body) {
			e.Body = r.Body
		} else if len(r.Body) > 0 {
			e.Body, _ = json.Marshal(string(r.Body))
		}
		if err := enc.Encode(e); err != nil {
			f.Close()
			return fmt.Errorf("write request log %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write request log %s: %w", path, err)
	}
	return nil
}
