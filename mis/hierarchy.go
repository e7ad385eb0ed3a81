package mis

import (
	"errors"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/mesh"
)

// HierarchyOptions controls Hierarchy. The zero value coarsens with
// distance-2 MIS and boundary priorities (Priority's zero value) down to
// DefaultMinVertices vertices or DefaultMaxLevels levels: the hierarchy
// that misgrid coarsen and misgrid_hierarchy build with no options.
// HierarchyOptionKeys lists the fields that have a text form.
type HierarchyOptions struct {
	Distance    int      // MIS distance per level; 0 means DefaultHierarchyDistance
	Priority    Priority // the zero value is Boundary
	MinVertices int      // stop when a level has at most this many; 0 means DefaultMinVertices
	MaxLevels   int      // the fine level included; 0 means DefaultMaxLevels
	Workers     int      // CPU goroutines; 0 means runtime.GOMAXPROCS(0)
	Device      Device
	// Progress, when set, is called after each level is built.
	Progress func(level int, l *Level)
}

// Level is one grid of a coarse-grid hierarchy: the graph, its MIS, and the
// aggregates that become the vertices of the next level.
type Level struct {
	Graph   *mesh.Graph
	Set     *Result
	Agg     *Aggregates // nil on the coarsest level
	Elapsed time.Duration
}

// Hierarchy coarsens g repeatedly: MIS → aggregates → coarse graph
// (aggregate adjacency), carrying root coordinates and boundary classes to
// the coarse level so that boundary priorities keep working. It stops at
// MinVertices, MaxLevels, or when a level no longer shrinks. The last
// level has a Set but no Agg.
//
// On a GPU (Device GPU, or Auto from AutoMinVertices vertices) the graph
// is copied to the device once and every level is built there; the levels
// are the host's bit for bit, and Auto falls back to the host when the
// GPU fails. Progress is then called once the levels are built.
func Hierarchy(g *mesh.Graph, opts HierarchyOptions) ([]Level, error) {
	if g == nil {
		return nil, errors.New("mis: nil graph")
	}
	dist := opts.Distance
	if dist == 0 {
		dist = DefaultHierarchyDistance
	}
	minV := opts.MinVertices
	if minV <= 0 {
		minV = DefaultMinVertices
	}
	maxL := opts.MaxLevels
	if maxL <= 0 {
		maxL = DefaultMaxLevels
	}
	if opts.Device.WantsGPU(g.N()) {
		levels, err := hierarchyGPU(g, opts, dist, minV, maxL)
		if err == nil {
			if opts.Progress != nil {
				for i := range levels {
					opts.Progress(i, &levels[i])
				}
			}
			return levels, nil
		}
		if opts.Device.Kind() == GPU {
			return nil, fmt.Errorf("mis: hierarchy on device %v: %w", opts.Device, err)
		}
		// Auto: the host builds the same levels.
	}
	var levels []Level
	cur := g
	for lvl := 0; ; lvl++ {
		start := time.Now()
		prio := levelPriority(opts.Priority, lvl)
		set, err := Compute(cur, Options{Distance: dist, Priority: prio, Workers: opts.Workers, Device: opts.Device})
		if err != nil {
			return levels, fmt.Errorf("mis: hierarchy level %d: %w", lvl, err)
		}
		l := Level{Graph: cur, Set: set}
		last := lvl+1 >= maxL || cur.N() <= minV || set.Size >= cur.N()
		if !last {
			agg, err := Aggregate(cur, set.In)
			if dist == 1 {
				agg, err = aggregateD1(cur, set.In)
			}
			if err != nil {
				return levels, fmt.Errorf("mis: hierarchy level %d: %w", lvl, err)
			}
			l.Agg = agg
		}
		l.Elapsed = time.Since(start)
		levels = append(levels, l)
		if opts.Progress != nil {
			opts.Progress(lvl, &levels[len(levels)-1])
		}
		if last {
			return levels, nil
		}
		cur = coarseGraph(cur, l.Agg)
	}
}

// aggregateD1 groups each non-member with its adjacent member of largest
// index-order priority: with a distance-1 MIS a vertex may touch several
// members, so it joins the lowest-numbered adjacent aggregate.
func aggregateD1(g *mesh.Graph, set []bool) (*Aggregates, error) {
	n := g.N()
	of := make([]int32, n)
	var roots []int32
	for v, in := range set {
		of[v] = -1
		if in {
			of[v] = int32(len(roots))
			roots = append(roots, int32(v))
		}
	}
	for v := int32(0); int(v) < n; v++ {
		if set[v] {
			continue
		}
		for _, u := range g.Neighbors(v) {
			if set[u] {
				of[v] = of[u] // neighbours are sorted: the lowest root id wins
				break
			}
		}
		if of[v] < 0 {
			return nil, fmt.Errorf("mis: aggregate: vertex %d has no member neighbour: the set is not maximal", v)
		}
	}
	return &Aggregates{Of: of, Roots: roots, N: len(roots)}, nil
}
