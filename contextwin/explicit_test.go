package contextwin

import (
	"math"
	"testing"
	"time"
)

func TestCacheCaseWorth(t *testing.T) {
	flash := Prices{Input: 0.75, CachedInput: 0.075, Output: 3.75, CacheStorage: 1.00}
	dear := flash
	dear.CacheStorage = 4.5
	tests := []struct {
		name string
		c    CacheCase
		want bool
	}{
		{"every implicit hit lands", CacheCase{Prefix: 40000, HitRate: 1, Reads: 100, TTL: 10 * time.Minute, Prices: flash}, false},
		{"half missed, many reads", CacheCase{Prefix: 40000, HitRate: 0.5, Reads: 10, TTL: 10 * time.Minute, Prices: flash}, true},
		// (1 - 0.5) × 0.675 × reads against 0.75 + 1.00 / 6: 2 reads save 0.675, 3 save 1.0125.
		{"half missed, two reads", CacheCase{Prefix: 40000, HitRate: 0.5, Reads: 2, TTL: 10 * time.Minute, Prices: flash}, false},
		{"half missed, three reads", CacheCase{Prefix: 40000, HitRate: 0.5, Reads: 3, TTL: 10 * time.Minute, Prices: flash}, true},
		{"no hit, a long TTL", CacheCase{Prefix: 40000, HitRate: 0, Reads: 2, TTL: 2 * time.Hour, Prices: flash}, false},
		{"a dear storage", CacheCase{Prefix: 40000, HitRate: 0, Reads: 3, TTL: time.Hour, Prices: dear}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Worth(); got != tt.want {
				t.Errorf("Worth() = %v (saves $%.6f, costs $%.6f), want %v", got, tt.c.Saving(), tt.c.Cost(), tt.want)
			}
		})
	}
}

func TestIdleKeep(t *testing.T) {
	for _, tt := range []struct {
		p    Prices
		want time.Duration
	}{
		{Prices{Input: 0.75, CachedInput: 0.075, CacheStorage: 0.50}, 90 * time.Minute},
		{Prices{Input: 2.00, CachedInput: 0.20, CacheStorage: 4.50}, 26*time.Minute + 40*time.Second},
		{Prices{Input: 0.10, CachedInput: 0.01, CacheStorage: 1.00}, 6 * time.Minute},
		{Prices{Input: 0.30}, 18 * time.Minute}, // no storage price: the fallback's $1.00
	} {
		if got := IdleKeep(tt.p); got.Round(time.Second) != tt.want {
			t.Errorf("IdleKeep(%+v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

// TestForgoneHits: the implicit hits a read of an explicit cache forgoes on the rest of its
// prompt weigh against the cache, and a cache outgrown by the prompt is no longer read.
func TestForgoneHits(t *testing.T) {
	flash := Prices{Input: 0.75, CachedInput: 0.075, Output: 3.75, CacheStorage: 0.5}
	c := CacheCase{Prefix: 12000, HitRate: 0.5, Reads: 4, TTL: 10 * time.Minute, Prices: flash}
	if !c.Worth() || c.Lost() != 0 {
		t.Fatalf("with no growth: worth %v, lost %v", c.Worth(), c.Lost())
	}
	c.Growth = 4000 // long tool outputs: the reads forgo the hits on 0, 4k, 8k and 12k tokens
	if want := 0.5 * 24000 * (0.75 - 0.075) / 1e6; math.Abs(c.Lost()-want) > 1e-12 || c.Worth() {
		t.Errorf("lost $%.6f (want $%.6f), worth %v: saving $%.6f, cost $%.6f", c.Lost(), want, c.Worth(), c.Saving(), c.Cost())
	}
	for _, tt := range []struct {
		held, rest int
		hit        float64
		want       bool
	}{
		{12000, 1000, 0.5, true},
		{12000, 12000, 0.5, true},
		{12000, 13000, 0.5, false},
		{12000, 40000, 0.2, true},
		{12000, 100, 1, false}, // implicit caching hits everything: nothing to gain from the cache
		{12000, 500000, 0, true},
	} {
		if !KeepReading(tt.held, tt.rest, tt.hit, true) {
			t.Errorf("KeepReading(%d, %d, %.1f) over explicit = false: a read that forgoes nothing pays", tt.held, tt.rest, tt.hit)
		}
		if got := KeepReading(tt.held, tt.rest, tt.hit, false); got != tt.want {
			t.Errorf("KeepReading(%d, %d, %.1f) = %v, want %v", tt.held, tt.rest, tt.hit, got, tt.want)
		}
	}
}

// TestOverExplicitForgoesNothing: where a read of an explicit cache also gets implicit hits on the
// rest (what reprise doctor cache may find), neither a cache of the history nor one of the head
// forgoes anything.
func TestOverExplicitForgoesNothing(t *testing.T) {
	c := CacheCase{Prefix: 8000, HitRate: 0.5, Reads: 4, Growth: 1000, Prices: Prices{Input: 0.75, CachedInput: 0.075}}
	h := HeadCase{CacheCase: c, Messages: 20000}
	if c.Lost() <= 0 || h.Lost() <= 0 {
		t.Fatalf("lost %g and %g, want both above 0 by default", c.Lost(), h.Lost())
	}
	c.OverExplicit, h.OverExplicit = true, true
	if c.Lost() != 0 || h.Lost() != 0 || h.Net() != h.Saving()-h.Cost() {
		t.Errorf("over explicit: lost %g and %g, want 0", c.Lost(), h.Lost())
	}
}
