// Package testgraphs holds the graphs that the tests of the MIS backends
// (mis, internal/misgpu) share: small ones of many shapes, and the
// mid-size ones the GPU must agree with the greedy reference on.
package testgraphs

import (
	"fmt"
	"math/rand/v2"

	"github.com/misgrid/misgrid/mesh"
)

// Small returns small graphs of many shapes: empty, isolated vertices,
// a path, a star, meshes in natural and random order, random graphs and
// a disconnected one.
func Small() map[string]*mesh.Graph {
	gs := map[string]*mesh.Graph{
		"empty":     {},
		"isolated":  fromEdges(5, nil),
		"path":      Path(50),
		"star":      Star(300),
		"hex27-6":   mesh.Hex27Graph(6, 6, 6),
		"grid7-9":   mesh.Grid7Graph(9, 8, 7),
		"random":    mesh.RandomGraph(500, 6, 3),
		"random-16": mesh.RandomGraph(300, 16, 4),
	}
	rel, _ := mesh.Relabel(mesh.Hex27Graph(7, 5, 6), 11)
	gs["hex27-relabelled"] = rel
	// Two components and isolated vertices together.
	var e []mesh.Pair
	for i := int32(0); i < 20; i++ {
		e = append(e, mesh.Pair{U: i, V: (i + 1) % 20}, mesh.Pair{U: 30 + i, V: 30 + (i+3)%20})
	}
	gs["disconnected"] = fromEdges(60, e)
	return gs
}

// GPU returns Small's graphs plus mid-size meshes and random graphs: the
// shapes the GPU must agree with the greedy set on.
func GPU() map[string]*mesh.Graph {
	gs := Small()
	gs["hex27-24"] = mesh.Hex27Graph(24, 20, 22)
	rel, _ := mesh.Relabel(mesh.Hex27Graph(24, 20, 22), 5)
	gs["hex27-24-relabelled"] = rel
	gs["grid7-40"] = mesh.Grid7Graph(40, 40, 40)
	gs["random-100k"] = mesh.RandomGraph(100_000, 16, 9)
	gs["random-sparse"] = mesh.RandomGraph(50_000, 2.5, 10)
	gs["star-20k"] = Star(20_000)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 4; i++ {
		n := 1 + rng.IntN(3000)
		gs[fmt.Sprintf("random-%d-%d", i, n)] = mesh.RandomGraph(n, 1+rng.Float64()*30, rng.Uint64())
	}
	return gs
}

// Path is a path of n vertices.
func Path(n int) *mesh.Graph {
	var e []mesh.Pair
	for i := int32(0); i+1 < int32(n); i++ {
		e = append(e, mesh.Pair{U: i, V: i + 1})
	}
	return fromEdges(n, e)
}

// Star is a hub joined to every other vertex, plus a ring among the
// leaves: one vertex of huge degree.
func Star(n int) *mesh.Graph {
	var e []mesh.Pair
	for i := int32(1); i < int32(n); i++ {
		e = append(e, mesh.Pair{U: 0, V: i}, mesh.Pair{U: i, V: 1 + i%int32(n-1)})
	}
	return fromEdges(n, e)
}

// FromEdges is mesh.FromEdges for edges known to be valid.
func FromEdges(n int, e []mesh.Pair) *mesh.Graph { return fromEdges(n, e) }

func fromEdges(n int, e []mesh.Pair) *mesh.Graph {
	g, err := mesh.FromEdges(n, e)
	if err != nil {
		panic(err) // the edges above are valid
	}
	return g
}

// FirstDiff returns the first index where a and b differ, or -1.
func FirstDiff(a, b []bool) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
