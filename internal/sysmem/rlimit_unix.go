//go:build unix

package sysmem

import (
	"math"
	"syscall"
)

// AddressSpaceHeadroom returns RLIMIT_AS less the process's VmSize (which
// may be negative), and whether such a limit is set.
func AddressSpaceHeadroom() (int64, bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) != nil || rl.Cur >= math.MaxInt64 {
		return 0, false
	}
	return int64(rl.Cur) - max(Status("VmSize:"), 0), true
}
