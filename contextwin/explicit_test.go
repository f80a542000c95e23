package contextwin

import (
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
