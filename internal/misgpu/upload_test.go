package misgpu_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// degreeClassModel is degree_lmax and degree_class of degree_class.cuh
// on the host: the largest table entry over the degrees present (as bit
// patterns), then round(3*lg/lmax) clamped to 0..3.
func degreeClassModel(g *mesh.Graph) []mesh.Class {
	maxDeg := int64(g.MaxDegree())
	lg := misgpu.DegreeLogs(maxDeg)
	var lmax uint64
	deg := func(v int) int64 { return min(g.Offsets[v+1]-g.Offsets[v], maxDeg) }
	for v := range g.N() {
		lmax = max(lmax, math.Float64bits(lg[deg(v)]))
	}
	lm := math.Float64frombits(lmax)
	cls := make([]mesh.Class, g.N())
	for v := range cls {
		if lm != 0 {
			x := 3 * lg[deg(v)]
			cls[v] = mesh.Class(min(max(math.Round(x/lm), 0), 3))
		}
	}
	return cls
}

// roundingEdges are graphs whose degrees put 3*l/lmax exactly on a
// rounding boundary: a vertex of degree 0 beside a star of 63 leaves
// (maxdeg 63) and vertices of degree 31 (l/lmax = 1/6 exactly in reals).
func roundingEdges() map[string]*mesh.Graph {
	var e []mesh.Pair
	for i := int32(1); i <= 63; i++ {
		e = append(e, mesh.Pair{U: 0, V: i})
	}
	// 32 more vertices, a clique, degree 31 each.
	for i := int32(64); i < 96; i++ {
		for j := i + 1; j < 96; j++ {
			e = append(e, mesh.Pair{U: i, V: j})
		}
	}
	return map[string]*mesh.Graph{"star-clique-isolated": testgraphs.FromEdges(97, e)}
}

// The model of the device classification gives mesh.ClassifyByDegree's
// classes on every graph, rounding boundaries included.
func TestDegreeClassModel(t *testing.T) {
	gs := testgraphs.Small()
	for name, g := range roundingEdges() {
		gs[name] = g
	}
	gs["hex27-12"] = mesh.Hex27Graph(12, 10, 11)
	gs["random-sparse"] = mesh.RandomGraph(5000, 2.5, 1)
	for name, g := range gs {
		want := mesh.ClassifyByDegree(g)
		if got := degreeClassModel(g); !slices.Equal(got, want) {
			t.Errorf("%s: the model's classes differ from mesh.ClassifyByDegree", name)
		}
		if name == "star-clique-isolated" && !slices.Contains(want, 1) {
			t.Errorf("%s: no vertex of class 1 (the test graph lost its point)", name)
		}
	}
}

// gpuGraphs are the GPU shapes and the rounding edge cases.
func gpuGraphs() map[string]*mesh.Graph {
	gs := testgraphs.GPU()
	for name, g := range roundingEdges() {
		gs[name] = g
	}
	return gs
}

// The staged upload checks the graph on the device, and the classes by
// degree computed there are the host's (the run compute-sanitizer checks:
// scripts/upload-check.sh).
func TestGPUClassifyByDegree(t *testing.T) {
	l := openGPU(t)
	for name, g := range gpuGraphs() {
		dg, err := misgpu.UploadStaged(l, nil, g.Offsets, g.Adj, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := dg.ClassifyByDegree(); err != nil {
			t.Fatal(err)
		}
		cls, err := dg.Classes()
		if err != nil {
			t.Fatal(err)
		}
		for v, c := range mesh.ClassifyByDegree(g) {
			if cls[v] != uint8(c) {
				t.Fatalf("%s: vertex %d (degree %d) has class %d on the device, %d on the host", name, v, g.Degree(int32(v)), cls[v], c)
			}
		}
		dg.Close()
	}
}

// A run from the staged upload with the classes by degree gives the
// greedy set, and RunTo leaves the same set on the device.
func TestGPUUploadStaged(t *testing.T) {
	l := openGPU(t)
	for name, g := range gpuGraphs() {
		dg, err := misgpu.UploadStaged(l, nil, g.Offsets, g.Adj, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys, err := mis.Keys(g, mis.Priority{Kind: mis.Boundary, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		for dist := 1; dist <= 2; dist++ {
			ref, _ := mis.Greedy(g, keys, dist)
			pri := misgpu.Priority{Seed: 5, DegreeClass: true}
			got, err := dg.Run(dist, pri, nil)
			if err != nil {
				t.Fatal(err)
			}
			if i := testgraphs.FirstDiff(got.In, ref.In); i >= 0 {
				t.Fatalf("%s dist %d: Run differs from the greedy set at vertex %d", name, dist, i)
			}
			checkRunTo(t, l, dg, dist, pri, ref)
		}
		dg.Close()
	}
}

// checkRunTo checks that RunTo leaves ref's set on the device.
func checkRunTo(t *testing.T, l *gpu.Loader, dg *misgpu.Graph, dist int, pri misgpu.Priority, ref *mis.Result) {
	t.Helper()
	n := len(ref.In)
	flags, err := l.Ctx.Alloc(int64(max(n, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer flags.Free()
	size, _, err := dg.RunTo(dist, pri, flags)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]uint8, n)
	if n > 0 {
		if err := cuda.CopyToHost(b, flags, 0); err != nil {
			t.Fatal(err)
		}
	}
	for v, x := range ref.In {
		if (b[v] == 1) != x || b[v] > 1 {
			t.Fatalf("dist %d: RunTo's flag of vertex %d is %d", dist, v, b[v])
		}
	}
	if size != ref.Size {
		t.Fatalf("dist %d: RunTo says %d members, the greedy set has %d", dist, size, ref.Size)
	}
}

// A bad row is found on the device and named.
func TestGPUUploadStagedBadRow(t *testing.T) {
	l := openGPU(t)
	g := mesh.Hex27Graph(6, 6, 6)
	adj := slices.Clone(g.Adj)
	adj[g.Offsets[77]+2] = int32(g.N()) + 5
	_, err := misgpu.UploadStaged(l, nil, g.Offsets, adj, nil)
	var ve *mesh.ValidationError
	if !errors.As(err, &ve) || ve.Row != 77 {
		t.Fatalf("got %v, want a ValidationError at row 77", err)
	}
}
