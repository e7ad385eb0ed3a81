package mis

import (
	"errors"
	"fmt"
	"sync"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/cuda/kernels"
	"github.com/misgrid/misgrid/mesh"
)

// The GPU backend. Compute reaches it through the gpuCompute hook; the
// driver is opened only when a GPU run is first asked for, never at
// package initialisation.
func init() { gpuCompute = computeGPU }

// computeGPU uploads g, runs the sweeps and returns the set. prim is the
// primary rank per vertex (nil for Hash), exactly as Keys would use it.
func computeGPU(g *mesh.Graph, prim []uint32, dist int, o *Options) (*Result, error) {
	eng, err := defaultEngine()
	if err != nil {
		return nil, err
	}
	dg, err := uploadGraph(eng, g, nil)
	if err != nil {
		return nil, err
	}
	defer dg.Close()
	var pri devicePriority
	switch {
	case prim == nil:
	case o.Priority.Kind == Boundary:
		cls := make([]uint8, len(prim))
		for v, p := range prim {
			cls[v] = uint8(p)
		}
		pri.class = cls
	default:
		pri.prim = prim
	}
	pri.seed = o.Priority.Seed
	return dg.compute(dist, pri, defaultTuning(dg, dist))
}

// engine is the loaded kernels of one context, with the stream all MIS
// work of that context runs on. Runs in a context are serialised.
type engine struct {
	ctx     *cuda.Context
	ownsCtx bool
	mod     *cuda.Module
	stream  *cuda.Stream
	sms     int
	fn      map[string]*cuda.Function
	occ     map[string]int // resident blocks of 256 threads per SM

	mu sync.Mutex // serialises runs on the stream

	bmu    sync.Mutex
	broken error // a sticky error: the context is unusable
}

var (
	enginesMu sync.Mutex
	engines   = map[uintptr]*engine{}
	defEngine *engine
)

// defaultEngine returns the engine of device 0's primary context,
// creating it on first use. Errors wrap ErrNoGPU.
func defaultEngine() (*engine, error) {
	if err := cuda.Available(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if defEngine != nil && defEngine.usable() == nil {
		return defEngine, nil
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	e, err := newEngine(ctx, true)
	if err != nil {
		ctx.Close()
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	defEngine = e
	return e, nil
}

// engineFor returns the engine of a caller's context.
func engineFor(ctx *cuda.Context) (*engine, error) {
	if ctx == nil {
		return defaultEngine()
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if e := engines[ctx.Raw()]; e != nil && e.ctx == ctx && e.usable() == nil {
		return e, nil
	}
	e, err := newEngine(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	engines[ctx.Raw()] = e
	return e, nil
}

func newEngine(ctx *cuda.Context, owns bool) (*engine, error) {
	sms, err := ctx.Device().Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	mod, err := ctx.LoadModule(kernels.Image)
	if err != nil {
		return nil, err
	}
	stream, err := ctx.NewStream()
	if err != nil {
		mod.Close()
		return nil, err
	}
	e := &engine{ctx: ctx, ownsCtx: owns, mod: mod, stream: stream, sms: sms,
		fn: map[string]*cuda.Function{}, occ: map[string]int{}}
	names := []string{"mis_init", "mis_members", "csr_check", "near_sample", "degree_prim", "prim_bitmap", "prim_classes", "stream_floor", "mis_compact", "mis_compact2", "class_hist", "class_list", "mis2bl_p1", "mis2bdl_p1"}
	names = append(names, bucketKernels()...)
	for pk := 0; pk < 3; pk++ {
		names = append(names, tailName(1, pk), tailName(2, pk), vecSweepName(pk), runnerUpName(pk, false), runnerUpName(pk, true),
			firstName(pk, false), firstName(pk, true), fmt.Sprintf("mis2_g1r4_p%d", pk))
	}
	for _, d := range []int{1, 2} {
		for _, g := range groupSizes {
			for pk := 0; pk < 3; pk++ {
				names = append(names, sweepName(d, g, pk))
			}
		}
	}
	for _, name := range names {
		f, err := mod.Function(name)
		if err != nil {
			e.close()
			return nil, err
		}
		occ, err := f.MaxActiveBlocksPerSM(blockSize, 0)
		if err != nil {
			e.close()
			return nil, err
		}
		e.fn[name] = f
		e.occ[name] = max(occ, 1)
	}
	return e, nil
}

// groupSizes are the lanes per vertex the kernels are built for.
var groupSizes = []int{1, 4, 8, 32}

const blockSize = 256

func sweepName(dist, group, pk int) string {
	return fmt.Sprintf("mis%d_g%d_p%d", dist, group, pk)
}

// vecSweepName is the MIS-1 sweep for one lane per vertex that reads
// rows with 16-byte loads (DeviceGraph.vec).
func vecSweepName(pk int) string { return fmt.Sprintf("mis1_g1v_p%d", pk) }

// firstName is the first MIS-2 sweep for one lane per vertex with
// 16-byte row loads, with or without runner-ups.
func firstName(pk int, runnerUp bool) string {
	r := 0
	if runnerUp {
		r = 1
	}
	return fmt.Sprintf("mis2_first_r%d_p%d", r, pk)
}

func tailName(dist, pk int) string { return fmt.Sprintf("mis%d_tail_p%d", dist, pk) }

// runnerUpName is the MIS-2 sweep (or tail) for one lane per vertex that
// keeps a runner-up beside each ball's champion.
func runnerUpName(pk int, tail bool) string {
	if tail {
		return fmt.Sprintf("mis2_tailr_p%d", pk)
	}
	return fmt.Sprintf("mis2_g1r_p%d", pk)
}

func (e *engine) usable() error {
	e.bmu.Lock()
	defer e.bmu.Unlock()
	return e.broken
}

// fail records a sticky error: the context cannot run anything more, so
// later calls get a fresh engine (and, with Auto, the CPU).
func (e *engine) fail(err error) error {
	var ce *cuda.Error
	if errors.As(err, &ce) && ce.Code.Sticky() {
		e.bmu.Lock()
		e.broken = err
		e.bmu.Unlock()
	}
	return err
}

func (e *engine) close() {
	e.stream.Close()
	e.mod.Close()
	if e.ownsCtx {
		e.ctx.Close()
	}
}

// grid returns the number of blocks for a kernel over n items handled
// per blocks of perBlock, capped at what fits on the device at once.
func (e *engine) grid(name string, n int64, perBlock int64) uint32 {
	b := (n + perBlock - 1) / perBlock
	if lim := int64(e.sms * e.occ[name]); b > lim {
		b = lim
	}
	return uint32(max(b, 1))
}

// countWords runs a helper kernel that adds into a few words: it zeroes
// words, queues name over n items with args and words as the last
// argument, waits, and copies the first len(out) words back.
func (e *engine) countWords(words *cuda.Buffer, out []uint32, name string, n int64, args ...any) error {
	if err := words.MemsetAsync32(0, e.stream); err != nil {
		return err
	}
	if err := e.launch(name, e.grid(name, n, blockSize), append(args, words)...); err != nil {
		return err
	}
	if err := e.stream.Synchronize(); err != nil {
		return err
	}
	return cuda.CopyToHost(out, words, 0)
}

func (e *engine) launch(name string, grid uint32, args ...any) error {
	return e.fn[name].Launch(cuda.Launch{Grid: cuda.Dim3{X: grid}, Block: cuda.Dim3{X: blockSize}, Stream: e.stream}, args...)
}
