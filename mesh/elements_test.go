package mesh

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// secondOrder lists, for each second-order type, the corners whose centre
// each higher node sits at, in Gmsh order. It is written from the Gmsh
// node-ordering pictures independently of the facet tables in
// boundary.go, so the classification tests cross-check the two.
var secondOrder = map[ElementType]struct {
	from  ElementType
	nodes [][]int
}{
	Tri6:  {Tri3, [][]int{{0, 1}, {1, 2}, {2, 0}}},
	Quad9: {Quad4, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 1, 2, 3}}},
	Tet10: {Tet4, [][]int{{0, 1}, {1, 2}, {0, 2}, {0, 3}, {2, 3}, {1, 3}}},
	Hex27: {Hex8, [][]int{
		{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 7}, {5, 6}, {6, 7},
		{0, 1, 2, 3}, {0, 1, 5, 4}, {0, 3, 7, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {4, 5, 6, 7},
		{0, 1, 2, 3, 4, 5, 6, 7},
	}},
}

// elevate turns a first-order mesh into the second-order one of type to,
// adding a node at the centre of every edge, quad face and cell, shared
// between the elements that share them.
func elevate(m *Mesh, to ElementType) *Mesh {
	so := secondOrder[to]
	out := &Mesh{Dim: m.Dim, Coords: slices.Clone(m.Coords)}
	made := map[string]int32{}
	src := &m.Blocks[0]
	if src.Type != so.from {
		panic("elevate: wrong source type")
	}
	k := src.Type.Nodes()
	var conn []int32
	for e := range src.Len() {
		c := src.Conn[e*k : e*k+k]
		conn = append(conn, c...)
		for _, corners := range so.nodes {
			ids := make([]int32, len(corners))
			for i, l := range corners {
				ids[i] = c[l]
			}
			slices.Sort(ids)
			key := fmt.Sprint(ids)
			id, ok := made[key]
			if !ok {
				id = int32(out.NumNodes())
				made[key] = id
				for a := range m.Dim {
					s := 0.0
					for _, v := range ids {
						s += m.Coords[int(v)*m.Dim+a]
					}
					out.Coords = append(out.Coords, s/float64(len(ids)))
				}
			}
			conn = append(conn, id)
		}
	}
	out.Blocks = []ElementBlock{{Type: to, Conn: conn}}
	return out
}

// degreeHistogram counts vertices by degree.
func degreeHistogram(g *Graph) map[int]int {
	h := map[int]int{}
	for v := range g.N() {
		h[g.Degree(int32(v))]++
	}
	return h
}

func TestFromElementsDegrees(t *testing.T) {
	tests := []struct {
		name     string
		m        *Mesh
		opt      ElementOptions
		interior int // degree of an interior vertex
		maxDeg   int
		isolated int
	}{
		{"quad4", StructuredQuad(5, 6), ElementOptions{}, 8, 8, 0},
		{"tri3", StructuredTri(5, 6), ElementOptions{}, 6, 6, 0},
		{"hex8", StructuredHex(5, 4, 6), ElementOptions{}, 26, 26, 0},
		{"tet4 Kuhn", StructuredTet(5, 5, 5), ElementOptions{}, 14, 14, 0},
		// A corner node of a quadratic element touches 5×5 nodes of its
		// four elements; a centre node only its own 9.
		{"quad9", elevate(StructuredQuad(4, 4), Quad9), ElementOptions{}, 24, 24, 0},
		{"quad9 vertex only", elevate(StructuredQuad(4, 4), Quad9), ElementOptions{VertexOnly: true}, 8, 8, 49 - 16},
		{"hex27", elevate(StructuredHex(4, 4, 4), Hex27), ElementOptions{}, 124, 124, 0},
		{"hex27 vertex only", elevate(StructuredHex(3, 3, 3), Hex27), ElementOptions{VertexOnly: true}, 26, 26, 125 - 27},
		{"tri6", elevate(StructuredTri(4, 4), Tri6), ElementOptions{}, 18, 18, 0},
		// An interior tet10 vertex: 14 neighbour vertices, the midpoints of
		// its 14 edges and of the 36 edges of its link (a sphere with 14
		// vertices and 24 triangles: E = V+F−2).
		{"tet10", elevate(StructuredTet(4, 4, 4), Tet10), ElementOptions{}, 64, 64, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := FromElements(tc.m, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			if g.N() != tc.m.NumNodes() || g.Dim != tc.m.Dim || !slices.Equal(g.Coords, tc.m.Coords) {
				t.Fatalf("graph has %d vertices and Dim %d, mesh %d nodes and Dim %d", g.N(), g.Dim, tc.m.NumNodes(), tc.m.Dim)
			}
			h := degreeHistogram(g)
			if g.MaxDegree() != tc.maxDeg || h[tc.interior] == 0 {
				t.Fatalf("max degree %d (want %d), degrees %v, want some of degree %d", g.MaxDegree(), tc.maxDeg, h, tc.interior)
			}
			if h[0] != tc.isolated {
				t.Fatalf("%d isolated vertices, want %d", h[0], tc.isolated)
			}
		})
	}
}

func TestFromElementsTopDimensionOnly(t *testing.T) {
	m := StructuredQuad(3, 3)
	// A line between opposite corners and a point block: lower dimension,
	// so no edges; the quads alone decide adjacency.
	m.Blocks = append(m.Blocks,
		ElementBlock{Type: Line2, Conn: []int32{0, 8}},
		ElementBlock{Type: Point1, Conn: []int32{4}})
	g, err := FromElements(m, ElementOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(g.Neighbors(0), 8) {
		t.Fatal("a line element joined nodes 0 and 8 of a quad mesh")
	}
	if !slices.Equal(g.Neighbors(0), []int32{1, 3, 4}) {
		t.Fatalf("neighbours of 0: %v", g.Neighbors(0))
	}
}

func TestFromElementsMixed(t *testing.T) {
	// 0-1-2 / 3-4-5: a quad (0,1,4,3) and two triangles (1,2,5), (1,5,4);
	// node 6 is in no element.
	m := &Mesh{Dim: 2,
		Coords: []float64{0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1, 5, 5},
		Blocks: []ElementBlock{
			{Type: Quad4, Conn: []int32{0, 1, 4, 3}},
			{Type: Tri3, Conn: []int32{1, 2, 5, 1, 5, 4}},
		}}
	g, err := FromElements(m, ElementOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{1, 3, 4}, {0, 2, 3, 4, 5}, {1, 5}, {0, 1, 4}, {0, 1, 3, 5}, {1, 2, 4}, {}}
	for v, w := range want {
		if got := g.Neighbors(int32(v)); !slices.Equal(got, w) {
			t.Errorf("neighbours of %d: %v, want %v", v, got, w)
		}
	}
}

func TestFromElementsErrors(t *testing.T) {
	good := func() *Mesh { return StructuredQuad(3, 3) }
	tests := []struct {
		name string
		edit func(m *Mesh)
		want string
	}{
		{"id too big", func(m *Mesh) { m.Blocks[0].Conn[4*2+3] = 9 }, "block 0 (quad4), element 2, node 3: id 9 out of range [0,9)"},
		{"negative id", func(m *Mesh) { m.Blocks[0].Conn[1] = -1 }, "element 0, node 1: id -1"},
		{"ragged conn", func(m *Mesh) { m.Blocks[0].Conn = m.Blocks[0].Conn[:7] }, "len(Conn) = 7 is not a multiple of 4"},
		{"unknown type", func(m *Mesh) { m.Blocks[0].Type = 99 }, "block 0: unknown element type"},
		{"3D element in 2D", func(m *Mesh) { m.Blocks = append(m.Blocks, ElementBlock{Type: Tet4, Conn: []int32{0, 1, 2, 3}}) }, "block 1: tet4 elements in a 2-dimensional mesh"},
		{"NaN coordinate", func(m *Mesh) { m.Coords[7] = m.Coords[0] / 0 * 0 }, "node 3: coordinate 1 is NaN"},
		{"bad dim", func(m *Mesh) { m.Dim = 4 }, "spatial dimension 4"},
		{"ragged coords", func(m *Mesh) { m.Coords = m.Coords[:5] }, "len(Coords) = 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.edit(m)
			_, err := FromElements(m, ElementOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FromElements: %v, want an error containing %q", err, tc.want)
			}
			_, err = Classify(m, ClassifyOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Classify: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := FromElements(nil, ElementOptions{}); err == nil {
		t.Fatal("FromElements(nil) gave no error")
	}
}

func TestFromElementsEmpty(t *testing.T) {
	for _, m := range []*Mesh{{}, {Dim: 3}, StructuredHex(1, 4, 4)} {
		g, err := FromElements(m, ElementOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g.N() != 0 || g.Validate() != nil {
			t.Fatalf("empty mesh gave %d vertices (%v)", g.N(), g.Validate())
		}
	}
}

func BenchmarkFromElementsHex64(b *testing.B) {
	m := StructuredHex(64, 64, 64)
	for b.Loop() {
		if _, err := FromElements(m, ElementOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
