package tools

import (
	"io"
	"os"
	"path"
	"sync"
)

// fileOpener opens the files of a walk for reading. Opening through os.Root resolves the path one
// component at a time, a few system calls per directory level for every file; a walk opens
// thousands of files in a few directories, so the opener keeps the directories it has open (each
// opened through the root, so confined like the rest) and opens a file as one call relative to
// its directory where the OS allows it (openFileAt). Safe for concurrent use.
type fileOpener struct {
	root *os.Root
	mu   sync.Mutex
	dirs map[string]*openDir
	fifo []string // the directories held, oldest first
}

// maxOpenDirs bounds the directories held: a walk in path order needs few at once.
const maxOpenDirs = 32

type openDir struct {
	f       *os.File
	refs    int
	evicted bool
}

func newFileOpener(root *os.Root) *fileOpener {
	return &fileOpener{root: root, dirs: map[string]*openDir{}}
}

// open opens the regular file rel for reading; it never follows a symbolic link in its last
// component, nor blocks on a FIFO that replaced the file since it was listed.
func (o *fileOpener) open(rel string) (io.ReadCloser, error) {
	if !haveOpenAt {
		return o.root.Open(rel)
	}
	dir, name := path.Split(rel)
	d, err := o.acquire(dir)
	if err != nil {
		return nil, err
	}
	defer o.release(dir, d)
	return openFileAt(d.f, name)
}

func (o *fileOpener) acquire(dir string) (*openDir, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d, ok := o.dirs[dir]; ok {
		d.refs++
		return d, nil
	}
	f, err := o.root.Open(cmpDot(dir))
	if err != nil {
		return nil, err
	}
	d := &openDir{f: f, refs: 1}
	o.dirs[dir] = d
	o.fifo = append(o.fifo, dir)
	for len(o.fifo) > maxOpenDirs {
		old := o.fifo[0]
		o.fifo = o.fifo[1:]
		od := o.dirs[old]
		delete(o.dirs, old)
		od.evicted = true
		if od.refs == 0 {
			od.f.Close()
		}
	}
	return d, nil
}

func (o *fileOpener) release(dir string, d *openDir) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d.refs--; d.refs == 0 && d.evicted {
		d.f.Close()
	}
}

// close closes the directories still held; no open may be under way.
func (o *fileOpener) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range o.dirs {
		d.f.Close()
	}
	o.dirs, o.fifo = nil, nil
}

// cmpDot is dir as os.Root wants it: "." for the root, no trailing slash.
func cmpDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir[:len(dir)-1]
}
