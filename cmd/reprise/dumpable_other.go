//go:build !linux

package main

// makeUndumpable does nothing outside Linux, which is the only system with this per-process
// switch; elsewhere the environment stays as readable to the user's other processes as the OS
// makes it (see docs/decisions.md).
func makeUndumpable() error { return nil }
