//go:build !unix

package runner

import "os/exec"

// ownProcessGroup leaves cmd as it is where there are no process groups.
func ownProcessGroup(cmd *exec.Cmd) (killGroup func()) { return func() {} }
