// Package misgpu is the single-GPU MIS engine: a graph in device memory
// (Graph), the plan of a run (NewPlan, a pure function of the graph's
// shape, the distance and the kind of key) and its execution (Graph.Run).
// It knows nothing of package mis: priorities come resolved (Priority)
// and a run returns flags, a size and a round count. The kernels are
// those of internal/kernels' MIS image, loaded through internal/gpu.
package misgpu

import (
	"fmt"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/kernels"
)

// Open returns the engine's loader in the primary context of device
// ordinal; errors wrap cuda.ErrUnavailable.
func Open(ordinal int) (*gpu.Loader, error) { return gpu.Open(ordinal, kernels.MIS, Kernels()) }

// OpenContext returns the engine's loader in a caller's context.
func OpenContext(ctx *cuda.Context) (*gpu.Loader, error) { return gpu.For(ctx, kernels.MIS, Kernels()) }

// Kernels lists every kernel of the MIS image that the engine launches.
func Kernels() []string {
	names := []string{"mis_init", "mis_members", "csr_check", "near_sample", "degree_prim", "prim_bitmap",
		"prim_classes", "stream_floor", "mis_compact", "mis_compact2", "class_hist", "class_list", "degree_lmax", "degree_class"}
	names = append(append(names, bucketKernels()...), listKernels...)
	for pk := Key(0); pk < 3; pk++ {
		names = append(names, tailName(1, pk), tailName(2, pk), vecSweepName(pk), runnerUpName(pk, false),
			runnerUpName(pk, true), localRunnerUpName(pk), firstName(pk))
		for _, g := range GroupSizes {
			if g > 1 {
				names = append(names, sweepName(2, g, pk))
			}
			names = append(names, sweepName(1, g, pk))
		}
	}
	return names
}

// GroupSizes are the lanes per vertex the sweep kernels are built for
// (MIS-2 with one lane always keeps runner-ups: mis2_g1r).
var GroupSizes = []int{1, 4, 8, 32}

const blockSize = gpu.BlockSize

func sweepName(dist, group int, pk Key) string {
	return fmt.Sprintf("mis%d_g%d_p%d", dist, group, pk)
}

// vecSweepName is the MIS-1 sweep for one lane per vertex that reads
// rows with 16-byte loads (Shape.Vec).
func vecSweepName(pk Key) string { return fmt.Sprintf("mis1_g1v_p%d", pk) }

// firstName is the first MIS-2 sweep for one lane per vertex with
// 16-byte row loads and runner-ups.
func firstName(pk Key) string { return fmt.Sprintf("mis2_first_r1_p%d", pk) }

func tailName(dist int, pk Key) string { return fmt.Sprintf("mis%d_tail_p%d", dist, pk) }

// runnerUpName is the MIS-2 sweep (or tail) for one lane per vertex that
// keeps a runner-up beside each ball's champion.
func runnerUpName(pk Key, tail bool) string {
	if tail {
		return fmt.Sprintf("mis2_tailr_p%d", pk)
	}
	return fmt.Sprintf("mis2_g1r_p%d", pk)
}

// localRunnerUpName is mis2_g1r with registers capped for 4 blocks per
// SM: faster where rows are local, slower where they are scattered.
func localRunnerUpName(pk Key) string { return fmt.Sprintf("mis2_g1r4_p%d", pk) }

// countWords runs a helper kernel that adds into a few words: it zeroes
// words, queues name over n items with args and words as the last
// argument, waits, and copies the first len(out) words back.
func countWords(l *gpu.Loader, words *cuda.Buffer, out []uint32, name string, n int64, args ...any) error {
	if err := words.MemsetAsync32(0, l.Stream); err != nil {
		return err
	}
	if err := l.Launch(nil, name, l.Grid(name, n, blockSize), append(args, words)...); err != nil {
		return err
	}
	if err := l.Stream.Synchronize(); err != nil {
		return err
	}
	return cuda.CopyToHost(out, words, 0)
}
