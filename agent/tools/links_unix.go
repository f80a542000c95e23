//go:build unix

package tools

import "golang.org/x/sys/unix"

// fileLinks is the link count of the open descriptor fd.
func fileLinks(fd uintptr) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		return 0, err
	}
	return uint64(st.Nlink), nil
}

// Fd is the descriptor, for linksOf.
func (r fdReader) Fd() uintptr { return uintptr(r) }
