package mis

import (
	"errors"
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
	dist, err := opts.distance()
	if err != nil {
		return nil, err
	}
	if err := opts.Device.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	if opts.Device.WantsGPU(g.N()) && !(opts.Serial && opts.Device.Kind() == Auto) {
		prim, err := Primaries(g, opts.Priority)
		if err != nil {
			return nil, err
		}
		res, err := computeGPU(g, prim, dist, &opts)
		if err == nil {
			res.Elapsed = time.Since(start)
			return res, nil
		}
		if opts.Device.Kind() == GPU {
			return nil, err
		}
		// Auto: the CPU result is the same set, so falling back is safe.
	}
	keys, err := Keys(g, opts.Priority)
	if err != nil {
		return nil, err
	}
	var res *Result
	if opts.Serial {
		res = Greedy(g, keys, dist)
	} else {
		res = Parallel(g, keys, dist, opts.workers())
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// Order returns the vertices sorted by decreasing key: the greedy visiting
// order.
func Order(keys []uint64) []int32 {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case keys[a] > keys[b]:
			return -1
		case keys[a] < keys[b]:
			return 1
		}
		return int(a - b)
	})
	return order
}

// Greedy is the serial reference: visit vertices by decreasing key and take
// every vertex with no taken vertex within distance dist. It defines the
// set that every other backend must return.
func Greedy(g *mesh.Graph, keys []uint64, dist int) *Result {
	n := g.N()
	in := make([]bool, n)
	blocked := make([]bool, n)
	size := 0
	for _, v := range Order(keys) {
		if blocked[v] {
			continue
		}
		in[v] = true
		blocked[v] = true
		size++
		for _, u := range g.Neighbors(v) {
			blocked[u] = true
			if dist == 2 {
				for _, w := range g.Neighbors(u) {
					blocked[w] = true
				}
			}
		}
	}
	return &Result{In: in, Size: size, Backend: "serial"}
}
