package main

import "testing"

// TestBenchSpawn: reprise bench's start-up measure works for both protocols (the figures are
// reprise bench's to print, not a test's to judge).
func TestBenchSpawn(t *testing.T) {
	for _, mode := range []string{"serve", "acp"} {
		d, rss, err := benchSpawn(binary(t), mode, 3)
		if err != nil || d <= 0 {
			t.Fatalf("%s: %v, %v", mode, d, err)
		}
		t.Logf("%s: spawn → initialize %.1f ms, RSS %.1f MiB", mode, d.Seconds()*1000, rss)
	}
}
