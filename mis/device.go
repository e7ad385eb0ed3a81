package mis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
)

// Device selects where work runs: a kind (Auto, CPU or GPU) and, for the
// GPU kinds, the CUDA device index (GPU.On(1) is GPU 1). The zero value
// is Auto on GPU 0. Package amg takes the same type.
type Device int

const (
	// Auto uses a GPU when one is available and the work is large enough
	// to gain from it (AutoMinVertices), and the CPU otherwise,
	// including after a GPU error.
	Auto Device = iota
	// CPU always runs on the host.
	CPU
	// GPU requires a GPU and fails, with an error wrapping ErrNoGPU,
	// when it cannot be used.
	GPU
)

// AutoMinVertices is the size from which Auto prefers the GPU: below it
// the copy to the device and launch latency cost more than a CPU run.
const AutoMinVertices = 1 << 17

// ErrNoGPU is cuda.ErrUnavailable, under the name this package's callers
// know: every error that means no GPU could be used wraps it, so
// errors.Is(err, ErrNoGPU) and errors.Is(err, cuda.ErrUnavailable) say
// the same.
var ErrNoGPU = cuda.ErrUnavailable

// ReleaseGPUMemory gives back to the driver what misgrid keeps between
// calls on every GPU it has used: device memory that its runs and setups
// freed, kept for the next ones (up to 1/8 of each device), and the
// pinned host buffers it stages copies through (192 MiB per device).
// Calls afterwards allocate them again. A program that shares the GPU
// with other work calls it when misgrid's part is done for a while;
// memory in use (a Preconditioner on the device, a DeviceGraph) stays.
func ReleaseGPUMemory() error { return gpu.Release() }

// On returns d's kind on CUDA device index i.
func (d Device) On(i int) Device { return d.Kind() | Device(i)<<2 }

// Kind returns Auto, CPU or GPU.
func (d Device) Kind() Device { return d & 3 }

// Index returns the CUDA device index (0 unless set with On).
func (d Device) Index() int { return int(d >> 2) }

// WantsGPU says whether work of n vertices (or rows) on d goes to the
// GPU first: always with GPU, from AutoMinVertices with Auto.
func (d Device) WantsGPU(n int) bool {
	return d.Kind() == GPU || d.Kind() == Auto && n >= AutoMinVertices
}

func (d Device) String() string {
	var s string
	switch d.Kind() {
	case Auto:
		s = "auto"
	case CPU:
		s = "cpu"
	case GPU:
		s = "gpu"
	default:
		return fmt.Sprintf("Device(%d)", int(d))
	}
	if d.Index() != 0 {
		s += ":" + strconv.Itoa(d.Index())
	}
	return s
}

// check refuses a value no constant or On gives.
func (d Device) check() error {
	if d < 0 || d.Kind() > GPU || d.Kind() == CPU && d.Index() != 0 {
		return fmt.Errorf("mis: invalid device %v", d)
	}
	return nil
}

// ParseDevice converts "auto", "cpu" or "gpu", with ":N" after auto or
// gpu for CUDA device index N; case does not matter.
func ParseDevice(s string) (Device, error) {
	name, idx, hasIdx := strings.Cut(strings.ToLower(s), ":")
	for d := Auto; d <= GPU; d++ {
		if d.String() != name {
			continue
		}
		if !hasIdx {
			return d, nil
		}
		i, err := strconv.Atoi(idx)
		if d == CPU || err != nil || i < 0 || i > 1<<20 {
			break
		}
		return d.On(i), nil
	}
	return 0, fmt.Errorf("mis: unknown device %q (want auto, cpu or gpu, the last two optionally with :N)", s)
}
