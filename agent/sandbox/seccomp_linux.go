package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inetRule is what the filter lets IPv4 and IPv6 sockets do.
type inetRule int

const (
	inetAny   inetRule = iota // the network is allowed
	inetPlain                 // a network namespace of its own: plain TCP and UDP, within it
	inetNone                  // network off without a namespace: no IP socket at all
)

// installFilter installs, on the calling thread, a seccomp filter for what neither Landlock nor
// the namespaces see:
//   - socket families are an allowlist: Unix, netlink (the interfaces of its own namespace) and,
//     by inet, IP. AF_VSOCK (the hypervisor host), AF_SMC, AF_PACKET, Bluetooth, and every family
//     a future kernel adds are refused with EAFNOSUPPORT, in socket(2) and socketpair(2);
//   - inetPlain: only plain TCP streams and datagrams (UDP, ping); Multipath TCP, SCTP and raw
//     sockets are refused with EPROTONOSUPPORT. inetNone: no IP socket, EACCES — without a
//     network namespace nothing else holds UDP, TCP Fast Open (sendto without connect) or an
//     auto-bound listen;
//   - io_uring, which creates sockets without socket(2), fails with ENOSYS (programs fall back);
//   - the kernel keyrings (keyctl, add_key, request_key) fail with ENOSYS: the user's keys
//     (@u, @s) are not the command's to read;
//   - system calls of another ABI (i386, x32), which would bypass these checks, fail with ENOSYS.
//
// Architectures other than amd64 and arm64 go without (Landlock and the namespaces alone).
func installFilter(inet inetRule) error {
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
		offArg0 = 16 // seccomp_data.args[i], low word on little-endian
		offArg1 = 16 + 8
		offArg2 = 16 + 2*8
		x32Bit  = 0x40000000
	)
	var p bpf
	p.ld(offArch)
	p.jeq(arch, "", "nosys")
	p.ld(offNr)
	p.jge(x32Bit, "nosys", "")
	for _, nr := range []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY} {
		p.jeq(nr, "nosys", "")
	}
	p.jeq(unix.SYS_SOCKETPAIR, "family", "")
	p.jeq(unix.SYS_SOCKET, "", "allow")
	p.label("family")
	p.ld(offArg0)
	p.jeq(unix.AF_UNIX, "allow", "")
	p.jeq(unix.AF_NETLINK, "allow", "")
	p.jeq(unix.AF_INET, "inet", "")
	p.jeq(unix.AF_INET6, "inet", "nofamily")
	p.label("inet")
	switch inet {
	case inetAny:
		p.ret(unix.SECCOMP_RET_ALLOW)
	case inetNone:
		p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	default:
		p.ld(offArg1)
		p.and(0xf) // the type without SOCK_NONBLOCK and SOCK_CLOEXEC
		p.jeq(unix.SOCK_DGRAM, "allow", "")
		p.jeq(unix.SOCK_STREAM, "", "deny")
		p.ld(offArg2)
		p.jeq(0, "allow", "")
		p.jeq(unix.IPPROTO_TCP, "allow", "deny")
	}
	p.label("allow")
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("deny")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT))
	p.label("nofamily")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT))
	p.label("nosys")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	prog := p.assemble()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// bpf assembles a classic BPF program whose jumps name labels ("" is the next instruction).
type bpf struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	labels map[string]int
}

func (p *bpf) emit(f unix.SockFilter) { p.ins = append(p.ins, f) }

func (p *bpf) ld(off uint32) {
	p.emit(unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (p *bpf) and(k uint32) {
	p.emit(unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

func (p *bpf) ret(k uint32) { p.emit(unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k}) }

func (p *bpf) jump(op uint16, k uint32, jt, jf string) {
	if p.jumps == nil {
		p.jumps = map[int][2]string{}
	}
	p.jumps[len(p.ins)] = [2]string{jt, jf}
	p.emit(unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (p *bpf) jeq(k uint32, jt, jf string) { p.jump(unix.BPF_JEQ, k, jt, jf) }
func (p *bpf) jge(k uint32, jt, jf string) { p.jump(unix.BPF_JGE, k, jt, jf) }

func (p *bpf) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

// assemble resolves the labels; every one is forward, as classic BPF requires.
func (p *bpf) assemble() []unix.SockFilter {
	for i, j := range p.jumps {
		off := func(label string) uint8 {
			if label == "" {
				return 0
			}
			target, ok := p.labels[label]
			if !ok || target <= i || target-i-1 > 255 {
				panic("seccomp: bad jump to " + label)
			}
			return uint8(target - i - 1)
		}
		p.ins[i].Jt, p.ins[i].Jf = off(j[0]), off(j[1])
	}
	return p.ins
}
