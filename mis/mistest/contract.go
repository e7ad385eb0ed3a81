// Package mistest is the contract every MIS backend must meet: for the
// same graph and priority it returns exactly the set mis.Greedy returns,
// and that set passes mis.Verify. Backends (the parallel CPU rounds, the
// GPU kernels, the partitioned drivers over any number of parts) call Run
// from their own tests, so one suite states the contract once.
package mistest

import (
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"pgregory.net/rapid"
)

// Backend computes an MIS of g at distance dist under priority p.
type Backend func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error)

// Case is a named graph of the contract suite.
type Case struct {
	Name  string
	Graph *mesh.Graph
}

// Run checks backend against mis.Greedy on the fixed cases, for distance 1
// and 2 and every priority kind, then on random graphs drawn by rapid.
func Run(t *testing.T, backend Backend) {
	t.Helper()
	for _, c := range Cases() {
		for _, dist := range []int{1, 2} {
			for _, p := range Priorities(c.Graph) {
				name := fmt.Sprintf("%s/d%d/%s-%d", c.Name, dist, p.Kind, p.Seed)
				t.Run(name, func(t *testing.T) {
					if err := Check(c.Graph, p, dist, backend); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
	t.Run("rapid", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			g := DrawGraph(rt)
			dist := rapid.IntRange(1, 2).Draw(rt, "dist")
			ps := Priorities(g)
			p := ps[rapid.IntRange(0, len(ps)-1).Draw(rt, "prio")]
			if err := Check(g, p, dist, backend); err != nil {
				rt.Fatal(err)
			}
		})
	})
}

// Check runs backend once and compares its set with the greedy reference,
// naming the first vertex where they differ.
func Check(g *mesh.Graph, p mis.Priority, dist int, backend Backend) error {
	keys, err := mis.Keys(g, p)
	if err != nil {
		return err
	}
	want, err := mis.Greedy(g, keys, dist)
	if err != nil {
		return err
	}
	got, err := backend(g, p, dist)
	if err != nil {
		return fmt.Errorf("backend: %v", err)
	}
	if len(got.In) != g.N() {
		return fmt.Errorf("backend returned %d flags for %d vertices", len(got.In), g.N())
	}
	for v := range want.In {
		if got.In[v] != want.In[v] {
			return fmt.Errorf("vertex %d: backend says in=%v, greedy says in=%v (n=%d, dist=%d, %s seed %d)",
				v, got.In[v], want.In[v], g.N(), dist, p.Kind, p.Seed)
		}
	}
	if got.Size != want.Size {
		return fmt.Errorf("backend reports size %d, set has %d", got.Size, want.Size)
	}
	return mis.Verify(g, got.In, dist)
}

// Priorities returns one priority of each kind for g, with two seeds for
// Hash.
func Priorities(g *mesh.Graph) []mis.Priority {
	vals := make([]float64, g.N())
	for v := range vals {
		vals[v] = float64(v % 5) // many ties, so the hash must break them
	}
	return []mis.Priority{
		{Kind: mis.Hash, Seed: 0},
		{Kind: mis.Hash, Seed: 0xdeadbeef12345},
		{Kind: mis.Boundary, Seed: 7},
		{Kind: mis.Degree, Seed: 3},
		{Kind: mis.User, Seed: 11, Values: vals},
	}
}

// Cases returns the fixed graphs of the suite: degenerate shapes, meshes in
// natural and relabelled order, and random graphs.
func Cases() []Case {
	cs := []Case{
		{"empty", mustEdges(0, nil)},
		{"single", mustEdges(1, nil)},
		{"isolated", mustEdges(50, nil)},
		{"path", path(200)},
		{"star", star(3000)},
		{"star+path", union(star(500), path(300))},
		{"complete", complete(40)},
		{"grid7-12", grid7(12, 11, 10)},
		{"random-sparse", random(5000, 3, 1)},
		{"random-dense", random(800, 40, 2)},
		{"hub", hub(6000)},
	}
	g := grid7(16, 16, 16)
	r, _ := g.Permute(shuffle(g.N(), 99))
	cs = append(cs, Case{"grid7-16-relabelled", r})
	return cs
}

// DrawGraph draws a small random graph of one of several shapes.
func DrawGraph(t *rapid.T) *mesh.Graph {
	switch rapid.IntRange(0, 3).Draw(t, "shape") {
	case 0:
		n := rapid.IntRange(0, 60).Draw(t, "n")
		m := 0
		if n > 1 {
			m = rapid.IntRange(0, n*4).Draw(t, "m")
		}
		edges := make([]mesh.Pair, m)
		for i := range edges {
			edges[i] = mesh.Pair{U: int32(rapid.IntRange(0, n-1).Draw(t, "u")), V: int32(rapid.IntRange(0, n-1).Draw(t, "v"))}
		}
		return mustEdges(n, edges)
	case 1:
		return grid7(rapid.IntRange(1, 7).Draw(t, "nx"), rapid.IntRange(1, 7).Draw(t, "ny"), rapid.IntRange(1, 5).Draw(t, "nz"))
	case 2:
		g := grid7(rapid.IntRange(2, 9).Draw(t, "nx"), rapid.IntRange(2, 9).Draw(t, "ny"), 1)
		r, _ := g.Permute(shuffle(g.N(), rapid.Uint64().Draw(t, "perm")))
		return r
	default:
		return random(rapid.IntRange(1, 400).Draw(t, "n"), rapid.IntRange(1, 12).Draw(t, "deg"), rapid.Uint64().Draw(t, "seed"))
	}
}

func mustEdges(n int, e []mesh.Pair) *mesh.Graph {
	g, err := mesh.FromEdges(n, e)
	if err != nil {
		panic(err) // the suite's own generators: a bug here is a test bug
	}
	return g
}

func path(n int) *mesh.Graph {
	var e []mesh.Pair
	for i := 1; i < n; i++ {
		e = append(e, mesh.Pair{U: int32(i - 1), V: int32(i)})
	}
	return mustEdges(n, e)
}

func star(n int) *mesh.Graph {
	var e []mesh.Pair
	for i := 1; i < n; i++ {
		e = append(e, mesh.Pair{U: 0, V: int32(i)})
	}
	return mustEdges(n, e)
}

// hub is a sparse random graph plus one vertex adjacent to a third of it.
func hub(n int) *mesh.Graph {
	r := random(n, 4, 5)
	var e []mesh.Pair
	for v := int32(0); int(v) < n; v++ {
		for _, u := range r.Neighbors(v) {
			if u > v {
				e = append(e, mesh.Pair{U: v, V: u})
			}
		}
		if v%3 == 0 && v != 17 {
			e = append(e, mesh.Pair{U: 17, V: v})
		}
	}
	return mustEdges(n, e)
}

func complete(n int) *mesh.Graph {
	var e []mesh.Pair
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			e = append(e, mesh.Pair{U: int32(i), V: int32(j)})
		}
	}
	return mustEdges(n, e)
}

func union(a, b *mesh.Graph) *mesh.Graph {
	var e []mesh.Pair
	for v := int32(0); int(v) < a.N(); v++ {
		for _, u := range a.Neighbors(v) {
			e = append(e, mesh.Pair{U: v, V: u})
		}
	}
	off := int32(a.N())
	for v := int32(0); int(v) < b.N(); v++ {
		for _, u := range b.Neighbors(v) {
			e = append(e, mesh.Pair{U: v + off, V: u + off})
		}
	}
	return mustEdges(a.N()+b.N(), e)
}

// grid7 is a 7-point stencil graph in natural order, kept here so that the
// suite does not depend on the mesh generators it helps to test.
func grid7(nx, ny, nz int) *mesh.Graph {
	id := func(i, j, k int) int32 { return int32(i + nx*(j+ny*k)) }
	var e []mesh.Pair
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			for i := 0; i < nx; i++ {
				if i+1 < nx {
					e = append(e, mesh.Pair{U: id(i, j, k), V: id(i+1, j, k)})
				}
				if j+1 < ny {
					e = append(e, mesh.Pair{U: id(i, j, k), V: id(i, j+1, k)})
				}
				if k+1 < nz {
					e = append(e, mesh.Pair{U: id(i, j, k), V: id(i, j, k+1)})
				}
			}
		}
	}
	return mustEdges(nx*ny*nz, e)
}

func splitmix(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func random(n, deg int, seed uint64) *mesh.Graph {
	s := seed
	e := make([]mesh.Pair, 0, n*deg/2)
	for i := 0; i < n*deg/2; i++ {
		e = append(e, mesh.Pair{U: int32(splitmix(&s) % uint64(n)), V: int32(splitmix(&s) % uint64(n))})
	}
	return mustEdges(n, e)
}

func shuffle(n int, seed uint64) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	s := seed
	for i := n - 1; i > 0; i-- {
		j := int(splitmix(&s) % uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
