package mis

import (
	"errors"
	"fmt"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// Aggregates partitions the vertices of a graph into connected groups, one
// per root of a distance-2 MIS. They are the coarse vertices of
// aggregation AMG.
type Aggregates struct {
	Of    []int32 // aggregate id of every vertex
	Roots []int32 // root vertex of every aggregate, increasing
	N     int     // number of aggregates
}

// Aggregate builds aggregates from a distance-2 MIS of g.
//
// Each root founds an aggregate, numbered in increasing root id. Roots of a
// distance-2 MIS are at least three edges apart, so every neighbour of a
// root touches exactly one root and joins it (phase one). Maximality puts
// every remaining vertex next to a phase-one vertex; it joins the adjacent
// aggregate it shares most edges with, the lower aggregate id on a tie
// (phase two). Phase two looks only at phase-one assignments, so the result
// does not depend on visiting order.
func Aggregate(g *mesh.Graph, set []bool) (*Aggregates, error) {
	if err := g.ValidateStructure(); err != nil {
		return nil, fmt.Errorf("mis: aggregate: %w", err)
	}
	n := g.N()
	if len(set) != n {
		return nil, fmt.Errorf("mis: aggregate: set has %d flags for %d vertices", len(set), n)
	}
	of := make([]int32, n)
	for i := range of {
		of[i] = -1
	}
	var roots []int32
	for v, in := range set {
		if in {
			of[v] = int32(len(roots))
			roots = append(roots, int32(v))
		}
	}
	for a, r := range roots {
		for _, u := range g.Neighbors(r) {
			if of[u] >= 0 && of[u] != int32(a) {
				return nil, fmt.Errorf("mis: aggregate: vertex %d is next to roots %d and %d: the set is not a distance-2 independent set", u, roots[of[u]], r)
			}
			of[u] = int32(a)
		}
	}
	phase1 := slices.Clone(of)
	var count []int32 // edges to each candidate aggregate, reset per vertex
	for v := int32(0); int(v) < n; v++ {
		if phase1[v] >= 0 {
			continue
		}
		best, bestCount := int32(-1), int32(0)
		count = count[:0]
		nb := g.Neighbors(v)
		for _, u := range nb {
			if a := phase1[u]; a >= 0 {
				count = append(count, a)
			}
		}
		slices.Sort(count)
		for i := 0; i < len(count); {
			j := i
			for j < len(count) && count[j] == count[i] {
				j++
			}
			if c := int32(j - i); c > bestCount {
				best, bestCount = count[i], c
			}
			i = j
		}
		if best < 0 {
			return nil, fmt.Errorf("mis: aggregate: vertex %d has no root within distance 2: the set is not maximal", v)
		}
		of[v] = best
	}
	return &Aggregates{Of: of, Roots: roots, N: len(roots)}, nil
}

// Members returns the vertices of every aggregate in CSR form:
// aggregate a holds verts[ptr[a]:ptr[a+1]], in increasing id order.
func (a *Aggregates) Members() (ptr []int64, verts []int32) {
	ptr = make([]int64, a.N+1)
	for _, x := range a.Of {
		ptr[x+1]++
	}
	for i := 0; i < a.N; i++ {
		ptr[i+1] += ptr[i]
	}
	verts = make([]int32, len(a.Of))
	pos := slices.Clone(ptr[:a.N])
	for v, x := range a.Of {
		verts[pos[x]] = int32(v)
		pos[x]++
	}
	return ptr, verts
}

// CoarseGraph returns the graph whose vertices are the aggregates and whose
// edges join aggregates that hold adjacent vertices. Coordinates, classes
// and Dirichlet flags are those of each aggregate's root. It fails when
// agg does not describe aggregates of g's vertices.
func CoarseGraph(g *mesh.Graph, agg *Aggregates) (*mesh.Graph, error) {
	if err := checkAggregates(g, agg); err != nil {
		return nil, err
	}
	return coarseGraph(g, agg), nil
}

// checkAggregates checks what CoarseGraph indexes by: one aggregate id in
// range per vertex of a graph with a sound structure, and one root per
// aggregate.
func checkAggregates(g *mesh.Graph, agg *Aggregates) error {
	if g == nil {
		return errors.New("mis: CoarseGraph: nil graph")
	}
	if agg == nil {
		return errNilAggregates
	}
	if err := g.ValidateStructure(); err != nil {
		return fmt.Errorf("mis: CoarseGraph: %w", err)
	}
	if len(agg.Of) != g.N() || len(agg.Roots) != agg.N {
		return fmt.Errorf("mis: CoarseGraph: %d aggregate ids for %d vertices, %d roots for %d aggregates", len(agg.Of), g.N(), len(agg.Roots), agg.N)
	}
	for v, a := range agg.Of {
		if a < 0 || int(a) >= agg.N {
			return fmt.Errorf("mis: CoarseGraph: vertex %d is in aggregate %d, out of range [0,%d)", v, a, agg.N)
		}
	}
	for a, r := range agg.Roots {
		if r < 0 || int(r) >= g.N() {
			return fmt.Errorf("mis: CoarseGraph: root %d of aggregate %d out of range [0,%d)", r, a, g.N())
		}
	}
	return nil
}

// coarseGraph is CoarseGraph on checked arguments.
func coarseGraph(g *mesh.Graph, agg *Aggregates) *mesh.Graph {
	ptr, verts := agg.Members()
	nc := agg.N
	off := make([]int64, nc+1)
	var adj []int32
	mark := make([]int32, nc)
	for i := range mark {
		mark[i] = -1
	}
	for a := 0; a < nc; a++ {
		start := len(adj)
		for _, v := range verts[ptr[a]:ptr[a+1]] {
			for _, u := range g.Neighbors(v) {
				b := agg.Of[u]
				if b != int32(a) && mark[b] != int32(a) {
					mark[b] = int32(a)
					adj = append(adj, b)
				}
			}
		}
		slices.Sort(adj[start:])
		off[a+1] = int64(len(adj))
	}
	c := &mesh.Graph{Offsets: off, Adj: slices.Clip(adj)}
	if g.Coords != nil {
		c.Dim = g.Dim
		c.Coords = make([]float64, nc*g.Dim)
		for a, r := range agg.Roots {
			copy(c.Coords[a*g.Dim:(a+1)*g.Dim], g.Coords[int(r)*g.Dim:int(r+1)*g.Dim])
		}
	}
	if g.Class != nil {
		c.Class = make([]mesh.Class, nc)
		for a, r := range agg.Roots {
			c.Class[a] = g.Class[r]
		}
	}
	if g.Dirichlet != nil {
		c.Dirichlet = make([]bool, nc)
		for a, r := range agg.Roots {
			c.Dirichlet[a] = g.Dirichlet[r]
		}
	}
	return c
}
