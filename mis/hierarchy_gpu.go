package mis

import (
	"cmp"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// hierarchyGPU is Hierarchy on the GPU of opts.Device: the graph goes to
// the device once (pinned chunks), and every level's MIS, aggregates and
// coarse graph are computed there on one stream, the MIS engine's
// (internal/gpuagg gives the aggregates and coarse graphs of Aggregate,
// aggregateD1 and CoarseGraph bit for bit). Sets and classes stay on the
// device: boundary classes come with the graph or are computed there by
// degree. The host waits on the device a few times per level, for sizes
// only (the engine plans a run from the graph's shape and the live count
// of its sweeps; Coarsen sizes the coarse graph), and reads the levels
// back once they are all built.
func hierarchyGPU(g *mesh.Graph, opts HierarchyOptions, dist, minV, maxL int) ([]Level, error) {
	return hierarchyGPUTimed(g, opts, dist, minV, maxL, nil)
}

// gpuTimes are the phases of a GPU hierarchy (benchmarks): the upload,
// the levels on the device (events around them on the stream) and the
// copy of the levels to the host.
type gpuTimes struct {
	Upload, Levels, Download time.Duration
}

func hierarchyGPUTimed(g *mesh.Graph, opts HierarchyOptions, dist, minV, maxL int, times *gpuTimes) ([]Level, error) {
	l, err := misgpu.Open(opts.Device.Index())
	if err != nil {
		return nil, err
	}
	first := func(d *gpuagg.Device) (*gpuagg.Graph, error) { return uploadLevel(l, d, g) }
	host := func(*gpuagg.Device, *gpuagg.Graph) (*mesh.Graph, error) { return g, nil }
	return buildHierarchy(l, first, host, opts, dist, minV, maxL, times)
}

// HierarchyDevice is Hierarchy on a graph already in GPU memory, with
// opts' Device ignored: every level is built on the graph's device as
// Hierarchy builds it from the host graph, with the graph's classes for
// Boundary priorities (UploadGraph's, SetClasses' or ClassifyByDegree's)
// or, when it has none, the classes by degree of each level, as
// Hierarchy derives them for a graph without classes. The levels come
// back to the host: level 0's Graph is a copy of the device graph.
func HierarchyDevice(dg *DeviceGraph, opts HierarchyOptions) ([]Level, error) {
	if dg == nil {
		return nil, errors.New("mis: HierarchyDevice: nil graph")
	}
	dist := cmp.Or(opts.Distance, DefaultHierarchyDistance)
	minV, maxL := opts.MinVertices, opts.MaxLevels
	if minV <= 0 {
		minV = DefaultMinVertices
	}
	if maxL <= 0 {
		maxL = DefaultMaxLevels
	}
	l := dg.g.Loader()
	off, adj, cls := dg.g.Buffers()
	first := func(d *gpuagg.Device) (*gpuagg.Graph, error) {
		lg, err := d.Wrap(dg.N(), off, adj)
		if err == nil {
			lg.Class = cls
		}
		return lg, err
	}
	host := func(d *gpuagg.Device, lg *gpuagg.Graph) (*mesh.Graph, error) { return d.Download(lg) }
	levels, err := buildHierarchy(l, first, host, opts, dist, minV, maxL, nil)
	if err != nil {
		return nil, fmt.Errorf("mis: HierarchyDevice: %w", err)
	}
	return levels, nil
}

// buildHierarchy builds the levels on l's device and stream from the
// fine graph that first puts there; host gives that graph's host copy.
func buildHierarchy(l *gpu.Loader, first func(*gpuagg.Device) (*gpuagg.Graph, error), host func(*gpuagg.Device, *gpuagg.Graph) (*mesh.Graph, error),
	opts HierarchyOptions, dist, minV, maxL int, times *gpuTimes) (levels []Level, err error) {
	d, err := gpuagg.Open(l.Ctx, l.Stream)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	t0 := time.Now()
	dg, err := first(d)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, dg.Free()) }()
	h := &gpuHierarchy{l: l, p: opts.Priority, dist: dist}
	defer func() { err = errors.Join(err, h.eng.Close()) }()
	var timer streamTimer
	defer func() { err = errors.Join(err, timer.close()) }()
	if times != nil {
		times.Upload = time.Since(t0)
		if err = timer.start(l); err != nil {
			return nil, err
		}
	}
	dl, err := d.Hierarchy(dg, h.mis, gpuagg.HierarchyOptions{Distance: dist, MinVertices: minV, MaxLevels: maxL})
	defer func() { err = errors.Join(err, gpuagg.FreeLevels(dl)) }()
	if err != nil {
		return nil, err
	}
	end := time.Now()
	if times != nil {
		if times.Levels, err = timer.stop(l); err != nil {
			return nil, err
		}
	}
	g0, err := host(d, dg)
	if err != nil {
		return nil, err
	}
	levels, err = h.download(d, g0, dl, end)
	if times != nil {
		times.Download = time.Since(end)
	}
	return levels, err
}

// streamTimer times the work queued on a stream between start and stop.
type streamTimer struct{ evs [2]*cuda.Event }

func (t *streamTimer) mark(l *gpu.Loader, i int) error {
	e, err := l.Ctx.NewEvent()
	if err != nil {
		return err
	}
	t.evs[i] = e
	return e.Record(l.Stream)
}

func (t *streamTimer) start(l *gpu.Loader) error { return t.mark(l, 0) }

func (t *streamTimer) stop(l *gpu.Loader) (time.Duration, error) {
	if err := t.mark(l, 1); err != nil {
		return 0, err
	}
	if err := t.evs[1].Synchronize(); err != nil {
		return 0, err
	}
	return cuda.Elapsed(t.evs[0], t.evs[1])
}

func (t *streamTimer) close() error { return errors.Join(t.evs[0].Close(), t.evs[1].Close()) }

// uploadLevel copies the fine graph through the context's Stager on the
// engine's stream, which the hierarchy shares.
func uploadLevel(l *gpu.Loader, d *gpuagg.Device, g *mesh.Graph) (*gpuagg.Graph, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	var lg *gpuagg.Graph
	err := l.Stage(l.Stream, func(st *cuda.Stager) (err error) {
		lg, err = d.Upload(g, st)
		return err
	})
	return lg, err
}

// gpuHierarchy runs the MIS of each level on the device, into flags that
// stay there, with one engine graph moved from level to level.
type gpuHierarchy struct {
	l      *gpu.Loader
	eng    *misgpu.Graph
	p      Priority
	dist   int
	rounds []int
	starts []time.Time
	took   []time.Duration
}

func (h *gpuHierarchy) mis(lvl int, lg *gpuagg.Graph, _ *cuda.Stream) (*cuda.Buffer, int, error) {
	start := time.Now()
	h.starts = append(h.starts, start)
	if h.eng == nil {
		h.eng = misgpu.WrapLevel(h.l, lg.N, lg.M, int64(lg.MaxDegree), lg.Offsets, lg.Adj)
	} else if err := h.eng.Rebind(lg.N, lg.M, int64(lg.MaxDegree), lg.Offsets, lg.Adj); err != nil {
		return nil, 0, err
	}
	p := levelPriority(h.p, lvl)
	pri := misgpu.Priority{Seed: p.Seed}
	var err error
	switch p.Kind {
	case Hash:
	case Boundary:
		// The level's classes (the fine graph's, carried to its coarse
		// levels by their roots) or, without them, the classes by degree,
		// as Primaries derives them.
		pri.GraphClass, pri.DegreeClass = lg.Class != nil, lg.Class == nil
		if lg.Class != nil {
			err = h.eng.UseClasses(lg.Class)
		}
	case Degree:
		pri.Degree = true
	case User:
		pri.Prim, err = userRanks(p.Values, lg.N)
	default:
		err = fmt.Errorf("unknown priority kind %d", int(p.Kind))
	}
	if err != nil {
		return nil, 0, err
	}
	flags, err := h.l.Ctx.Alloc(int64(max(lg.N, 1)))
	if err != nil {
		return nil, 0, fmt.Errorf("flags of %d vertices: %w", lg.N, err)
	}
	size, rounds, err := h.eng.RunTo(h.dist, pri, flags)
	if err != nil {
		return nil, 0, errors.Join(err, flags.Free())
	}
	h.rounds = append(h.rounds, rounds)
	h.took = append(h.took, time.Since(start))
	return flags, size, nil
}

// download copies the levels to the host: the coarse graphs, every set
// and aggregation. end is when the last level was built.
func (h *gpuHierarchy) download(d *gpuagg.Device, g *mesh.Graph, dl []gpuagg.Level, end time.Time) ([]Level, error) {
	levels := make([]Level, len(dl))
	for i, l := range dl {
		host := g
		if i > 0 {
			var err error
			if host, err = d.Download(l.Graph); err != nil {
				return nil, err
			}
		}
		in := make([]bool, l.Graph.N)
		if len(in) > 0 {
			// bool is one byte holding 0 or 1, which RunTo writes.
			flags := unsafe.Slice((*uint8)(unsafe.Pointer(&in[0])), len(in))
			if err := gpu.StageFrom(h.l, h.l.Stream, flags, l.In, 0); err != nil {
				return nil, err
			}
		}
		levels[i] = Level{Graph: host, Set: &Result{In: in, Size: l.Size, Rounds: h.rounds[i], Backend: "gpu", Elapsed: h.took[i]}}
		if l.Agg != nil {
			of, roots, err := d.DownloadAggregates(l.Agg)
			if err != nil {
				return nil, err
			}
			levels[i].Agg = &Aggregates{Of: of, Roots: roots, N: len(roots)}
		}
		next := end
		if i+1 < len(h.starts) {
			next = h.starts[i+1]
		}
		levels[i].Elapsed = next.Sub(h.starts[i])
	}
	return levels, nil
}

// levelPriority is the priority of level lvl: user values belong to the
// fine vertices only, so coarse levels rank by boundary class.
func levelPriority(p Priority, lvl int) Priority {
	if p.Kind == User && lvl > 0 {
		return Priority{Kind: Boundary, Seed: p.Seed}
	}
	return p
}
