package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
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
		what, formatBytes(bytes), bytes, formatBytes(float64(avail)), source)
}

// availableMemory is the least of the machine's available memory, the
// cgroup's remaining limit and the address space left under RLIMIT_AS,
// with the name of the one that binds.
func availableMemory() (int64, string) {
	best, source := int64(math.MaxInt64), "no limit known"
	take := func(v int64, ok bool, name string) {
		if ok && v < best {
			best, source = max(v, 0), name
		}
	}
	mem, ok := procField("/proc/meminfo", "MemAvailable:")
	swap, _ := procField("/proc/meminfo", "SwapFree:")
	take(mem+swap, ok, "MemAvailable+SwapFree in /proc/meminfo")
	if lim, ok := fileInt("/sys/fs/cgroup/memory.max"); ok {
		cur, _ := fileInt("/sys/fs/cgroup/memory.current")
		take(lim-cur, true, "the cgroup's memory.max less memory.current")
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur < math.MaxInt64 {
		vm, _ := procField("/proc/self/status", "VmSize:")
		take(int64(rl.Cur)-vm, true, "the address-space limit RLIMIT_AS less the process's VmSize")
	}
	return best, source
}

// procField reads a "Key:   123 kB" line of a /proc file, in bytes.
func procField(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), key)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v <<= 10
		}
		return v, true
	}
	return 0, false
}

// fileInt reads a file holding one integer ("max" is no limit).
func fileInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

func formatBytes(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	default:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
}
