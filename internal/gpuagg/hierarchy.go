package gpuagg

import (
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// MIS computes a maximal independent set of one level's graph on the
// device: in holds one byte per vertex, non-zero for members, and size
// counts them. The graph is complete in the order of stream s (the
// Device's): the MIS runs on s, or waits for it before reading the graph.
// The Hierarchy owns in afterwards and frees it with the levels.
type MIS func(level int, g *Graph, s *cuda.Stream) (in *cuda.Buffer, size int, err error)

// HierarchyOptions are mis.HierarchyOptions' coarsening rules.
type HierarchyOptions struct {
	Distance    int // MIS distance; 0 means 2
	MinVertices int // stop when a level has at most this many; 0 means 64
	MaxLevels   int // 0 means 20
}

// Level is one grid of a device hierarchy.
type Level struct {
	Graph *Graph
	In    *cuda.Buffer // the level's set
	Size  int
	Agg   *Aggregates // nil on the coarsest level
}

// Hierarchy coarsens g on the device level after level, by the rules of
// mis.Hierarchy: MIS, aggregates, coarse graph, until a level has at most
// MinVertices vertices, MaxLevels levels are built, or a set keeps every
// vertex. Per level the host synchronises once in Coarsen (sizes and
// errors) and wherever the MIS does (today's engine plans its kernels on
// the host from n, m and the largest degree). The first level's graph
// stays the caller's; FreeLevels frees the rest.
func (d *Device) Hierarchy(g *Graph, mis MIS, o HierarchyOptions) ([]Level, error) {
	if g == nil || mis == nil {
		return nil, errors.New("gpuagg: Hierarchy: nil graph or MIS")
	}
	dist := cmp0(o.Distance, 2)
	minV := cmp0(o.MinVertices, 64)
	maxL := cmp0(o.MaxLevels, 20)
	c := d.NewCoarsener()
	defer c.Close()
	var levels []Level
	cur := g
	for lvl := 0; ; lvl++ {
		in, size, err := mis(lvl, cur, d.stream)
		if err != nil {
			return levels, errors.Join(fmt.Errorf("gpuagg: hierarchy level %d: %w", lvl, err), freeOwned(cur, g))
		}
		l := Level{Graph: cur, In: in, Size: size}
		if lvl+1 >= maxL || cur.N <= minV || size >= cur.N {
			return append(levels, l), nil
		}
		agg, coarse, err := c.Coarsen(cur, in, dist)
		if err != nil {
			return levels, errors.Join(fmt.Errorf("gpuagg: hierarchy level %d: %w", lvl, err), in.Free(), freeOwned(cur, g))
		}
		l.Agg = agg
		levels = append(levels, l)
		cur = coarse
	}
}

func cmp0(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func freeOwned(cur, first *Graph) error {
	if cur == first {
		return nil
	}
	return cur.Free()
}

// FreeLevels frees what Hierarchy allocated: every level's set and
// aggregates, and the graphs of the coarse levels.
func FreeLevels(levels []Level) error {
	var err error
	for i, l := range levels {
		err = errors.Join(err, l.In.Free(), l.Agg.Free())
		if i > 0 {
			err = errors.Join(err, l.Graph.Free())
		}
	}
	return err
}
