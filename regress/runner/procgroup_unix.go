//go:build unix

package runner

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cmd the leader of a new process group and makes a
// cancellation interrupt, and the end of the run kill, the whole group: a
// suite command is often a shell or a launcher whose children (python,
// a benchmark binary) would otherwise outlive it and keep the GPU busy.
func ownProcessGroup(cmd *exec.Cmd) (killGroup func()) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	return func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}
