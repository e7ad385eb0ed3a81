package mesh

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

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
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			// The array reader must not panic either.
			ReadMatrixMarketArray(bytes.NewReader(data))
			return
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
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
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
		if g, err := FromElements(m, ElementOptions{}); err != nil {
			t.Fatalf("FromElements: %v", err)
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
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
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
