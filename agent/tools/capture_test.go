package tools

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/contextwin"
)

// TestCaptureMatchesTruncate is the capture's contract: streamed in any chunks, a valid UTF-8
// output renders exactly as contextwin.Truncate renders it whole.
func TestCaptureMatchesTruncate(t *testing.T) {
	alphabet := []string{"a", "b", " ", "\n", "é", "ß", "€", "中", "😀", "\u0301", "z"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		maxChars := 1 + rng.IntN(60)
		if i%10 == 0 {
			maxChars = 4000
		}
		var b strings.Builder
		n := rng.IntN(6 * maxChars)
		if i%7 == 0 {
			n = rng.IntN(40 * maxChars) // far past head+tail: the ring wraps many times
		}
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		whole := b.String()

		c := newCapture(maxChars, nil)
		for rest := []byte(whole); len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(3*maxChars+8)) // cuts inside runes too
			c.Write(rest[:k])
			rest = rest[k:]
		}
		gotText, gotChars, gotOmitted := c.render()
		wantText, wantOmitted := contextwin.Truncate(whole, maxChars)
		if diff := cmp.Diff(
			[]any{gotText, gotChars, gotOmitted},
			[]any{wantText, utf8.RuneCountInString(whole), wantOmitted},
		); diff != "" {
			t.Fatalf("case %d (max %d, %d bytes) (-got +want):\n%s", i, maxChars, len(whole), diff)
		}
	}
}

// TestCaptureInvalidUTF8 checks that garbage renders as valid text with a sane count.
func TestCaptureInvalidUTF8(t *testing.T) {
	c := newCapture(10, nil)
	c.Write(bytes.Repeat([]byte{0x80, 0xff, 'a'}, 1000))
	text, chars, omitted := c.render()
	if !utf8.ValidString(text) || omitted <= 0 || chars < omitted {
		t.Errorf("render = %q, %d chars, %d omitted", text, chars, omitted)
	}
}

// TestCaptureBoundedMemory writes 50 MB and checks what the capture holds: the head, the ring and
// nothing else, the spill having gone to disk and stopped at its cap.
func TestCaptureBoundedMemory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	c := newCapture(4000, newSpill(dir, "flood", 20480, 1<<20))
	chunk := bytes.Repeat([]byte("y\n"), 32<<10)
	for range 50_000_000 / len(chunk) {
		c.Write(chunk)
	}
	held := cap(c.head) + len(c.ring) + cap(c.spill.pending)
	if limit := 4000 * utf8.UTFMax; held > limit {
		t.Errorf("capture holds %d bytes, want ≤ %d", held, limit)
	}
	path, err := c.spill.finish()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 1<<20 || !c.spill.capped || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved %d bytes, capped %v, mode %v; want %d, true, 0600", fi.Size(), c.spill.capped, fi.Mode().Perm(), 1<<20)
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("spill dir mode %v (%v), want 0700", di.Mode().Perm(), err)
	}
}

// TestSpillThreshold checks that an output is saved only past the threshold, whole.
func TestSpillThreshold(t *testing.T) {
	for _, size := range []int{0, 100, 20480, 20481, 100_000} {
		dir := filepath.Join(t.TempDir(), "out")
		c := newCapture(50, newSpill(dir, "t", 20480, 1<<20))
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 777)
			c.Write(rest[:k])
			rest = rest[k:]
		}
		path, err := c.spill.finish()
		if err != nil {
			t.Fatal(err)
		}
		if size <= 20480 {
			if path != "" {
				t.Errorf("%d bytes: saved to %s, want not saved", size, path)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%d bytes: spill dir created", size)
			}
			continue
		}
		if got := readText(t, path); got != string(data) {
			t.Errorf("%d bytes: saved %d bytes, not the whole output", size, len(got))
		}
	}
}

func TestCountContinuation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		p := make([]byte, rng.IntN(200))
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		want := 0
		for _, b := range p {
			if b&0xC0 == 0x80 {
				want++
			}
		}
		if got := countContinuation(p); got != want {
			t.Fatalf("countContinuation(%x) = %d, want %d", p, got, want)
		}
	}
}
