//go:build race

package main

// underRace is set when the tests run with the race detector.
const underRace = true
