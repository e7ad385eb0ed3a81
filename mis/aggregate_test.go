package mis_test

import (
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
	"pgregory.net/rapid"
)

// checkAggregates asserts the properties aggregation AMG relies on: every
// vertex in exactly one aggregate, each aggregate connected and holding its
// root and the root's neighbours, roots increasing.
func checkAggregates(t interface{ Fatalf(string, ...any) }, g *mesh.Graph, set []bool, agg *mis.Aggregates) {
	for a, r := range agg.Roots {
		if !set[r] || agg.Of[r] != int32(a) {
			t.Fatalf("aggregate %d: root %d not a member of its own aggregate", a, r)
		}
		if a > 0 && r <= agg.Roots[a-1] {
			t.Fatalf("roots not increasing at aggregate %d", a)
		}
		for _, u := range g.Neighbors(r) {
			if agg.Of[u] != int32(a) {
				t.Fatalf("neighbour %d of root %d is in aggregate %d, not %d", u, r, agg.Of[u], a)
			}
		}
	}
	ptr, verts := agg.Members()
	for a := 0; a < agg.N; a++ {
		members := verts[ptr[a]:ptr[a+1]]
		// BFS inside the aggregate from its root must reach every member.
		seen := map[int32]bool{agg.Roots[a]: true}
		q := []int32{agg.Roots[a]}
		for len(q) > 0 {
			v := q[0]
			q = q[1:]
			for _, u := range g.Neighbors(v) {
				if agg.Of[u] == int32(a) && !seen[u] {
					seen[u] = true
					q = append(q, u)
				}
			}
		}
		if len(seen) != len(members) {
			t.Fatalf("aggregate %d is not connected: %d of %d members reachable from root", a, len(seen), len(members))
		}
	}
	for v, a := range agg.Of {
		if a < 0 || int(a) >= agg.N {
			t.Fatalf("vertex %d in aggregate %d of %d", v, a, agg.N)
		}
	}
}

func TestAggregateProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := mistest.DrawGraph(rt)
		res, err := mis.Compute(g, mis.Options{Distance: 2, Priority: mis.Priority{Kind: mis.Boundary, Seed: rapid.Uint64().Draw(rt, "seed")}, Device: mis.CPU})
		if err != nil {
			rt.Fatal(err)
		}
		agg, err := mis.Aggregate(g, res.In)
		if err != nil {
			rt.Fatal(err)
		}
		checkAggregates(rt, g, res.In, agg)
		c, err := mis.CoarseGraph(g, agg)
		if err != nil {
			rt.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			rt.Fatal(err)
		}
		// Coarse adjacency is exactly "some fine edge joins the two".
		for v := int32(0); int(v) < g.N(); v++ {
			for _, u := range g.Neighbors(v) {
				a, b := agg.Of[v], agg.Of[u]
				if a != b && !contains(c.Neighbors(a), b) {
					rt.Fatalf("fine edge %d-%d but aggregates %d,%d not adjacent", v, u, a, b)
				}
			}
		}
	})
}

func contains(s []int32, x int32) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func TestAggregateRejectsBadSets(t *testing.T) {
	g := mistest.Cases()[3].Graph // path
	d1, _ := mis.Compute(g, mis.Options{Distance: 1, Device: mis.CPU})
	if _, err := mis.Aggregate(g, d1.In); err == nil {
		t.Error("a distance-1 set on a path was accepted as a distance-2 set")
	}
	if _, err := mis.Aggregate(g, make([]bool, g.N())); err == nil {
		t.Error("an empty set was accepted")
	}
}

func TestColor(t *testing.T) {
	for _, c := range mistest.Cases() {
		for _, d := range []int{1, 2} {
			col, err := mis.Color(c.Graph, mis.Options{Distance: d, Priority: mis.Priority{Seed: 1}, Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			classes := col.Classes()
			done := make([]bool, c.Graph.N())
			for k, cls := range classes {
				in := make([]bool, c.Graph.N())
				for _, v := range cls {
					in[v] = true
				}
				// Independent at distance d, and maximal among vertices not
				// yet colored: nothing left uncovered could have joined.
				for _, v := range cls {
					for _, u := range c.Graph.Neighbors(v) {
						if in[u] {
							t.Fatalf("%s d%d: color %d holds adjacent %d,%d", c.Name, d, k, v, u)
						}
						if d == 2 {
							for _, w := range c.Graph.Neighbors(u) {
								if w != v && in[w] {
									t.Fatalf("%s d2: color %d holds %d,%d at distance 2", c.Name, k, v, w)
								}
							}
						}
					}
				}
				covered := make([]bool, c.Graph.N())
				for _, v := range cls {
					for _, u := range c.Graph.Neighbors(v) {
						covered[u] = true
						if d == 2 {
							for _, w := range c.Graph.Neighbors(u) {
								covered[w] = true
							}
						}
					}
				}
				for v := range done {
					if !done[v] && !in[v] && !covered[v] {
						t.Fatalf("%s d%d: vertex %d could have joined color %d", c.Name, d, v, k)
					}
				}
				for _, v := range cls {
					done[v] = true
				}
			}
			for v, ok := range done {
				if !ok {
					t.Fatalf("%s: vertex %d uncolored", c.Name, v)
				}
			}
		}
	}
}

func TestHierarchyShrinks(t *testing.T) {
	g := mistest.Cases()[7].Graph // grid7 12x11x10
	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{Priority: mis.Priority{Kind: mis.Boundary}, MinVertices: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(levels) < 3 {
		t.Fatalf("only %d levels for %d vertices", len(levels), g.N())
	}
	for i, l := range levels {
		if err := l.Graph.Validate(); err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		if err := mis.Verify(l.Graph, l.Set.In, 2); err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		if i+1 < len(levels) {
			if levels[i+1].Graph.N() != l.Agg.N || l.Agg.N >= l.Graph.N() {
				t.Fatalf("level %d: %d vertices → %d aggregates → next level %d", i, l.Graph.N(), l.Agg.N, levels[i+1].Graph.N())
			}
			checkAggregates(t, l.Graph, l.Set.In, l.Agg)
		}
	}
	if last := levels[len(levels)-1]; last.Agg != nil || last.Graph.N() > 8 && len(levels) < 20 && last.Set.Size < last.Graph.N() {
		t.Fatalf("last level: %d vertices, agg %v", last.Graph.N(), last.Agg != nil)
	}
}
