//go:build !unix

package sandbox

import "os"

// processStatus: no signals here (on Windows, Cmd.Wait knows when the command was killed).
func processStatus(ps *os.ProcessState) Status {
	if ps == nil {
		return Status{Code: -1}
	}
	return Status{Code: ps.ExitCode()}
}
