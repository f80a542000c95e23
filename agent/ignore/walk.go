package ignore

import (
	"io/fs"
	"path"
	"runtime"
)

// WalkOptions tune a walk.
type WalkOptions struct {
	Options // where the rules come from
	// IncludeIgnored walks ignored and hidden entries too (ripgrep's --no-ignore --hidden); .git
	// is skipped all the same.
	IncludeIgnored bool
	// Workers is how many goroutines read directories, and in WalkOrdered how many run work;
	// 0 means GOMAXPROCS.
	Workers int
	// Prune, when set, leaves out the directories whose name it accepts, as if ignored (not
	// with IncludeIgnored): trees that drown a listing even where no rule names them.
	Prune func(name string) bool
	// Excluded, when set, is called for each entry left out by the rules, by hiding or by Prune
	// (not .git), possibly from several goroutines at once: a tool can say that it left things
	// out, and how to see them.
	Excluded func(rel string, isDir bool)
}

// walker holds what the directory readers of one walk share; it is read-only once built.
type walker struct {
	fsys     fs.FS
	m        *Matcher // nil with IncludeIgnored
	prune    func(name string) bool
	excluded func(rel string, isDir bool)
	start    string
}

// kid is an entry a directory read keeps.
type kid struct {
	rel string // path in fsys
	d   fs.DirEntry
}

func newWalker(fsys fs.FS, start string, opts WalkOptions) (*walker, fs.DirEntry, error) {
	if !fs.ValidPath(start) {
		return nil, nil, &fs.PathError{Op: "walk", Path: start, Err: fs.ErrInvalid}
	}
	// Stat, not Lstat: a start given explicitly is walked even through a symbolic link.
	fi, err := fs.Stat(fsys, start)
	if err != nil {
		return nil, nil, err
	}
	w := &walker{fsys: fsys, start: start}
	if !opts.IncludeIgnored {
		w.m, w.prune, w.excluded = New(fsys, opts.Options), opts.Prune, opts.Excluded
	}
	return w, fs.FileInfoToDirEntry(fi), nil
}

// list reads the directory rel and returns the entries to walk, in lexical order, and the rules
// of the directory for its subdirectories; parent is the node of the directory rel is in. An
// unreadable directory is an error only at the start; elsewhere what was read is kept, as the
// tools leave out what they cannot read.
func (w *walker) list(rel string, parent *dirNode) ([]kid, *dirNode, error) {
	entries, err := fs.ReadDir(w.fsys, rel)
	if err != nil && rel == w.start {
		return nil, nil, err
	}
	var n *dirNode
	if w.m != nil {
		switch {
		case rel == ".":
			n = w.m.root
		case rel == w.start:
			n = w.m.newNode(w.m.chain(path.Dir(rel)), rel, presentIn(entries))
		default:
			n = w.m.newNode(parent, rel, presentIn(entries))
		}
	}
	dir := rel
	if dir == "." {
		dir = ""
	}
	kids := make([]kid, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		child := join(dir, name)
		if w.m != nil && (name[0] == '.' || (w.prune != nil && e.IsDir() && w.prune(name)) ||
			w.m.excludes(n, child, name, e.IsDir())) {
			if w.excluded != nil {
				w.excluded(child, e.IsDir())
			}
			continue
		}
		kids = append(kids, kid{child, e})
	}
	return kids, n, nil
}

func workers(opts WalkOptions) int {
	if opts.Workers > 0 {
		return opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}
