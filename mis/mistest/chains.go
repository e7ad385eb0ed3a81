package mistest

import (
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// Chain is a graph with user values whose greedy order runs along long
// chains, so that each parallel round decides a thin band: one round per
// link without a serial finish (issue 21, item 6).
type Chain struct {
	Name   string
	Graph  *mesh.Graph
	Values []float64
}

// Chains returns x + 10⁻³·y on a side×side quad grid (999 rounds and
// 13.2 s at 1000² before the finish) and values rising along a path of n
// vertices (26 s at 10⁵).
func Chains(tb testing.TB, side, n int) []Chain {
	tb.Helper()
	quad := mesh.StructuredQuad(side, side)
	grid, err := mesh.FromElements(quad, mesh.ElementOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tilted := make([]float64, grid.N())
	for v := range tilted {
		tilted[v] = quad.Coords[2*v] + 1e-3*quad.Coords[2*v+1]
	}
	b := mesh.NewBuilder(n)
	rising := make([]float64, n)
	for v := range n {
		rising[v] = float64(v)
		if v > 0 {
			b.Add(int32(v-1), int32(v))
		}
	}
	return []Chain{
		{fmt.Sprintf("quad%d-x+1e-3y", side), grid, tilted},
		{fmt.Sprintf("path%d-increasing", n), b.Graph(), rising},
	}
}
