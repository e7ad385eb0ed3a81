package amg

import (
	"math"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// edgeWeights returns the strength weight of every edge of g (aligned with
// g.Adj), a graph on the nodes of a (bs dofs per node): the Frobenius norm
// of the coupling block scaled by those of the two diagonal blocks,
// ‖A_uv‖/sqrt(‖A_uu‖‖A_vv‖), which is |a_uv|/sqrt(a_uu a_vv) for scalars.
func edgeWeights(p pool, a *csr, g *mesh.Graph, bs int) []float64 {
	nodes := g.N()
	diag := make([]float64, nodes)
	w := make([]float64, len(g.Adj))
	// Per-worker dense scratch over nodes would cost nodes·workers; the
	// neighbour rows are short and sorted, so a binary search per matrix
	// entry is cheaper.
	p.forRange(nodes, a.nnz(), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			nb := g.Neighbors(int32(v))
			ws := w[g.Offsets[v]:g.Offsets[v+1]]
			for d := 0; d < bs; d++ {
				i := v*bs + d
				for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
					u := a.col[k] / int32(bs)
					x := a.val[k] * a.val[k]
					if int(u) == v {
						diag[v] += x
						continue
					}
					if j, ok := searchInt32(nb, u); ok {
						ws[j] += x
					}
				}
			}
		}
	})
	for v := 0; v < nodes; v++ {
		diag[v] = math.Sqrt(diag[v])
	}
	p.forRange(nodes, len(w), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			for k := g.Offsets[v]; k < g.Offsets[v+1]; k++ {
				u := g.Adj[k]
				w[k] = math.Sqrt(w[k]) / math.Sqrt(diag[v]*diag[u])
			}
		}
	})
	return w
}

func searchInt32(s []int32, x int32) (int, bool) {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s) && s[lo] == x
}

// wgraph is a graph with symmetric edge weights, in CSR form.
type wgraph struct {
	off []int64
	adj []int32
	w   []float64
}

// match computes a locally dominant matching: every unmatched vertex
// points at its heaviest unmatched neighbour (ties to the larger hash of
// the id), mutual pointers become pairs, and rounds repeat until no pair
// forms. Each round reads only the previous round's state, so the result
// does not depend on visiting order. skip marks vertices kept out.
// It returns the aggregate of every vertex (pairs and leftover singletons,
// numbered by their lowest vertex) and the number of aggregates.
func match(g *wgraph, skip []bool) ([]int32, int) {
	n := len(g.off) - 1
	mate := make([]int32, n)
	for i := range mate {
		mate[i] = -1
	}
	cand := make([]int32, n)
	key := func(v int32) uint32 { return mis.Hash32(v, 0x9a1d) }
	for {
		for v := 0; v < n; v++ {
			cand[v] = -1
			if mate[v] >= 0 || (skip != nil && skip[v]) {
				continue
			}
			best, bw := int32(-1), 0.0
			for k := g.off[v]; k < g.off[v+1]; k++ {
				u := g.adj[k]
				if mate[u] >= 0 || (skip != nil && skip[u]) {
					continue
				}
				if w := g.w[k]; best < 0 || w > bw || (w == bw && key(u) > key(best)) {
					best, bw = u, w
				}
			}
			cand[v] = best
		}
		formed := false
		for v := 0; v < n; v++ {
			if u := cand[v]; u >= 0 && cand[u] == int32(v) {
				mate[v] = u
				formed = true
			}
		}
		if !formed {
			break
		}
	}
	of := make([]int32, n)
	na := int32(0)
	for v := 0; v < n; v++ {
		of[v] = -1
		if skip != nil && skip[v] {
			continue
		}
		if m := mate[v]; m >= 0 && m < int32(v) {
			of[v] = of[m]
			continue
		}
		of[v] = na
		na++
	}
	return of, int(na)
}

// collapse returns the graph of the aggregates of g: an edge joins two
// aggregates holding adjacent vertices, weighted by the sum of those edges.
func collapse(g *wgraph, of []int32, na int) *wgraph {
	n := len(g.off) - 1
	members := membersOf(of, na)
	c := &wgraph{off: make([]int64, na+1)}
	mark := make([]int32, na)
	slot := make([]int, na)
	for i := range mark {
		mark[i] = -1
	}
	_ = n
	for a := 0; a < na; a++ {
		start := len(c.adj)
		for _, v := range members[a] {
			for k := g.off[v]; k < g.off[v+1]; k++ {
				b := of[g.adj[k]]
				if b < 0 || int(b) == a {
					continue
				}
				if mark[b] != int32(a) {
					mark[b] = int32(a)
					slot[b] = len(c.adj)
					c.adj = append(c.adj, b)
					c.w = append(c.w, 0)
				}
				c.w[slot[b]] += g.w[k]
			}
		}
		sortRow(c.adj[start:], c.w[start:])
		c.off[a+1] = int64(len(c.adj))
	}
	return c
}

// aggregatePairwise applies the matching passes times, composing the
// groupings: aggregates of up to 2^passes nodes. Dirichlet nodes stay out.
func aggregatePairwise(p pool, a *csr, g *mesh.Graph, bs, passes int) ([]int32, int) {
	wg := &wgraph{off: g.Offsets, adj: g.Adj, w: edgeWeights(p, a, g, bs)}
	of, na := match(wg, g.Dirichlet)
	last := of // the grouping of wg's vertices
	for pass := 1; pass < passes; pass++ {
		wg = collapse(wg, last, na)
		last, na = match(wg, nil)
		for v, x := range of {
			if x >= 0 {
				of[v] = last[x]
			}
		}
	}
	return of, na
}
