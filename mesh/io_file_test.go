package mesh

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	// The 1D Laplacian is the path 0–1–2–3.
	g, m, err := ReadFile(filepath.Join("testdata", "real_symmetric.mtx"))
	if err != nil {
		t.Fatal(err)
	}
	if m != nil || !slices.Equal(g.Offsets, []int64{0, 1, 3, 5, 6}) || !slices.Equal(g.Adj, []int32{1, 0, 2, 1, 3, 2}) {
		t.Errorf(".mtx: got %v %v (mesh %v)", g.Offsets, g.Adj, m)
	}

	// Two tri6 elements: every node shares an element with all others
	// but the two corners off the diagonal (1 and 3), and the mid-edge
	// nodes on opposite triangles.
	g, m, err = ReadFile(filepath.Join("testdata", "square_tri6.msh"))
	if err != nil {
		t.Fatal(err)
	}
	if m == nil || g.N() != 9 || g.Dim != 2 || len(g.Coords) != 18 {
		t.Fatalf(".msh: %d vertices, Dim %d, mesh %v", g.N(), g.Dim, m != nil)
	}
	if got := g.Neighbors(1); !slices.Equal(got, []int32{0, 2, 4, 5, 8}) {
		t.Errorf(".msh: neighbours of node 1: %v", got)
	}
	if err := g.Validate(); err != nil {
		t.Error(err)
	}

	g, m, err = ReadFile(filepath.Join("testdata", "small.egr"))
	if err != nil || m != nil || g.N() != 4 || g.NumEdges() != 8 {
		t.Errorf(".egr: %v, %v, mesh %v", g, err, m)
	}
}

func TestReadFileGzip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "small.egr"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "small.EGR.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	g, _, err := ReadFile(path)
	if err != nil || g.N() != 4 || !slices.Equal(g.Adj, []int32{1, 2, 0, 2, 0, 1, 3, 2}) {
		t.Errorf("gzip .egr: %v, %v", g, err)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mtx")
	os.WriteFile(bad, []byte("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n"), 0o644)
	nonSquare := filepath.Join(dir, "rect.mtx")
	os.WriteFile(nonSquare, []byte("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n"), 0o644)
	notGz := filepath.Join(dir, "plain.msh.gz")
	os.WriteFile(notGz, []byte("$MeshFormat\n"), 0o644)
	for path, want := range map[string]string{
		"mesh.obj":                     `unknown extension ".obj"`,
		filepath.Join(dir, "none.mtx"): "no such file",
		bad:                            "bad.mtx: mesh: mtx line 3: row index",
		nonSquare:                      "rect.mtx",
		notGz:                          "plain.msh.gz: gzip",
	} {
		if _, _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", path, err, want)
		}
	}
}
