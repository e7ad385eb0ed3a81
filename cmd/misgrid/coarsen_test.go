package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// parseList reads a vertex list written by -o .txt into set flags.
func parseList(t *testing.T, text string, n int) []bool {
	t.Helper()
	in := make([]bool, n)
	prev := -1
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		v, err := strconv.Atoi(line)
		if err != nil || v <= prev || v >= n {
			t.Fatalf("list line %d: %q is not an increasing vertex id below %d", i+1, line, n)
		}
		in[v], prev = true, v
	}
	return in
}

// TestCoarsenListMatchesLibrary checks the written set against the
// library's greedy MIS of the same graph and priority, for both distances
// and a relabelled input.
func TestCoarsenListMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		spec     string
		dist     int
		priority mis.PriorityKind
	}{
		{"hex:6", 1, mis.Boundary},
		{"hex:6", 2, mis.Boundary},
		{"tet:5:relabel", 1, mis.Boundary},
		{"tri:9", 2, mis.Degree},
		{"random:300:6", 1, mis.Hash},
	} {
		path := filepath.Join(dir, "set.txt")
		_, _, err := runCmd(t, "coarsen", "-distance", strconv.Itoa(c.dist), "-priority", c.priority.String(),
			"-seed", "7", "-o", path, "gen:"+c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := generate(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		got := parseList(t, string(text), g.N())
		keys, err := mis.Keys(g, mis.Priority{Kind: c.priority, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		want, err := mis.Greedy(g, keys, c.dist)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want.In) {
			t.Errorf("%s distance %d: written set differs from the greedy MIS", c.spec, c.dist)
		}
	}
}

func TestCoarsenStdout(t *testing.T) {
	out, errOut, err := runCmd(t, "coarsen", "-distance", "1", "-o", "-", "gen:quad:5")
	if err != nil {
		t.Fatal(err)
	}
	in := parseList(t, out, 25)
	g, _, err := generate("quad:5")
	if err != nil {
		t.Fatal(err)
	}
	if err := mis.Verify(g, in, 1); err != nil {
		t.Error(err)
	}
	// The four corners of the square are kept.
	for _, v := range []int{0, 4, 20, 24} {
		if !in[v] {
			t.Errorf("corner %d is not in the set", v)
		}
	}
	if !strings.Contains(errOut, "corners kept 4/4") {
		t.Errorf("summary (on stderr with -o -) lacks corners kept 4/4:\n%s", errOut)
	}
}

func TestCoarsenVTU(t *testing.T) {
	dir := t.TempDir()
	for _, in := range []string{"gen:hex:5", "gen:hex27:5", "testdata/square.msh"} {
		path := filepath.Join(dir, "out.vtu")
		out, _, err := runCmd(t, "coarsen", "-max_levels", "3", "-min_vertices", "2", "-o", path, in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !strings.Contains(out, "wrote "+path) {
			t.Errorf("%s: summary does not name the output:\n%s", in, out)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"<VTKFile", `Name="in_set"`, `Name="class"`, `Name="coarse_level"`} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s: .vtu lacks %s", in, want)
			}
		}
	}
}

// A mesh file with :refine=L is refined before its graph is built, as
// gen:tri:N:refine=L is; refine on a matrix is refused.
func TestCoarsenRefined(t *testing.T) {
	plain, _, err := runCmd(t, "coarsen", "-max_levels", "1", "../../mesh/testdata/two_tets_crlf.msh")
	if err != nil {
		t.Fatal(err)
	}
	fine, _, err := runCmd(t, "coarsen", "-max_levels", "1", "../../mesh/testdata/two_tets_crlf.msh:refine=2")
	if err != nil {
		t.Fatal(err)
	}
	if vertices(t, fine) <= 10*vertices(t, plain) {
		t.Errorf("refined twice: %d vertices, unrefined %d", vertices(t, fine), vertices(t, plain))
	}
	if _, _, err := runCmd(t, "coarsen", "-max_levels", "1", "gen:tri:5:refine=1"); err != nil {
		t.Error(err)
	}
	if _, _, err := runCmd(t, "coarsen", "testdata/lap3x3.mtx:refine=1"); err == nil {
		t.Error("refine on a matrix: no error")
	}
}

// vertices reads the vertex count of coarsen's summary: "INPUT: N vertices".
func vertices(t *testing.T, summary string) int {
	t.Helper()
	for _, f := range strings.Split(summary, "\n") {
		if _, rest, ok := strings.Cut(f, ": "); ok {
			var n int
			if _, err := fmt.Sscanf(rest, "%d vertices", &n); err == nil {
				return n
			}
		}
	}
	t.Fatalf("no vertex count in:\n%s", summary)
	return 0
}

// TestCoarsenEGR writes the coarse graph and compares it with the
// library's hierarchy of the same input.
func TestCoarsenEGR(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		input  string
		levels int
		graph  func() *mesh.Graph
	}{
		{"gen:hex27:9", 2, func() *mesh.Graph { return mesh.Hex27Graph(9, 9, 9) }},
		{"gen:hex27:9", 3, func() *mesh.Graph { return mesh.Hex27Graph(9, 9, 9) }},
		{"testdata/lap3x3.mtx", 2, func() *mesh.Graph {
			// The 3×3 grid's 5-point pattern, written out.
			var e []mesh.Pair
			for j := int32(0); j < 3; j++ {
				for i := int32(0); i < 3; i++ {
					if i < 2 {
						e = append(e, mesh.Pair{U: i + 3*j, V: i + 1 + 3*j})
					}
					if j < 2 {
						e = append(e, mesh.Pair{U: i + 3*j, V: i + 3*j + 3})
					}
				}
			}
			g, err := mesh.FromEdges(9, e)
			if err != nil {
				panic(err)
			}
			return g
		}},
	} {
		path := filepath.Join(dir, "coarse.egr")
		args := []string{"coarsen", "-distance", "1", "-o", path}
		args = append(args, "-max_levels", strconv.Itoa(c.levels), "-min_vertices", "1")
		if _, _, err := runCmd(t, append(args, c.input)...); err != nil {
			t.Fatalf("%s: %v", c.input, err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mesh.ReadEGR(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		levels, err := mis.Hierarchy(c.graph(), mis.HierarchyOptions{Distance: 1, MinVertices: 1, MaxLevels: c.levels})
		if err != nil {
			t.Fatal(err)
		}
		want := levels[len(levels)-1].Graph
		if got.N() >= c.graph().N() || !slices.Equal(got.Offsets, want.Offsets) || !slices.Equal(got.Adj, want.Adj) {
			t.Errorf("%s -max_levels %d: .egr has %d vertices, %d edges; the hierarchy's coarsest graph has %d, %d",
				c.input, c.levels, got.N(), got.NumEdges(), want.N(), want.NumEdges())
		}
	}
}

// TestCoarsenGzip reads a gzipped matrix and gets the set of the plain one.
func TestCoarsenGzip(t *testing.T) {
	plain, err := os.ReadFile("testdata/lap3x3.mtx")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lap.MTX.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, err := runCmd(t, "coarsen", "-o", "-", "testdata/lap3x3.mtx")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := runCmd(t, "coarsen", "-o", "-", path)
	if err != nil || got != want {
		t.Errorf("gzipped matrix: err %v, set %q, want %q", err, got, want)
	}
	if _, _, err := runCmd(t, "coarsen", "testdata/lap3x3.mtx.gz"); err == nil {
		t.Error("missing .gz file: no error")
	}
	if err := os.WriteFile(path, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, "coarsen", path); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("plain text named .gz: error %v, want a gzip error", err)
	}
}

func TestCoarsenMatrix(t *testing.T) {
	out, _, err := runCmd(t, "coarsen", "-distance", "1", "-o", "-", "testdata/lap3x3.mtx")
	if err != nil {
		t.Fatal(err)
	}
	in := parseList(t, out, 9)
	// Without geometry, boundary priority ranks by degree deficit: the
	// four grid corners (degree 2) come first, and then the centre.
	want := []bool{true, false, true, false, true, false, true, false, true}
	if !slices.Equal(in, want) {
		t.Errorf("set of the 3×3 Laplacian: %v, want corners and centre %v", in, want)
	}
	// θ above every off-diagonal ratio (1/4) leaves only isolated vertices,
	// all of which are in the set.
	out, _, err = runCmd(t, "coarsen", "-distance", "1", "-theta", "0.3", "-o", "-", "testdata/lap3x3.mtx")
	if err != nil {
		t.Fatal(err)
	}
	if in := parseList(t, out, 9); slices.Contains(in, false) {
		t.Errorf("θ=0.3 should drop every edge, and the set hold all 9 vertices: %v", in)
	}
}

// TestCoarsenUnderLauncherWithoutMPI: a build without -tags mpi started by
// mpirun must refuse, not let every rank compute and write the same file.
func TestCoarsenUnderLauncherWithoutMPI(t *testing.T) {
	if mpiStart != nil {
		t.Skip("this build has MPI support")
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	_, _, err := runCmd(t, "coarsen", "gen:hex:4")
	if err == nil || !strings.Contains(err.Error(), "-tags mpi") {
		t.Errorf("under a launcher without MPI support: error %v", err)
	}
}

// TestDefaultSetEverywhere: with no options, coarsen writes the level-0
// set of the Go zero HierarchyOptions (boundary priority, distance 2),
// which is also what misgrid_hierarchy gives with no options (the C
// ABI's goref cases check that side).
func TestDefaultSetEverywhere(t *testing.T) {
	for _, in := range []string{"gen:quad:17", "gen:hex27:7:relabel", "gen:random:500:6", "testdata/lap3x3.mtx", "testdata/square.msh"} {
		out, _, err := runCmd(t, "coarsen", "-o", "-", in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var c coarsenConfig
		g, _, err := loadInput(in, &c, nil)
		if err != nil {
			t.Fatal(err)
		}
		levels, err := mis.Hierarchy(g, mis.HierarchyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		if err := writeList(&want, levels[0].Set.In); err != nil {
			t.Fatal(err)
		}
		if out != want.String() {
			t.Errorf("%s: coarsen's set differs from mis.Hierarchy's with zero options", in)
		}
		// And the zero options are boundary priority at distance 2.
		explicit, _, err := runCmd(t, "coarsen", "-priority", "boundary", "-distance", "2", "-o", "-", in)
		if err != nil || explicit != out {
			t.Errorf("%s: -priority boundary -distance 2 gives another set (%v)", in, err)
		}
	}
}
