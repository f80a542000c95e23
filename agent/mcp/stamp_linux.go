package mcp

import (
	"fmt"
	"io/fs"
	"syscall"
)

// changeStamp is what identifies a file's last change without reading it: its inode and change
// time, which utimes cannot set.
func changeStamp(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d %d.%d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
	}
	return info.ModTime().String()
}
