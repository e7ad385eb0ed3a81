package gpuagg_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// referenceD1 is the distance-1 aggregation of mis.Hierarchy (each
// non-member joins its lowest-numbered adjacent aggregate) with
// mis.CoarseGraph; TestReferenceD1 ties it to Hierarchy itself.
func referenceD1(t testing.TB, g *mesh.Graph, set []bool) (of, roots []int32, coarse *mesh.Graph, err error) {
	of = make([]int32, g.N())
	for v, in := range set {
		of[v] = -1
		if in {
			of[v] = int32(len(roots))
			roots = append(roots, int32(v))
		}
	}
	for v := range of {
		for _, u := range g.Neighbors(int32(v)) {
			if !set[v] && set[u] {
				of[v] = of[u]
				break
			}
		}
		if of[v] < 0 {
			return nil, nil, nil, &gpuagg.SetError{Vertex: int32(v), Distance: 1}
		}
	}
	coarse, err = mis.CoarseGraph(g, &mis.Aggregates{Of: of, Roots: roots, N: len(roots)})
	if err != nil {
		t.Fatal(err)
	}
	return of, roots, coarse, nil
}

func TestReferenceD1(t *testing.T) {
	for _, c := range corpus(t, true) {
		for _, p := range []mis.Priority{{Kind: mis.Hash, Seed: 3}, {Kind: mis.Degree}} {
			levels, err := mis.Hierarchy(c.g, mis.HierarchyOptions{Distance: 1, Priority: p, MinVertices: 1, MaxLevels: 2, Device: mis.CPU})
			if err != nil {
				t.Fatal(err)
			}
			if levels[0].Agg == nil {
				continue
			}
			of, roots, coarse, err := referenceD1(t, c.g, levels[0].Set.In)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if !slices.Equal(of, levels[0].Agg.Of) || !slices.Equal(roots, levels[0].Agg.Roots) || !sameGraph(coarse, levels[1].Graph) {
				t.Fatalf("%s %v: referenceD1 differs from mis.Hierarchy", c.name, p.Kind)
			}
		}
	}
}

func sameGraph(a, b *mesh.Graph) bool {
	return slices.Equal(a.Offsets, b.Offsets) && slices.Equal(a.Adj, b.Adj) && a.Dim == b.Dim &&
		slices.Equal(a.Coords, b.Coords) && slices.Equal(a.Class, b.Class) && slices.Equal(a.Dirichlet, b.Dirichlet) &&
		(a.Class == nil) == (b.Class == nil) && (a.Dirichlet == nil) == (b.Dirichlet == nil) && (a.Coords == nil) == (b.Coords == nil)
}

// grids are the (blocks, threads, warp and block row capacities) the
// models run with: the kernels' own, and small ones that put every scan
// chunk boundary and both overflow paths in reach of small graphs.
var grids = [][4]int{{1024, 256, 256, 4096}, {3, 32, 256, 300}, {7, 64, 4, 12}, {1, 1024, 1, 1}, {2, 96, 3, 1 << 30}}

func TestModelMatchesHost(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range corpus(t, testing.Short()) {
		for _, dist := range []int{1, 2} {
			for pname, set := range sets(t, c.g, dist) {
				wof, wroots, wcoarse, werr := reference(t, c.g, set, dist)
				if werr != nil {
					t.Fatalf("%s d%d %s: host: %v", c.name, dist, pname, werr)
				}
				for _, gr := range grids {
					of, roots, coarse, err := gpuagg.ModelLevel(c.g, set, dist, rng, gr)
					if err != nil {
						t.Fatalf("%s d%d %s grid %v: %v", c.name, dist, pname, gr, err)
					}
					if !slices.Equal(of, wof) || !slices.Equal(roots, wroots) {
						t.Fatalf("%s d%d %s grid %v: aggregates differ from the host's", c.name, dist, pname, gr)
					}
					if !sameGraph(coarse, wcoarse) {
						t.Fatalf("%s d%d %s grid %v: coarse graph differs from the host's", c.name, dist, pname, gr)
					}
					if err := coarse.Validate(); err != nil {
						t.Fatalf("%s d%d %s: %v", c.name, dist, pname, err)
					}
				}
			}
		}
	}
}

// badSets returns sets the host rejects: random ones (adjacent members),
// a distance-1 MIS given as distance 2, and MIS-2 sets with members
// removed (not maximal).
func badSets(g *mesh.Graph, rng *rand.Rand) [][]bool {
	n := g.N()
	var out [][]bool
	for _, p := range []float64{0.02, 0.1, 0.5} {
		s := make([]bool, n)
		for v := range s {
			s[v] = rng.Float64() < p
		}
		out = append(out, s)
	}
	for _, d := range []int{1, 2} {
		r, _ := mis.Compute(g, mis.Options{Distance: d, Priority: mis.Priority{Kind: mis.Hash, Seed: 9}, Device: mis.CPU})
		if d == 2 {
			for v := range r.In {
				if r.In[v] && rng.IntN(3) == 0 {
					r.In[v] = false
				}
			}
		}
		out = append(out, r.In)
	}
	return out
}

func TestModelErrorsMatchHost(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range corpus(t, true) {
		for i, set := range badSets(c.g, rng) {
			for _, dist := range []int{1, 2} {
				_, _, _, werr := reference(t, c.g, set, dist)
				_, _, _, err := gpuagg.ModelLevel(c.g, set, dist, rng, [4]int{5, 32, 256, 4096})
				if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
					t.Fatalf("%s set %d d%d: model says %v, host %v", c.name, i, dist, err, werr)
				}
				var se *gpuagg.SetError
				if err != nil && !errors.As(err, &se) {
					t.Fatalf("%s: %T is not a *SetError", c.name, err)
				}
			}
		}
	}
}

// The bounds check's model passes valid graphs with their largest degree
// and names the row that mesh.Validate names when one row is corrupted.
func TestModelBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range corpus(t, true) {
		bad, deg := gpuagg.CSRBounds(c.g.Offsets, c.g.Adj)
		if bad != -1 || deg != int64(c.g.MaxDegree()) {
			t.Fatalf("%s: valid graph: bad row %d, max degree %d (want %d)", c.name, bad, deg, c.g.MaxDegree())
		}
		if c.g.NumEdges() == 0 {
			continue
		}
		for range 20 {
			k := rng.Int64N(c.g.NumEdges())
			adj := slices.Clone(c.g.Adj)
			row, _ := slices.BinarySearch(c.g.Offsets, k+1)
			row-- // the row that holds entry k
			for c.g.Offsets[row] > k || c.g.Offsets[row+1] <= k {
				row--
			}
			adj[k] = []int32{-1, int32(c.g.N()), int32(row)}[rng.IntN(3)]
			g := &mesh.Graph{Offsets: c.g.Offsets, Adj: adj}
			var ve *mesh.ValidationError
			if err := g.Validate(); !errors.As(err, &ve) {
				t.Fatalf("%s: Validate missed entry %d = %d", c.name, k, adj[k])
			}
			if bad, _ := gpuagg.CSRBounds(g.Offsets, adj); bad != int64(ve.Row) {
				t.Fatalf("%s: entry %d = %d: model names row %d, Validate %d", c.name, k, adj[k], bad, ve.Row)
			}
		}
	}
}
