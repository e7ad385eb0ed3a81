package main

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// TestBracketMesh: the bracket's quads are counter-clockwise, cover the
// part (16 cells less the holes, to the error of chords on the arcs), share
// every interior edge with exactly one other quad, and the boundary has
// the L's six corners and no others.
func TestBracketMesh(t *testing.T) {
	for _, n := range []int{4, bracketCellSide} {
		m, err := bracketMesh(n)
		if err != nil {
			t.Fatal(err)
		}
		conn := m.Blocks[0].Conn
		area := 0.0
		edges := map[[2]int32]int{}
		for e := 0; e < len(conn); e += 4 {
			q := conn[e : e+4]
			a := 0.0
			for i := range 4 {
				p, r := q[i], q[(i+1)%4]
				a += m.Coords[2*p]*m.Coords[2*r+1] - m.Coords[2*r]*m.Coords[2*p+1]
				edges[[2]int32{min(p, r), max(p, r)}]++
			}
			if a <= 0 {
				t.Fatalf("n=%d: quad %d is not counter-clockwise (twice its area %g)", n, e/4, a)
			}
			area += a / 2
		}
		want := float64(len(bracketCells))
		for _, c := range bracketCells {
			want -= math.Pi * c.Hole * c.Hole
		}
		// A chord over an arc of angle φ = π/(2n) cuts r²(φ − sin φ)/2.
		phi := math.Pi / 2 / float64(n)
		cut := 0.0
		for _, c := range bracketCells {
			cut += float64(4*n) * c.Hole * c.Hole * (phi - math.Sin(phi)) / 2
		}
		if math.Abs(area-(want+cut)) > 1e-9 {
			t.Errorf("n=%d: area %.12f, want %.12f", n, area, want+cut)
		}
		for e, k := range edges {
			if k > 2 {
				t.Fatalf("n=%d: edge %v in %d quads", n, e, k)
			}
		}
		g, err := meshGraph(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		var corners [][2]float64
		for v, c := range g.Class {
			if c == mesh.Corner {
				corners = append(corners, [2]float64{g.Coords[2*v], g.Coords[2*v+1]})
			}
		}
		if len(corners) != 6 {
			t.Errorf("n=%d: corners at %v, want the L's six", n, corners)
		}
	}
	if _, err := bracketMesh(1); err == nil {
		t.Error("bracketMesh(1): no error")
	}
}

// hierarchyOf coarsens the graph of m to the end.
func hierarchyOf(t *testing.T, m *mesh.Mesh) []mis.Level {
	t.Helper()
	g, err := meshGraph(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{Distance: 2, Priority: mis.Priority{Kind: mis.Boundary}, MinVertices: 8})
	if err != nil {
		t.Fatal(err)
	}
	return levels
}

// TestAggregatesAt: the fine vertices of one level-k aggregate are exactly
// those of its level-(k−1) aggregates, and there are as many as its set.
func TestAggregatesAt(t *testing.T) {
	m, err := bracketMesh(6)
	if err != nil {
		t.Fatal(err)
	}
	levels := hierarchyOf(t, m)
	if len(levels) < 3 {
		t.Fatalf("%d levels: the test needs three", len(levels))
	}
	for k := 0; levels[k].Agg != nil; k++ {
		of := aggregatesAt(levels, k)
		seen := map[int32]bool{}
		for v, a := range of {
			seen[a] = true
			if k > 0 && levels[k].Agg.Of[aggregatesAt(levels, k-1)[v]] != a {
				t.Fatalf("level %d: vertex %d in aggregate %d, not its parent's", k, v, a)
			}
		}
		if len(seen) != levels[k].Set.Size {
			t.Errorf("level %d: %d aggregates among the fine vertices, want %d", k, len(seen), levels[k].Set.Size)
		}
	}
}

// TestGreedyColors: neighbours differ wherever degrees leave a colour
// free, and a graph of at most k vertices gets all-different colours.
func TestGreedyColors(t *testing.T) {
	for _, g := range []*mesh.Graph{mesh.RandomGraph(500, 6, 3), mesh.Grid7Graph(6, 5, 4), mesh.Grid7Graph(2, 2, 2)} {
		col := greedyColors(g, 10)
		for v := range g.N() {
			for _, u := range g.Neighbors(int32(v)) {
				if col[u] == col[v] && g.Degree(int32(max(u, int32(v)))) < 10 {
					t.Fatalf("neighbours %d and %d share colour %d", v, u, col[v])
				}
			}
		}
		if g.N() <= 10 {
			seen := map[int]bool{}
			for _, c := range col {
				seen[c] = true
			}
			if len(seen) != g.N() {
				t.Errorf("%d vertices got %d colours, want all different", g.N(), len(seen))
			}
		}
	}
}

// readPNG decodes a picture and counts its pixels of a few colours.
func readPNG(t *testing.T, path string, colors ...color.RGBA) (image.Rectangle, []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	counts := make([]int, len(colors))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			for i, want := range colors {
				if c == want {
					counts[i]++
				}
			}
		}
	}
	return b, counts
}

// TestDrawHierarchy: the bracket's picture has one panel per aggregated
// level side by side, filled with aggregate colours, and red corner marks.
func TestDrawHierarchy(t *testing.T) {
	m, err := bracketMesh(bracketCellSide)
	if err != nil {
		t.Fatal(err)
	}
	levels := hierarchyOf(t, m)
	path := filepath.Join(t.TempDir(), "h.png")
	if err := drawHierarchy(path, m, levels, "test"); err != nil {
		t.Fatal(err)
	}
	red := color.RGBA{0xd6, 0x27, 0x28, 0xff}
	b, n := readPNG(t, path, aggPalette[0], aggPalette[1], red)
	if b.Dx() < 1000 || b.Dx() > 2500 || b.Dy() < 500 || b.Dy() > 2000 {
		t.Errorf("picture of %v pixels, want three panels in a row", b)
	}
	if n[0] < 10000 || n[1] < 10000 {
		t.Errorf("aggregate colours cover %d and %d pixels: the panels are not filled", n[0], n[1])
	}
	// Six corners kept on levels 0 and 1, three on level 2, in the legend one.
	// Each mark is about 70 pixels at this size.
	if n[2] < 16*40 {
		t.Errorf("%d red pixels: the corner roots are not marked", n[2])
	}
}

func TestDrawHierarchyRefuses(t *testing.T) {
	cube := mesh.StructuredHex(4, 4, 4)
	g, err := meshGraph(cube, 0)
	if err != nil {
		t.Fatal(err)
	}
	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{Distance: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.png")
	for _, tc := range []struct {
		m    *mesh.Mesh
		want string
	}{
		{cube, "hex8 elements"},
		{nil, "needs a mesh"},
		{mesh.StructuredQuad(3, 3), "the graph has 64 vertices and the mesh 9 nodes"},
		{mesh.StructuredQuad(500, 500), "a picture of 249001 cells would not show"},
	} {
		err := drawHierarchy(path, tc.m, levels, "x")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("drawHierarchy: error %v, want one saying %q", err, tc.want)
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a refused picture left a file behind")
	}
}

// TestCoarsenPNG: coarsen draws a Gmsh mesh (triangles, curved holes),
// and with -max_levels 1 a lone MIS; it refuses a 3D mesh.
func TestCoarsenPNG(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"coarsen", "-max_levels", "4", "-min_vertices", "8", "-o", filepath.Join(dir, "plate.png"), "../../examples/meshes/plate.msh"},
		{"coarsen", "-max_levels", "1", "-o", filepath.Join(dir, "mis.png"), "gen:tri:12"},
	} {
		out, _, err := runCmd(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		png := args[len(args)-2]
		if !strings.Contains(out, "wrote "+png) {
			t.Errorf("%v: output does not say it wrote %s:\n%s", args, png, out)
		}
		if b, _ := readPNG(t, png); b.Dx() < 300 {
			t.Errorf("%s: %v pixels", png, b)
		}
	}
	_, _, err := runCmd(t, "coarsen", "-o", filepath.Join(dir, "cube.png"), "gen:hex:4")
	if err == nil || !strings.Contains(err.Error(), "2D mesh") {
		t.Errorf("coarsen -o cube.png on a hex mesh: error %v, want one asking for a 2D mesh", err)
	}
}

// TestDemoMemory: the demo refuses a cube that does not fit, naming the
// largest that does, and runs one that fits.
func TestDemoMemory(t *testing.T) {
	saved := availableMemory
	defer func() { availableMemory = saved }()
	availableMemory = func() (int64, string, bool) { return 1 << 30, "the test machine has 1 GB", true }
	_, _, err := runCmd(t, "demo", "-n", "200", "-out", t.TempDir())
	fit := 4
	for demoBytes(fit+1) <= 1<<30 {
		fit++
	}
	want := "-n " + strconv.Itoa(fit) + " is the largest that fits"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "needs about") {
		t.Fatalf("demo -n 200 with 1 GB: error %v, want one saying %q", err, want)
	}
	if demoBytes(fit) > 1<<30 || demoBytes(fit+1) <= 1<<30 {
		t.Fatalf("largest fitting size %d is wrong", fit)
	}
	if err := checkDemoMemory(fit); err != nil {
		t.Errorf("-n %d fits in 1 GB but was refused: %v", fit, err)
	}
	availableMemory = func() (int64, string, bool) { return 0, "", false }
	if err := checkDemoMemory(demoMaxN); err != nil {
		t.Errorf("with the memory unknown the demo refused: %v", err)
	}
	if b, from, ok := saved(); ok && (b <= 0 || from == "") {
		t.Errorf("availableMemory: %d bytes from %q", b, from)
	}
}
