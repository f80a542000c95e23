package journal

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/reprise-dev/reprise/agent/filelock"
)

// ErrLocked is returned when another process has the session open.
var ErrLocked = errors.New("session is open in another reprise process")

// Log is one session's open event log, locked against other processes. It keeps the session's
// Summary as records come and writes it to SummaryFile whenever no turn is in progress (a turn's
// end included) and when it closes, so a listing need not replay the log.
//
// A log made by Store.New reaches the disk only with the session's first content: until then it
// holds the records that are not content (the meta record, the last settings) in memory.
type Log struct {
	dir  string
	mu   sync.Mutex // guards f, w, lock, held, closed, sum, known and inTurn
	f    *os.File   // nil before the log reaches the disk, and after Close
	w    *bufio.Writer
	lock *os.File
	// held are the records of a log not on disk yet, written first when it gets there.
	held   []Record
	closed bool
	sum    Summary
	// known is set once sum covers every record of the log (a new log, or one resumed from its
	// snapshot); until then no summary is written.
	known bool
	// inTurn is set between a turn's start and its end: the summary is written at the end rather
	// than at each of the turn's records.
	inTurn bool
}

// openLog opens (creating) dir/events.jsonl for appending, after taking dir/lock exclusively.
func openLog(dir string) (*Log, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := filelock.TryLock(lock); err != nil {
		holder, _ := os.ReadFile(lock.Name())
		lock.Close()
		return nil, fmt.Errorf("%w (pid %s): %s", ErrLocked, strings.TrimSpace(string(holder)), filepath.Base(dir))
	}
	// The holder's pid, for the message another process gets; the lock works without it.
	_ = lock.Truncate(0)
	_, _ = lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		lock.Close()
		return nil, err
	}
	if err := repairTail(f); err != nil {
		f.Close()
		lock.Close()
		return nil, err
	}
	return &Log{dir: dir, f: f, w: bufio.NewWriterSize(f, 64<<10), lock: lock}, nil
}

// summarize starts the log's summary from what its records say so far: snap, or nothing for a
// new log.
func (l *Log) summarize(snap *Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sum, l.inTurn, l.known = Summary{ID: filepath.Base(l.dir)}, false, true
	if snap != nil {
		l.sum, l.inTurn = snap.Brief(), snap.Interrupted
	}
}

// repairTail ends a torn last line (a crash mid-write) with a newline, so the next record starts
// on a line of its own; the torn line is skipped when loading.
func repairTail(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	r, err := os.Open(f.Name())
	if err != nil {
		return err
	}
	defer r.Close()
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte("\n"))
	}
	return err
}

// Dir is the session's directory.
func (l *Log) Dir() string { return l.dir }

// Append writes one record. It reaches the OS at once (a killed process loses nothing written);
// Sync makes it durable across a machine crash.
func (l *Log) Append(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode %s record: %w", r.Kind, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("append to a closed session log")
	}
	if l.f == nil {
		if l.holdLocked(r) {
			return nil
		}
		if err := l.writeOutLocked(); err != nil {
			return fmt.Errorf("save session %s: %w", filepath.Base(l.dir), err)
		}
	}
	return l.appendLocked(r, b)
}

// holdLocked keeps r in memory if it is not content, for a log not on disk yet: the meta record,
// and the last settings (each replaces the one before, so a client changing settings in a loop
// costs nothing). l.mu must be held.
func (l *Log) holdLocked(r Record) bool {
	switch r.Kind {
	case KindMeta:
		l.held = append(l.held, r)
		return true
	case KindSettings:
		for i, h := range l.held {
			if h.Kind == KindSettings {
				l.held[i] = r
				return true
			}
		}
		l.held = append(l.held, r)
		return true
	}
	return false
}

// writeOutLocked puts a log held in memory on disk: its directory, lock and file, then the records
// it held. l.mu must be held.
func (l *Log) writeOutLocked() error {
	o, err := openLog(l.dir)
	if err != nil {
		return err
	}
	l.f, l.w, l.lock = o.f, o.w, o.lock
	held := l.held
	l.held = nil
	for _, r := range held {
		b, err := json.Marshal(r)
		if err == nil {
			err = l.appendLocked(r, b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// appendLocked writes r, encoded as b, to the log on disk. l.mu must be held.
func (l *Log) appendLocked(r Record, b []byte) error {
	// bufio's error is sticky: the Flush below reports any of these.
	_, _ = l.w.Write(b)
	_ = l.w.WriteByte('\n')
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("append %s record: %w", r.Kind, err)
	}
	l.sum.add(r)
	switch r.Kind {
	case KindTurnStart:
		l.inTurn = true
	case KindTurnEnd:
		l.inTurn = false
	}
	if l.known && !l.inTurn {
		l.saveSummary()
	}
	if c := r.Compaction; c != nil {
		return l.writeCheckpoint(c.Checkpoint.Markdown(), c.Checkpoint.FileName())
	}
	return nil
}

// saveSummary writes the summary with the log's size now. A failure is not the record's: the
// record is saved, and a listing replays the log instead. l.mu must be held, the writer flushed.
func (l *Log) saveSummary() {
	st, err := l.f.Stat()
	if err != nil {
		return
	}
	_ = writeSummary(l.dir, l.sum, st.Size())
}

// Sync flushes the log to stable storage (turn boundaries, after a tool changed files).
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Sync()
}

// SaveBlob stores a restore point's content under restore/ and returns its name.
func (l *Log) SaveBlob(turn int, rel string, data []byte) (string, error) {
	name := fmt.Sprintf("%04d-%s", turn, strings.NewReplacer("/", "%2F", "%", "%25").Replace(rel))
	return name, l.writeBlob(name, data, false)
}

// SaveText stores a text an editor was shown (an edit's before or after) under restore/, named by
// its content: a file edited ten times keeps eleven texts, not twenty, and a name never changes
// what it holds. Restore point names start with a turn number, so the two cannot meet.
func (l *Log) SaveText(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	name := "text-" + hex.EncodeToString(sum[:])
	return name, l.writeBlob(name, data, true)
}

// writeBlob writes restore/name, putting the log on disk first (a blob is content); once, when
// once is set and the file exists.
func (l *Log) writeBlob(name string, data []byte, once bool) error {
	l.mu.Lock()
	var err error
	if l.f == nil && !l.closed {
		err = l.writeOutLocked()
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("save session %s: %w", filepath.Base(l.dir), err)
	}
	dir := filepath.Join(l.dir, "restore")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p := filepath.Join(dir, name)
	if once {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
		// Written aside and renamed, so that a crash never leaves a short text under its name.
		f, err := os.CreateTemp(dir, ".text-*.tmp")
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), p)
		}
		if err != nil {
			os.Remove(f.Name())
		}
		return err
	}
	return os.WriteFile(p, data, 0o600)
}

// ReadBlob returns a restore point's saved content.
func (l *Log) ReadBlob(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(l.dir, "restore", filepath.Base(name)))
}

// writeCheckpoint saves a checkpoint as checkpoints/NNN-title.md, for people to read.
func (l *Log) writeCheckpoint(md, name string) error {
	dir := filepath.Join(l.dir, "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(md), 0o600)
}

// Close syncs and closes the log and releases the lock.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed, l.held = true, nil
	if l.f == nil { // closed already, or never written: a session without content leaves nothing
		return nil
	}
	err := l.w.Flush()
	if err == nil && l.known {
		l.saveSummary()
	}
	err = errors.Join(err, l.f.Sync(), l.f.Close())
	l.f = nil
	l.lock.Close()
	return err
}
