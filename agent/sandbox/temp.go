package sandbox

import (
	"os"
	"path/filepath"
	"time"
)

// Each session's commands share a private temp dir of their own (a build's output in /tmp is
// there for the next command), removed when the session ends: one test left 1.1 GB behind in a
// temp dir kept per workspace. Its size is bounded (Config.MaxTemp): the supervisor watches it
// while the command runs, and a command that fills it past the bound is killed and the dir
// emptied. A server that died leaves its sessions' dirs: the next session of the workspace
// removes those untouched for staleTemp.

// staleTemp is how long a session's temp dir may go untouched before a later session of the same
// workspace takes it for a dead server's and removes it.
const staleTemp = 7 * 24 * time.Hour

// ForSession returns the sandbox for the session id: the same, but for a temp dir of the
// session's own when the temp dir is the sandbox's (not one the configuration names). It also
// removes the stale temp dirs of sessions that ended without removing theirs.
func (s *Sandbox) ForSession(id string) *Sandbox {
	if s == nil || !s.ownTemp || id == "" || s.cfg.Cache == "" {
		return s
	}
	c := *s
	c.cfg.Writable = append([]string(nil), s.cfg.Writable...)
	base := filepath.Join(s.cfg.Cache, "tmp")
	c.cfg.TempDir = filepath.Join(base, filepath.Base(id))
	sweepTemps(base, time.Now())
	return &c
}

// RemoveTemp removes the session's temp dir (ForSession), with what its commands left there.
func (s *Sandbox) RemoveTemp() error {
	if s == nil || !s.ownTemp || filepath.Base(s.cfg.TempDir) == "shared" {
		return nil
	}
	return os.RemoveAll(s.cfg.TempDir)
}

// sweepTemps removes the entries of base untouched since staleTemp before now.
func sweepTemps(base string, now time.Time) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > staleTemp {
			_ = os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}
