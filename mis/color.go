package mis

import (
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/mesh"
)

// Coloring assigns every vertex a color such that no two vertices within
// the distance share one.
type Coloring struct {
	Color     []int32 // color of every vertex, 0..NumColors-1
	NumColors int
}

// Classes lists the vertices of every color, each in increasing id order:
// the sweep order of a multicolor Gauss–Seidel smoother.
func (c *Coloring) Classes() [][]int32 {
	out := make([][]int32, c.NumColors)
	for v, k := range c.Color {
		out[k] = append(out[k], int32(v))
	}
	return out
}

// Color colors g by repeated MIS: color 0 is the MIS of g in the order of
// opts.Priority, color 1 the MIS of the vertices left, and so on. Each
// color class is an independent set (at opts.Distance) and maximal among
// the vertices left, so early colors are large, which suits multicolor
// smoothers. The coloring is determined by the graph and the priority.
func Color(g *mesh.Graph, opts Options) (*Coloring, error) {
	if g == nil {
		return nil, errors.New("mis: nil graph")
	}
	if err := g.ValidateStructure(); err != nil {
		return nil, fmt.Errorf("mis: color: %w", err)
	}
	dist, err := opts.distance()
	if err != nil {
		return nil, err
	}
	keys, err := Keys(g, opts.Priority)
	if err != nil {
		return nil, err
	}
	n := g.N()
	color := make([]int32, n)
	done := make([]bool, n)
	left := n
	k := int32(0)
	for left > 0 {
		res := parallelMasked(g, keys, dist, opts.workers(), done)
		for v, in := range res.In {
			if in {
				color[v] = k
				done[v] = true
				left--
			}
		}
		k++
	}
	return &Coloring{Color: color, NumColors: int(k)}, nil
}
