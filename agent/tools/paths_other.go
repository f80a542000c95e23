//go:build !windows

package tools

// fsName is the name the file system opens for a path component: the component itself here.
func fsName(name string) string { return name }
