package agent

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID makes a session id that sorts by creation time and does not collide.
func NewID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
