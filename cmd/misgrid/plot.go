package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/misgrid/misgrid/mesh"
)

// classColors are the colours of coarse vertices by boundary class.
var classColors = [mesh.NumClasses]color.RGBA{
	mesh.Interior: {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	mesh.Face:     {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	mesh.Edge:     {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
	mesh.Corner:   {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
}

// midSlice returns the vertices of a 3D graph whose z coordinate is the
// one nearest the middle of the z range: the z=mid plane of a structured
// mesh, and a usable slice of any other.
func midSlice(g *mesh.Graph) ([]int32, float64, error) {
	if g.Dim != 3 || len(g.Coords) != 3*g.N() || g.N() == 0 {
		return nil, 0, fmt.Errorf("slice: the graph has no 3D coordinates")
	}
	zmin, zmax := math.Inf(1), math.Inf(-1)
	for v := 0; v < g.N(); v++ {
		z := g.Coords[3*v+2]
		zmin, zmax = min(zmin, z), max(zmax, z)
	}
	// Coordinates equal up to a small fraction of the z extent are one
	// plane: coordinates written through text may differ in the last bits,
	// and two planes at equal distance from the middle may differ in the
	// rounding of that distance.
	tol := 1e-9 * max(zmax-zmin, 1)
	// The plane nearest the middle; of two at equal distance (an even
	// number of planes), the lower.
	mid := (zmin + zmax) / 2
	z := math.Inf(1)
	for v := 0; v < g.N(); v++ {
		zv := g.Coords[3*v+2]
		if d, dz := math.Abs(zv-mid), math.Abs(z-mid); d < dz-tol || d <= dz+tol && zv < z {
			z = zv
		}
	}
	var out []int32
	for v := 0; v < g.N(); v++ {
		if math.Abs(g.Coords[3*v+2]-z) <= tol {
			out = append(out, int32(v))
		}
	}
	return out, z, nil
}

// plotSlice draws the z=mid slice of g: every vertex small and grey, the
// vertices of the set large and coloured by class, and saves it to path
// (the format follows the extension: .png, .svg, .pdf).
func plotSlice(g *mesh.Graph, in []bool, title, path string) error {
	verts, z, err := midSlice(g)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\nslice z = %.3g: %d vertices", title, z, len(verts))
	p.X.Label.Text = "x"
	p.Y.Label.Text = "y"
	p.Legend.Top = true
	p.Legend.Left = false

	all := make(plotter.XYs, len(verts))
	byClass := make([]plotter.XYs, mesh.NumClasses)
	for i, v := range verts {
		xy := plotter.XY{X: g.Coords[3*v], Y: g.Coords[3*v+1]}
		all[i] = xy
		if in[v] {
			c := mesh.Interior
			if g.Class != nil {
				c = g.Class[v]
			}
			byClass[c] = append(byClass[c], xy)
		}
	}
	grey, err := plotter.NewScatter(all)
	if err != nil {
		return err
	}
	grey.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 0xb0}, Radius: vg.Points(1.2), Shape: draw.CircleGlyph{}}
	p.Add(grey)
	p.Legend.Add("all vertices", grey)
	for c := mesh.Class(0); c < mesh.NumClasses; c++ {
		pts := byClass[c]
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: classColors[c], Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("coarse, %s (%d)", c, len(pts)), s)
	}
	// Room for the legend above the unit square.
	p.Y.Max += 0.25 * (p.Y.Max - p.Y.Min)
	return p.Save(7*vg.Inch, 7*vg.Inch, path)
}
