package secret

import (
	"bytes"
	"slices"
)

// scanLimit is how many secrets are searched for one by one (a vectorised bytes.Index each, the
// fastest for the API keys alone); past it, an index finds them all in one pass over the text,
// so that the hundreds of values of the credential files cost each output one pass, not
// hundreds.
const scanLimit = 8

// index finds any of many secrets in one pass. Every secret is at least MinLen (8) bytes long, so
// the 8 bytes at each position of the text are looked up; a bit set of their hashes rules out
// almost every position before the map is consulted.
type index struct {
	secrets []named          // the Redactor's, longest first
	filter  [1 << 10]uint64  // 65,536 bits: the hashes of the secrets' first 8 bytes
	byKey   map[uint64][]int // secrets by their first 8 bytes, longest first
	sorted  []int            // secrets in byte order, for pendingPrefix's tails under 8 bytes
	longest int
}

func newIndex(secrets []named) *index {
	x := &index{secrets: secrets, byKey: map[uint64][]int{}}
	for i, s := range secrets {
		k := load8(s.value, 0)
		h := hash(k)
		x.filter[h>>6] |= 1 << (h & 63)
		x.byKey[k] = append(x.byKey[k], i)
		x.sorted = append(x.sorted, i)
		x.longest = max(x.longest, len(s.value))
	}
	slices.SortFunc(x.sorted, func(a, b int) int { return bytes.Compare(secrets[a].value, secrets[b].value) })
	return x
}

// load8 is the 8 bytes of b at i as a number.
func load8[T string | []byte](b T, i int) uint64 {
	_ = b[i+7]
	return uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
		uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
}

// hash spreads a key over the filter's 16 bits (Fibonacci hashing).
func hash(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> 48 }

func (x *index) maybe(k uint64) bool {
	h := hash(k)
	return x.filter[h>>6]&(1<<(h&63)) != 0
}

// next finds the leftmost secret in b, the longest at that position, as Redactor.next does.
func (x *index) next(b []byte) (at, which int) { return indexNext(x, b) }

func indexNext[T string | []byte](x *index, b T) (at, which int) {
	for i := 0; i+MinLen <= len(b); i++ {
		k := load8(b, i)
		if !x.maybe(k) {
			continue
		}
		for _, j := range x.byKey[k] {
			if hasAt(b, i, x.secrets[j].value) {
				return i, j
			}
		}
	}
	return -1, 0
}

// nextString is next for a string, without copying it.
func (x *index) nextString(s string) (at, which int) { return indexNext(x, s) }

// hasAt tells whether v is in b at i.
func hasAt[T string | []byte](b T, i int, v []byte) bool {
	if len(b)-i < len(v) {
		return false
	}
	for k, c := range v {
		if b[i+k] != c {
			return false
		}
	}
	return true
}

// pendingPrefix is Redactor.pendingPrefix: the longest end of b that begins a longer secret.
func (x *index) pendingPrefix(b []byte) int {
	for k := min(len(b), x.longest-1); k > 0; k-- {
		tail := b[len(b)-k:]
		if k >= MinLen {
			kk := load8(tail, 0)
			if !x.maybe(kk) {
				continue
			}
			for _, j := range x.byKey[kk] {
				if v := x.secrets[j].value; len(v) > k && bytes.HasPrefix(v, tail) {
					return k
				}
			}
			continue
		}
		i, _ := slices.BinarySearchFunc(x.sorted, tail, func(j int, t []byte) int { return bytes.Compare(x.secrets[j].value, t) })
		for ; i < len(x.sorted) && bytes.HasPrefix(x.secrets[x.sorted[i]].value, tail); i++ {
			if len(x.secrets[x.sorted[i]].value) > k {
				return k
			}
		}
	}
	return 0
}
