package sandbox

import (
	"bufio"
	"os"
	"slices"
	"strings"
)

// maxSockets bounds the sockets listed for one command: the list travels in an argument.
const maxSockets = 512

// outsideSockets lists the listening Unix sockets with a path, outside keep, from the kernel's
// table for this network namespace: the Docker daemon (root on the host), the ssh-agent (signing
// as the user), D-Bus (which can start programs outside the sandbox), X11, and whatever comes
// next. The sandbox covers each; Landlock (before its Unix-socket rights) cannot refuse a connect.
func outsideSockets(keep []string) []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	for sc.Scan() && len(out) < maxSockets {
		// Num RefCount Protocol Flags Type St Inode Path; the path may hold spaces.
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[7], "/") {
			continue // the header, unnamed and abstract sockets (the Landlock scope covers those)
		}
		p := strings.Join(fields[7:], " ")
		if slices.Contains(out, p) || slices.ContainsFunc(keep, func(k string) bool { return k != "" && within(k, p) }) {
			continue
		}
		out = append(out, p)
	}
	return out
}
