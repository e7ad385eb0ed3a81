package mesh

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func openTestdata(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestReadMatrixMarketGolden(t *testing.T) {
	tests := []struct {
		file string
		want COO[float64]
	}{
		{"real_general.mtx", COO[float64]{Rows: 3, Cols: 4,
			Row: []int32{0, 0, 1, 2, 2}, Col: []int32{0, 2, 1, 3, 0},
			Val: []float64{2.5, -1e-3, 4, 72.5, -1}}},
		{"real_symmetric.mtx", COO[float64]{Rows: 4, Cols: 4,
			Row: []int32{0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
			Col: []int32{0, 0, 1, 1, 1, 2, 2, 2, 3, 3},
			Val: []float64{2, -1, -1, 2, -1, -1, 2, -1, -1, 2}}},
		{"pattern_symmetric.mtx", COO[float64]{Rows: 5, Cols: 5,
			Row: []int32{1, 0, 2, 0, 3, 4, 2},
			Col: []int32{0, 1, 0, 2, 3, 2, 4}}},
		{"integer_general.mtx", COO[float64]{Rows: 2, Cols: 3,
			Row: []int32{0, 1, 1}, Col: []int32{1, 0, 2}, Val: []float64{-7, 12, 3}}},
		{"real_skew.mtx", COO[float64]{Rows: 3, Cols: 3,
			Row: []int32{1, 0, 2, 1}, Col: []int32{0, 1, 1, 2}, Val: []float64{1.5, -1.5, -4, 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ReadMatrixMarket(openTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestReadMatrixMarketArrayGolden(t *testing.T) {
	tests := []struct {
		file       string
		rows, cols int
		data       []float64
	}{
		{"array_vector.mtx", 3, 1, []float64{1, -2.5, 300}},
		{"array_dense.mtx", 2, 3, []float64{1, 2, 3, 4, 5, 6}},
		{"array_symmetric.mtx", 3, 3, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rows, cols, data, err := ReadMatrixMarketArray(openTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if rows != tt.rows || cols != tt.cols || !slices.Equal(data, tt.data) {
				t.Errorf("got %d×%d %v, want %d×%d %v", rows, cols, data, tt.rows, tt.cols, tt.data)
			}
		})
	}
	// Skew-symmetric arrays store the strict lower triangle.
	rows, cols, data, err := ReadMatrixMarketArray(strings.NewReader(
		"%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"))
	want := []float64{0, -1, -2, 1, 0, -3, 2, 3, 0}
	if err != nil || rows != 3 || cols != 3 || !slices.Equal(data, want) {
		t.Errorf("skew-symmetric array: got %d×%d %v, %v; want 3×3 %v", rows, cols, data, err, want)
	}
}

// randomCOO draws a matrix with repeated entries, extreme values and
// empty rows, everything a round trip could get wrong.
func randomCOO(r *rand.Rand, pattern bool) *COO[float64] {
	a := &COO[float64]{Rows: 1 + r.IntN(50), Cols: 1 + r.IntN(50)}
	nnz := r.IntN(200)
	specials := []float64{0, -0.0, 1e-300, -1e300, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3}
	for k := 0; k < nnz; k++ {
		a.Row = append(a.Row, int32(r.IntN(a.Rows)))
		a.Col = append(a.Col, int32(r.IntN(a.Cols)))
		if pattern {
			continue
		}
		v := r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		if r.IntN(5) == 0 {
			v = specials[r.IntN(len(specials))]
		}
		a.Val = append(a.Val, v)
	}
	return a
}

func TestMatrixMarketRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100; i++ {
		a := randomCOO(r, i%4 == 0)
		var buf bytes.Buffer
		if err := WriteMatrixMarket(&buf, a); err != nil {
			t.Fatal(err)
		}
		b, err := ReadMatrixMarket(&buf)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if a.Rows != b.Rows || a.Cols != b.Cols || !slices.Equal(a.Row, b.Row) || !slices.Equal(a.Col, b.Col) {
			t.Fatalf("case %d: pattern differs after a round trip", i)
		}
		if (a.Val == nil) != (b.Val == nil) || len(a.Val) != len(b.Val) {
			t.Fatalf("case %d: values %d (nil %v) became %d (nil %v)", i, len(a.Val), a.Val == nil, len(b.Val), b.Val == nil)
		}
		for k := range a.Val {
			if math.Float64bits(a.Val[k]) != math.Float64bits(b.Val[k]) {
				t.Fatalf("case %d entry %d: %v read back as %v", i, k, a.Val[k], b.Val[k])
			}
		}
	}
}

func TestMatrixMarketArrayRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][2]int{{0, 0}, {1, 1}, {5, 1}, {1, 5}, {4, 3}, {7, 7}} {
		data := make([]float64, shape[0]*shape[1])
		for i := range data {
			data[i] = r.NormFloat64() * 1e5
		}
		var buf bytes.Buffer
		if err := WriteMatrixMarketArray(&buf, shape[0], shape[1], data); err != nil {
			t.Fatal(err)
		}
		rows, cols, got, err := ReadMatrixMarketArray(&buf)
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		if rows != shape[0] || cols != shape[1] || !slices.Equal(got, data) {
			t.Errorf("%v: got %d×%d %v, want %v", shape, rows, cols, got, data)
		}
	}
}

func TestWriteMatrixMarketRejects(t *testing.T) {
	tests := []struct {
		name string
		a    *COO[float64]
		want string
	}{
		{"nil", nil, "nil matrix"},
		{"negative size", &COO[float64]{Rows: -1}, "out of range"},
		{"lengths", &COO[float64]{Rows: 2, Cols: 2, Row: []int32{0}, Col: []int32{}}, "differ"},
		{"index", &COO[float64]{Rows: 2, Cols: 2, Row: []int32{0, 2}, Col: []int32{0, 0}}, "entry 1 (2,0) out of range"},
		{"NaN", &COO[float64]{Rows: 2, Cols: 2, Row: []int32{1}, Col: []int32{0}, Val: []float64{math.NaN()}}, "entry 0 has value NaN"},
	}
	for _, tt := range tests {
		err := WriteMatrixMarket(&bytes.Buffer{}, tt.a)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if err := WriteMatrixMarketArray(&bytes.Buffer{}, 2, 2, []float64{1, 2, 3}); err == nil {
		t.Error("WriteMatrixMarketArray accepted 3 values for a 2×2 matrix")
	}
	if err := WriteMatrixMarketArray(&bytes.Buffer{}, 1, 2, []float64{1, math.Inf(1)}); err == nil || !strings.Contains(err.Error(), "data[1]") {
		t.Errorf("WriteMatrixMarketArray with Inf: got %v", err)
	}
}

func TestReadGmshGolden(t *testing.T) {
	m, err := ReadGmsh(openTestdata(t, "square_tri6.msh"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Mesh{
		Dim:      2,
		Coords:   []float64{0, 0, 1, 0, 1, 1, 0, 1, 0.5, 0, 1, 0.5, 0.5, 1, 0, 0.5, 0.5, 0.5},
		NodeTags: []int64{10, 20, 30, 40, 50, 60, 70, 80, 90},
		Groups:   map[int]string{1: "wall", 2: "inlet", 3: "fluid domain", 4: "corner"},
		Blocks: []ElementBlock{
			{Type: Point1, Conn: []int32{0}, Group: 4, Entity: 1},
			{Type: Line3, Conn: []int32{0, 1, 4}, Group: 1, Entity: 1},
			{Type: Line3, Conn: []int32{1, 2, 5}, Group: 1, Entity: 2},
			{Type: Line3, Conn: []int32{2, 3, 6}, Group: 1, Entity: 3},
			{Type: Line3, Conn: []int32{3, 0, 7}, Group: 2, Entity: 4},
			{Type: Tri6, Conn: []int32{0, 1, 2, 4, 5, 8, 0, 2, 3, 8, 6, 7}, Group: 3, Entity: 1},
		},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}

	m, err = ReadGmsh(openTestdata(t, "two_tets_crlf.msh"))
	if err != nil {
		t.Fatal(err)
	}
	want = &Mesh{
		Dim:    3,
		Coords: []float64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1},
		Blocks: []ElementBlock{{Type: Tet4, Conn: []int32{0, 1, 2, 3, 1, 2, 3, 4}, Entity: 1}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

// Gmsh files in the wild use tags far apart; the reader must map them to
// dense ids whatever their spread, switching to a map when a slice would
// be mostly empty.
func TestReadGmshSparseTags(t *testing.T) {
	for _, tags := range [][4]int64{
		{1, 2, 3, 4},
		{4, 3, 2, 1},
		{7, 100000, 5, 1 << 40},
		{1 << 62, 1, 1 << 61, 2},
	} {
		var b strings.Builder
		b.WriteString("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4611686018427387904\n2 1 0 4\n")
		for _, tg := range tags {
			b.WriteString(strconv.FormatInt(tg, 10) + "\n")
		}
		b.WriteString("0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n$Elements\n1 1 1 1\n2 1 3 1\n1")
		for _, k := range []int{3, 2, 1, 0} {
			b.WriteString(" " + strconv.FormatInt(tags[k], 10))
		}
		b.WriteString("\n$EndElements\n")
		m, err := ReadGmsh(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("tags %v: %v", tags, err)
		}
		if got := m.Blocks[0].Conn; !slices.Equal(got, []int32{3, 2, 1, 0}) {
			t.Errorf("tags %v: connectivity %v, want [3 2 1 0]", tags, got)
		}
		if wantNil := tags == [4]int64{1, 2, 3, 4}; (m.NodeTags == nil) != wantNil {
			t.Errorf("tags %v: NodeTags = %v", tags, m.NodeTags)
		}
	}
}

func TestTagIndex(t *testing.T) {
	// Against a map, on tags that start dense and turn sparse.
	r := rand.New(rand.NewPCG(5, 6))
	var ti tagIndex
	ref := map[int64]int32{}
	for id := int32(0); id < 5000; id++ {
		tag := int64(r.IntN(20000))
		if id > 4000 {
			tag = r.Int64N(1 << 50)
		}
		_, dup := ref[tag]
		if ok := ti.add(tag, id); ok == dup {
			t.Fatalf("add(%d): ok = %v, but duplicate = %v", tag, ok, dup)
		}
		if !dup {
			ref[tag] = id
		}
	}
	for tag, id := range ref {
		if got, ok := ti.get(tag); !ok || got != id {
			t.Fatalf("get(%d) = %d, %v; want %d", tag, got, ok, id)
		}
	}
	for _, tag := range []int64{-1, 20001, 1<<50 + 1} {
		if _, ok := ref[tag]; !ok {
			if _, ok := ti.get(tag); ok {
				t.Fatalf("get(%d) found a tag never added", tag)
			}
		}
	}
}

// smallEGR is testdata/small.egr byte by byte: 4 vertices, edges 0–1,
// 0–2, 1–2, 2–3.
var smallEGR = []byte{
	4, 0, 0, 0, 8, 0, 0, 0, // nodes, edges
	0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0, // nindex
	1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, // nlist
	0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0,
}

func TestReadEGRGolden(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("testdata", "small.egr"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, smallEGR) {
		t.Fatalf("testdata/small.egr differs from smallEGR")
	}
	tests := []struct {
		file string
		off  []int64
		adj  []int32
	}{
		{"small.egr", []int64{0, 2, 4, 7, 8}, []int32{1, 2, 0, 2, 0, 1, 3, 2}},
		// Rows [2 0 1], [], [0]: the self loop goes, rows are sorted and
		// the missing reverse edge 1–0 is added.
		{"unsorted.egr", []int64{0, 2, 3, 4}, []int32{1, 2, 0, 0}},
	}
	for _, tt := range tests {
		// Read from a file (size known) and from a plain stream.
		for _, stream := range []bool{false, true} {
			var r io.Reader = openTestdata(t, tt.file)
			if stream {
				r = struct{ io.Reader }{r} // hides Stat and Seek
			}
			g, err := ReadEGR(r)
			if err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			if !slices.Equal(g.Offsets, tt.off) || !slices.Equal(g.Adj, tt.adj) {
				t.Errorf("%s: got %v %v, want %v %v", tt.file, g.Offsets, g.Adj, tt.off, tt.adj)
			}
			if err := g.Validate(); err != nil {
				t.Errorf("%s: %v", tt.file, err)
			}
		}
	}
}

func TestEGRRoundTrip(t *testing.T) {
	graphs := map[string]*Graph{
		"empty":    {},
		"isolated": {Offsets: make([]int64, 4)},
		"hex27":    Hex27Graph(4, 3, 5),
		"random":   RandomGraph(300, 6, 9),
	}
	for name, g := range graphs {
		var buf bytes.Buffer
		if err := WriteEGR(&buf, g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := 4 * (3 + int64(g.N()) + g.NumEdges()); int64(buf.Len()) != want {
			t.Errorf("%s: wrote %d bytes, want %d", name, buf.Len(), want)
		}
		h, err := ReadEGR(&buf)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.N() != g.N() || !slices.Equal(h.Adj, g.Adj) || (g.N() > 0 && !slices.Equal(h.Offsets, g.Offsets)) {
			t.Errorf("%s: round trip changed the graph", name)
		}
	}
}

func TestWriteEGRRejects(t *testing.T) {
	for name, g := range map[string]*Graph{
		"nil":           nil,
		"bad offsets":   {Offsets: []int64{0, 3, 2}, Adj: []int32{1, 0, 0}},
		"id range":      {Offsets: []int64{0, 1, 2}, Adj: []int32{1, 2}},
		"short Adj":     {Offsets: []int64{0, 1, 2}, Adj: []int32{1}},
		"first offset":  {Offsets: []int64{1, 1}},
		"adj, no nodes": {Adj: []int32{0}},
	} {
		if err := WriteEGR(&bytes.Buffer{}, g); err == nil {
			t.Errorf("%s: WriteEGR accepted an invalid graph", name)
		}
	}
}
