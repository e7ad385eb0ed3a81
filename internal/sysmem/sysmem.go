// Package sysmem reads what bounds the memory of this process: the
// machine's free memory, the cgroup's limit, the address-space limit.
// Meminfo, Status and CgroupHeadroom return bytes, or -1 where the bound
// is unknown or there is none (not Linux, no /proc, no limit); callers
// compose the bounds into their own rule.
package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Meminfo returns a field of /proc/meminfo such as "MemAvailable:", in
// bytes.
func Meminfo(key string) int64 { return procField("/proc/meminfo", key) }

// Status returns a field of /proc/self/status such as "VmSize:", in bytes.
func Status(key string) int64 { return procField("/proc/self/status", key) }

// CgroupHeadroom returns memory.max less memory.current of the cgroup v2
// this process sees at /sys/fs/cgroup, at least 0.
func CgroupHeadroom() int64 {
	lim := fileInt("/sys/fs/cgroup/memory.max")
	if lim < 0 {
		return -1 // "max": no limit
	}
	return max(lim-max(fileInt("/sys/fs/cgroup/memory.current"), 0), 0)
}

// procField reads a "Key:   123 kB" line of a /proc file, in bytes.
func procField(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
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
			return -1
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || v < 0 {
			return -1
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v <<= 10
		}
		return v
	}
	return -1
}

// fileInt reads a file holding one non-negative integer.
func fileInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v < 0 {
		return -1
	}
	return v
}
