package amg

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/misgrid/misgrid/mesh"
)

// cuthillMcKee returns the vertices of g in reverse Cuthill–McKee order:
// each connected component, in order of its lowest vertex, searched
// breadth-first from the last vertex that a search from that lowest vertex
// reaches (one step of the George–Liu iteration that mesh.RCM runs to its
// end: on a scattered numbering every search waits on a cache miss per
// vertex, and the band it gives is as good for the cache), neighbours in
// order of increasing degree, then id. Both searches pass only vertices
// not placed yet (which matters where an edge goes one way only).
//
// The searches go a level at a time, each level's vertices in parallel,
// and give the order of the one-vertex-at-a-time search exactly: a vertex
// of the next level is placed by the first vertex of this level (in the
// order) that reaches it, which an atomic minimum of positions finds,
// and each vertex places what it won in its own order. The rows of g have
// no repeated neighbours (fromMesh refuses them).
func cuthillMcKee(p pool, g *mesh.Graph) []int32 {
	n := g.N()
	s := &search{p: p, g: g, own: make([]int32, n), probe: make([]int32, n)}
	for i := range s.own {
		s.own[i], s.probe[i] = unowned, unowned
	}
	order := make([]int32, 0, n)
	var queue []int32
	for v := range int32(n) {
		if s.own[v] != unowned {
			continue
		}
		// Probe: the last vertex a search from v reaches, in the
		// adjacency order; its marks are cleared after it.
		s.probe[v] = -1
		queue = s.levels(s.probe, s.own, append(queue[:0], v), 0, false)
		for _, u := range queue {
			s.probe[u] = unowned
		}
		start := queue[len(queue)-1]
		s.own[start] = -1
		order = s.levels(s.own, nil, append(order, start), len(order), true)
	}
	slices.Reverse(order)
	return order
}

// unowned marks a vertex no search has placed.
const unowned = math.MaxInt32

// search holds a Cuthill–McKee search's state: own (the main search's)
// and probe (the probing search's) hold, for every vertex placed, the
// position of the vertex that placed it (-1 for where a search started).
type search struct {
	p          pool
	g          *mesh.Graph
	own, probe []int32
	parts      [][]int32 // each worker's vertices of the next level
}

// levels appends to q the vertices that a breadth-first search from
// q[lo:] reaches and neither own nor placed (if not nil) has placed,
// level by level: each vertex's in its adjacency order, or by (degree,
// id) when sorted.
func (s *search) levels(own, placed []int32, q []int32, lo int, sorted bool) []int32 {
	g := s.g
	for lo < len(q) {
		hi := len(q)
		front := q[lo:hi]
		work := 0
		if len(front) > 64 {
			work = len(front) * int(g.Offsets[g.N()]/int64(max(g.N(), 1)))
		}
		s.p.forRange(len(front), work, func(a, b int) {
			for i := a; i < b; i++ {
				claim(own, placed, g.Neighbors(front[i]), int32(lo+i))
			}
		})
		w := s.p.workers
		if work < minParallel {
			w = 1
		}
		for len(s.parts) < w {
			s.parts = append(s.parts, nil)
		}
		s.p.forRange(w, work, func(a, b int) {
			for t := a; t < b; t++ {
				s.parts[t] = s.won(own, front, lo, len(front)*t/w, len(front)*(t+1)/w, sorted, s.parts[t][:0])
			}
		})
		for _, part := range s.parts[:w] {
			q = append(q, part...)
		}
		lo = hi
	}
	return q
}

// claim lowers own[u] to pos for every neighbour u that no earlier
// vertex placed (nor placed, if not nil).
func claim(own, placed []int32, nb []int32, pos int32) {
	for _, u := range nb {
		if placed != nil && placed[u] != unowned {
			continue
		}
		for {
			o := atomic.LoadInt32(&own[u])
			if o <= pos || atomic.CompareAndSwapInt32(&own[u], o, pos) {
				break
			}
		}
	}
}

// won appends to out the vertices that front[a:b] placed (own equal to
// their position lo+i), each vertex's in its order.
func (s *search) won(own, front []int32, lo, a, b int, sorted bool, out []int32) []int32 {
	g := s.g
	deg := func(v int32) int64 { return g.Offsets[v+1] - g.Offsets[v] }
	for i := a; i < b; i++ {
		pos, k := int32(lo+i), len(out)
		for _, u := range g.Neighbors(front[i]) {
			if own[u] == pos {
				out = append(out, u)
			}
		}
		if sorted {
			slices.SortFunc(out[k:], func(x, y int32) int {
				if dx, dy := deg(x), deg(y); dx != dy {
					return int(dx - dy)
				}
				return int(x - y)
			})
		}
	}
	return out
}
