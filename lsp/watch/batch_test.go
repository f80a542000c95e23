package watch

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type event struct {
	path string
	op   Op
}

func TestBatchDedup(t *testing.T) {
	tests := []struct {
		name   string
		events []event
		lost   bool // an overflow after the events
		want   []Change
	}{
		{"one write", []event{{"a", Changed}}, false, []Change{{"a", Changed}}},
		{"writes fold", []event{{"a", Changed}, {"a", Changed}, {"a", Changed}}, false, []Change{{"a", Changed}}},
		{"create then write is created", []event{{"a", Created}, {"a", Changed}}, false, []Change{{"a", Created}}},
		{"write then remove is removed", []event{{"a", Changed}, {"a", Removed}}, false, []Change{{"a", Removed}}},
		{"create then remove is removed", []event{{"a", Created}, {"a", Removed}}, false, []Change{{"a", Removed}}},
		{"remove then create is changed", []event{{"a", Removed}, {"a", Created}}, false, []Change{{"a", Changed}}},
		{"create, remove, create is created", []event{{"a", Created}, {"a", Removed}, {"a", Created}}, false, []Change{{"a", Created}}},
		{"remove, create, remove is removed", []event{{"a", Removed}, {"a", Created}, {"a", Removed}}, false, []Change{{"a", Removed}}},
		{
			"rename is removed plus created, sorted",
			[]event{{"z/new", Created}, {"b/old", Removed}},
			false,
			[]Change{{"b/old", Removed}, {"z/new", Created}},
		},
		{"overflow replaces the batch", []event{{"a", Changed}, {"b", Created}}, true, []Change{rescanAll}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBatcher(time.Millisecond, time.Second)
			now := time.Unix(0, 0)
			for _, e := range tt.events {
				b.add(now, e.path, e.op)
			}
			if tt.lost {
				b.overflow(now)
				b.add(now, "after", Created) // swallowed: the batch is a rescan already
			}
			got := b.take()
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("batch (-got +want):\n%s", diff)
			}
			if !b.empty() {
				t.Errorf("batcher not empty after take")
			}
		})
	}
}

func TestBatchDue(t *testing.T) {
	const delay, maxDelay = 10 * time.Millisecond, 100 * time.Millisecond
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name   string
		events []int // event times, ms after t0
		wantAt int   // when the batch is due, ms after t0; -1 for never
	}{
		{"empty is never due", nil, -1},
		{"one event: after the quiet period", []int{0}, 10},
		{"events extend the quiet period", []int{0, 5, 9}, 19},
		{"a steady stream is cut at MaxDelay", []int{0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBatcher(delay, maxDelay)
			for _, ms := range tt.events {
				b.add(at(ms), "a", Changed)
			}
			got, ok := b.due()
			if tt.wantAt < 0 {
				if ok {
					t.Fatalf("due() = %v, true; want nothing due", got)
				}
				return
			}
			if !ok || !got.Equal(at(tt.wantAt)) {
				t.Fatalf("due() = %v, %v; want %v, true", got.Sub(t0), ok, time.Duration(tt.wantAt)*time.Millisecond)
			}
			if c := b.takeDue(at(tt.wantAt - 1)); c != nil {
				t.Errorf("takeDue 1ms early = %v; want nil", c)
			}
			if c := b.takeDue(at(tt.wantAt)); len(c) != 1 {
				t.Errorf("takeDue on time = %v; want the batch", c)
			}
		})
	}
}

// BenchmarkBatch pushes 10,000 synthetic events (1,000 paths, each created, written eight
// times and removed or kept) through the dedup and takes the batch.
func BenchmarkBatch(b *testing.B) {
	const events, paths = 10_000, 1_000
	names := make([]string, paths)
	for i := range names {
		names[i] = fmt.Sprintf("pkg%02d/file%03d.go", i%50, i)
	}
	ops := [...]Op{Created, Changed, Changed, Changed, Changed, Changed, Changed, Changed, Changed, Removed}
	bt := newBatcher(500*time.Millisecond, 2*time.Second)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		for i := range events {
			bt.add(now, names[i%paths], ops[i/paths])
		}
		if got := bt.take(); len(got) != paths {
			b.Fatalf("batch has %d changes, want %d", len(got), paths)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}
