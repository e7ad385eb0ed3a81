package mis

import (
	"errors"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/mesh"
)

// hierarchyGPU is Hierarchy on the GPU of opts.Device: the graph goes to
// the device once, and every level's MIS, aggregates and coarse graph are
// computed there (internal/gpuagg gives the aggregates and coarse graphs
// of Aggregate, aggregateD1 and CoarseGraph bit for bit). The host keeps
// one copy of each coarse graph, for the levels returned and for the
// classes of Boundary priorities, and the sets, which the engine returns
// on the host today.
func hierarchyGPU(g *mesh.Graph, opts HierarchyOptions, dist, minV, maxL int) (levels []Level, err error) {
	dev, err := cuda.GetDevice(opts.Device.Index())
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, err
	}
	d, err := gpuagg.Open(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	st, err := ctx.NewStager(d.Stream(), cuda.StagerOptions{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	dg, err := d.Upload(g, st)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, dg.Free()) }()

	var (
		graphs []*mesh.Graph
		sets   []*Result
		starts []time.Time
	)
	misOf := func(lvl int, lg *gpuagg.Graph, s *cuda.Stream) (*cuda.Buffer, int, error) {
		starts = append(starts, time.Now())
		host := g
		if lvl > 0 {
			h, err := d.Download(lg)
			if err != nil {
				return nil, 0, err
			}
			host = h
		}
		graphs = append(graphs, host)
		set, err := levelSetGPU(host, lg, levelPriority(opts.Priority, lvl), dist)
		if err != nil {
			return nil, 0, err
		}
		sets = append(sets, set)
		flags, err := flagsToDevice(ctx, set.In)
		return flags, set.Size, err
	}
	dl, err := d.Hierarchy(dg, misOf, gpuagg.HierarchyOptions{Distance: dist, MinVertices: minV, MaxLevels: maxL})
	defer func() { err = errors.Join(err, gpuagg.FreeLevels(dl)) }()
	if err != nil {
		return nil, err
	}
	end := time.Now()
	levels = make([]Level, len(dl))
	for i, l := range dl {
		levels[i] = Level{Graph: graphs[i], Set: sets[i]}
		if l.Agg != nil {
			of, roots, err := d.DownloadAggregates(l.Agg)
			if err != nil {
				return nil, err
			}
			levels[i].Agg = &Aggregates{Of: of, Roots: roots, N: len(roots)}
		}
		next := end
		if i+1 < len(starts) {
			next = starts[i+1]
		}
		levels[i].Elapsed = next.Sub(starts[i])
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

// levelSetGPU runs the MIS engine on a level already on the device. The
// classes of a Boundary priority are host's (the graph's, or by degree as
// Primaries derives them) so that the set is Compute's.
func levelSetGPU(host *mesh.Graph, lg *gpuagg.Graph, p Priority, dist int) (*Result, error) {
	start := time.Now()
	mg, err := NewDeviceGraph(lg.N, lg.Offsets, lg.Adj)
	if err != nil {
		return nil, err
	}
	defer mg.Close()
	if p.Kind == Boundary {
		cls := host.Class
		if cls == nil {
			cls = mesh.ClassifyByDegree(host)
		}
		if err := mg.SetClasses(cls); err != nil {
			return nil, err
		}
	}
	set, err := ComputeDevice(mg, Options{Distance: dist, Priority: p})
	if err != nil {
		return nil, err
	}
	set.Elapsed = time.Since(start)
	return set, nil
}

// flagsToDevice copies a set as the one byte per vertex that the
// aggregation kernels read.
func flagsToDevice(ctx *cuda.Context, in []bool) (*cuda.Buffer, error) {
	b := make([]uint8, len(in))
	for v, x := range in {
		if x {
			b[v] = 1
		}
	}
	buf, err := ctx.Alloc(int64(max(len(b), 1)))
	if err != nil {
		return nil, fmt.Errorf("flags of %d vertices: %w", len(b), err)
	}
	if len(b) > 0 {
		// A pageable copy may return before it lands, and the
		// aggregation stream does not wait for the default stream.
		if err := errors.Join(cuda.CopyToDevice(buf, 0, b), ctx.Synchronize()); err != nil {
			return nil, errors.Join(err, buf.Free())
		}
	}
	return buf, nil
}
