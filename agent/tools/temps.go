package tools

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reprise-dev/reprise/agent/filelock"
)

// Temps records the named temporary files atomic writes create in a workspace, one note each in
// a private directory, so that a process killed mid-write leaves a trace: CleanTemps, run when a
// server or a run starts, removes the files the notes name. Each note is locked (flock) while its
// writer lives, so a start-up never removes the file of a write still in progress elsewhere.
type Temps struct {
	dir string
}

// NewTemps keeps notes in dir (created on demand, 0700); an empty dir means no notes.
func NewTemps(dir string) *Temps {
	if dir == "" {
		return nil
	}
	return &Temps{dir: dir}
}

// tempNote is what a note holds: the workspace and the temporary file's path in it.
type tempNote struct {
	Workspace string `json:"workspace"`
	Path      string `json:"path"`
}

const (
	noteExt     = ".json" // a complete note
	notePartial = ".new-" // a note being written: never names a file yet
)

// add notes rel (relative to workspace) before the file is created. release removes the note
// once the file is gone or renamed; a nil Temps notes nothing.
func (t *Temps) add(workspace, rel string) (release func(), err error) {
	if t == nil {
		return func() {}, nil
	}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	name := hex.EncodeToString(b[:])
	partial, final := filepath.Join(t.dir, notePartial+name), filepath.Join(t.dir, name+noteExt)
	f, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(tempNote{Workspace: workspace, Path: filepath.ToSlash(rel)})
	// Locked before it is complete, and renamed once complete: CleanTemps never sees an unlocked
	// note of a live writer, nor a complete one without its content.
	err = filelock.TryLock(f)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = os.Rename(partial, final)
	}
	if err != nil {
		f.Close()
		os.Remove(partial)
		return nil, err
	}
	return func() {
		os.Remove(final)
		f.Close()
	}, nil
}

// CleanTemps removes the temporary files that the notes in dir name and whose writers are gone
// (killed mid-write), then the notes; it returns the files removed. It removes only regular
// files with a temporary file's name, through an os.Root on the noted workspace.
func CleanTemps(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("clean temporary files: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		complete := strings.HasSuffix(name, noteExt)
		if !complete && !strings.HasPrefix(name, notePartial) {
			continue
		}
		p := filepath.Join(dir, name)
		f, err := os.Open(p)
		if err != nil {
			continue // removed by its writer meanwhile
		}
		if filelock.TryLock(f) != nil {
			f.Close() // its writer is alive and holds the lock
			continue
		}
		if complete {
			gone, err := removeNoted(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("clean temporary file noted in %s: %w", name, err))
			} else if gone != "" {
				removed = append(removed, gone)
			}
		}
		os.Remove(p)
		f.Close()
	}
	return removed, errors.Join(errs...)
}

// removeNoted removes the file a note names, if it is still there; it returns its path.
func removeNoted(note *os.File) (string, error) {
	data, err := io.ReadAll(io.LimitReader(note, 64<<10))
	if err != nil {
		return "", err
	}
	var n tempNote
	if err := json.Unmarshal(data, &n); err != nil {
		return "", err
	}
	rel := filepath.FromSlash(n.Path)
	if !filepath.IsAbs(n.Workspace) || !isTempName(filepath.Base(rel)) {
		return "", fmt.Errorf("not a temporary file: %q in %q", n.Path, n.Workspace)
	}
	root, err := os.OpenRoot(n.Workspace)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // renamed into place before the writer died
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", nil
	}
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return filepath.Join(n.Workspace, rel), nil
}
