package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock ABI versions the sandbox needs: 3 makes truncate(2) a write like any other, 4 adds
// TCP connect and bind; 6 adds the scopes (signals and abstract sockets), used when present.
const (
	minABI        = 3
	minABINetwork = 4
	scopeABI      = 6
)

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

// rulesetAttr is struct landlock_ruleset_attr as of ABI 6; its size tells the kernel which
// fields are meant.
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
	need := minABINetwork
	if cfg.AllowNetwork {
		need = minABI
	}
	if abi < need {
		return fmt.Sprintf("this kernel's Landlock ABI is %d, the sandbox needs %d", abi, need)
	}
	return ""
}

// restrict applies the Landlock rules of sp to the calling thread, and the socket filter when the
// network is off.
func restrict(sp spec) error {
	abi, err := abiVersion()
	if err != nil || abi < minABI {
		return fmt.Errorf("Landlock is not available (ABI %d, %v)", abi, err)
	}
	attr := rulesetAttr{fs: writeAccess}
	size := unsafe.Sizeof(attr.fs)
	if abi >= minABINetwork {
		size += unsafe.Sizeof(attr.net)
		if !sp.Network {
			attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	} else if !sp.Network {
		return fmt.Errorf("Landlock ABI %d cannot turn the network off", abi)
	}
	if abi >= scopeABI {
		size += unsafe.Sizeof(attr.scoped)
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("create the Landlock ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	if err := allowBeneath(int(fd), sp.Workspace, writeAccess, true); err != nil {
		return err
	}
	for _, dir := range sp.Writable {
		if err := allowBeneath(int(fd), dir, writeAccess, false); err != nil {
			return err
		}
	}
	for _, dev := range devices {
		if err := allowBeneath(int(fd), dev, fileAccess, false); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("enforce the Landlock rules: %w", errno)
	}
	if !sp.Network {
		if err := denyUncoveredSockets(); err != nil {
			return fmt.Errorf("install the socket filter: %w", err)
		}
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
