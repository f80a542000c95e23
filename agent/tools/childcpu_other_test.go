//go:build !unix

package tools

import "time"

// childCPU: not measured here.
func childCPU() time.Duration { return 0 }
