package mesh

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// withGoMemoryLimit sets the process's Go memory limit for one test, the
// process-wide bound the guard honours where no MaxBytes option exists.
func withGoMemoryLimit(t *testing.T, limit int64) {
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
}

func wantMemoryError(t *testing.T, err error, want ...string) {
	t.Helper()
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MemoryError", err)
	}
	if me.Need <= me.Limit {
		t.Errorf("need %d ≤ limit %d", me.Need, me.Limit)
	}
	for _, w := range append(want, "needs about") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A three-line Matrix Market file whose header honestly declares 2·10⁹
// rows and one entry used to grow to 23 GB building its graph (issue 21,
// item 3). It is refused before the build, saying how much it would need,
// under a MaxBytes option and under the process's Go memory limit.
func TestMemoryGuardMatrixRows(t *testing.T) {
	const file = "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n"
	a, err := ReadMatrixMarket(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var g *Graph
	got := allocated(func() { g, err = FromCOO(a, MatrixOptions{MaxBytes: 4 << 30}) })
	wantMemoryError(t, err, "FromCOO", "2000000000 rows", "GiB", "MaxBytes")
	if g != nil || got > 1<<20 {
		t.Errorf("graph %v, %d bytes allocated before refusing", g, got)
	}
	c := &CSR[float64]{Rows: 1 << 20, Cols: 1 << 20, RowPtr: make([]int64, 1<<20+1)}
	_, err = FromCSR(c, MatrixOptions{MaxBytes: 1 << 20})
	wantMemoryError(t, err, "FromCSR")
	_, err = COOToCSR(a, 1<<30)
	wantMemoryError(t, err, "COOToCSR")

	path := filepath.Join(t.TempDir(), "huge.mtx")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	withGoMemoryLimit(t, 1<<30)
	_, _, err = ReadFile(path)
	wantMemoryError(t, err, "huge.mtx", "GOMEMLIMIT")
}

// A 1 MB .egr.gz can expand to 1 GiB of isolated vertices (2²⁸ nodes, no
// edges); it took 5.4 GB. Its header's implied size is checked against
// the limit before reading.
func TestMemoryGuardEGRGzip(t *testing.T) {
	const nodes = 1 << 28
	// Gzip members concatenate into one stream: one member of 1 MiB of
	// zeros, repeated, makes the file quickly.
	var zb bytes.Buffer
	zb.Write(gzipBytes(le32(nodes, 0, 0)))
	zeros := gzipBytes(make([]byte, 1<<20))
	for range 4 * nodes >> 20 {
		zb.Write(zeros)
	}
	if zb.Len() > 2<<20 {
		t.Fatalf("the compressed file has %d bytes", zb.Len())
	}
	path := filepath.Join(t.TempDir(), "isolated.egr.gz")
	if err := os.WriteFile(path, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	withGoMemoryLimit(t, 1<<30)
	var err error
	got := allocated(func() { _, _, err = ReadFile(path) })
	wantMemoryError(t, err, "ReadEGR", "268435456 vertices", "3.0 GiB")
	if got > 4<<20 {
		t.Errorf("%d bytes allocated before refusing", got)
	}
}

// A stream whose size the reader cannot know is read in chunks that are
// never copied to grow: an honest file allocates its graph (12 bytes per
// vertex with the int32 index it is read from), not a multiple of it.
func TestReadEGRStreamAllocatesOnce(t *testing.T) {
	const nodes = 1 << 20
	data := le32(nodes, 0)
	data = append(data, make([]byte, 4*(nodes+1))...)
	var g *Graph
	var err error
	got := allocated(func() { g, err = ReadEGR(struct{ io.Reader }{bytes.NewReader(data)}) })
	if err != nil || g.N() != nodes {
		t.Fatalf("%v, %d vertices", err, g.N())
	}
	if limit := uint64(13 * nodes); got > limit {
		t.Errorf("%d bytes allocated for %d vertices, want at most %d", got, nodes, limit)
	}
}

func TestCheckMemory(t *testing.T) {
	if err := CheckMemory("op", "x", 1<<62, -1); err != nil {
		t.Errorf("negative MaxBytes: %v", err)
	}
	if err := CheckMemory("op", "x", 100, 100); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := CheckMemory("op", "a thing", 101, 100)
	wantMemoryError(t, err, "mesh: op: a thing needs about 101 B of memory, more than the 100 B allowed by the MaxBytes option")
	if avail, of := AvailableMemory(); runtime.GOOS == "linux" && (avail <= 0 || of == "") {
		t.Errorf("AvailableMemory on Linux: %d, %q", avail, of)
	}
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 23 << 30: "23.0 GiB"} {
		if got := FormatBytes(b); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", b, got, want)
		}
	}
}

// StructuredBytes tracks what generating a mesh and building its graph
// allocates, so that a CLI can refuse a size before trying it.
func TestStructuredBytes(t *testing.T) {
	for _, c := range []struct {
		t    ElementType
		dims []int
		make func() *Mesh
	}{
		{Hex8, []int{20, 18, 16}, func() *Mesh { return StructuredHex(20, 18, 16) }},
		{Tet4, []int{15, 16, 17}, func() *Mesh { return StructuredTet(15, 16, 17) }},
		{Quad4, []int{120, 100}, func() *Mesh { return StructuredQuad(120, 100) }},
		{Tri3, []int{100, 120}, func() *Mesh { return StructuredTri(100, 120) }},
	} {
		got := allocated(func() {
			if _, err := FromElements(c.make(), ElementOptions{}); err != nil {
				t.Fatal(err)
			}
		})
		est := StructuredBytes(c.t, c.dims...)
		if r := float64(est) / float64(got); r < 0.95 || r > 1.3 {
			t.Errorf("%v %v: estimate %d bytes, allocated %d (ratio %.2f)", c.t, c.dims, est, got, r)
		}
	}
	for _, bad := range [][]int{{1, 5, 5}, {5, 5}, {70000, 70000, 70000}} {
		if b := StructuredBytes(Hex8, bad...); b != -1 {
			t.Errorf("StructuredBytes(hex8, %v) = %d, want -1", bad, b)
		}
	}
	if b := StructuredBytes(Hex27, 5, 5, 5); b != -1 {
		t.Errorf("StructuredBytes(hex27) = %d, want -1", b)
	}
	if b := StructuredBytes(Hex8, 512, 512, 512); b < 20<<30 {
		t.Errorf("512³ hex8 estimated at %s", FormatBytes(b))
	}
}

// FromElements refuses a mesh whose graph would pass its MaxBytes.
func TestFromElementsMaxBytes(t *testing.T) {
	m := StructuredHex(20, 20, 20)
	_, err := FromElements(m, ElementOptions{MaxBytes: 1 << 20})
	wantMemoryError(t, err, "FromElements", "8000 nodes")
	if _, err := FromElements(m, ElementOptions{MaxBytes: 64 << 20}); err != nil {
		t.Error(err)
	}
}

// The graph generators' estimates track what they allocate.
func TestGraphGeneratorBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		est  int64
		make func()
	}{
		{"hex27", Hex27GraphBytes(30, 20, 10), func() { Hex27Graph(30, 20, 10) }},
		{"grid7", Grid7GraphBytes(30, 20, 10), func() { Grid7Graph(30, 20, 10) }},
		{"random", RandomGraphBytes(200_000, 10), func() { RandomGraph(200_000, 10, 3) }},
	} {
		got := allocated(c.make)
		if r := float64(c.est) / float64(got); r < 0.95 || r > 1.3 {
			t.Errorf("%s: estimate %d bytes, allocated %d (ratio %.2f)", c.name, c.est, got, r)
		}
	}
	if Hex27GraphBytes(1, 5, 5) != -1 || Grid7GraphBytes(5, 5, 1<<30) != -1 || RandomGraphBytes(0, 4) != -1 {
		t.Error("a size the generators refuse has an estimate")
	}
	g := Hex27Graph(7, 6, 5)
	if want := int64(g.NumEdges())*4 + int64(g.N())*33 + 8; Hex27GraphBytes(7, 6, 5) != want {
		t.Errorf("Hex27GraphBytes(7, 6, 5) = %d, want %d", Hex27GraphBytes(7, 6, 5), want)
	}
	h := Grid7Graph(7, 6, 5)
	if want := int64(h.NumEdges())*4 + int64(h.N())*33 + 8; Grid7GraphBytes(7, 6, 5) != want {
		t.Errorf("Grid7GraphBytes(7, 6, 5) = %d, want %d", Grid7GraphBytes(7, 6, 5), want)
	}
}

// FromEdges takes its vertex count from the caller: 2³¹−1 vertices would
// need 48 GiB of offsets, refused under a smaller limit.
func TestFromEdgesMemory(t *testing.T) {
	withGoMemoryLimit(t, 1<<30)
	_, err := FromEdges(1<<31-1, []Pair{{0, 1}})
	wantMemoryError(t, err, "FromEdges", "2147483647 vertices")
}
