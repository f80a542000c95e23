// Package gocacheprog is a Go build cache in two layers, for sandboxed commands: it reads the
// user's own build cache (GOCACHE outside the sandbox, mounted read-only) and writes only to the
// workspace's. A workspace's first `go test` then compiles only what the user has never built,
// instead of the standard library and every dependency again, and still nothing it writes can
// reach the user's other builds. It speaks the go command's GOCACHEPROG protocol
// (cmd/go/internal/cacheprog: JSON lines on stdin and stdout) and keeps the go command's own
// disk layout in both directories, so either is also a plain GOCACHE.
package gocacheprog

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The protocol's commands.
const (
	cmdGet   = "get"
	cmdPut   = "put"
	cmdClose = "close"
)

// request is what the go command sends; a put with BodySize > 0 is followed by its body as a
// base64 JSON string.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

// response answers one request (ID 0: the capabilities, sent first).
type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Stats counts what a run served, for tests and logs.
type Stats struct {
	Gets, ReadHits, WriteHits, Misses, Puts int
}

// Cache is the two layers: Read (may be "": none) and Write.
type Cache struct {
	Read, Write string

	mu    sync.Mutex // guards Stats
	Stats Stats
}

func (c *Cache) count(f func(*Stats)) {
	c.mu.Lock()
	f(&c.Stats)
	c.mu.Unlock()
}

// Serve answers the go command on r and w until it closes or sends close. Requests are answered
// as they are done, in any order (the protocol allows it): the go command asks for many actions
// at once, and each is a few file reads.
func (c *Cache) Serve(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	var sendMu sync.Mutex
	var sendErr error
	send := func(res response) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		if sendErr == nil {
			if sendErr = enc.Encode(res); sendErr == nil {
				sendErr = bw.Flush()
			}
		}
		return sendErr
	}
	var pending sync.WaitGroup
	defer pending.Wait()
	if err := send(response{KnownCommands: []string{cmdGet, cmdPut, cmdClose}}); err != nil {
		return err
	}
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("gocacheprog: %w", err)
		}
		var body []byte
		if req.Command == cmdPut && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("gocacheprog: the body of put %d: %w", req.ID, err)
			}
		}
		switch req.Command {
		case cmdGet:
			pending.Go(func() { _ = send(c.get(req)) })
		case cmdPut:
			pending.Go(func() {
				res := response{ID: req.ID}
				path, err := c.put(req, body)
				res.DiskPath = path
				if err != nil {
					res.Err = err.Error()
				}
				_ = send(res)
			})
		case cmdClose:
			pending.Wait()
			return send(response{ID: req.ID})
		default:
			if err := send(response{ID: req.ID, Err: "unknown command " + strconv.Quote(req.Command)}); err != nil {
				return err
			}
		}
	}
}

// get looks for the action in the workspace's layer, then in the user's.
func (c *Cache) get(req request) response {
	c.count(func(s *Stats) { s.Gets++ })
	for i, dir := range []string{c.Write, c.Read} {
		if dir == "" {
			continue
		}
		if res, ok := lookup(dir, req.ActionID); ok {
			c.count(func(s *Stats) {
				if i == 0 {
					s.WriteHits++
				} else {
					s.ReadHits++
				}
			})
			res.ID = req.ID
			return res
		}
	}
	c.count(func(s *Stats) { s.Misses++ })
	return response{ID: req.ID, Miss: true}
}

// entrySize is the length of an action entry in the go command's disk cache:
// "v1 <action hex> <output hex> <size, 20> <time, 20>\n".
const entrySize = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1

// lookup reads an action's entry in dir, as the go command lays it out, and checks its output.
func lookup(dir string, action []byte) (response, bool) {
	if len(action) != 32 {
		return response{}, false
	}
	entry, err := os.ReadFile(fileName(dir, action, "a"))
	if err != nil || len(entry) != entrySize || string(entry[:3]) != "v1 " || entry[entrySize-1] != '\n' {
		return response{}, false
	}
	f := strings.Fields(string(entry))
	if len(f) != 5 || f[1] != hex.EncodeToString(action) {
		return response{}, false
	}
	out, err := hex.DecodeString(f[2])
	size, err2 := strconv.ParseInt(f[3], 10, 64)
	nanos, err3 := strconv.ParseInt(f[4], 10, 64)
	if err != nil || err2 != nil || err3 != nil || len(out) != 32 {
		return response{}, false
	}
	path := fileName(dir, out, "d")
	if fi, err := os.Stat(path); err != nil || fi.Size() != size {
		return response{}, false
	}
	t := time.Unix(0, nanos)
	return response{OutputID: out, Size: size, Time: &t, DiskPath: path}, true
}

// put writes the output and the action's entry to the workspace's layer, each file replaced
// whole (a reader never sees half of one).
func (c *Cache) put(req request, body []byte) (string, error) {
	c.count(func(s *Stats) { s.Puts++ })
	if len(req.ActionID) != 32 || len(req.OutputID) != 32 {
		return "", errors.New("put: an action and an output id of 32 bytes are required")
	}
	if int64(len(body)) != req.BodySize {
		return "", fmt.Errorf("put: a body of %d bytes, announced %d", len(body), req.BodySize)
	}
	path := fileName(c.Write, req.OutputID, "d")
	if err := writeFile(path, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, len(body), time.Now().UnixNano())
	if err := writeFile(fileName(c.Write, req.ActionID, "a"), []byte(entry)); err != nil {
		return "", err
	}
	return path, nil
}

// fileName is where the go command keeps id's file of kind ("a": an action, "d": an output).
func fileName(dir string, id []byte, kind string) string {
	return filepath.Join(dir, fmt.Sprintf("%02x", id[0]), fmt.Sprintf("%x", id)+"-"+kind)
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
