package amg

import (
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
)

// One matching pass pairs vertices along edges, and the result is a
// locally dominant matching: no two unmatched vertices are adjacent, and
// two passes give aggregates of at most four vertices, mostly four.
func TestPairwiseAggregation(t *testing.T) {
	for _, pr := range []*fem.Problem{fem.Poisson(2, 30), fem.Poisson(3, 10), fem.Elasticity(5)} {
		a := mustCSR(t, pr.A)
		p := newPool(2)
		g, err := strengthGraph(p, a, 0, pr.Block)
		if err != nil {
			t.Fatal(err)
		}
		wg := &wgraph{off: g.Offsets, adj: g.Adj, w: edgeWeights(p, a, g, pr.Block)}
		of, na := match(wg, nil)
		size := make([]int, na)
		for _, x := range of {
			size[x]++
		}
		for v, x := range of {
			if size[x] > 2 {
				t.Fatalf("pair %d has %d vertices", x, size[x])
			}
			if size[x] == 1 {
				for _, u := range g.Neighbors(int32(v)) {
					if size[of[u]] == 1 {
						t.Fatalf("unmatched neighbours %d and %d", v, u)
					}
				}
			}
			if size[x] == 2 {
				adjacent := false
				for _, u := range g.Neighbors(int32(v)) {
					adjacent = adjacent || of[u] == x
				}
				if !adjacent {
					t.Fatalf("vertex %d is paired with a non-neighbour", v)
				}
			}
		}
		of2, na2 := aggregatePairwise(p, a, g, pr.Block, 2)
		if err := checkAggregates(of2, na2); err != nil {
			t.Fatal(err)
		}
		size = make([]int, na2)
		for _, x := range of2 {
			size[x]++
		}
		four := 0
		for _, s := range size {
			if s > 4 {
				t.Fatalf("aggregate of %d vertices after two passes", s)
			}
			if s == 4 {
				four++
			}
		}
		if 2*four < na2 {
			t.Errorf("%d of %d aggregates hold four vertices, want most", four, na2)
		}
	}
}
