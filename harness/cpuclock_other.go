//go:build !linux

package harness

// processCPUTime is not available outside Linux: the CPU backend times by the wall clock there.
func processCPUTime() (ns int64, ok bool) { return 0, false }
