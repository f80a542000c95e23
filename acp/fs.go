package acp

import (
	"context"
	"os"
	"path/filepath"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent"
)

// clientFileTimeout bounds a request for a file to the client: a client that does not answer
// leaves the tool with the file on disk, not stuck.
const clientFileTimeout = 5 * time.Second

// maxPushedBytes bounds a file pushed to the client's buffer after an edit, as diffs are bounded.
const maxPushedBytes = 1 << 20

func (s *server) fs() sdk.FileSystemCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client.Fs
}

// overlay reads a file through the client (fs/read_text_file) when it offers to: the editor's
// buffer, unsaved changes included, is what the user sees. read_file asks it for the one file it
// reads; on any failure the tool reads the disk.
func (s *server) overlay(id, ws string) func(string) (string, bool) {
	return func(rel string) (string, bool) {
		if !s.fs().ReadTextFile {
			return "", false
		}
		ctx, cancel := context.WithTimeout(s.ctx, clientFileTimeout)
		defer cancel()
		res, err := s.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(id), Path: filepath.Join(ws, filepath.FromSlash(rel))})
		if err != nil {
			s.log.Debug("fs/read_text_file failed; reading the disk", "path", rel, "error", err)
			return "", false
		}
		return res.Content, true
	}
}

// pushEdit gives the client's buffer the file an edit wrote (fs/write_text_file), when it offers
// to. The file tools still write the disk themselves, confined and atomic, with their restore
// points; the client then shows the change without reloading. The content comes from the disk,
// not from the event, whose texts have secrets masked.
func (s *server) pushEdit(ctx context.Context, id string, d *agent.Diff) {
	if !s.fs().WriteTextFile || d.Note != "" {
		return
	}
	st, err := os.Stat(d.Path)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > maxPushedBytes {
		return
	}
	data, err := os.ReadFile(d.Path)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, clientFileTimeout)
	defer cancel()
	if _, err := s.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(id), Path: d.Path, Content: string(data)}); err != nil {
		s.log.Debug("fs/write_text_file failed", "path", d.Path, "error", err)
	}
}
