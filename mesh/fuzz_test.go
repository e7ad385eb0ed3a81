package mesh

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fuzzMaxBytes bounds what a fuzzed input may make the builders allocate,
// so that an honest header of 10⁹ vertices is refused quickly instead of
// taking the machine's memory.
const fuzzMaxBytes = 64 << 20

// checkReadError fails t unless err is what a reader may return: a
// *ParseError, or a *MemoryError for a header whose size passes the limit.
func checkReadError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) && !isMemoryError(err) {
		t.Fatalf("error %T is neither a *ParseError nor a *MemoryError: %v", err, err)
	}
}

func isMemoryError(err error) bool {
	var me *MemoryError
	return errors.As(err, &me)
}

// addSeeds adds every testdata file with the extension as a seed.
func addSeeds(f *testing.F, ext string) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"+ext))
	if err != nil || len(files) == 0 {
		f.Fatalf("no testdata/*%s seeds: %v", ext, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzReadMatrixMarket checks that any input either fails with a
// *ParseError or gives a matrix whose indices are in range and values
// finite, and that such a matrix survives a write and a read unchanged.
func FuzzReadMatrixMarket(f *testing.F) {
	addSeeds(f, ".mtx")
	for _, c := range mtxMalformed {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadMatrixMarket(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err)
			return
		}
		if a.Rows == a.Cols {
			if g, err := FromCOO(a, MatrixOptions{MaxBytes: fuzzMaxBytes}); err == nil {
				if err := g.Validate(); err != nil {
					t.Fatal(err)
				}
			} else if !isMemoryError(err) {
				t.Fatalf("FromCOO on a matrix the reader accepted: %v", err)
			}
		}
		if len(a.Row) != len(a.Col) || (a.Val != nil && len(a.Val) != len(a.Row)) {
			t.Fatalf("lengths %d, %d, %d", len(a.Row), len(a.Col), len(a.Val))
		}
		for k := range a.Row {
			if a.Row[k] < 0 || int(a.Row[k]) >= a.Rows || a.Col[k] < 0 || int(a.Col[k]) >= a.Cols {
				t.Fatalf("entry %d (%d,%d) out of range for %d×%d", k, a.Row[k], a.Col[k], a.Rows, a.Cols)
			}
			if a.Val != nil && !isFinite(a.Val[k]) {
				t.Fatalf("entry %d has value %v", k, a.Val[k])
			}
		}
		var buf bytes.Buffer
		if err := WriteMatrixMarket(&buf, a); err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		b, err := ReadMatrixMarket(&buf)
		if err != nil {
			t.Fatalf("cannot read what was written: %v", err)
		}
		if b.Rows != a.Rows || b.Cols != a.Cols || !slices.Equal(a.Row, b.Row) || !slices.Equal(a.Col, b.Col) || !slices.Equal(a.Val, b.Val) {
			t.Fatal("round trip changed the matrix")
		}
	})
}

// FuzzReadGmsh checks that any input either fails with a *ParseError or
// gives a mesh that the rest of the package can index safely.
func FuzzReadGmsh(f *testing.F) {
	addSeeds(f, ".msh")
	for _, c := range gmshMalformed {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadGmsh(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err)
			return
		}
		if m.Dim != 2 && m.Dim != 3 {
			t.Fatalf("Dim = %d", m.Dim)
		}
		if err := checkMesh(m); err != nil {
			t.Fatal(err)
		}
		for i, x := range m.Coords {
			if !isFinite(x) {
				t.Fatalf("coordinate %d is %v", i, x)
			}
		}
		if m.NodeTags != nil && len(m.NodeTags) != m.NumNodes() {
			t.Fatalf("%d node tags for %d nodes", len(m.NodeTags), m.NumNodes())
		}
		if err := WriteMeshVTU(&bytes.Buffer{}, m); err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		if g, err := FromElements(m, ElementOptions{MaxBytes: fuzzMaxBytes}); err != nil {
			if !isMemoryError(err) {
				t.Fatalf("FromElements: %v", err)
			}
		} else if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzReadEGR checks that any input either fails with a *ParseError or
// gives a valid graph, which survives a write and a read unchanged.
func FuzzReadEGR(f *testing.F) {
	addSeeds(f, ".egr")
	f.Add(le32(2, 2, 0, 1, 2, 1, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadEGR(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err)
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteEGR(&buf, g); err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		h, err := ReadEGR(&buf)
		if err != nil {
			t.Fatalf("cannot read what was written: %v", err)
		}
		if !slices.Equal(g.Offsets, h.Offsets) || !slices.Equal(g.Adj, h.Adj) {
			t.Fatal("round trip changed the graph")
		}
	})
}

// FuzzReadMatrixMarketArray checks that any input either fails with a
// *ParseError or gives a dense matrix of the declared size whose values
// are finite and survive a write and a read unchanged.
func FuzzReadMatrixMarketArray(f *testing.F) {
	addSeeds(f, ".mtx")
	for _, c := range mtxMalformed {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, cols, vals, err := ReadMatrixMarketArray(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err)
			return
		}
		if int64(len(vals)) != int64(rows)*int64(cols) {
			t.Fatalf("%d values for %d×%d", len(vals), rows, cols)
		}
		for k, v := range vals {
			if !isFinite(v) {
				t.Fatalf("value %d is %v", k, v)
			}
		}
		var buf bytes.Buffer
		if err := WriteMatrixMarketArray(&buf, rows, cols, vals); err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		r2, c2, v2, err := ReadMatrixMarketArray(&buf)
		if err != nil || r2 != rows || c2 != cols || !slices.Equal(v2, vals) {
			t.Fatalf("round trip: %d×%d, %v", r2, c2, err)
		}
	})
}

// FuzzFromCOO builds the graph of fuzzed triplets (3 bytes each: row,
// column, value) and checks it against what must hold whatever rounding
// does at the threshold: at θ = 0 it is exactly the reference graph, at
// θ > 0 it is a valid subgraph of that with the same Dirichlet nodes, and
// FromCSR on the same entries gives the same graph.
func FuzzFromCOO(f *testing.F) {
	f.Add(uint8(3), uint8(1), 0.0, []byte{0, 0, 8, 0, 1, 255, 1, 1, 8, 1, 0, 255, 2, 2, 1})
	f.Add(uint8(4), uint8(2), 0.1, []byte{0, 0, 32, 1, 1, 32, 0, 2, 4, 2, 0, 4, 2, 2, 16, 3, 3, 16, 3, 1, 250})
	f.Add(uint8(2), uint8(1), 0.5, []byte{0, 1, 1, 1, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, nodes, b uint8, theta float64, raw []byte) {
		bs := int(b%3) + 1
		n := int(nodes%9) * bs
		if !(theta >= 0 && theta < 4) {
			theta = 0.25
		}
		var ts []triplet
		for k := 0; n > 0 && k+2 < len(raw); k += 3 {
			ts = append(ts, triplet{int32(int(raw[k]) % n), int32(int(raw[k+1]) % n), float64(int8(raw[k+2])) / 8})
		}
		coo, csr := cooOf(n, ts), csrOf(n, ts)
		if len(ts) == 0 {
			coo.Val, csr.Val = []float64{}, []float64{}
		}
		g0, err := FromCOO(coo, MatrixOptions{BlockSize: bs})
		if err != nil {
			t.Fatal(err)
		}
		want, wantDir := referenceGraph(n, ts, bs, 0, false, nil)
		for v := range want {
			if got := g0.Neighbors(int32(v)); !slices.Equal(got, want[v]) {
				t.Fatalf("θ = 0: neighbours of %d: %v, want %v", v, got, want[v])
			}
		}
		if !slices.Equal(g0.Dirichlet, wantDir) {
			t.Fatalf("Dirichlet %v, want %v", g0.Dirichlet, wantDir)
		}
		opt := MatrixOptions{Theta: theta, BlockSize: bs}
		g, err := FromCOO(coo, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Dirichlet, g0.Dirichlet) {
			t.Fatalf("θ = %g changes the Dirichlet nodes", theta)
		}
		for v := range g.N() {
			for _, u := range g.Neighbors(int32(v)) {
				if _, ok := slices.BinarySearch(g0.Neighbors(int32(v)), u); !ok {
					t.Fatalf("θ = %g: edge %d-%d not in the θ = 0 graph", theta, v, u)
				}
			}
		}
		h, err := FromCSR(csr, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h.Offsets, g.Offsets) || !slices.Equal(h.Adj, g.Adj) {
			t.Fatal("FromCSR and FromCOO differ")
		}
	})
}

// FuzzReadGzipCut compresses the input, cuts the stream short and reads it
// as each format, as ReadFile does a .gz: a cut stream never reads as a
// graph, and its error says the input is truncated or corrupt unless a
// format error came first.
func FuzzReadGzipCut(f *testing.F) {
	for _, ext := range []string{".mtx", ".msh", ".egr"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "*"+ext))
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, uint16(len(data)/3))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		z := gzipBytes(data)
		z = z[:int(cut)%len(z)]
		for _, ext := range []string{".mtx", ".msh", ".egr"} {
			zr, err := gzip.NewReader(bytes.NewReader(z))
			if err != nil {
				continue // the cut falls in the gzip header
			}
			g, _, err := readGraph(gzipErrors{zr}, ext)
			if err == nil {
				t.Fatalf("%s: a stream cut at %d of %d bytes read as a graph of %d vertices", ext, len(z), len(gzipBytes(data)), g.N())
			}
			var pe *ParseError
			if errors.As(err, &pe) && pe.Err != nil && errors.Is(pe.Err, io.ErrUnexpectedEOF) && ext != ".egr" &&
				!strings.Contains(err.Error(), "truncated or corrupt") && !strings.Contains(err.Error(), "gzip") {
				t.Fatalf("%s: %v", ext, err)
			}
		}
	})
}
