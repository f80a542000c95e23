package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// tmpSuffix ends the name of every temporary file an atomic write may leave in the workspace;
// CleanTemps removes nothing else.
const tmpSuffix = ".reprise.tmp"

var tmpSeq atomic.Uint64

// WriteAtomic replaces rel under root with data: an editor, a build or a crash sees the old file or
// the new one, never part of it, and the mode is set explicitly, umask aside. The file is renamed
// (or linked) into place, so a symlink at rel is replaced, never followed, and a parent swapped for
// a symlink leading out is refused by root.
//
// On Linux the data goes to an unnamed O_TMPFILE file, so a process killed mid-write leaves
// nothing in the workspace. Where that is not available the temporary file has a name; temps (nil
// for none) records it while it exists, so that CleanTemps removes it after a kill.
func WriteAtomic(root *os.Root, rel string, data []byte, mode fs.FileMode, temps *Temps) error {
	return writeAtomic(root, rel, bytes.NewReader(data), mode, temps)
}

// writeAtomic is WriteAtomic from a reader, so a test can stop a write half-way.
func writeAtomic(root *os.Root, rel string, r io.Reader, mode fs.FileMode, temps *Temps) error {
	dirRel, base := filepath.Split(filepath.Clean(rel))
	if base == "" || base == "." || base == ".." || filepath.IsAbs(rel) {
		return fmt.Errorf("write %s: not a file path", rel)
	}
	if dirRel == "" {
		dirRel = "."
	}
	dir, err := root.Open(dirRel)
	if err != nil {
		return err
	}
	defer dir.Close()
	w := &atomicWrite{root: root, dir: dir, dirRel: dirRel, base: base, mode: mode, temps: temps}
	done, err := w.unnamed(r)
	if !done {
		err = w.named(r)
	}
	if err != nil {
		return err
	}
	// Durability of the rename only: the new content is in place, and reporting a failure here
	// would have the model redo a write that happened.
	_ = dir.Sync()
	return nil
}

// atomicWrite is one WriteAtomic call: dir is the open parent directory of base, resolved
// inside root once, so the unnamed path's link and rename cannot be redirected meanwhile.
type atomicWrite struct {
	root   *os.Root
	dir    *os.File
	dirRel string
	base   string
	mode   fs.FileMode
	temps  *Temps
}

// tmpName is a fresh temporary name next to base.
func (w *atomicWrite) tmpName() string {
	base := w.base
	if len(base) > 100 {
		base = base[:100]
	}
	return fmt.Sprintf(".%s.%d-%d%s", base, os.Getpid(), tmpSeq.Add(1), tmpSuffix)
}

// named writes through a named temporary file and a rename; the file is removed on any failure,
// and recorded in temps while it exists.
func (w *atomicWrite) named(r io.Reader) error {
	rel := filepath.Join(w.dirRel, w.base)
	var f *os.File
	var tmp string
	var release func()
	for {
		tmp = filepath.Join(w.dirRel, w.tmpName())
		var err error
		if release, err = w.temps.add(w.root.Name(), tmp); err != nil {
			return fmt.Errorf("record temporary file: %w", err)
		}
		f, err = w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			release()
			continue
		}
		if err != nil {
			release()
			return err
		}
		break
	}
	defer release()
	_, err := io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.root.Chmod(tmp, w.mode)
	}
	if err == nil {
		err = w.root.Rename(tmp, rel)
	}
	if err != nil {
		w.root.Remove(tmp)
	}
	return err
}

// isTempName reports whether base is a name tmpName makes.
func isTempName(base string) bool {
	return strings.HasPrefix(base, ".") && strings.HasSuffix(base, tmpSuffix)
}
