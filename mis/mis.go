package mis

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/misgrid/misgrid/mesh"
)

// Result is a maximal independent set.
type Result struct {
	In      []bool // In[v] reports whether v is in the set
	Size    int    // number of vertices in the set
	Rounds  int    // parallel rounds (0 for the serial greedy)
	Backend string // "serial", "cpu" or "gpu"
	Elapsed time.Duration
}

// Vertices lists the set in increasing id order.
func (r *Result) Vertices() []int32 {
	out := make([]int32, 0, r.Size)
	for v, in := range r.In {
		if in {
			out = append(out, int32(v))
		}
	}
	return out
}

// Compute returns the greedy maximal independent set of g in the order of
// opts.Priority: vertices are visited from the highest key down, and a
// vertex joins when no vertex within opts.Distance has joined before it.
// Every backend returns this same set.
func Compute(g *mesh.Graph, opts Options) (*Result, error) {
	if g == nil {
		return nil, errors.New("mis: nil graph")
	}
	// The GPU path checks the graph on the device (computeGPU).
	gpuFirst := opts.Device.WantsGPU(g.N()) && !(opts.Serial && opts.Device.Kind() == Auto)
	if !gpuFirst {
		if err := g.ValidateStructure(); err != nil {
			return nil, fmt.Errorf("mis: %w", err)
		}
	}
	dist, err := opts.distance()
	if err != nil {
		return nil, err
	}
	if err := opts.Device.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	if gpuFirst {
		res, err := computeGPU(g, dist, &opts)
		if err == nil {
			res.Elapsed = time.Since(start)
			return res, nil
		}
		if _, bad := errors.AsType[*mesh.ValidationError](err); bad || opts.Device.Kind() == GPU {
			return nil, err
		}
		// Auto: the CPU result is the same set, so falling back is safe.
		if err := g.ValidateStructure(); err != nil {
			return nil, fmt.Errorf("mis: %w", err)
		}
	}
	keys, err := Keys(g, opts.Priority)
	if err != nil {
		return nil, err
	}
	var res *Result
	if opts.Serial {
		res = greedy(g, keys, dist)
	} else {
		res = parallelMasked(g, keys, dist, opts.workers(), nil)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// Order returns the vertices sorted by decreasing key, ties by increasing
// id: the greedy visiting order.
func Order(keys []uint64) []int32 {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	sortByKey(order, keys)
	return order
}

// sortByKey sorts vertices into the greedy order of keys.
func sortByKey(vs []int32, keys []uint64) {
	slices.SortFunc(vs, func(a, b int32) int {
		switch {
		case keys[a] > keys[b]:
			return -1
		case keys[a] < keys[b]:
			return 1
		}
		return int(a - b)
	})
}

// Greedy is the serial reference: visit vertices by decreasing key and take
// every vertex with no taken vertex within distance dist (1 or 2). It
// defines the set that every other backend must return. It fails when
// keys does not hold one key per vertex or g's structure is broken
// (mesh.Graph.ValidateStructure).
func Greedy(g *mesh.Graph, keys []uint64, dist int) (*Result, error) {
	if err := checkRun("Greedy", g, keys, dist); err != nil {
		return nil, err
	}
	return greedy(g, keys, dist), nil
}

// greedy is Greedy on checked arguments.
func greedy(g *mesh.Graph, keys []uint64, dist int) *Result {
	n := g.N()
	in := make([]bool, n)
	blocked := make([]bool, n)
	size := greedyFinish(g, Order(keys), dist, in, blocked)
	return &Result{In: in, Size: size, Backend: "serial"}
}

// greedyFinish visits order and takes every vertex not blocked, blocking
// its ball of radius dist; it returns how many it took.
func greedyFinish(g *mesh.Graph, order []int32, dist int, in, blocked []bool) int {
	size := 0
	for _, v := range order {
		if blocked[v] {
			continue
		}
		in[v] = true
		size++
		blockBall(g, v, dist, blocked)
	}
	return size
}

// blockBall blocks v and every vertex within distance dist of it.
func blockBall(g *mesh.Graph, v int32, dist int, blocked []bool) {
	blocked[v] = true
	for _, u := range g.Neighbors(v) {
		blocked[u] = true
		if dist == 2 {
			for _, w := range g.Neighbors(u) {
				blocked[w] = true
			}
		}
	}
}
