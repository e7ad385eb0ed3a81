package mesh

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// elementMeasure returns the signed area (2D) or volume (3D) of element e.
func elementMeasure(m *Mesh, b *ElementBlock, e int) float64 {
	k := b.Type.Nodes()
	c := b.Conn[e*k : e*k+k]
	p := func(i int) [3]float64 {
		var v [3]float64
		copy(v[:], m.Coords[int(c[i])*m.Dim:int(c[i])*m.Dim+m.Dim])
		return v
	}
	switch b.Type {
	case Tri3:
		u, w := vsub(p(1), p(0)), vsub(p(2), p(0))
		return vcross(u, w)[2] / 2
	case Quad4:
		u, w := vsub(p(2), p(0)), vsub(p(3), p(1))
		return vcross(u, w)[2] / 2
	case Tet4:
		return vdot(vcross(vsub(p(1), p(0)), vsub(p(2), p(0))), vsub(p(3), p(0))) / 6
	case Hex8:
		// Positive when 0-1, 0-3, 0-4 form a right-handed frame.
		return vdot(vcross(vsub(p(1), p(0)), vsub(p(3), p(0))), vsub(p(4), p(0)))
	}
	return math.NaN()
}

func TestStructuredMeshes(t *testing.T) {
	tests := []struct {
		name           string
		m              *Mesh
		nodes, elems   int
		typ            ElementType
		totalMeasure   float64
		measureIsExact bool
	}{
		{"quad 2x2", StructuredQuad(2, 2), 4, 1, Quad4, 1, true},
		{"quad 4x3", StructuredQuad(4, 3), 12, 6, Quad4, 1, true},
		{"tri 4x3", StructuredTri(4, 3), 12, 12, Tri3, 1, true},
		{"hex 2x3x4", StructuredHex(2, 3, 4), 24, 6, Hex8, 0, false},
		{"tet 3x3x3", StructuredTet(3, 3, 3), 27, 48, Tet4, 1, true},
		{"tet 2x4x3", StructuredTet(2, 4, 3), 24, 36, Tet4, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			if got := m.NumNodes(); got != tc.nodes {
				t.Fatalf("NumNodes = %d, want %d", got, tc.nodes)
			}
			if len(m.Blocks) != 1 || m.Blocks[0].Type != tc.typ || m.Blocks[0].Len() != tc.elems {
				t.Fatalf("blocks = %v elements of %v, want %d of %v", m.Blocks[0].Len(), m.Blocks[0].Type, tc.elems, tc.typ)
			}
			for i, x := range m.Coords {
				if x < 0 || x > 1 {
					t.Fatalf("coordinate %d = %v outside the unit box", i, x)
				}
			}
			// x fastest: node 1 is at x>0, y=z=0.
			if m.Coords[m.Dim] <= 0 || m.Coords[m.Dim+1] != 0 {
				t.Fatalf("node 1 at %v, want on the x axis", m.Coords[m.Dim:2*m.Dim])
			}
			sum := 0.0
			b := &m.Blocks[0]
			for e := range b.Len() {
				v := elementMeasure(m, b, e)
				if !(v > 0) {
					t.Fatalf("element %d has measure %v, want > 0", e, v)
				}
				sum += v
			}
			if tc.measureIsExact && math.Abs(sum-tc.totalMeasure) > 1e-12 {
				t.Fatalf("total measure %v, want %v", sum, tc.totalMeasure)
			}
		})
	}
}

func TestGeneratorsRejectBadSizes(t *testing.T) {
	for _, dims := range [][3]int{{1, 5, 5}, {5, 0, 5}, {5, 5, -3}, {1 << 11, 1 << 11, 1 << 10}} {
		if m := StructuredHex(dims[0], dims[1], dims[2]); m.NumNodes() != 0 || len(m.Blocks) != 0 {
			t.Errorf("StructuredHex%v: %d nodes, want an empty mesh", dims, m.NumNodes())
		}
		if g := Hex27Graph(dims[0], dims[1], dims[2]); g.N() != 0 || g.Validate() != nil {
			t.Errorf("Hex27Graph%v: N = %d, want a valid empty graph", dims, g.N())
		}
	}
	if m := StructuredQuad(1, 3); m.NumNodes() != 0 {
		t.Errorf("StructuredQuad(1,3) has %d nodes", m.NumNodes())
	}
}

func TestHex27GraphMatchesElements(t *testing.T) {
	for _, d := range [][3]int{{2, 2, 2}, {3, 3, 3}, {4, 3, 5}, {2, 5, 3}, {6, 6, 6}} {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			m := StructuredHex(d[0], d[1], d[2])
			want, err := FromElements(m, ElementOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want.Class, err = Classify(m, ClassifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := Hex27Graph(d[0], d[1], d[2])
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			assertSameGraph(t, got, want)
		})
	}
}

// assertSameGraph compares adjacency, coordinates and classes.
func assertSameGraph(t *testing.T, got, want *Graph) {
	t.Helper()
	if !slices.Equal(got.Offsets, want.Offsets) {
		for v := 0; v < min(got.N(), want.N()); v++ {
			if got.Offsets[v+1] != want.Offsets[v+1] {
				t.Fatalf("row %d: got neighbours %v, want %v", v, got.Neighbors(int32(v)), want.Neighbors(int32(v)))
			}
		}
		t.Fatalf("got %d vertices, want %d", got.N(), want.N())
	}
	if i := firstDiff(got.Adj, want.Adj); i >= 0 {
		t.Fatalf("Adj[%d] = %d, want %d", i, got.Adj[i], want.Adj[i])
	}
	if got.Dim != want.Dim || !slices.Equal(got.Coords, want.Coords) {
		t.Fatalf("coordinates differ (Dim %d vs %d)", got.Dim, want.Dim)
	}
	if i := firstDiff(got.Class, want.Class); i >= 0 {
		t.Fatalf("vertex %d: class %v, want %v", i, got.Class[i], want.Class[i])
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func TestGrid7Graph(t *testing.T) {
	for _, d := range [][3]int{{2, 2, 2}, {3, 4, 5}, {7, 2, 3}} {
		nx, ny, nz := d[0], d[1], d[2]
		g := Grid7Graph(nx, ny, nz)
		if err := g.Validate(); err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		b := NewBuilder(nx * ny * nz)
		id := func(i, j, k int) int32 { return int32(i + nx*(j+ny*k)) }
		for k := range nz {
			for j := range ny {
				for i := range nx {
					if i+1 < nx {
						b.Add(id(i, j, k), id(i+1, j, k))
					}
					if j+1 < ny {
						b.Add(id(i, j, k), id(i, j+1, k))
					}
					if k+1 < nz {
						b.Add(id(i, j, k), id(i, j, k+1))
					}
				}
			}
		}
		want := b.Graph()
		want.Dim, want.Coords, want.Class = 3, g.Coords, Hex27Graph(nx, ny, nz).Class
		assertSameGraph(t, g, want)
	}
}

func TestRandomGraph(t *testing.T) {
	tests := []struct {
		n      int
		deg    float64
		seed   uint64
		wantAv float64 // expected average degree, within 5%
	}{
		{1000, 16, 1, 16},
		{5000, 7.5, 2, 7.5},
		{3, 100, 3, -1}, // capped at n−1
		{1, 16, 4, 0},
		{0, 16, 5, 0},
		{100, 0, 6, 0},
		{100, math.NaN(), 7, 0},
	}
	for _, tc := range tests {
		g := RandomGraph(tc.n, tc.deg, tc.seed)
		if err := g.Validate(); err != nil {
			t.Fatalf("RandomGraph(%d, %v): %v", tc.n, tc.deg, err)
		}
		if g.N() != tc.n {
			t.Fatalf("RandomGraph(%d, %v): N = %d", tc.n, tc.deg, g.N())
		}
		if tc.wantAv >= 0 {
			av := 0.0
			if tc.n > 0 {
				av = float64(g.NumEdges()) / float64(tc.n)
			}
			if math.Abs(av-tc.wantAv) > 0.05*tc.wantAv {
				t.Errorf("RandomGraph(%d, %v): average degree %.3f", tc.n, tc.deg, av)
			}
		}
	}
	// Deterministic for a seed, whatever the thread count; different seeds differ.
	a := RandomGraph(20000, 16, 42)
	prev := runtime.GOMAXPROCS(1)
	b := RandomGraph(20000, 16, 42)
	runtime.GOMAXPROCS(prev)
	assertSameGraph(t, a, b)
	if c := RandomGraph(20000, 16, 43); slices.Equal(a.Adj, c.Adj) {
		t.Fatal("seeds 42 and 43 give the same graph")
	}
}

func TestRelabel(t *testing.T) {
	g := Hex27Graph(5, 4, 3)
	h, perm := Relabel(g, 7)
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, g.N())
	moved := 0
	for old, p := range perm {
		if seen[p] {
			t.Fatalf("perm[%d] = %d repeats", old, p)
		}
		seen[p] = true
		if int(p) != old {
			moved++
		}
		if h.Class[p] != g.Class[old] || h.Degree(p) != g.Degree(int32(old)) {
			t.Fatalf("vertex %d → %d: class or degree changed", old, p)
		}
	}
	if moved < g.N()/2 {
		t.Fatalf("only %d of %d vertices moved", moved, g.N())
	}
	h2, perm2 := Relabel(g, 7)
	if !slices.Equal(perm, perm2) || !slices.Equal(h.Adj, h2.Adj) {
		t.Fatal("Relabel is not deterministic")
	}
	if _, perm3 := Relabel(g, 8); slices.Equal(perm, perm3) {
		t.Fatal("seeds 7 and 8 give the same permutation")
	}
}

func BenchmarkHex27Graph64(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		g := Hex27Graph(64, 64, 64)
		b.ReportMetric(float64(g.NumEdges())/1e6, "Medges")
	}
}

func BenchmarkRandomGraph1M(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		RandomGraph(1<<20, 16, 1)
	}
}

// The sizes of the GPU benchmarks; skipped under -short (they need
// about 3 GB).
func BenchmarkHugeHex27Graph256(b *testing.B) {
	if testing.Short() {
		b.Skip("needs 3 GB")
	}
	for b.Loop() {
		g := Hex27Graph(256, 256, 256)
		b.ReportMetric(float64(g.NumEdges())/1e6, "Medges")
	}
}

func BenchmarkHugeRandomGraph16M(b *testing.B) {
	if testing.Short() {
		b.Skip("needs 2 GB")
	}
	for b.Loop() {
		g := RandomGraph(1<<24, 16, 1)
		b.ReportMetric(float64(g.NumEdges())/1e6, "Medges")
	}
}

// A nil graph is the empty graph for every function that takes one
// (issue 21, item 12: Relabel(nil) panicked).
func TestNilGraphIsEmpty(t *testing.T) {
	var g *Graph
	if h, perm := Relabel(g, 1); h.N() != 0 || len(perm) != 0 || h.Validate() != nil {
		t.Errorf("Relabel(nil) = %v, %v", h, perm)
	}
	if h, err := g.Permute(nil); err != nil || h.N() != 0 {
		t.Errorf("Permute on nil: %v, %v", h, err)
	}
	if o := RCM(g); len(o) != 0 {
		t.Errorf("RCM(nil) = %v", o)
	}
	if o := LocalityOrder(g); len(o) != 0 {
		t.Errorf("LocalityOrder(nil) = %v", o)
	}
	if c := ClassifyByDegree(g); len(c) != 0 {
		t.Errorf("ClassifyByDegree(nil) = %v", c)
	}
	if b := Bandwidth(g); b != 0 || g.MaxDegree() != 0 || g.NumEdges() != 0 {
		t.Errorf("Bandwidth(nil) = %d", b)
	}
	if g.Validate() == nil || WriteEGR(io.Discard, g) == nil || WriteVTU(io.Discard, g) == nil {
		t.Error("Validate or a writer accepted a nil graph")
	}
}

// Nil readers, writers and meshes are errors or empty, never panics.
func TestNilArguments(t *testing.T) {
	g := Grid7Graph(3, 3, 3)
	errs := map[string]error{
		"ReadEGR":                func() error { _, err := ReadEGR(nil); return err }(),
		"ReadGmsh":               func() error { _, err := ReadGmsh(nil); return err }(),
		"ReadMatrixMarket":       func() error { _, err := ReadMatrixMarket(nil); return err }(),
		"ReadMatrixMarketArray":  func() error { _, _, _, err := ReadMatrixMarketArray(nil); return err }(),
		"WriteEGR":               WriteEGR(nil, g),
		"WriteVTU":               WriteVTU(nil, g),
		"WriteMeshVTU":           WriteMeshVTU(nil, StructuredQuad(3, 3)),
		"WriteMatrixMarket":      WriteMatrixMarket(nil, &COO[float64]{}),
		"WriteMatrixMarketArray": WriteMatrixMarketArray(nil, 0, 0, nil),
	}
	for name, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
	var m *Mesh
	var b *ElementBlock
	if m.NumNodes() != 0 || b.Len() != 0 || NewBuilder(-1).Graph().N() != 0 {
		t.Error("nil mesh, nil block or negative builder size is not empty")
	}
}
