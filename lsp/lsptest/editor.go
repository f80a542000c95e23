// Package lsptest is a fake editor for end-to-end tests of an LSP server: it speaks LSP-framed
// JSON-RPC to the real server (in process over a pipe, or as a subprocess on stdio), answers the
// server's requests the way an editor would, records everything the server sends, and lets tests
// wait on conditions over that record instead of sleeping, as gopls's integration tests do.
package lsptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// Options describe the editor: what it declares at initialize and how it answers the server.
type Options struct {
	// Root is the workspace folder, sent as rootUri and workspaceFolders; empty sends null.
	Root string
	// Experimental declares capabilities.experimental.reprise = true, which switches the server
	// to its custom notifications.
	Experimental bool
	// InitializationOptions is sent as is in initialize; nil omits it.
	InitializationOptions any
	// Settings answers workspace/configuration: section "reprise" gets this map, "reprise.x" gets
	// Settings["x"], any other section null.
	Settings map[string]any
	// Approve answers window/showMessageRequest (approvals): return the chosen MessageActionItem,
	// e.g. map[string]string{"title": "Allow once"}, or nil for JSON null (rejected). A nil Approve
	// always answers null. It runs on its own goroutine and may block, but must return.
	Approve func(params json.RawMessage) any
	// BeforeReply, when set, runs on the goroutine answering each server request, after the
	// answer is made and before it is sent: it may block, as a slow editor's answer would.
	BeforeReply func(method string)
	// Stderr receives a subprocess's stderr (Exec only); nil logs it line by line with t.Log.
	Stderr io.Writer
}

// Editor is the client side of one connection. Its methods are safe for concurrent use.
type Editor struct {
	opts   Options
	conn   jsonrpc2.Conn
	stream *stream
	rec    *recorder
	peer   *peer

	replies sync.WaitGroup // goroutines answering server requests; waited after the read loop ends

	settingsMu sync.Mutex     // guards settings
	settings   map[string]any // answers workspace/configuration: Options.Settings, then SetSettings

	turnMu    sync.Mutex     // guards turnsSeen
	turnsSeen map[string]int // per session, how many turn_end AwaitTurnEnd has returned
}

// peer is the server side: a subprocess or the serve goroutine. code and err are written before
// done is closed and read only after.
type peer struct {
	done chan struct{}
	code int
	err  error
	pid  int // the subprocess's, 0 in process
}

// Pipe runs serve in process, on one end of a synchronous in-memory pipe, and returns the editor
// on the other end. serve gets a context canceled when the test ends. t.Cleanup closes the
// connection and waits for serve to return, so no goroutine outlives the test.
func Pipe(t testing.TB, serve func(ctx context.Context, rwc io.ReadWriteCloser) error, opts Options) *Editor {
	t.Helper()
	clientEnd, serverEnd := net.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	p := &peer{done: make(chan struct{})}
	// Owned by Pipe's cleanup; ends when serve returns (on exit, EOF or ctx canceled).
	go func() {
		defer close(p.done)
		err := serve(ctx, serverEnd)
		_ = serverEnd.Close() // tells the editor's read loop that the server is gone
		if err != nil {
			p.code, p.err = 1, err
		}
	}()
	e := start(t, clientEnd, opts, p)
	t.Cleanup(func() {
		e.close()
		cancel()
		<-p.done
	})
	return e
}

// Exec starts bin as the server, with stdin and stdout as the stream and env added to the current
// environment. t.Cleanup closes its stdin and kills it if it is still running, then waits for it.
func Exec(t testing.TB, bin string, args []string, env []string, opts Options) *Editor {
	t.Helper()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatalf("lsptest: stdin pipe: %v", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatalf("lsptest: stdout pipe: %v", err)
	}
	stderr := opts.Stderr
	var lw *logWriter
	if stderr == nil {
		lw = &logWriter{t: t, prefix: "server stderr: "}
		stderr = lw
	}
	// Plain *os.File pipes, not cmd.StdoutPipe: Wait then never closes stdout under the read
	// loop, which reads to EOF and so records everything the server wrote before exiting.
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderr
	// Wait also waits for stderr to reach EOF; a grandchild (a tool's command) that inherited it
	// would otherwise hold the cleanup forever after the server itself exited.
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{stdinR, stdinW, stdoutR, stdoutW} {
			f.Close()
		}
		t.Fatalf("lsptest: start %s: %v", bin, err)
	}
	stdinR.Close() // the child has its copies; ours would keep EOF from ever coming
	stdoutW.Close()

	p := &peer{done: make(chan struct{}), pid: cmd.Process.Pid}
	// Owned by Exec's cleanup; ends when the process exits (by itself or killed there).
	go func() {
		defer close(p.done)
		err := cmd.Wait()
		p.code = -1
		if cmd.ProcessState != nil {
			p.code = cmd.ProcessState.ExitCode()
		}
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || p.code < 0) {
			p.err = fmt.Errorf("server %s: %w", bin, err)
		}
	}()
	e := start(t, pipeRWC{r: stdoutR, w: stdinW}, opts, p)
	t.Cleanup(func() {
		e.close()
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill() // fails only if it has just exited, which is what we want
			<-p.done
		}
		if lw != nil {
			lw.flush()
		}
	})
	return e
}

// start wires the connection; the caller registers the cleanup that calls close.
func start(t testing.TB, rwc io.ReadWriteCloser, opts Options, p *peer) *Editor {
	rec := newRecorder()
	s := newStream(rwc, rec)
	e := &Editor{
		opts:      opts,
		conn:      jsonrpc2.NewConn(s),
		stream:    s,
		rec:       rec,
		peer:      p,
		settings:  opts.Settings,
		turnsSeen: make(map[string]int),
	}
	// The connection-scoped context: the read loop and the answers to server requests live as
	// long as the test; close ends them sooner by closing the stream.
	e.conn.Go(t.Context(), e.handle)
	return e
}

// close ends the connection and waits for every goroutine the editor started.
func (e *Editor) close() {
	_ = e.conn.Close()
	<-e.conn.Done()
	e.replies.Wait()
}

// Wait waits for the server to end and for everything it wrote to be recorded. For Exec it
// returns the process's exit code, with an error only if it did not exit by itself (killed by a
// signal) or could not be waited; for Pipe, 0 if serve returned nil, else 1 and serve's error.
func (e *Editor) Wait(ctx context.Context) (exitCode int, err error) {
	select {
	case <-e.peer.done:
	case <-ctx.Done():
		return -1, fmt.Errorf("wait for server exit: %w; %s", context.Cause(ctx), lastMethods(e.Messages()))
	}
	select {
	case <-e.conn.Done():
	case <-ctx.Done():
		return -1, fmt.Errorf("wait for server output to drain: %w", context.Cause(ctx))
	}
	return e.peer.code, e.peer.err
}

// pipeRWC joins a subprocess's stdout (read) and stdin (write) into one stream; closing it closes
// both, which the server sees as EOF.
type pipeRWC struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (p pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeRWC) Close() error                { return errors.Join(p.w.Close(), p.r.Close()) }

// logWriter sends a subprocess's stderr to the test log a line at a time, so it shows up next to
// the failure it explains (and only with -v or on failure).
type logWriter struct {
	t      testing.TB
	prefix string
	mu     sync.Mutex // guards buf; exec's copying goroutine writes, cleanup flushes
	buf    []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		line, rest, ok := strings.Cut(string(w.buf), "\n")
		if !ok {
			break
		}
		w.t.Log(w.prefix + line)
		w.buf = []byte(rest)
	}
	return len(b), nil
}

func (w *logWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.t.Log(w.prefix + string(w.buf))
		w.buf = nil
	}
}

// Pid is the server subprocess's process id (Exec), 0 for a server in process (Pipe): tests kill
// it to simulate a crash.
func (e *Editor) Pid() int { return e.peer.pid }
