package tools

// Hooks for the external tests of atomic writes (package tools_test, which may import session).
var WriteAtomicFrom = writeAtomic

// UseTmpfile switches Linux's O_TMPFILE path on or off, to test the named path other systems take.
func UseTmpfile(on bool) { tmpfileOff = !on }
