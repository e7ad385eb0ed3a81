package misgpu_test

import (
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// Every lane count must give the same set.
func TestGPUGroupSizes(t *testing.T) {
	needGPU(t)
	all := testgraphs.GPU()
	for _, name := range []string{"hex27-24", "random-100k", "star-20k", "random-sparse"} {
		g := all[name]
		dg := upload(t, g)
		for dist := 1; dist <= 2; dist++ {
			keys, _ := mis.Keys(g, mis.Priority{Kind: mis.Hash, Seed: 3})
			want := mistest.Greedy(t, g, keys, dist)
			for _, gs := range misgpu.GroupSizes {
				// Also with the persistent tail after 0 (none), 1 and 3
				// full sweeps.
				for _, tail := range []int{0, 1, 3} {
					tu := misgpu.Tuning{Group: gs, First: 1 + gs%5, Batch: 1 + gs%3, Tail: tail}
					got := run(t, dg, dist, misgpu.Priority{Seed: 3}, tu)
					if i := testgraphs.FirstDiff(got.In, want.In); i >= 0 {
						t.Fatalf("%s dist %d group %d tail %d: differs at vertex %d", name, dist, gs, tail, i)
					}
					t.Logf("%s dist %d group %d tail %d: %d members, %d sweeps", name, dist, gs, tail, got.Size, got.Rounds)
				}
			}
		}
	}
}

// TestGPUMidSize is the run scripts/gpu-check.sh puts under
// compute-sanitizer (memcheck and racecheck): mid-size meshes in natural
// and random order and a random graph, every lane count, both distances.
func TestGPUMidSize(t *testing.T) {
	needGPU(t)
	rel, _ := mesh.Relabel(mesh.Hex27Graph(32, 32, 32), 2)
	// A tet mesh refined twice: local rows of average degree 13 without
	// runs (no KF_WORDS), 8 buckets, KF_PIPE; Degree mixes its classes
	// over all keys.
	tet, _, err := genspec.Generate("tet:8:refine=2")
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*mesh.Graph{
		"hex27-40":            mesh.Hex27Graph(40, 40, 40),
		"hex27-40-relabelled": rel,
		"random-200k":         mesh.RandomGraph(200_000, 16, 5),
		"tet-8-refined-2":     tet,
	} {
		dg := upload(t, g)
		keys, _ := mis.Keys(g, mis.Priority{Kind: mis.Hash})
		for dist := 1; dist <= 2; dist++ {
			want := mistest.Parallel(t, g, keys, dist, 0)
			// Every lane count, and the defaults (bands, read modes,
			// two-hop pushes), which compute-sanitizer runs check too.
			tunings := []misgpu.Tuning{misgpu.Defaults(shape(g), dist)}
			for _, gs := range misgpu.GroupSizes {
				tunings = append(tunings, misgpu.Tuning{Group: gs, First: 3, Batch: 2, Tail: gs % 3})
			}
			for _, tu := range tunings {
				got := run(t, dg, dist, misgpu.Priority{}, tu)
				if i := testgraphs.FirstDiff(got.In, want.In); i >= 0 {
					t.Fatalf("%s dist %d %+v: differs at vertex %d", name, dist, tu, i)
				}
			}
		}
		// Class keys by default: on the meshes MIS-2 runs in two stages
		// (a list of the boundary, then the interior by hash kernels).
		dkeys, pri := testKeys(t, g, mis.Degree)
		got, err := dg.Run(2, pri, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i := testgraphs.FirstDiff(got.In, mistest.Greedy(t, g, dkeys, 2).In); i >= 0 {
			t.Fatalf("%s Degree dist 2: differs at vertex %d", name, i)
		}
	}
}

// The launch choices that do not change the result (bands and their
// shape, read modes, the first MIS-2 kernel, the tail) give the greedy
// set on every graph and priority.
func TestGPUTuningVariants(t *testing.T) {
	needGPU(t)
	variants := []misgpu.Tuning{
		{Bands: 4, BandShape: 2, KF: 3, Tail: 1},
		{Bands: 3, KF: 6, Tail: 0},
		{Bands: 8, KF: 7},
		{Bands: 5, BandShape: 0.5, KF: 1, Tail: 2},
		{Bands: 4, KF: 2, Tail: 3},
		{KF: 16, Tail: 10},
		{KF: 16, Tail: 0, Bands: 4},
		{KF: 48, Tail: 8},
		{KF: 48, Tail: 0},
		// MIS-2 by key buckets (MIS-1 ignores them).
		{Buckets: 1},
		{Buckets: 4, KF: 16},
		{Buckets: 16, KF: 48, Flush: 1},
		{Buckets: 8, BucketShape: 1, KF: 16},
		{Buckets: 12, Flush: 32, KF: 32, ClassBuckets: true},
		{Buckets: 6, KF: 1, Flush: 8},
		{Buckets: 12, KF: 1, Flush: 1},
		{Buckets: 3, Flush: 2, ClassBuckets: true},
		// Class keys in two stages (the hash kernels for class 0).
		{Buckets: 12, Flush: 1, ClassBuckets: true, Split: 1},
		{Buckets: 4, Flush: 8, KF: 1, ClassBuckets: true, Split: 2},
		{Buckets: 1, Flush: 32, KF: 48, ClassBuckets: true, Split: 2},
		{Buckets: 8, Flush: 1, KF: 32, ClassBuckets: true, Split: 2, FarBuckets: 6},
		{Buckets: 12, Flush: 32, ClassBuckets: true, Split: 2},
		{Buckets: 8, Flush: 8, KF: 1, ClassBuckets: true, Split: 2},
		// The balanced kernels.
		{Buckets: 12, Flush: 1, Balanced: true},
		{Buckets: 6, KF: 1, Flush: 8, Balanced: true},
		{Buckets: 3, Flush: 2, Balanced: true},
		{Buckets: 12, Flush: 1, ClassBuckets: true, Split: 2, Balanced: true},
		{Buckets: 4, Flush: 8, KF: 1, ClassBuckets: true, Split: 1, Balanced: true},
		{Buckets: 8, Flush: 32, KF: 32, Balanced: true},
		// Loads a pair ahead (KF_PIPE): alone, with class keys mixed over
		// all keys, balanced, and in split runs.
		{Buckets: 8, Flush: 8, Pipe: true},
		{Buckets: 8, MixedBuckets: 12, Flush: 8, ClassBuckets: true, Pipe: true},
		{Buckets: 12, Flush: 1, Pipe: true, Balanced: true, KF: 32},
		{Buckets: 3, Flush: 2, ClassBuckets: true, Split: 1, Pipe: true},
		{Buckets: 12, Flush: 1, ClassBuckets: true, Split: 2, Balanced: true, Pipe: true},
	}
	for name, g := range testgraphs.GPU() {
		dg := upload(t, g)
		kinds := []mis.PriorityKind{mis.Hash, mis.Degree}
		if g.Class != nil {
			kinds = append(kinds, mis.Boundary)
		}
		for _, kind := range kinds {
			keys, pri := testKeys(t, g, kind)
			for dist := 1; dist <= 2; dist++ {
				want := mistest.Greedy(t, g, keys, dist)
				for i, v := range variants {
					v.Group, v.First, v.Batch, v.PerBand = 1, 3, 2, 1
					got := run(t, dg, dist, pri, v)
					if j := testgraphs.FirstDiff(got.In, want.In); j >= 0 {
						t.Fatalf("%s %v dist %d variant %d %+v: differs at vertex %d", name, kind, dist, i, v, j)
					}
				}
			}
		}
	}
}

// Ranks below maxSmallRanks go into the state byte; one more value, or
// no vertices, keeps the rank array.
func TestSmallRanks(t *testing.T) {
	for _, c := range []struct {
		prim []uint32
		ok   bool
	}{
		{nil, false},
		{[]uint32{0}, true},
		{[]uint32{3, 0, 63, 7}, true},
		{[]uint32{3, 0, 64, 7}, false},
		{[]uint32{1 << 31}, false},
	} {
		cls := misgpu.SmallRanks(c.prim)
		if (cls != nil) != c.ok {
			t.Fatalf("smallRanks(%v) = %v, want ok %v", c.prim, cls, c.ok)
		}
		for v := range cls {
			if uint32(cls[v]) != c.prim[v] {
				t.Fatalf("smallRanks(%v)[%d] = %d", c.prim, v, cls[v])
			}
		}
	}
}

func needGPU(t *testing.T) {
	t.Helper()
	if err := cuda.Available(); err != nil {
		t.Skip(err.Error())
	}
}

// openGPU opens device 0 for the kernels, or skips the test where there
// is none.
func openGPU(t *testing.T) *gpu.Loader {
	t.Helper()
	needGPU(t)
	l, err := misgpu.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func shape(g *mesh.Graph) misgpu.Shape {
	return misgpu.Shape{N: g.N(), M: g.NumEdges(), MaxDeg: int64(g.MaxDegree()), Vec: true}
}

// upload copies g, with its classes, to device 0; Close comes with the
// test's cleanup.
func upload(t *testing.T, g *mesh.Graph) *misgpu.Graph {
	t.Helper()
	l := openGPU(t)
	var cls []uint8
	for _, c := range g.Class {
		cls = append(cls, uint8(c))
	}
	dg, err := misgpu.Upload(l, g.Offsets, g.Adj, int64(g.MaxDegree()), cls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dg.Close() })
	return dg
}

// run runs the MIS with tuning tu exactly (not adjusted defaults).
func run(t *testing.T, dg *misgpu.Graph, dist int, pri misgpu.Priority, tu misgpu.Tuning) *misgpu.Result {
	t.Helper()
	start := time.Now()
	got, err := dg.Run(dist, pri, func(d *misgpu.Tuning) { *d = tu })
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("dist %d %+v: %v", dist, tu, err)
	}
	// The sweeps' time is part of the call's; an empty graph has none.
	if (got.Time <= 0) != (dg.N() == 0) || got.Time > wall {
		t.Fatalf("dist %d %+v: sweeps took %v of a call of %v", dist, tu, got.Time, wall)
	}
	return got
}

// testKeys returns the keys of kind (seed 11) on g and the priority's
// form on the device.
func testKeys(t *testing.T, g *mesh.Graph, kind mis.PriorityKind) ([]uint64, misgpu.Priority) {
	t.Helper()
	keys, err := mis.Keys(g, mis.Priority{Kind: kind, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	pri := misgpu.Priority{Seed: 11, GraphClass: kind == mis.Boundary, Degree: kind == mis.Degree}
	return keys, pri
}
