package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Protocols whose sockets Landlock's TCP rules do not see: Multipath TCP (on by default since Go
// 1.24 for listeners, and enabled in many kernels) and SCTP. With the network off they are refused
// by a seccomp filter, so they cannot carry what TCP may not.
const (
	ipprotoSCTP  = 132
	ipprotoMPTCP = 262
)

// denyUncoveredSockets installs, on the calling thread, a seccomp filter that fails socket(2)
// with EPROTONOSUPPORT for those protocols. Architectures other than amd64 and arm64 go without
// (Landlock alone).
func denyUncoveredSockets() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	const (
		offNr   = 0
		offArch = 4
		offArg2 = 16 + 2*8 // seccomp_data.args[2], low word on little-endian
		deny    = unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT)
		x32Bit  = 0x40000000
	)
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	jge := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	// Syscalls of another ABI (i386 compat, x32) are refused: their socket calls would escape the
	// checks below, and a 32-bit build tool is rare enough.
	prog := []unix.SockFilter{
		ld(offArch),                        // 0
		jeq(arch, 0, 7),                    // 1: another ABI → deny
		ld(offNr),                          // 2
		jge(x32Bit, 5, 0),                  // 3: x32 → deny
		jeq(uint32(unix.SYS_SOCKET), 0, 3), // 4: not socket → allow
		ld(offArg2),                        // 5
		jeq(ipprotoMPTCP, 2, 0),            // 6
		jeq(ipprotoSCTP, 1, 0),             // 7
		ret(unix.SECCOMP_RET_ALLOW),        // 8
		ret(deny),                          // 9
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
