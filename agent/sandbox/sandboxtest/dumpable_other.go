//go:build !linux

package sandboxtest

func undumpable() error { return nil }
