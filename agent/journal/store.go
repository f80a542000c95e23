package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/reprise-dev/reprise/agent/filelock"
	"github.com/reprise-dev/reprise/agent/tools"
)

// Store is a workspace's sessions: dir/sessions/<id>/{events.jsonl, checkpoints/, restore/,
// tool-outputs/, temps/}. Everything it creates is private to the user (0700 directories, 0600
// files).
type Store struct {
	dir string
}

// TempsDir is the directory, in a session's, where tools.Temps notes the named temporary files
// of writes in progress.
const TempsDir = "temps"

// OpenStore opens (creating) the store at dir. A server or a run opens it when it starts for the
// workspace, so this is where the temporary files of writes killed half-way are removed.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	st := &Store{dir: dir}
	_, _ = st.CleanTemps() // what cannot be removed now is tried again at the next start
	return st, nil
}

// CleanTemps removes what writes killed half-way left in the workspace (tools.CleanTemps over
// every session's notes) and returns those files. Writes in progress in a live process are left
// alone. A failure only leaves a file behind, so it is returned for the caller to log at most.
func (st *Store) CleanTemps() ([]string, error) {
	dirs, _ := filepath.Glob(filepath.Join(st.dir, "sessions", "*", TempsDir))
	var removed []string
	var errs []error
	for _, d := range dirs {
		r, err := tools.CleanTemps(d)
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// Dir of session id.
func (st *Store) Dir(id string) string { return filepath.Join(st.dir, "sessions", id) }

// Create starts the log of a new session.
func (st *Store) Create(m Meta) (*Log, error) {
	if !validID(m.ID) {
		return nil, fmt.Errorf("create session: bad id %q", m.ID)
	}
	l, err := openLog(st.Dir(m.ID))
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", m.ID, err)
	}
	l.summarize(nil)
	if err := l.Append(Record{Time: m.Created, Kind: KindMeta, Meta: &m}); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
}

// New starts the log of a new session without touching the disk: its directory is made with the
// session's first content (a turn, a restore point), so a session opened and left empty (a
// client calling reprise.newSession in a loop) leaves nothing behind. Until then the session is
// not listed, and cannot be resumed: it has nothing to resume.
func (st *Store) New(m Meta) (*Log, error) {
	if !validID(m.ID) {
		return nil, fmt.Errorf("create session: bad id %q", m.ID)
	}
	l := &Log{dir: st.Dir(m.ID)}
	l.summarize(nil)
	l.held = []Record{{Time: m.Created, Kind: KindMeta, Meta: &m}}
	return l, nil
}

// ErrNotFound is returned for a session this workspace does not have.
var ErrNotFound = errors.New("no such session")

// Resume loads session id and opens its log for appending. A second process gets ErrLocked.
func (st *Store) Resume(id string) (*Log, *Snapshot, error) {
	if !st.Saved(id) {
		return nil, nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	l, err := openLog(st.Dir(id))
	if err != nil {
		return nil, nil, fmt.Errorf("resume session %s: %w", id, err)
	}
	snap, err := st.Load(id)
	if err != nil {
		return nil, nil, errors.Join(err, l.Close())
	}
	l.summarize(snap)
	return l, snap, nil
}

// Saved tells whether id is a valid id with a log here.
func (st *Store) Saved(id string) bool {
	if !validID(id) {
		return false
	}
	_, err := os.Stat(filepath.Join(st.Dir(id), "events.jsonl"))
	return err == nil
}

// Idle tells whether session id is saved here and no process has it open: its lock is free.
// Taking the lock to see, and closing it at once, is how another process's hold shows.
func (st *Store) Idle(id string) bool {
	if !validID(id) {
		return false
	}
	lock, err := os.OpenFile(filepath.Join(st.Dir(id), "lock"), os.O_RDWR, 0)
	if err != nil {
		return false // never opened, or not this store's
	}
	defer lock.Close()
	return filelock.TryLock(lock) == nil
}

// Records reads session id's log as written, without opening it for writing: what an export
// walks. Lines that do not decode are skipped, as Load skips them.
func (st *Store) Records(id string) ([]Record, error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("read session: %w: %w", ErrNotFound, err)
	}
	recs, _, _, err := readRecords(filepath.Join(st.Dir(id), "events.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	return recs, nil
}

// Load reads and replays session id without opening it for writing.
func (st *Store) Load(id string) (*Snapshot, error) {
	snap, _, err := st.load(id)
	return snap, err
}

// load is Load, and the size of the log it read.
func (st *Store) load(id string) (*Snapshot, int64, error) {
	if err := CheckID(id); err != nil {
		return nil, 0, fmt.Errorf("load session: %w: %w", ErrNotFound, err)
	}
	recs, size, warnings, err := readRecords(filepath.Join(st.Dir(id), "events.jsonl"))
	if err != nil {
		return nil, 0, fmt.Errorf("load session %s: %w", id, err)
	}
	snap := Replay(recs)
	snap.Warnings = append(warnings, snap.Warnings...)
	if snap.Meta.ID == "" {
		snap.Meta.ID = id
	}
	return snap, size, nil
}

// Summary describes a saved session for a list.
type Summary struct {
	ID           string    `json:"sessionId"`
	Title        string    `json:"title"`
	LastActivity time.Time `json:"lastActivity"`
	Turns        int       `json:"turns"`
	Calls        int       `json:"calls"`
	LastPrompt   int       `json:"lastPrompt"`
	Checkpoints  int       `json:"checkpoints"`
	// Parent is the session this one was forked from, and From where in it.
	Parent string `json:"parent,omitempty"`
	From   string `json:"from,omitempty"`
	// Subagent is set on a subagent's session: its task; Parent ran it. Lists of sessions to
	// resume leave these out.
	Subagent string `json:"subagent,omitempty"`
	Err      string `json:"error,omitempty"` // the log could not be read
}

// readRecords reads a log, skipping (with a warning each) lines that do not decode: a torn last
// line after a crash, or garbage. size is how many bytes it read.
func readRecords(path string) (recs []Record, size int64, warnings []string, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil, fmt.Errorf("%w: %s", ErrNotFound, filepath.Base(filepath.Dir(path)))
	}
	if err != nil {
		return nil, 0, nil, err
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, b := range lines {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil || r.Kind == "" {
			what := "a garbled line"
			if i == len(lines)-1 { // no newline after it: the write was cut
				what = "a torn last line"
			}
			warnings = append(warnings, fmt.Sprintf("%s: line %d skipped (%s)", filepath.Base(path), i+1, what))
			continue
		}
		recs = append(recs, r)
	}
	return recs, int64(len(data)), warnings, nil
}

// MaxIDLength bounds a session id.
const MaxIDLength = 64

// CheckID accepts the ids agent.NewID makes (20261130-101500-a1b2c3) and nothing that could name
// another file: 1 to MaxIDLength ASCII letters, digits, '-' or '_'. Every id that comes from a
// client goes through it before it reaches a path.
func CheckID(id string) error {
	if id == "" {
		return errors.New("empty session id")
	}
	if len(id) > MaxIDLength {
		return fmt.Errorf("session id longer than %d bytes", MaxIDLength)
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return fmt.Errorf("session id may hold only letters, digits, '-' and '_', not %q", c)
		}
	}
	return nil
}

func validID(id string) bool { return CheckID(id) == nil }

// WorkspaceDir is where a workspace's sessions live under the state home: the workspace's base
// name and a hash of its absolute path, so two checkouts of one project do not share sessions.
func WorkspaceDir(home, workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(home, filepath.Base(workspace)+"-"+hex.EncodeToString(sum[:4]))
}
