//go:build !linux

package mcp

import "io/fs"

// changeStamp is what identifies a file's last change without reading it: here, its size and
// modification time (a program can set the latter back; files past the bound are rare).
func changeStamp(info fs.FileInfo) string { return info.ModTime().String() }
