package mesh

import (
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"

	"github.com/misgrid/misgrid/internal/sysmem"
)

// MemoryError reports that an operation would need more memory than it
// may use.
type MemoryError struct {
	Op    string // the function that refused, such as "FromCOO"
	What  string // what it would have built
	Need  int64  // estimated bytes
	Limit int64  // bytes it may use
	Of    string // where the limit comes from
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("mesh: %s: %s needs about %s of memory, more than the %s allowed by %s",
		e.Op, e.What, FormatBytes(e.Need), FormatBytes(e.Limit), e.Of)
}

// FormatBytes writes a byte count with a binary unit: "23.5 GiB".
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	x, i := float64(b), -1
	for x >= unit && i < 5 {
		x /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", x, "KMGTPE"[i])
}

// memoryCheckFloor is the estimate below which the machine's memory is not
// looked up: small builds should not pay for reading /proc.
const memoryCheckFloor = 64 << 20

// CheckMemory returns a *MemoryError when need bytes exceed the limit that
// maxBytes sets, as the MaxBytes fields of this package's options read it:
//
//	> 0  a limit in bytes
//	  0  what the process may still take (AvailableMemory); estimates
//	     under 64 MiB are not checked, so small builds read no /proc
//	< 0  no check
//
// Functions without options (ReadEGR, ReadMatrixMarket and its array form) use 0,
// so a process-wide limit is set with GOMEMLIMIT or debug.SetMemoryLimit.
// op and what name the operation and the thing it would build in the
// message. Callers outside this package (the CLI, the C ABI) use it for
// sizes they are given. Estimates count the result and the transient
// arrays of a build, not what the caller already holds.
func CheckMemory(op, what string, need, maxBytes int64) error {
	if maxBytes < 0 || (maxBytes == 0 && need < memoryCheckFloor) {
		return nil
	}
	limit, of := maxBytes, "the MaxBytes option"
	if maxBytes == 0 {
		limit, of = AvailableMemory()
		if limit < 0 {
			return nil
		}
	}
	if need > limit {
		return &MemoryError{Op: op, What: what, Need: need, Limit: limit, Of: of}
	}
	return nil
}

// AvailableMemory returns how many more bytes this process may take, and
// what bounds it (MemAvailable, the cgroup's memory.max, GOMEMLIMIT), or
// -1 when nothing is known (not Linux, no /proc).
func AvailableMemory() (int64, string) {
	best, of := int64(-1), ""
	take := func(v int64, what string) {
		if v >= 0 && (best < 0 || v < best) {
			best, of = v, what
		}
	}
	take(sysmem.Meminfo("MemAvailable:"), "the machine's available memory (MemAvailable)")
	take(sysmem.CgroupHeadroom(), "the cgroup's memory.max")
	if lim := debug.SetMemoryLimit(-1); lim < math.MaxInt64 {
		take(max(lim-goMemoryInUse(), 0), "the Go memory limit (GOMEMLIMIT)")
	}
	return best, of
}

// goMemoryInUse returns the memory the Go runtime holds from the system
// and has not released, the quantity GOMEMLIMIT bounds.
func goMemoryInUse() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// bytesOf returns the sum of count·size over pairs, saturating at
// MaxInt64 instead of overflowing, for estimates from untrusted counts.
func bytesOf(pairs ...int64) int64 {
	var total int64
	for i := 0; i+1 < len(pairs); i += 2 {
		c, s := max(pairs[i], 0), pairs[i+1]
		if s != 0 && c > (math.MaxInt64-total)/s {
			return math.MaxInt64
		}
		total += c * s
	}
	return total
}
