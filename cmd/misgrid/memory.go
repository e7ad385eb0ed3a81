package main

import (
	"fmt"

	"github.com/misgrid/misgrid/mesh"
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
		mesh.FormatBytes(demoBytes(48)), mesh.FormatBytes(demoBytes(128)), mesh.FormatBytes(demoBytes(256)))
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
		n, mesh.FormatBytes(need), from, fit)
}

// availableMemory returns the memory this process can still take and
// what bounds it, as mesh.AvailableMemory says; ok is false where nothing
// is known. A variable, so that tests can set the machine.
var availableMemory = func() (bytes int64, from string, ok bool) {
	avail, of := mesh.AvailableMemory()
	if avail < 0 {
		return 0, "", false
	}
	return avail, fmt.Sprintf("%s allows %s", of, mesh.FormatBytes(avail)), true
}
