package contextwin

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		max         int
		want        string
		wantOmitted int
	}{
		{"fits", "hello", 10, "hello", 0},
		{"exact", "0123456789", 10, "0123456789", 0},
		{"ascii", "0123456789abcdefghij", 10, "0123" + Marker(10) + "efghij", 10},
		{"multibyte fits by runes", "ééééé", 5, "ééééé", 0},
		{"multibyte", strings.Repeat("é", 20), 10, "éééé" + Marker(10) + "éééééé", 10},
		{"emoji", strings.Repeat("😀", 12), 10, "😀😀😀😀" + Marker(2) + "😀😀😀😀😀😀", 2},
		{"zero max keeps all", "abc", 0, "abc", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, omitted := Truncate(tt.in, tt.max)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Truncate(%q, %d) mismatch (-want +got):\n%s", tt.in, tt.max, diff)
			}
			if omitted != tt.wantOmitted {
				t.Errorf("omitted = %d, want %d", omitted, tt.wantOmitted)
			}
		})
	}
}

// TestTruncateKeepsHeadAndTail checks the 40/60 split and valid UTF-8 over random inputs.
func TestTruncateKeepsHeadAndTail(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aé😀\n中b ")
	for range 500 {
		n := r.IntN(300)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(rs)
		max := 10 + r.IntN(100)
		got, omitted := Truncate(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) is not valid UTF-8", s, max)
		}
		if n <= max {
			if got != s || omitted != 0 {
				t.Fatalf("Truncate(%q, %d) changed a fitting string", s, max)
			}
			continue
		}
		head, tail := Split(max)
		want := string(rs[:head]) + Marker(n-head-tail) + string(rs[n-tail:])
		if got != want || omitted != n-head-tail {
			t.Fatalf("Truncate(%q, %d) = %q, %d; want %q, %d", s, max, got, omitted, want, n-head-tail)
		}
	}
}
