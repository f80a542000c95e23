package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyUncoveredSockets installs, on the calling thread, a seccomp filter for what Landlock's TCP
// rules do not see, so that "network off" holds:
//   - an IPv4 or IPv6 socket may be a datagram socket (UDP, ping) or a plain TCP stream; Multipath
//     TCP (on by default in many kernels, and for Go listeners), SCTP (a SOCK_SEQPACKET picks it
//     when its module is loaded) and raw sockets are refused with EPROTONOSUPPORT;
//   - AF_PACKET sockets (raw frames, for whoever has CAP_NET_RAW) likewise;
//   - io_uring, which creates sockets without socket(2), fails with ENOSYS (programs fall back);
//   - system calls of another ABI (i386, x32), which would bypass these checks, fail with ENOSYS.
//
// Architectures other than amd64 and arm64 go without (Landlock alone).
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
	for _, nr := range []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		p.jeq(nr, "nosys", "")
	}
	p.jeq(unix.SYS_SOCKET, "", "allow")
	p.ld(offArg0)
	p.jeq(unix.AF_INET, "inet", "")
	p.jeq(unix.AF_INET6, "inet", "")
	p.jeq(unix.AF_PACKET, "deny", "allow")
	p.label("inet")
	p.ld(offArg1)
	p.and(0xf) // the type without SOCK_NONBLOCK and SOCK_CLOEXEC
	p.jeq(unix.SOCK_DGRAM, "allow", "")
	p.jeq(unix.SOCK_STREAM, "", "deny")
	p.ld(offArg2)
	p.jeq(0, "allow", "")
	p.jeq(unix.IPPROTO_TCP, "allow", "deny")
	p.label("allow")
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("deny")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT))
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
