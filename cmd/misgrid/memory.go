package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// demoBytesPerVertex is the demo's peak resident memory per cube vertex:
// measured maximum RSS over N³ was 444, 419 and 415 bytes at N = 64, 128
// and 192 (the hex8 mesh, its 27-point graph, the classification's facet
// tables, the MIS, the hierarchy and the VTU writer, with the Go
// collector's headroom), plus a fifth for margin.
const demoBytesPerVertex = 520

// demoMaxN bounds -n whatever the machine: vertex ids are int32.
const demoMaxN = 1200

// demoBytes estimates the peak memory of demo -n n.
func demoBytes(n int) int64 {
	return demoBytesPerVertex*int64(n)*int64(n)*int64(n) + 64<<20
}

// demoMemoryHelp states the demo's memory at a few sizes, for the help.
func demoMemoryHelp() string {
	return fmt.Sprintf("about %s at N = 48, %s at 128, %s at 256",
		formatBytes(demoBytes(48)), formatBytes(demoBytes(128)), formatBytes(demoBytes(256)))
}

// checkDemoMemory refuses a cube the machine cannot hold, naming the
// largest that fits.
func checkDemoMemory(n int) error {
	avail, from, ok := availableMemory()
	need := demoBytes(n)
	if !ok || need <= avail {
		return nil
	}
	fit := n
	for fit > 4 && demoBytes(fit) > avail {
		fit--
	}
	return fmt.Errorf("-n %d needs about %s of memory and %s: -n %d is the largest that fits",
		n, formatBytes(need), from, fit)
}

// availableMemory returns the memory this process can still take, from
// Linux's MemAvailable and the cgroup's limit, whichever is smaller, with
// where it came from; ok is false where neither can be read. A variable,
// so that tests can set the machine.
var availableMemory = func() (bytes int64, from string, ok bool) {
	if kb, err := meminfoField("/proc/meminfo", "MemAvailable:"); err == nil {
		bytes, from, ok = kb<<10, fmt.Sprintf("the machine has %s available", formatBytes(kb<<10)), true
	}
	limit, err1 := readInt("/sys/fs/cgroup/memory.max")
	used, err2 := readInt("/sys/fs/cgroup/memory.current")
	if err1 == nil && err2 == nil && (!ok || limit-used < bytes) {
		bytes, from, ok = limit-used, fmt.Sprintf("the cgroup's limit leaves %s", formatBytes(limit-used)), true
	}
	return bytes, from, ok
}

// meminfoField reads one "Name: value kB" line of /proc/meminfo.
func meminfoField(path, name string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s line", path, name)
}

// readInt reads a file holding one integer ("max" is not one).
func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// formatBytes writes a size in MB or GB, as a person reads it.
func formatBytes(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
}
