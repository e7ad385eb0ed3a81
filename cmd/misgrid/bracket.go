package main

import (
	"fmt"
	"math"

	"github.com/misgrid/misgrid/mesh"
)

// bracketCell is one unit square of the bracket, at (I, J) in units of
// the cell size; Hole > 0 cuts a circular hole of that radius (a fraction
// of the cell) at its centre.
type bracketCell struct {
	I, J int
	Hole float64
}

// bracketCells is the demo's part: an L-shaped bracket two cells thick,
// with bolt holes of two sizes at the ends of its arms and in the bend.
var bracketCells = func() []bracketCell {
	holes := map[[2]int]float64{
		{4, 0}: 0.3, {4, 1}: 0.3, // horizontal arm's end
		{0, 4}: 0.3, {1, 4}: 0.3, // vertical arm's end
		{1, 1}: 0.22, {2, 0}: 0.22, {0, 2}: 0.22,
	}
	var cells []bracketCell
	for j := range 5 {
		for i := range 5 {
			if i < 2 || j < 2 {
				cells = append(cells, bracketCell{I: i, J: j, Hole: holes[[2]int{i, j}]})
			}
		}
	}
	return cells
}()

// bracketMesh meshes the bracket with quad4 elements, n along each side
// of a cell: a plain n×n grid in solid cells, and in cells with a hole
// four mapped patches between the cell's sides and quarters of the hole
// (an O-grid), graded towards the hole. Cells share the nodes of their
// common sides. The mesh has re-entrant and convex corners and curved
// boundaries, which is what the coarse grids of a real part must respect.
func bracketMesh(n int) (*mesh.Mesh, error) {
	if n < 2 || n > 1000 {
		return nil, fmt.Errorf("bracket: %d elements per cell side: want 2 to 1000", n)
	}
	b := &quadBuilder{ids: map[[2]int64]int32{}}
	for _, c := range bracketCells {
		x0, y0 := float64(c.I), float64(c.J)
		if c.Hole == 0 {
			b.patch(n, n, func(s, t float64) (float64, float64) { return x0 + s, y0 + t })
			continue
		}
		// Radial divisions: elements near the hole about as long as wide.
		m := max(2, int(math.Round(float64(n)*(0.7-c.Hole))))
		cx, cy := x0+0.5, y0+0.5
		corner := [5][2]float64{{x0, y0}, {x0 + 1, y0}, {x0 + 1, y0 + 1}, {x0, y0 + 1}, {x0, y0}}
		for k := range 4 {
			a0 := float64(k)*math.Pi/2 - 3*math.Pi/4
			p, q := corner[k], corner[k+1]
			b.patch(n, m, func(s, t float64) (float64, float64) {
				a := a0 + s*math.Pi/2
				ax, ay := cx+c.Hole*math.Cos(a), cy+c.Hole*math.Sin(a)
				sx, sy := p[0]+s*(q[0]-p[0]), p[1]+s*(q[1]-p[1])
				// t = 0 on the side, 1 on the hole: quads counter-clockwise.
				g := math.Pow(1-t, 1.4)
				return ax + g*(sx-ax), ay + g*(sy-ay)
			})
		}
	}
	return &mesh.Mesh{Dim: 2, Coords: b.coords, Blocks: []mesh.ElementBlock{{Type: mesh.Quad4, Conn: b.conn}}}, nil
}

// quadBuilder collects the nodes and quads of mapped patches, merging
// nodes that patches share.
type quadBuilder struct {
	coords []float64
	conn   []int32
	ids    map[[2]int64]int32
}

// node returns the id of the node at (x, y), adding it when it is new.
// Points of two patches that meet agree to rounding, far inside 1e-9.
func (b *quadBuilder) node(x, y float64) int32 {
	key := [2]int64{int64(math.Round(x * 1e9)), int64(math.Round(y * 1e9))}
	if id, ok := b.ids[key]; ok {
		return id
	}
	id := int32(len(b.coords) / 2)
	b.ids[key] = id
	b.coords = append(b.coords, x, y)
	return id
}

// patch adds an ns×nt grid of quads, the image of the unit square under f.
func (b *quadBuilder) patch(ns, nt int, f func(s, t float64) (float64, float64)) {
	ids := make([]int32, (ns+1)*(nt+1))
	for j := 0; j <= nt; j++ {
		for i := 0; i <= ns; i++ {
			ids[j*(ns+1)+i] = b.node(f(float64(i)/float64(ns), float64(j)/float64(nt)))
		}
	}
	for j := range nt {
		for i := range ns {
			v := j*(ns+1) + i
			b.conn = append(b.conn, ids[v], ids[v+1], ids[v+ns+2], ids[v+ns+1])
		}
	}
}
