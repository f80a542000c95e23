package sandbox

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock ABI the sandbox needs: 3 makes truncate(2) a write like any other, 4 adds TCP
// connect and bind, 6 the scopes — without them a command could signal Reprise, or reach the
// desktop's abstract sockets (X11: keystrokes into the user's other programs).
const minABI = 6

// writeAccess is every Landlock right that changes the file system. Reading and executing are not
// handled, so they stay allowed everywhere.
const writeAccess = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
	unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
	unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
	unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
	unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
	unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE

// fileAccess are the rights that apply to a file rule (a device), the rest being directory rights.
const fileAccess = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE

// rulesetAttr is struct landlock_ruleset_attr as of ABI 6.
type rulesetAttr struct {
	fs, net, scoped uint64
}

func abiVersion() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// probe says why cfg cannot be enforced here, or "" when it can.
func probe(cfg Config) string {
	abi, err := abiVersion()
	if err != nil {
		return fmt.Sprintf("Landlock is not available in this kernel (%v)", err)
	}
	if abi < minABI {
		return fmt.Sprintf("this kernel's Landlock ABI is %d, the sandbox needs %d (Linux 6.12 or later)", abi, minABI)
	}
	return ""
}

// restrict applies the Landlock rules of sp to the calling thread, and the system-call filter.
func restrict(sp spec) error {
	abi, err := abiVersion()
	if err != nil || abi < minABI {
		return fmt.Errorf("no Landlock here (ABI %d, %v)", abi, err)
	}
	attr := rulesetAttr{fs: writeAccess, scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL}
	inet := inetAny
	switch {
	case sp.Network:
	case sp.NetNS: // loopback is the namespace's own: tests may listen and connect there
		inet = inetPlain
	default:
		attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		inet = inetNone
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("create the Landlock ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	if err := allowBeneath(int(fd), sp.Workspace, writeAccess, true); err != nil {
		return err
	}
	writable := slices.Clone(sp.Writable)
	if sp.Namespace { // the private ones, mounted over the user's
		writable = append(writable, "/dev/shm")
		if sp.TempDir != "" {
			writable = append(writable, "/tmp")
		}
	}
	for _, dir := range writable {
		if err := allowBeneath(int(fd), dir, writeAccess, false); err != nil {
			return err
		}
	}
	devs := devices
	if sp.Namespace { // a private devpts instance: only the command's own terminals are there
		devs = append(slices.Clone(devs), "/dev/ptmx", "/dev/pts")
	}
	for _, dev := range devs {
		if err := allowBeneath(int(fd), dev, writeAccess, false); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("enforce the Landlock rules: %w", errno)
	}
	if err := installFilter(inet); err != nil {
		return fmt.Errorf("install the system-call filter: %w", err)
	}
	return nil
}

// allowBeneath grants access under path. A missing path is skipped unless required; rights that
// do not apply to a non-directory are dropped for it.
func allowBeneath(ruleset int, path string, access uint64, required bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if !required {
			return nil
		}
		return fmt.Errorf("open %s for the sandbox: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s for the sandbox: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileAccess
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("allow writes under %s: %w", path, errno)
	}
	return nil
}
