package gpuagg_test

import (
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

type namedGraph struct {
	name string
	g    *mesh.Graph
}

// corpus returns the graphs every test runs on: stencils with classes and
// coordinates, an element mesh, random graphs (sparse, and dense enough
// that coarse rows overflow shared memory), relabelled copies, and the
// small cases (empty, single vertex, isolated vertices, a path).
func corpus(t testing.TB, short bool) []namedGraph {
	t.Helper()
	tet, err := mesh.FromElements(mesh.StructuredTet(5, 4, 6), mesh.ElementOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gs := []namedGraph{
		{"empty", &mesh.Graph{Offsets: []int64{0}}},
		{"one", &mesh.Graph{Offsets: []int64{0, 0}, Class: []mesh.Class{mesh.Corner}, Dirichlet: []bool{true}}},
		{"isolated", &mesh.Graph{Offsets: []int64{0, 0, 0, 0}}},
		{"path", mustEdges(t, 9, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}})},
		{"hex27", mesh.Hex27Graph(7, 6, 5)},
		{"grid7", mesh.Grid7Graph(11, 9, 8)},
		{"tet", tet},
		{"random8", mesh.RandomGraph(3000, 8, 1)},
		{"random60", mesh.RandomGraph(900, 60, 2)},
		{"hub", hub(t, 1500, 4)},
	}
	if !short {
		gs = append(gs, namedGraph{"hex27-big", mesh.Hex27Graph(18, 17, 16)}, namedGraph{"random5", mesh.RandomGraph(40000, 5, 3)})
	}
	dir := mesh.Grid7Graph(6, 6, 6)
	dir.Dirichlet = make([]bool, dir.N())
	for v := range dir.Dirichlet {
		dir.Dirichlet[v] = v%7 == 0
	}
	gs = append(gs, namedGraph{"dirichlet", dir})
	for _, i := range []int{4, 5, 7} {
		r, _ := mesh.Relabel(gs[i].g, uint64(i))
		gs = append(gs, namedGraph{gs[i].name + "-relabelled", r})
	}
	return gs
}

// hub is a vertex with k spokes, each the start of a path of tail more
// vertices: the aggregate that holds the hub borders about k others, more
// than a warp keeps in shared memory.
func hub(t testing.TB, k, tail int) *mesh.Graph {
	var e [][2]int32
	for i := 1; i <= k; i++ {
		e = append(e, [2]int32{0, int32(i)})
		prev := int32(i)
		for j := range tail {
			next := int32(k + 1 + (i-1)*tail + j)
			e = append(e, [2]int32{prev, next})
			prev = next
		}
	}
	return mustEdges(t, 1+k*(1+tail), e)
}

// dense is a graph whose distance-1 aggregates border some 500 others
// each, so that most coarse rows outgrow shared memory. The host models
// take a minute on it; the GPU tests use it.
func dense() namedGraph { return namedGraph{"dense", mesh.RandomGraph(20000, 200, 4)} }

func mustEdges(t testing.TB, n int, e [][2]int32) *mesh.Graph {
	pairs := make([]mesh.Pair, len(e))
	for i, p := range e {
		pairs[i] = mesh.Pair{U: p[0], V: p[1]}
	}
	g, err := mesh.FromEdges(n, pairs)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sets returns maximal independent sets of g at distance dist under the
// priorities the hierarchy uses.
func sets(t testing.TB, g *mesh.Graph, dist int) map[string][]bool {
	t.Helper()
	out := map[string][]bool{}
	for _, p := range []mis.Priority{{Kind: mis.Hash, Seed: 3}, {Kind: mis.Degree}, {Kind: mis.Boundary}} {
		if p.Kind == mis.Boundary && g.Class == nil {
			continue
		}
		r, err := mis.Compute(g, mis.Options{Distance: dist, Priority: p, Device: mis.CPU})
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint(p.Kind)] = r.In
	}
	return out
}

// reference is the host's aggregation and coarse graph for set.
func reference(t testing.TB, g *mesh.Graph, set []bool, dist int) (of, roots []int32, coarse *mesh.Graph, err error) {
	t.Helper()
	if dist == 2 {
		agg, err := mis.Aggregate(g, set)
		if err != nil {
			return nil, nil, nil, err
		}
		coarse, err := mis.CoarseGraph(g, agg)
		if err != nil {
			t.Fatal(err)
		}
		return agg.Of, agg.Roots, coarse, nil
	}
	return referenceD1(t, g, set)
}
