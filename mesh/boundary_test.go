package mesh

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// boxClass is the class a node of a mesh of the unit square or cube must
// get: the number of coordinates on 0 or 1 decides it.
func boxClass(m *Mesh, v int) Class {
	on := 0
	for _, x := range m.Coords[v*m.Dim : v*m.Dim+m.Dim] {
		if x == 0 || x == 1 {
			on++
		}
	}
	return gridClass(on, m.Dim)
}

func countClasses(cls []Class) [NumClasses]int {
	var c [NumClasses]int
	for _, x := range cls {
		c[x]++
	}
	return c
}

func TestClassifyStructured(t *testing.T) {
	tests := []struct {
		name string
		m    *Mesh
		want [NumClasses]int // interior, face, edge, corner
	}{
		{"square quad 2", StructuredQuad(2, 2), [4]int{0, 0, 0, 4}},
		{"square quad 5", StructuredQuad(5, 5), [4]int{9, 12, 0, 4}},
		{"square tri 6x4", StructuredTri(6, 4), [4]int{8, 12, 0, 4}},
		{"square tri6", elevate(StructuredTri(3, 3), Tri6), [4]int{9, 12, 0, 4}},
		{"square quad9", elevate(StructuredQuad(3, 3), Quad9), [4]int{9, 12, 0, 4}},
		{"cube hex 2", StructuredHex(2, 2, 2), [4]int{0, 0, 0, 8}},
		{"cube hex 5", StructuredHex(5, 5, 5), [4]int{27, 6 * 9, 12 * 3, 8}},
		{"cube tet 5", StructuredTet(5, 5, 5), [4]int{27, 6 * 9, 12 * 3, 8}},
		{"box hex 3x4x5", StructuredHex(3, 4, 5), [4]int{6, 2 * (2 + 3 + 6), 4 * (1 + 2 + 3), 8}},
		{"cube hex27", elevate(StructuredHex(3, 3, 3), Hex27), [4]int{27, 6 * 9, 12 * 3, 8}},
		{"cube tet10", elevate(StructuredTet(3, 3, 3), Tet10), [4]int{27, 6 * 9, 12 * 3, 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cls, err := Classify(tc.m, ClassifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cls) != tc.m.NumNodes() {
				t.Fatalf("%d classes for %d nodes", len(cls), tc.m.NumNodes())
			}
			if got := countClasses(cls); got != tc.want {
				t.Errorf("class counts %v, want %v", got, tc.want)
			}
			for v, c := range cls {
				if want := boxClass(tc.m, v); c != want {
					t.Fatalf("node %d at %v: %v, want %v", v, tc.m.Coords[v*tc.m.Dim:(v+1)*tc.m.Dim], c, want)
				}
			}
		})
	}
}

func TestClassifyCubeFormula(t *testing.T) {
	for n := 2; n <= 7; n++ {
		for _, m := range []*Mesh{StructuredHex(n, n, n), StructuredTet(n, n, n)} {
			cls, err := Classify(m, ClassifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := [4]int{(n - 2) * (n - 2) * (n - 2), 6 * (n - 2) * (n - 2), 12 * (n - 2), 8}
			if got := countClasses(cls); got != want {
				t.Errorf("%v cube %d³: counts %v, want %v", m.Blocks[0].Type, n, got, want)
			}
		}
	}
}

// relabelMesh renumbers the nodes of m by a random permutation and
// returns perm[old] = new.
func relabelMesh(m *Mesh, seed uint64) (*Mesh, []int32) {
	n := m.NumNodes()
	r := rand.New(rand.NewPCG(seed, 1))
	perm := make([]int32, n)
	for i, p := range r.Perm(n) {
		perm[i] = int32(p)
	}
	out := &Mesh{Dim: m.Dim, Coords: make([]float64, len(m.Coords))}
	for old, p := range perm {
		copy(out.Coords[int(p)*m.Dim:], m.Coords[old*m.Dim:(old+1)*m.Dim])
	}
	for _, b := range m.Blocks {
		conn := make([]int32, len(b.Conn))
		for i, v := range b.Conn {
			conn[i] = perm[v]
		}
		out.Blocks = append(out.Blocks, ElementBlock{Type: b.Type, Conn: conn})
	}
	return out, perm
}

func TestClassifyRelabelled(t *testing.T) {
	for _, m := range []*Mesh{StructuredHex(4, 5, 3), StructuredTet(4, 4, 4), StructuredTri(5, 4), elevate(StructuredHex(3, 3, 3), Hex27)} {
		want, err := Classify(m, ClassifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rm, perm := relabelMesh(m, 3)
		got, err := Classify(rm, ClassifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for old, p := range perm {
			if got[p] != want[old] {
				t.Fatalf("%v: node %d (now %d): %v, want %v", m.Blocks[0].Type, old, p, got[p], want[old])
			}
		}
	}
}

// mapCoords returns a copy of m with every node moved by f.
func mapCoords(m *Mesh, f func(p []float64)) *Mesh {
	out := &Mesh{Dim: m.Dim, Coords: slices.Clone(m.Coords), Blocks: m.Blocks}
	for v := range out.NumNodes() {
		f(out.Coords[v*m.Dim : (v+1)*m.Dim])
	}
	return out
}

// cylinder maps the unit cube onto a cylinder of radius 1: each z-slice of
// the square goes onto the disc by the elliptical grid map, whose
// boundary is the circle.
func cylinder(m *Mesh) *Mesh {
	return mapCoords(m, func(p []float64) {
		u, v := 2*p[0]-1, 2*p[1]-1
		p[0], p[1] = u*math.Sqrt(1-v*v/2), v*math.Sqrt(1-u*u/2)
	})
}

// ball maps the unit cube onto the unit ball.
func ball(m *Mesh) *Mesh {
	return mapCoords(m, func(p []float64) {
		u, v, w := 2*p[0]-1, 2*p[1]-1, 2*p[2]-1
		s := func(a, b float64) float64 { return math.Sqrt(1 - a*a/2 - b*b/2 + a*a*b*b/3) }
		p[0], p[1], p[2] = u*s(v, w), v*s(u, w), w*s(u, v)
	})
}

func TestClassifyCurved(t *testing.T) {
	const n = 13
	onSide := func(p []float64) bool { return math.Abs(math.Hypot(p[0], p[1])-1) < 1e-9 }
	onCap := func(p []float64) bool { return p[2] == 0 || p[2] == 1 }
	tests := []struct {
		name string
		m    *Mesh
		want func(p []float64) Class
	}{
		{"hex cylinder", cylinder(StructuredHex(n, n, 5)), func(p []float64) Class {
			switch {
			case onSide(p) && onCap(p):
				return Edge
			case onSide(p) || onCap(p):
				return Face
			}
			return Interior
		}},
		{"tet cylinder", cylinder(StructuredTet(n, n, 4)), nil},
		{"hex ball", ball(StructuredHex(n, n, n)), func(p []float64) Class {
			if math.Abs(math.Sqrt(p[0]*p[0]+p[1]*p[1]+p[2]*p[2])-1) < 1e-9 {
				return Face
			}
			return Interior
		}},
		{"tet ball", ball(StructuredTet(n, n, n)), nil},
		{"tet10 ball", ball(elevate(StructuredTet(7, 7, 7), Tet10)), nil},
	}
	tests[1].want, tests[3].want, tests[4].want = tests[0].want, tests[2].want, tests[2].want
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cls, err := Classify(tc.m, ClassifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for v, c := range cls {
				p := tc.m.Coords[3*v : 3*v+3]
				if want := tc.want(p); c != want {
					t.Fatalf("node %d at %.3f: %v, want %v (counts %v)", v, p, c, want, countClasses(cls))
				}
			}
			// With a 3° feature angle the same surface breaks into
			// edges and corners: the test above depends on the angle.
			fine, err := Classify(tc.m, ClassifyOptions{FeatureAngle: 3})
			if err != nil {
				t.Fatal(err)
			}
			if c := countClasses(fine); c[Corner] == 0 {
				t.Fatalf("feature angle 3°: no corners (counts %v)", c)
			}
		})
	}
}

func TestClassifyOtherShapes(t *testing.T) {
	// A flat quad mesh in 3D space: its boundary edges have in-plane normals.
	flat := StructuredQuad(4, 4)
	flat3 := &Mesh{Dim: 3, Blocks: flat.Blocks}
	for v := range flat.NumNodes() {
		flat3.Coords = append(flat3.Coords, flat.Coords[2*v], 0.5, flat.Coords[2*v+1])
	}
	// A line mesh: its two ends are corners.
	line := &Mesh{Dim: 1, Coords: []float64{0, 1, 2, 3}, Blocks: []ElementBlock{{Type: Line2, Conn: []int32{0, 1, 1, 2, 2, 3}}}}
	// An L-shaped quad mesh: the re-entrant corner is a corner too.
	lshape := &Mesh{Dim: 2}
	for j := range 3 {
		for i := range 3 {
			lshape.Coords = append(lshape.Coords, float64(i), float64(j))
		}
	}
	lshape.Blocks = []ElementBlock{{Type: Quad4, Conn: []int32{0, 1, 4, 3, 1, 2, 5, 4, 3, 4, 7, 6}}}
	tests := []struct {
		name string
		m    *Mesh
		want []Class
	}{
		{"flat quad in 3D", flat3, nil},
		{"line", line, []Class{Corner, Interior, Interior, Corner}},
		{"L shape", lshape, []Class{Corner, Face, Corner, Face, Corner, Corner, Corner, Corner, Interior}},
	}
	want2D, err := Classify(flat, ClassifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests[0].want = want2D
	for _, tc := range tests {
		got, err := Classify(tc.m, ClassifyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClassifyOptionsErrors(t *testing.T) {
	m := StructuredQuad(3, 3)
	for _, a := range []float64{-1, 181, math.NaN(), math.Inf(1)} {
		_, err := Classify(m, ClassifyOptions{FeatureAngle: a})
		if err == nil || !strings.Contains(err.Error(), "feature angle") {
			t.Errorf("FeatureAngle %v: %v, want a feature angle error", a, err)
		}
	}
	if cls, err := Classify(m, ClassifyOptions{FeatureAngle: 180}); err != nil || countClasses(cls) != [4]int{1, 8, 0, 0} {
		t.Errorf("FeatureAngle 180: %v %v, want every boundary node a face", countClasses(cls), err)
	}
}

func BenchmarkClassifyTet32(b *testing.B) {
	m := StructuredTet(32, 32, 32)
	for b.Loop() {
		if _, err := Classify(m, ClassifyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
