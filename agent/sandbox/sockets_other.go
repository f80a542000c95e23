//go:build !linux

package sandbox

// mountsPrivateTemp: only Linux mounts a private /tmp for commands.
const mountsPrivateTemp = false

// outsideSockets: the profile refuses connections to Unix sockets outside by path.
func outsideSockets([]string) []string { return nil }
