package mis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
)

func needGPU(t *testing.T) {
	t.Helper()
	if err := cuda.Available(); err != nil {
		t.Skip(err.Error())
	}
}

// Without a GPU, Device GPU is an error naming the reason and Auto quietly
// runs on the CPU. This is the test that runs on machines without one.
func TestGPUUnavailable(t *testing.T) {
	if cuda.Available() == nil {
		t.Skip("a GPU is present; this test covers machines without one")
	}
	g := mesh.Hex27Graph(6, 6, 6)
	_, err := Compute(g, Options{Device: GPU})
	if !errors.Is(err, ErrNoGPU) || !errors.Is(err, cuda.ErrUnavailable) {
		t.Fatalf("Device GPU without a driver: %v, want ErrNoGPU wrapping the reason", err)
	}
	t.Log(err)
	keys, _ := Keys(g, Priority{})
	res, err := Compute(g, Options{Device: Auto})
	if err != nil || res.Backend == "gpu" || firstDiff(res.In, greedy(g, keys, 1).In) >= 0 {
		t.Fatalf("Auto without a GPU: %v %v", res, err)
	}
	if _, err := UploadGraph(g, nil); !errors.Is(err, ErrNoGPU) {
		t.Errorf("UploadGraph without a driver: %v", err)
	}
}

// gpuGraphs are the shapes the GPU must agree with Greedy on: small ones
// from the model test plus mid-size meshes and random graphs.
func gpuGraphs(t *testing.T) map[string]*mesh.Graph {
	gs := modelGraphs(t)
	gs["hex27-24"] = mesh.Hex27Graph(24, 20, 22)
	rel, _ := mesh.Relabel(mesh.Hex27Graph(24, 20, 22), 5)
	gs["hex27-24-relabelled"] = rel
	gs["grid7-40"] = mesh.Grid7Graph(40, 40, 40)
	gs["random-100k"] = mesh.RandomGraph(100_000, 16, 9)
	gs["random-sparse"] = mesh.RandomGraph(50_000, 2.5, 10)
	gs["star-20k"] = starGraph(t, 20_000)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 4; i++ {
		n := 1 + rng.IntN(3000)
		gs[fmt.Sprintf("random-%d-%d", i, n)] = mesh.RandomGraph(n, 1+rng.Float64()*30, rng.Uint64())
	}
	return gs
}

func TestGPUMatchesGreedy(t *testing.T) {
	needGPU(t)
	for name, g := range gpuGraphs(t) {
		// User values: 7 of them go into the state bytes like the
		// classes, 1000 into a rank array of their own (smallRanks).
		for _, kind := range []PriorityKind{Hash, Boundary, Degree, User, User + 1} {
			pri, label := Priority{Kind: kind, Seed: 0x5eed}, kind.String()
			if kind > User {
				pri.Kind, label = User, "user-1000"
			}
			if pri.Kind == User {
				pri.Values = make([]float64, g.N())
				for v := range pri.Values {
					pri.Values[v] = float64(v % 7)
					if kind > User {
						pri.Values[v] = float64(uint32(v) * 2654435761 % 1000)
					}
				}
			}
			keys, err := Keys(g, pri)
			if err != nil {
				t.Fatal(err)
			}
			for dist := 1; dist <= 2; dist++ {
				want := greedy(g, keys, dist)
				got, err := Compute(g, Options{Distance: dist, Priority: pri, Device: GPU})
				if err != nil {
					t.Fatalf("%s %s dist %d: %v", name, label, dist, err)
				}
				if got.Backend != "gpu" {
					t.Fatalf("%s: backend %q", name, got.Backend)
				}
				if i := firstDiff(got.In, want.In); i >= 0 || got.Size != want.Size {
					t.Fatalf("%s %s dist %d: differs from Greedy at vertex %d (sizes %d, %d)", name, label, dist, i, got.Size, want.Size)
				}
			}
		}
	}
}

// Every lane count must give the same set.
func TestGPUGroupSizes(t *testing.T) {
	needGPU(t)
	all := gpuGraphs(t)
	for _, name := range []string{"hex27-24", "random-100k", "star-20k", "random-sparse"} {
		g := all[name]
		dg, err := UploadGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		for dist := 1; dist <= 2; dist++ {
			keys, _ := Keys(g, Priority{Seed: 3})
			want := greedy(g, keys, dist)
			for _, gs := range groupSizes {
				// Also with the persistent tail after 0 (none), 1 and 3
				// full sweeps.
				// MIS-2 with one lane per vertex with and without
				// runner-ups.
				singles := []bool{false}
				if gs == 1 && dist == 2 {
					singles = append(singles, true)
				}
				for _, tail := range []int{0, 1, 3} {
					for _, single := range singles {
						got, err := dg.compute(dist, devicePriority{seed: 3}, gpuTuning{group: gs, first: 1 + gs%5, batch: 1 + gs%3, tail: tail, scalar: tail == 1, single: single})
						if err != nil {
							t.Fatal(err)
						}
						if i := firstDiff(got.In, want.In); i >= 0 {
							t.Fatalf("%s dist %d group %d tail %d single %v: differs at vertex %d", name, dist, gs, tail, single, i)
						}
						t.Logf("%s dist %d group %d tail %d single %v: %d members, %d sweeps", name, dist, gs, tail, single, got.Size, got.Rounds)
					}
				}
			}
		}
		dg.Close()
	}
}

// A graph the caller already holds on the device is used in place.
func TestComputeDeviceWrapped(t *testing.T) {
	needGPU(t)
	g := mesh.Hex27Graph(17, 19, 13)
	dev, _ := cuda.GetDevice(0)
	ctx, err := dev.PrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	// The caller's own allocations, seen only as raw pointers.
	offs, _ := ctx.Alloc(8 * int64(len(g.Offsets)))
	adj, _ := ctx.Alloc(4 * int64(len(g.Adj)))
	defer offs.Free()
	defer adj.Free()
	if err := errors.Join(cuda.CopyToDevice(offs, 0, g.Offsets), cuda.CopyToDevice(adj, 0, g.Adj)); err != nil {
		t.Fatal(err)
	}
	wo, err := ctx.WrapDevicePtr(offs.Ptr(), offs.Size())
	if err != nil {
		t.Fatal(err)
	}
	wa, err := ctx.WrapDevicePtr(adj.Ptr(), adj.Size())
	if err != nil {
		t.Fatal(err)
	}
	dg, err := NewDeviceGraph(g.N(), wo, wa)
	if err != nil {
		t.Fatal(err)
	}
	defer dg.Close()
	if dg.N() != g.N() || dg.NumEdges() != g.NumEdges() {
		t.Fatalf("device graph %d/%d, want %d/%d", dg.N(), dg.NumEdges(), g.N(), g.NumEdges())
	}
	if err := dg.SetClasses(g.Class); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []PriorityKind{Hash, Boundary, Degree} {
		for dist := 1; dist <= 2; dist++ {
			opts := Options{Distance: dist, Priority: Priority{Kind: kind, Seed: 99}}
			got, err := ComputeDevice(dg, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := Compute(g, Options{Distance: dist, Priority: opts.Priority, Device: CPU, Serial: true})
			if i := firstDiff(got.In, want.In); i >= 0 {
				t.Fatalf("%v dist %d: differs at vertex %d", kind, dist, i)
			}
			if err := Verify(g, got.In, dist); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Closing the graph must not free the caller's memory.
	dg.Close()
	var first [1]int64
	if err := cuda.CopyToHost(first[:], offs, 8); err != nil || first[0] != g.Offsets[1] {
		t.Fatalf("caller's offsets after Close: %d, %v", first[0], err)
	}
}

func TestNewDeviceGraphRejectsBadGraphs(t *testing.T) {
	needGPU(t)
	dev, _ := cuda.GetDevice(0)
	ctx, err := dev.PrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	up := func(offsets []int64, adj []int32) (*cuda.Buffer, *cuda.Buffer) {
		o, _ := ctx.Alloc(8 * int64(len(offsets)))
		a, _ := ctx.Alloc(4 * int64(max(len(adj), 1)))
		cuda.CopyToDevice(o, 0, offsets)
		cuda.CopyToDevice(a, 0, adj)
		t.Cleanup(func() { o.Free(); a.Free() })
		return o, a
	}
	o, a := up([]int64{0, 1, 3, 4}, []int32{1, 0, 7, 1}) // vertex 1 names 7 of 3
	_, err = NewDeviceGraph(3, o, a)
	var ve *mesh.ValidationError
	if !errors.As(err, &ve) || ve.Row != 1 || !strings.Contains(err.Error(), "neighbour 7") {
		t.Errorf("out-of-range neighbour: %v", err)
	}
	o, a = up([]int64{0, 2, 1, 2}, []int32{1, 2}) // offsets decrease at row 1
	if _, err = NewDeviceGraph(3, o, a); !errors.As(err, &ve) || ve.Row != 1 {
		t.Errorf("decreasing offsets: %v", err)
	}
	if _, err = NewDeviceGraph(5, o, a); err == nil || !strings.Contains(err.Error(), "offsets buffer") {
		t.Errorf("short offsets buffer: %v", err)
	}
	if _, err := ctx.WrapDevicePtr(0xbad000, 64); err == nil {
		t.Error("wrapping a bad device pointer succeeded")
	} else {
		t.Log(err)
	}
}

// A graph larger than free memory is an error that says how much it
// needed, and Auto falls back to the CPU.
func TestGPUTooLarge(t *testing.T) {
	needGPU(t)
	g := mesh.Hex27Graph(10, 10, 10)
	testFreeMemory = 1 << 10
	defer func() { testFreeMemory = 0 }()
	_, err := Compute(g, Options{Device: GPU})
	if !errors.Is(err, ErrNoGPU) || !errors.Is(err, cuda.ErrorOutOfMemory) || !strings.Contains(err.Error(), "needs") {
		t.Fatalf("too large: %v", err)
	}
	t.Log(err)
	keys, _ := Keys(g, Priority{})
	res, err := Compute(g, Options{Device: Auto})
	if err != nil || firstDiff(res.In, greedy(g, keys, 1).In) >= 0 {
		t.Fatalf("Auto fallback: %v", err)
	}
}

// After a sticky device error (here a trapped kernel in the engine's
// context) GPU runs fail with the cause and Auto uses the CPU. Drivers
// keep the process's GPU state broken after such an error, so the test
// runs only when asked, alone: MISGRID_TEST_STICKY=1 -test.run Sticky.
func TestGPUStickyErrorFallback(t *testing.T) {
	if os.Getenv("MISGRID_TEST_STICKY") != "1" {
		t.Skip("poisons the process's GPU state; set MISGRID_TEST_STICKY=1 and run it alone")
	}
	needGPU(t)
	e, err := defaultEngine()
	if err != nil {
		t.Fatal(err)
	}
	trap, err := e.mod.Function("test_trap")
	if err != nil {
		t.Fatal(err)
	}
	err = trap.Launch(cuda.Launch{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}, Stream: e.stream}, uintptr(0))
	if err == nil {
		err = e.stream.Synchronize()
	}
	t.Logf("trap: %v", err)
	e.fail(err)
	g := mesh.Hex27Graph(52, 52, 52) // above gpuMinVertices, so Auto tries the GPU
	_, err = Compute(g, Options{Device: GPU})
	if !errors.Is(err, ErrNoGPU) {
		t.Fatalf("GPU after a sticky error: %v", err)
	}
	t.Log(err)
	keys, _ := Keys(g, Priority{})
	for i := 0; i < 2; i++ {
		res, err := Compute(g, Options{Device: Auto})
		if err != nil || res.Backend == "gpu" || firstDiff(res.In, greedy(g, keys, 1).In) >= 0 {
			t.Fatalf("Auto after a sticky error: %v", err)
		}
	}
}

// TestGPUMidSize is the run scripts/gpu-check.sh puts under
// compute-sanitizer (memcheck and racecheck): mid-size meshes in natural
// and random order and a random graph, every lane count, both distances.
func TestGPUMidSize(t *testing.T) {
	needGPU(t)
	rel, _ := mesh.Relabel(mesh.Hex27Graph(32, 32, 32), 2)
	for name, g := range map[string]*mesh.Graph{
		"hex27-40":            mesh.Hex27Graph(40, 40, 40),
		"hex27-40-relabelled": rel,
		"random-200k":         mesh.RandomGraph(200_000, 16, 5),
	} {
		dg, err := UploadGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := Keys(g, Priority{})
		for dist := 1; dist <= 2; dist++ {
			want := parallelMasked(g, keys, dist, 0, nil)
			// Every lane count, and the defaults (bands, read modes,
			// two-hop pushes), which compute-sanitizer runs check too.
			tunings := []gpuTuning{defaultTuning(dg, dist)}
			for _, gs := range groupSizes {
				tunings = append(tunings, gpuTuning{group: gs, first: 3, batch: 2, tail: gs % 3})
			}
			for _, tu := range tunings {
				got, err := dg.compute(dist, devicePriority{}, tu)
				if err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got.In, want.In); i >= 0 {
					t.Fatalf("%s dist %d %+v: differs at vertex %d", name, dist, tu, i)
				}
			}
		}
		// Class keys by default: on the meshes MIS-2 runs in two stages
		// (a list of the boundary, then the interior by hash kernels).
		dkeys, pri := testKeys(t, g, dg, Priority{Kind: Degree})
		got, err := dg.compute(2, pri, defaultTuning(dg, 2))
		if err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(got.In, greedy(g, dkeys, 2).In); i >= 0 {
			t.Fatalf("%s Degree dist 2: differs at vertex %d", name, i)
		}
		dg.Close()
	}
}

// The launch choices that do not change the result (bands and their
// shape, read modes, the first MIS-2 kernel, the tail) give the greedy
// set on every graph and priority.
func TestGPUTuningVariants(t *testing.T) {
	needGPU(t)
	variants := []gpuTuning{
		{bands: 4, bandShape: 2, kf: 3, tail: 1},
		{bands: 3, kf: 6, tail: 0},
		{bands: 8, kf: 7},
		{bands: 5, bandShape: 0.5, kf: 1, tail: 2},
		{bands: 4, kf: 2, tail: 3},
		{noFirst: true, bands: 4},
		{single: true, tail: 10},
		{kf: 16, tail: 10},
		{kf: 16, tail: 0, bands: 4},
		{kf: 16, tail: 8, noCap: true},
		{kf: 48, tail: 8},
		{kf: 48, tail: 0},
		// MIS-2 by key buckets (MIS-1 ignores them).
		{buckets: 1},
		{buckets: 4, kf: 16},
		{buckets: 16, kf: 48, flush: 1},
		{buckets: 8, bucketShape: 1, kf: 16},
		{buckets: 12, flush: 32, kf: 32, classBuckets: true},
		{buckets: 6, kf: 1, flush: 8},
		{buckets: 12, kf: 1, flush: 1},
		{buckets: 3, flush: 2, classBuckets: true},
		// Class keys in two stages (the hash kernels for class 0).
		{buckets: 12, flush: 1, classBuckets: true, split: 1},
		{buckets: 4, flush: 8, kf: 1, classBuckets: true, split: 2},
		{buckets: 1, flush: 32, kf: 48, classBuckets: true, split: 2},
		{buckets: 8, flush: 1, kf: 32, classBuckets: true, split: 2, farBuckets: 6},
		{buckets: 12, flush: 32, classBuckets: true, split: 2},
		// The balanced kernels.
		{buckets: 12, flush: 1, balanced: true},
		{buckets: 6, kf: 1, flush: 8, balanced: true},
		{buckets: 3, flush: 2, balanced: true},
		{buckets: 12, flush: 1, classBuckets: true, split: 2, balanced: true},
		{buckets: 4, flush: 8, kf: 1, classBuckets: true, split: 1, balanced: true},
		{buckets: 8, flush: 32, kf: 32, balanced: true},
	}
	for name, g := range gpuGraphs(t) {
		dg, err := UploadGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		kinds := []PriorityKind{Hash, Degree}
		if g.Class != nil {
			kinds = append(kinds, Boundary)
		}
		for _, kind := range kinds {
			keys, pri := testKeys(t, g, dg, Priority{Kind: kind, Seed: 11})
			for dist := 1; dist <= 2; dist++ {
				want := greedy(g, keys, dist)
				for i, v := range variants {
					v.group, v.first, v.batch, v.perBand = 1, 3, 2, 1
					got, err := dg.compute(dist, pri, v)
					if err != nil {
						t.Fatal(err)
					}
					if j := firstDiff(got.In, want.In); j >= 0 {
						t.Fatalf("%s %v dist %d variant %d %+v: differs at vertex %d", name, kind, dist, i, v, j)
					}
				}
			}
		}
		dg.Close()
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
		cls := smallRanks(c.prim)
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

// testKeys returns p's keys on g and its form on the device.
func testKeys(t *testing.T, g *mesh.Graph, dg *DeviceGraph, p Priority) ([]uint64, devicePriority) {
	t.Helper()
	keys, err := Keys(g, p)
	if err != nil {
		t.Fatal(err)
	}
	pri, err := dg.priority(p, "test")
	if err != nil {
		t.Fatal(err)
	}
	return keys, pri
}
