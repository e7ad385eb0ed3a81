package main

import (
	"math"

	"github.com/misgrid/misgrid/internal/sysmem"
	"github.com/misgrid/misgrid/mesh"
)

// The Go runtime cannot fail an allocation: it throws, and the host
// process dies. So before a call allocates in proportion to a caller's
// count it compares the bytes that count implies with the memory the
// process may still take, and refuses with MISGRID_ERR_NOMEM saying how
// much it would need. Counts backed by caller arrays are also read chunk
// by chunk (carray.go), so a count larger than its array fails at the
// array's end; the check here covers what no array backs (the vertices of
// a graph, the vectors of a near-null space) and counts too large for
// this machine.

// memCheckFloor is the size below which no check is made: reading /proc
// costs more than such a call.
const memCheckFloor = 64 << 20

// needMemory refuses a call whose estimated allocation, bytes, exceeds the
// memory available to the process. what names the allocation.
func needMemory(what string, bytes float64) error {
	if bytes < memCheckFloor {
		return nil
	}
	avail, source := availableMemory()
	if bytes <= float64(avail) {
		return nil
	}
	return errorf(statusNoMem, "%s needs about %s (%.0f bytes), more than the %s available (%s)",
		what, mesh.FormatBytes(int64(min(bytes, math.MaxInt64))), bytes, mesh.FormatBytes(avail), source)
}

// availableMemory is the least of the machine's available memory (swap
// included), the cgroup's remaining limit and the address space left under
// RLIMIT_AS, with the name of the one that binds.
func availableMemory() (int64, string) {
	best, source := int64(math.MaxInt64), "no limit known"
	take := func(v int64, ok bool, name string) {
		if ok && v < best {
			best, source = max(v, 0), name
		}
	}
	mem, swap := sysmem.Meminfo("MemAvailable:"), sysmem.Meminfo("SwapFree:")
	take(mem+max(swap, 0), mem >= 0, "MemAvailable+SwapFree in /proc/meminfo")
	cg := sysmem.CgroupHeadroom()
	take(cg, cg >= 0, "the cgroup's memory.max less memory.current")
	as, limited := sysmem.AddressSpaceHeadroom()
	take(as, limited, "the address-space limit RLIMIT_AS less the process's VmSize")
	return best, source
}
