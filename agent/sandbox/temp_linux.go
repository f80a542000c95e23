package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tempLook is how often the supervisor measures the temp dir while the command runs.
const tempLook = 200 * time.Millisecond

// watchTempDir kills the command's group (pgid) once dir holds more than limit bytes, and then
// closes full; it returns when stop is closed. Run by the supervisor, outside the sandbox.
func watchTempDir(dir string, limit int64, pgid int, stop <-chan struct{}, full chan<- struct{}) {
	t := time.NewTicker(tempLook)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if diskUsage(dir, limit) > limit {
				_ = unix.Kill(-pgid, unix.SIGKILL)
				close(full)
				return
			}
		}
	}
}

// watchTemp starts watching the command's temp dir, if it has a bound: full is closed when the
// command filled it (and was killed), watched when the watch is over, which the command's end
// (done) brings.
func watchTemp(sp spec, pgid int, done <-chan struct{}) (full, watched chan struct{}) {
	full, watched = make(chan struct{}), make(chan struct{})
	if sp.TempDir == "" || sp.MaxTemp <= 0 {
		close(watched)
		return full, watched
	}
	go func() { // ends with the command, or when it killed it
		defer close(watched)
		watchTempDir(sp.TempDir, sp.MaxTemp, pgid, done, full)
	}()
	return full, watched
}

// settleTemp, once everything the command ran is gone, empties its temp dir if it filled it past
// its bound, for the next command, and reports whether it did.
func settleTemp(sp spec, full <-chan struct{}) bool {
	if !tempFull(sp, full) {
		return false
	}
	emptyDir(sp.TempDir)
	return true
}

// tempFull reports whether the command filled its temp dir past its bound: the watcher saw it
// (full closed), or it did so between two looks and ended.
func tempFull(sp spec, full <-chan struct{}) bool {
	if sp.TempDir == "" || sp.MaxTemp <= 0 {
		return false
	}
	select {
	case <-full:
		return true
	default:
		return diskUsage(sp.TempDir, sp.MaxTemp) > sp.MaxTemp
	}
}

// diskUsage is what the files under dir take on disk (a sparse file counts what it holds), up to
// a little past limit: the walk stops once it is passed. Links are not followed.
func diskUsage(dir string, limit int64) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			total += allocated(info)
		}
		if total > limit {
			return filepath.SkipAll
		}
		return nil
	})
	return total
}

// allocated is the disk space a file takes: its blocks, not its apparent size.
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}

// emptyDir removes what dir holds, keeping dir.
func emptyDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}
