package lsp

// Defaults for limits, chosen so that no editor in normal use comes near them while one
// connection's cost stays bounded.
const (
	// defaultMaxInflightCalls: editors keep a handful of requests open at once (a compaction, a
	// code action, a context view); 64 leaves room for bursts, and 64 replies held back by a
	// client that does not read are a few MiB at most.
	defaultMaxInflightCalls = 64
	// defaultMaxSessions: more sessions than a user follows at once, far below the process's
	// file descriptor limit (each open session holds its log and its lock).
	defaultMaxSessions = 32
	// defaultMaxBufferBytes caps the open buffers kept in memory: as much as the largest single
	// message (defaultMaxMessageBytes).
	defaultMaxBufferBytes = 64 << 20
)

// largeMessageBytes is the size of a notification after which the server gives the memory its
// copies took back to the system at once (a full collection, a few milliseconds, against the
// time it took to read that many bytes). Only notifications carry whole files (didOpen,
// didChange); 16 MiB is far above what a source file weighs.
const largeMessageBytes = 16 << 20

// limits bound what one connection can make the server hold. They are the server's, not
// settings: a limit the client could raise would not protect the server from that client. Zero
// or negative fields take the defaults; tests lower them.
type limits struct {
	// MaxInflightCalls caps the client's requests being handled or waiting to write their reply.
	// At the cap the server stops reading the stream until one is answered, so a client that
	// floods requests, or never reads the replies, is slowed down instead of growing the server.
	MaxInflightCalls int
	// MaxSessions caps the sessions open at once. Opening one more closes the least recently
	// active idle session (it is saved, and reopens when a command names it); if every session is
	// busy, the new one is refused.
	MaxSessions int
	// MaxBufferBytes caps the total size of the open buffers (paths and texts) kept from
	// textDocument/didOpen and didChange. A buffer that would pass it is dropped from the
	// overlay: the agent reads that file from disk, and does not write it.
	MaxBufferBytes int64
}

// withDefaults fills the zero fields.
func (l limits) withDefaults() limits {
	if l.MaxInflightCalls <= 0 {
		l.MaxInflightCalls = defaultMaxInflightCalls
	}
	if l.MaxSessions <= 0 {
		l.MaxSessions = defaultMaxSessions
	}
	if l.MaxBufferBytes <= 0 {
		l.MaxBufferBytes = defaultMaxBufferBytes
	}
	return l
}
