package tools

import "fmt"

// Hard links. A regular file with more than one name may be a file outside the workspace under a
// name inside it (made by a command that ran unconfined, or unpacked from an archive): os.Root
// confines paths, not inodes. Its other names cannot be listed without walking every file system,
// so the file tools neither read nor change a file with more than one link, counted on the open
// descriptor that would be read (no window between the check and the read). Editors' unsaved
// buffers are the user's and are not concerned.

// linkRefusal is the message for a file with n names.
func linkRefusal(given string, n uint64) string {
	return fmt.Sprintf("refused: %s has %d names (hard links); the file tools only read or change a file whose one name is in the workspace, as another name may be a file outside it", given, n)
}

// linkedNote tells the model of the files a search left out for their links.
func linkedNote(n int) string {
	return fmt.Sprintf("[%s with more than one name (hard links) not searched: the file tools only read a file whose one name is in the workspace]", plural(n, "file"))
}

// fder is an open file whose descriptor the link count is read from.
type fder interface{ Fd() uintptr }

// linksOf returns the number of names of the open file f, 1 when it cannot tell.
func linksOf(f any) uint64 {
	d, ok := f.(fder)
	if !ok {
		return 1
	}
	n, err := fileLinks(d.Fd())
	if err != nil || n == 0 {
		return 1
	}
	return n
}
