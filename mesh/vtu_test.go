package mesh

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

type vtuArray struct {
	Type   string `xml:"type,attr"`
	Name   string `xml:"Name,attr"`
	NComp  int    `xml:"NumberOfComponents,attr"`
	Format string `xml:"format,attr"`
	Text   string `xml:",chardata"`
}

type vtuFile struct {
	Type       string `xml:"type,attr"`
	ByteOrder  string `xml:"byte_order,attr"`
	HeaderType string `xml:"header_type,attr"`
	Piece      struct {
		NPoints   int        `xml:"NumberOfPoints,attr"`
		NCells    int        `xml:"NumberOfCells,attr"`
		PointData []vtuArray `xml:"PointData>DataArray"`
		CellData  []vtuArray `xml:"CellData>DataArray"`
		Points    vtuArray   `xml:"Points>DataArray"`
		Cells     []vtuArray `xml:"Cells>DataArray"`
	} `xml:"UnstructuredGrid>Piece"`
}

// decode reads an inline binary array the way VTK does: base64 of a
// UInt64 byte count followed by the values.
func (a vtuArray) decode(t *testing.T) []float64 {
	t.Helper()
	if a.Format != "binary" {
		t.Fatalf("array %q: format %q", a.Name, a.Format)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a.Text))
	if err != nil {
		t.Fatalf("array %q: %v", a.Name, err)
	}
	if len(raw) < 8 || binary.LittleEndian.Uint64(raw) != uint64(len(raw)-8) {
		t.Fatalf("array %q: header does not give the %d data bytes", a.Name, len(raw)-8)
	}
	raw = raw[8:]
	size := map[string]int{"Float64": 8, "Int64": 8, "Int32": 4, "UInt8": 1}[a.Type]
	if size == 0 || len(raw)%size != 0 {
		t.Fatalf("array %q: %d bytes of type %q", a.Name, len(raw), a.Type)
	}
	out := make([]float64, len(raw)/size)
	for i := range out {
		b := raw[i*size:]
		switch a.Type {
		case "Float64":
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case "Int64":
			out[i] = float64(int64(binary.LittleEndian.Uint64(b)))
		case "Int32":
			out[i] = float64(int32(binary.LittleEndian.Uint32(b)))
		case "UInt8":
			out[i] = float64(b[0])
		}
	}
	return out
}

func parseVTU(t *testing.T, data []byte) *vtuFile {
	t.Helper()
	var f vtuFile
	if err := xml.Unmarshal(data, &f); err != nil {
		t.Fatalf("the .vtu is not well-formed XML: %v", err)
	}
	if f.Type != "UnstructuredGrid" || f.ByteOrder != "LittleEndian" || f.HeaderType != "UInt64" {
		t.Fatalf("VTKFile attributes %q %q %q", f.Type, f.ByteOrder, f.HeaderType)
	}
	return &f
}

// cellsOf returns the cells of a parsed file as (type, point ids) pairs.
func cellsOf(t *testing.T, f *vtuFile) (types []int, conns [][]int) {
	t.Helper()
	arrays := map[string][]float64{}
	for _, a := range f.Piece.Cells {
		arrays[a.Name] = a.decode(t)
	}
	conn, off, typ := arrays["connectivity"], arrays["offsets"], arrays["types"]
	if len(off) != f.Piece.NCells || len(typ) != f.Piece.NCells {
		t.Fatalf("%d offsets and %d types for %d cells", len(off), len(typ), f.Piece.NCells)
	}
	prev := 0
	for c := range off {
		end := int(off[c])
		if end < prev || end > len(conn) {
			t.Fatalf("cell %d: offset %d after %d, connectivity has %d", c, end, prev, len(conn))
		}
		ids := make([]int, 0, end-prev)
		for _, x := range conn[prev:end] {
			ids = append(ids, int(x))
		}
		types, conns = append(types, int(typ[c])), append(conns, ids)
		prev = end
	}
	if prev != len(conn) {
		t.Fatalf("offsets end at %d, connectivity has %d", prev, len(conn))
	}
	return types, conns
}

func TestWriteVTURoundTrip(t *testing.T) {
	// A 2D graph with an isolated vertex: a triangle 0-1-2 and vertex 3.
	g, err := FromEdges(4, []Pair{{0, 1}, {1, 2}, {2, 0}})
	if err != nil {
		t.Fatal(err)
	}
	g.Dim, g.Coords = 2, []float64{0, 0, 1, 0, 0, 1, 5, 5}
	in := BoolField("in set", []bool{true, false, false, true})
	agg := Int32Field("aggregate <&>", []int32{0, 0, 1, -1})
	cls := ClassField("class", []Class{Corner, Edge, Face, Interior})
	var buf bytes.Buffer
	if err := WriteVTU(&buf, g, in, agg, cls); err != nil {
		t.Fatal(err)
	}
	f := parseVTU(t, buf.Bytes())
	if f.Piece.NPoints != 4 || f.Piece.NCells != 4+3 {
		t.Fatalf("%d points and %d cells, want 4 and 7", f.Piece.NPoints, f.Piece.NCells)
	}
	pts := f.Piece.Points.decode(t)
	if want := []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 5, 5, 0}; f.Piece.Points.NComp != 3 || !slices.Equal(pts, want) {
		t.Errorf("points %v (%d components), want %v", pts, f.Piece.Points.NComp, want)
	}
	types, conns := cellsOf(t, f)
	wantTypes := []int{vtkVertex, vtkVertex, vtkVertex, vtkVertex, vtkLine, vtkLine, vtkLine}
	wantConns := [][]int{{0}, {1}, {2}, {3}, {0, 1}, {0, 2}, {1, 2}}
	if !slices.Equal(types, wantTypes) || fmt.Sprint(conns) != fmt.Sprint(wantConns) {
		t.Errorf("cells %v %v, want %v %v", types, conns, wantTypes, wantConns)
	}
	if len(f.Piece.PointData) != 3 {
		t.Fatalf("%d point data arrays, want 3", len(f.Piece.PointData))
	}
	for i, want := range []Field{in, agg, cls} {
		a := f.Piece.PointData[i]
		if got := a.decode(t); a.Name != want.Name || !slices.Equal(got, want.Data) {
			t.Errorf("field %d: %q %v, want %q %v", i, a.Name, got, want.Name, want.Data)
		}
	}
}

// Every undirected edge must appear once as a line, on a mesh graph with
// thousands of cells.
func TestWriteVTUEdgesOnce(t *testing.T) {
	m := StructuredHex(3, 4, 2)
	g, err := FromElements(m, ElementOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteVTU(&buf, g); err != nil {
		t.Fatal(err)
	}
	types, conns := cellsOf(t, parseVTU(t, buf.Bytes()))
	var edges []Pair
	for c, typ := range types {
		if typ == vtkLine {
			edges = append(edges, Pair{int32(conns[c][0]), int32(conns[c][1])})
		}
	}
	if int64(2*len(edges)) != g.NumEdges() {
		t.Fatalf("%d lines for %d undirected edges", len(edges), g.NumEdges()/2)
	}
	h, err := FromEdges(g.N(), edges)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Offsets, g.Offsets) || !slices.Equal(h.Adj, g.Adj) {
		t.Error("the lines written do not make up the graph")
	}
}

// vtkRef holds VTK's reference positions of the nodes of each cell type
// (vtkCell::GetParametricCoords), in VTK order.
var vtkRef = map[ElementType][][3]float64{
	Line3: {{0, 0, 0}, {1, 0, 0}, {.5, 0, 0}},
	Tri6:  {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {.5, 0, 0}, {.5, .5, 0}, {0, .5, 0}},
	Quad9: {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {.5, 0, 0}, {1, .5, 0}, {.5, 1, 0}, {0, .5, 0}, {.5, .5, 0}},
	Tet10: {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {.5, 0, 0}, {.5, .5, 0}, {0, .5, 0}, {0, 0, .5}, {.5, 0, .5}, {0, .5, .5}},
	Hex27: {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1},
		{.5, 0, 0}, {1, .5, 0}, {.5, 1, 0}, {0, .5, 0}, {.5, 0, 1}, {1, .5, 1}, {.5, 1, 1}, {0, .5, 1},
		{0, 0, .5}, {1, 0, .5}, {1, 1, .5}, {0, 1, .5},
		{0, .5, .5}, {1, .5, .5}, {.5, 0, .5}, {.5, 1, .5}, {.5, .5, 0}, {.5, .5, 1}, {.5, .5, .5}},
	Prism6:   {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}},
	Pyramid5: {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}},
}

// gmshHigher lists, in Gmsh order, the corners each higher-order node is
// the centre of, from the Gmsh manual's node-ordering pictures.
var gmshHigher = map[ElementType][][]int{
	Line3: {{0, 1}},
	Tri6:  {{0, 1}, {1, 2}, {2, 0}},
	Quad9: {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 1, 2, 3}},
	Tet10: {{0, 1}, {1, 2}, {2, 0}, {3, 0}, {3, 2}, {3, 1}},
	Hex27: {{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 7}, {5, 6}, {6, 7},
		{0, 3, 2, 1}, {0, 1, 5, 4}, {0, 4, 7, 3}, {1, 2, 6, 5}, {2, 3, 7, 6}, {4, 5, 6, 7},
		{0, 1, 2, 3, 4, 5, 6, 7}},
	Prism6:   nil,
	Pyramid5: nil,
}

// TestWriteMeshVTUNodeOrder builds one element of each type in Gmsh
// order, nodes placed where Gmsh puts them, and checks that the cell
// written lists its nodes where VTK expects them.
func TestWriteMeshVTUNodeOrder(t *testing.T) {
	for typ, higher := range gmshHigher {
		ref := vtkRef[typ]
		nv := typ.Vertices()
		coords := make([]float64, 0, 3*typ.Nodes())
		for i := 0; i < nv; i++ {
			coords = append(coords, ref[i][:]...)
		}
		for _, corners := range higher {
			var c [3]float64
			for _, k := range corners {
				for d := range c {
					c[d] += ref[k][d] / float64(len(corners))
				}
			}
			coords = append(coords, c[:]...)
		}
		if len(coords) != 3*typ.Nodes() {
			t.Fatalf("%v: test tables give %d nodes", typ, len(coords)/3)
		}
		conn := make([]int32, typ.Nodes())
		for i := range conn {
			conn[i] = int32(i)
		}
		m := &Mesh{Dim: 3, Coords: coords, Blocks: []ElementBlock{{Type: typ, Conn: conn, Group: 7}}}
		var buf bytes.Buffer
		if err := WriteMeshVTU(&buf, m); err != nil {
			t.Fatal(err)
		}
		f := parseVTU(t, buf.Bytes())
		types, conns := cellsOf(t, f)
		if len(types) != 1 || types[0] != int(vtkCells[typ].typ) {
			t.Fatalf("%v: cell types %v", typ, types)
		}
		pts := f.Piece.Points.decode(t)
		for i, p := range conns[0] {
			got := [3]float64(pts[3*p : 3*p+3])
			if got != ref[i] {
				t.Errorf("%v: VTK node %d is at %v, want %v", typ, i, got, ref[i])
			}
		}
		if g := f.Piece.CellData; len(g) != 1 || g[0].Name != "group" || !slices.Equal(g[0].decode(t), []float64{7}) {
			t.Errorf("%v: cell data %+v, want group [7]", typ, g)
		}
	}
}

func TestWriteMeshVTUGmshFile(t *testing.T) {
	m, err := ReadGmsh(openTestdata(t, "square_tri6.msh"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	x := make([]float64, m.NumNodes())
	for v := range x {
		x[v] = m.Coords[2*v]
	}
	if err := WriteMeshVTU(&buf, m, Field{Name: "x", Data: x}); err != nil {
		t.Fatal(err)
	}
	f := parseVTU(t, buf.Bytes())
	types, _ := cellsOf(t, f)
	want := []int{vtkVertex, vtkQuadraticEdge, vtkQuadraticEdge, vtkQuadraticEdge, vtkQuadraticEdge, vtkQuadraticTri, vtkQuadraticTri}
	if !slices.Equal(types, want) {
		t.Errorf("cell types %v, want %v", types, want)
	}
	if got := f.Piece.CellData[0].decode(t); !slices.Equal(got, []float64{4, 1, 1, 1, 2, 3, 3}) {
		t.Errorf("groups %v", got)
	}
	if got := f.Piece.PointData[0].decode(t); !slices.Equal(got, x) {
		t.Errorf("field x = %v, want %v", got, x)
	}
}

func TestWriteVTURejects(t *testing.T) {
	g, _ := FromEdges(2, []Pair{{0, 1}})
	if err := WriteVTU(&bytes.Buffer{}, g); err == nil || !strings.Contains(err.Error(), "no coordinates") {
		t.Errorf("graph without coordinates: %v", err)
	}
	g.Dim, g.Coords = 3, []float64{0, 0, 0, 1, 1, 1}
	for _, tt := range []struct {
		fields []Field
		want   string
	}{
		{[]Field{{Name: "a", Data: []float64{1}}}, `field "a" has 1 values`},
		{[]Field{{Name: "", Data: []float64{1, 2}}}, "field 0 has no name"},
		{[]Field{{Name: "a", Data: []float64{1, 2}}, {Name: "a", Data: []float64{1, 2}}}, `"a" used twice`},
	} {
		if err := WriteVTU(&bytes.Buffer{}, g, tt.fields...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want an error containing %q", err, tt.want)
		}
	}
	g.Coords = g.Coords[:5]
	if err := WriteVTU(&bytes.Buffer{}, g); err == nil {
		t.Error("accepted 5 coordinates for 2 vertices in 3D")
	}
	for _, tt := range []struct {
		m    *Mesh
		want string
	}{
		{nil, "nil mesh"},
		{&Mesh{Dim: 0}, "Dim = 0"},
		{&Mesh{Dim: 2, Coords: []float64{0, 0, 1}}, "not a multiple"},
		{&Mesh{Dim: 2, Coords: make([]float64, 6), Blocks: []ElementBlock{{Type: Tri3, Conn: []int32{0, 1}}}}, "len(Conn) = 2"},
		{&Mesh{Dim: 2, Coords: make([]float64, 6), Blocks: []ElementBlock{{Type: Tri3, Conn: []int32{0, 1, 3}}}}, "element 0 node 2 is 3"},
		{&Mesh{Dim: 2, Coords: make([]float64, 6), Blocks: []ElementBlock{{Type: 99}}}, "unknown element type"},
	} {
		if err := WriteMeshVTU(&bytes.Buffer{}, tt.m); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want an error containing %q", err, tt.want)
		}
	}
}
