package main

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// The picture of a hierarchy on a 2D mesh: one panel per level that has
// aggregates, each showing the fine mesh with every vertex's median-dual
// cell filled in the colour of the aggregate it ends up in at that level,
// the aggregates outlined, and the level's roots marked by boundary class;
// the level table below as the caption.

// aggPalette colours aggregates; neighbouring aggregates share one only
// where an aggregate has more neighbours than the palette has colours.
var aggPalette = []color.RGBA{
	{0x8d, 0xd3, 0xc7, 0xff}, {0xff, 0xff, 0xb3, 0xff}, {0xbe, 0xba, 0xda, 0xff},
	{0xfb, 0x80, 0x72, 0xff}, {0x80, 0xb1, 0xd3, 0xff}, {0xfd, 0xb4, 0x62, 0xff},
	{0xb3, 0xde, 0x69, 0xff}, {0xfc, 0xcd, 0xe5, 0xff}, {0xcc, 0xeb, 0xc5, 0xff},
	{0xff, 0xed, 0x6f, 0xff},
}

// picture is what the drawing needs of a mesh: 2D node positions and
// its cells as polygons of corner nodes in cyclic order.
type picture struct {
	xy    [][2]float64
	cells [][]int32
	xmin  [2]float64
	xmax  [2]float64
}

// newPicture takes the 2D elements of m (tri3, quad4, and tri6, quad9
// split into four), in a 2D mesh or a 3D one whose nodes share one z.
func newPicture(m *mesh.Mesh) (*picture, error) {
	if m == nil {
		return nil, errors.New("a picture needs a mesh with elements (a .msh file or gen:quad, gen:tri)")
	}
	n := m.NumNodes()
	p := &picture{xy: make([][2]float64, n)}
	// Sub-cells of the second-order shapes, in Gmsh node order.
	split := map[mesh.ElementType][][]int{
		mesh.Tri3:  {{0, 1, 2}},
		mesh.Quad4: {{0, 1, 2, 3}},
		mesh.Tri6:  {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}},
		mesh.Quad9: {{0, 4, 8, 7}, {4, 1, 5, 8}, {8, 5, 2, 6}, {7, 8, 6, 3}},
	}
	cells := 0
	for _, b := range m.Blocks {
		if b.Type.Dim() == 3 {
			return nil, fmt.Errorf("a picture needs a 2D mesh: this one has %s elements (write .vtu for 3D meshes)", b.Type)
		}
		cells += b.Len() * len(split[b.Type])
	}
	if cells > maxPictureCells {
		return nil, fmt.Errorf("a picture of %d cells would not show an aggregate at %d points a panel (at most %d cells): write .vtu for ParaView",
			cells, panelW, maxPictureCells)
	}
	p.cells = make([][]int32, 0, cells)
	for _, b := range m.Blocks {
		parts, ok := split[b.Type]
		if !ok {
			continue // points and lines: boundary markers of Gmsh files
		}
		k := b.Type.Nodes()
		for e := range b.Len() {
			conn := b.Conn[e*k : e*k+k]
			for _, part := range parts {
				cell := make([]int32, len(part))
				for i, j := range part {
					cell[i] = conn[j]
				}
				p.cells = append(p.cells, cell)
			}
		}
	}
	if len(p.cells) == 0 {
		return nil, errors.New("a picture needs 2D elements (tri3, quad4, tri6, quad9): the mesh has none")
	}
	for v := range n {
		p.xy[v] = [2]float64{m.Coords[v*m.Dim], m.Coords[v*m.Dim+1]}
		if m.Dim == 3 && m.Coords[v*3+2] != m.Coords[2] {
			return nil, fmt.Errorf("a picture needs a flat 2D mesh: node %d has z = %g, node 0 z = %g (write .vtu for 3D meshes)",
				v, m.Coords[v*3+2], m.Coords[2])
		}
	}
	p.xmin, p.xmax = [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, c := range p.cells {
		for _, v := range c {
			for d := range 2 {
				p.xmin[d], p.xmax[d] = min(p.xmin[d], p.xy[v][d]), max(p.xmax[d], p.xy[v][d])
			}
		}
	}
	return p, nil
}

// aggregatesAt maps every fine vertex to its aggregate at level k (the
// vertex of level k+1 it becomes), or −1 where a vertex is in none.
func aggregatesAt(levels []mis.Level, k int) []int32 {
	of := make([]int32, levels[0].Graph.N())
	for v := range of {
		a := int32(v)
		for l := 0; l <= k && a >= 0; l++ {
			a = levels[l].Agg.Of[a]
		}
		of[v] = a
	}
	return of
}

// greedyColors colours the vertices of g with k colours or fewer so that
// neighbours differ where k allows: each vertex in id order takes the
// colour least used so far among those its coloured neighbours left, so
// the colours spread evenly and a graph of at most k vertices gets k
// different ones. Where every colour is taken by a neighbour (a vertex of
// degree ≥ k) it takes the least used of all.
func greedyColors(g *mesh.Graph, k int) []int {
	col := make([]int, g.N())
	used := make([]int, k)
	taken := make([]bool, k)
	for v := range col {
		clear(taken)
		for _, u := range g.Neighbors(int32(v)) {
			if int(u) < v {
				taken[col[u]] = true
			}
		}
		best := -1
		for c := range k {
			if !taken[c] && (best < 0 || used[c] < used[best]) {
				best = c
			}
		}
		if best < 0 {
			best = 0
			for c := range k {
				if used[c] < used[best] {
					best = c
				}
			}
		}
		col[v] = best
		used[best]++
	}
	return col
}

// Picture size: panels of panelW points, at most three a row; meshes of
// more cells than a panel can show are refused.
const (
	maxPictureCells = 200_000
	panelW          = 330
	titleH          = 30
	dpi             = 110
	maxPanel        = 3
)

// drawHierarchy writes a PNG of the aggregates of every level of a
// hierarchy computed on the graph of the 2D mesh m.
func drawHierarchy(path string, m *mesh.Mesh, levels []mis.Level, title string) error {
	p, err := newPicture(m)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if n := levels[0].Graph.N(); n != len(p.xy) {
		return fmt.Errorf("%s: the graph has %d vertices and the mesh %d nodes", path, n, len(p.xy))
	}
	// One panel per level with aggregates; a lone MIS gets one panel.
	nPanels := 1
	for nPanels < len(levels) && levels[nPanels].Agg != nil {
		nPanels++
	}
	var table bytes.Buffer
	printLevels(&table, levels)
	caption := strings.Split(strings.TrimRight(table.String(), "\n"), "\n")

	cols := min(nPanels, maxPanel)
	rows := (nPanels + cols - 1) / cols
	dx, dy := p.xmax[0]-p.xmin[0], p.xmax[1]-p.xmin[1]
	panelH := min(panelW*dy/max(dx, 1e-300), 1.5*panelW) + titleH
	captionH := 14*float64(len(caption)) + 12
	// Wide enough for the legend and the table; panels centred.
	w, h := vg.Length(max(panelW*cols, 600)), vg.Length(40+panelH*float64(rows)+24+captionH)
	x0 := (float64(w) - panelW*float64(cols)) / 2
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	c := draw.New(img)

	sans := textStyle("Sans", 13, draw.XCenter)
	c.FillText(sans, vg.Point{X: w / 2, Y: h - 22}, title)
	for k := range nPanels {
		row, col := k/cols, k%cols
		top := float64(h) - 40 - panelH*float64(row)
		box := vg.Rectangle{
			Min: vg.Point{X: vg.Length(x0+panelW*float64(col)) + 8, Y: vg.Length(top-panelH) + 4},
			Max: vg.Point{X: vg.Length(x0+panelW*float64(col+1)) - 8, Y: vg.Length(top - titleH)},
		}
		l := levels[k]
		label := fmt.Sprintf("level %d: %d vertices → %d aggregates", k, l.Graph.N(), l.Set.Size)
		if l.Agg == nil {
			label = fmt.Sprintf("level %d: %d vertices, %d in the set", k, l.Graph.N(), l.Set.Size)
		}
		c.FillText(textStyle("Sans", 11, draw.XCenter), vg.Point{X: (box.Min.X + box.Max.X) / 2, Y: vg.Length(top - 18)}, label)
		p.drawLevel(c, box, levels, k)
	}
	drawLegend(c, vg.Point{X: 16, Y: vg.Length(captionH) + 12}, levels[0].Agg != nil)
	mono := textStyle("Mono", 10, draw.XLeft)
	for i, line := range caption {
		c.FillText(mono, vg.Point{X: 16, Y: vg.Length(captionH - 14*(float64(i)+0.5))}, line)
	}
	return createFile(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

func textStyle(variant string, size vg.Length, x text.XAlignment) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(font.Font{Typeface: "Liberation", Variant: font.Variant(variant)}, size),
		XAlign:  x,
		YAlign:  draw.YCenter,
		Handler: plot.DefaultTextHandler,
	}
}

// drawLevel draws level k into box, keeping the mesh's aspect ratio.
func (p *picture) drawLevel(c draw.Canvas, box vg.Rectangle, levels []mis.Level, k int) {
	dx, dy := p.xmax[0]-p.xmin[0], p.xmax[1]-p.xmin[1]
	bw, bh := float64(box.Max.X-box.Min.X), float64(box.Max.Y-box.Min.Y)
	s := min(bw/max(dx, 1e-300), bh/max(dy, 1e-300))
	ox := float64(box.Min.X) + (bw-s*dx)/2
	oy := float64(box.Min.Y) + (bh-s*dy)/2
	at := func(x, y float64) vg.Point {
		return vg.Point{X: vg.Length(ox + s*(x-p.xmin[0])), Y: vg.Length(oy + s*(y-p.xmin[1]))}
	}
	// Without aggregates (a lone MIS) every vertex is its own, in grey.
	of := make([]int32, len(p.xy))
	fill := func(v int32) color.Color { return color.Gray{Y: 0xe4} }
	if levels[k].Agg != nil {
		of = aggregatesAt(levels, k)
		colors := greedyColors(levels[k+1].Graph, len(aggPalette))
		fill = func(v int32) color.Color {
			if of[v] < 0 {
				return color.Gray{Y: 0xe4}
			}
			return aggPalette[colors[of[v]]]
		}
	}
	// Median-dual cells: the part of each cell nearest each corner.
	var outline, edges [][]vg.Point
	for _, cell := range p.cells {
		var cx, cy float64
		for _, v := range cell {
			cx += p.xy[v][0]
			cy += p.xy[v][1]
		}
		cx, cy = cx/float64(len(cell)), cy/float64(len(cell))
		mid := func(i int) vg.Point {
			a, b := p.xy[cell[i%len(cell)]], p.xy[cell[(i+1)%len(cell)]]
			return at((a[0]+b[0])/2, (a[1]+b[1])/2)
		}
		ctr := at(cx, cy)
		for i, v := range cell {
			poly := []vg.Point{at(p.xy[v][0], p.xy[v][1]), mid(i), ctr, mid(i + len(cell) - 1)}
			col := fill(v)
			c.FillPolygon(col, poly)
			// The same colour around the edge closes the anti-aliasing seams.
			c.StrokeLines(draw.LineStyle{Color: col, Width: 0.6}, append(poly, poly[0]))
			w := cell[(i+1)%len(cell)]
			if of[v] != of[w] {
				outline = append(outline, []vg.Point{mid(i), ctr})
			}
			edges = append(edges, []vg.Point{at(p.xy[v][0], p.xy[v][1]), at(p.xy[w][0], p.xy[w][1])})
		}
	}
	c.StrokeLines(draw.LineStyle{Color: color.NRGBA{0xff, 0xff, 0xff, 0x80}, Width: 0.35}, edges...)
	c.StrokeLines(draw.LineStyle{Color: color.RGBA{0x30, 0x30, 0x30, 0xff}, Width: 0.9}, outline...)
	c.StrokeLines(draw.LineStyle{Color: color.Black, Width: 1.2}, p.boundary(at)...)

	g := levels[k].Graph
	if len(g.Coords) < 2*g.N() || g.Dim < 2 {
		return
	}
	for v, in := range levels[k].Set.In {
		if in {
			x, y := g.Coords[v*g.Dim], g.Coords[v*g.Dim+1]
			cls := mesh.Interior
			if g.Class != nil {
				cls = g.Class[v]
			}
			drawRoot(c, cls, at(x, y))
		}
	}
}

// boundary returns the exterior edges of the cells (edges of one cell).
func (p *picture) boundary(at func(x, y float64) vg.Point) [][]vg.Point {
	count := map[[2]int32]int{}
	for _, cell := range p.cells {
		for i, v := range cell {
			w := cell[(i+1)%len(cell)]
			count[[2]int32{min(v, w), max(v, w)}]++
		}
	}
	var out [][]vg.Point
	for _, cell := range p.cells {
		for i, v := range cell {
			w := cell[(i+1)%len(cell)]
			if count[[2]int32{min(v, w), max(v, w)}] == 1 {
				out = append(out, []vg.Point{at(p.xy[v][0], p.xy[v][1]), at(p.xy[w][0], p.xy[w][1])})
			}
		}
	}
	return out
}

// drawRoot marks a root by its boundary class: corners as red squares,
// other boundary vertices as orange triangles, interior ones as dots, each
// on a white halo so that it reads on any aggregate colour.
func drawRoot(c draw.Canvas, cls mesh.Class, pt vg.Point) {
	sty := draw.GlyphStyle{Color: color.RGBA{0x20, 0x20, 0x20, 0xff}, Radius: 2.4, Shape: draw.CircleGlyph{}}
	switch cls {
	case mesh.Corner:
		sty = draw.GlyphStyle{Color: color.RGBA{0xd6, 0x27, 0x28, 0xff}, Radius: 3.6, Shape: draw.BoxGlyph{}}
	case mesh.Face, mesh.Edge:
		sty = draw.GlyphStyle{Color: color.RGBA{0xe0, 0x6c, 0x00, 0xff}, Radius: 3.6, Shape: draw.PyramidGlyph{}}
	}
	halo := sty
	halo.Color, halo.Radius = color.White, sty.Radius+1.2
	c.DrawGlyph(halo, pt)
	c.DrawGlyph(sty, pt)
}

// drawLegend explains the glyphs, and the colours where there are
// aggregates, left-aligned at pt.
func drawLegend(c draw.Canvas, pt vg.Point, aggregates bool) {
	sty := textStyle("Sans", 10, draw.XLeft)
	items := []struct {
		cls   mesh.Class
		label string
	}{
		{mesh.Corner, "on a corner"},
		{mesh.Face, "on the boundary"},
		{mesh.Interior, "interior"},
	}
	head := "in the set:"
	if aggregates {
		head = "roots:"
	}
	c.FillText(sty, pt, head)
	x := pt.X + sty.Width(head) + 8
	for _, it := range items {
		drawRoot(c, it.cls, vg.Point{X: x + 5, Y: pt.Y})
		c.FillText(sty, vg.Point{X: x + 14, Y: pt.Y}, it.label)
		x += 14 + sty.Width(it.label) + 20
	}
	if aggregates {
		c.FillText(sty, vg.Point{X: x, Y: pt.Y}, "colours: aggregates (neighbours differ); lines: aggregate borders")
	}
}
