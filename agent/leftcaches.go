package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/agent/journal"
)

// Explicit caches left behind. A session's caches are named after it ("reprise <id>"), so that
// those a crash left billing storage can be found and deleted: when the session is resumed, and
// at a server's start for the sessions of its state directory that no process has open. A cache
// whose display name is not one of ours (another tool's, a session of another workspace) is never
// touched.

// CacheOwner is the session a cache's display name names; false for a name that is not one of
// Reprise's.
func CacheOwner(display string) (string, bool) {
	id, ok := strings.CutPrefix(display, cachePrefix)
	if !ok || journal.CheckID(id) != nil {
		return "", false
	}
	return id, true
}

// cacheSweeper is what finding left caches needs of the model client (gemini.Client has it).
type cacheSweeper interface {
	Caches(ctx context.Context, prefix string) ([]gemini.Cache, error)
	DeleteCache(ctx context.Context, name string) error
}

// DeleteLeftCaches deletes the explicit caches of model's key (one list call) that left says were
// left by a session, given its id and the cache's name, and returns their names. A model without
// explicit caches deletes nothing.
func DeleteLeftCaches(ctx context.Context, model Model, left func(id, name string) bool) ([]string, error) {
	if m, ok := model.(*ExplicitCache); ok {
		model = m.inner
	}
	sw, ok := model.(cacheSweeper)
	if !ok {
		return nil, nil
	}
	caches, err := sw.Caches(ctx, cachePrefix)
	errs := []error{err}
	var deleted []string
	for _, c := range caches {
		id, ours := CacheOwner(c.DisplayName)
		if !ours || !left(id, c.Name) {
			continue
		}
		if err := sw.DeleteCache(ctx, c.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, c.Name)
	}
	return deleted, errors.Join(errs...)
}

// DropLeft deletes the explicit caches an earlier run of this session left alive (a crash
// ends a session without deleting them: each bills storage until its TTL ends), all those named
// after it but the one it uses now, journals them deleted and returns their names. The host calls
// it when it resumes the session.
func (m *ExplicitCache) DropLeft(ctx context.Context) ([]string, error) {
	if m == nil {
		return nil, nil
	}
	deleted, err := DeleteLeftCaches(ctx, m.inner, func(id, name string) bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return id == m.s.id && (m.cur == nil || m.cur.Name != name)
	})
	for _, name := range deleted {
		m.s.journal(journal.Record{Kind: journal.KindCache, Cache: &journal.CacheEvent{Op: journal.CacheDeleted, Name: name}})
	}
	return deleted, err
}
