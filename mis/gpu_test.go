package mis

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/internal/testgraphs"
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
	if err != nil || res.Backend == "gpu" || testgraphs.FirstDiff(res.In, greedy(g, keys, 1).In) >= 0 {
		t.Fatalf("Auto without a GPU: %v %v", res, err)
	}
	if _, err := UploadGraph(g, nil); !errors.Is(err, ErrNoGPU) {
		t.Errorf("UploadGraph without a driver: %v", err)
	}
}

// ReleaseGPUMemory gives back the kept memory and the staging buffers:
// calls before and after it give the greedy set (from a host graph, so
// through the Stager), and without a GPU it does nothing.
func TestReleaseGPUMemory(t *testing.T) {
	if err := ReleaseGPUMemory(); err != nil {
		t.Fatal(err)
	}
	if cuda.Available() != nil {
		return
	}
	g := mesh.Hex27Graph(40, 40, 40)
	keys, _ := Keys(g, Priority{})
	want := greedy(g, keys, 2).In
	for i := range 3 {
		res, err := Compute(g, Options{Device: GPU, Distance: 2})
		if err != nil {
			t.Fatal(err)
		}
		if d := testgraphs.FirstDiff(res.In, want); d >= 0 {
			t.Fatalf("call %d: differs from the greedy set at vertex %d", i, d)
		}
		if err := ReleaseGPUMemory(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGPUMatchesGreedy(t *testing.T) {
	needGPU(t)
	for name, g := range testgraphs.GPU() {
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
				if i := testgraphs.FirstDiff(got.In, want.In); i >= 0 || got.Size != want.Size {
					t.Fatalf("%s %s dist %d: differs from Greedy at vertex %d (sizes %d, %d)", name, label, dist, i, got.Size, want.Size)
				}
			}
		}
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
			if i := testgraphs.FirstDiff(got.In, want.In); i >= 0 {
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
	misgpu.TestFreeMemory = 1 << 10
	defer func() { misgpu.TestFreeMemory = 0 }()
	_, err := Compute(g, Options{Device: GPU})
	if !errors.Is(err, ErrNoGPU) || !errors.Is(err, cuda.ErrorOutOfMemory) || !strings.Contains(err.Error(), "needs") {
		t.Fatalf("too large: %v", err)
	}
	t.Log(err)
	keys, _ := Keys(g, Priority{})
	res, err := Compute(g, Options{Device: Auto})
	if err != nil || testgraphs.FirstDiff(res.In, greedy(g, keys, 1).In) >= 0 {
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
	e, err := misgpu.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile("../cuda/testdata/test.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := e.Ctx.LoadModule(img)
	if err != nil {
		t.Fatal(err)
	}
	trap, err := mod.Function("test_trap")
	if err != nil {
		t.Fatal(err)
	}
	err = trap.Launch(cuda.Launch{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}, Stream: e.Stream}, uintptr(0))
	if err == nil {
		err = e.Stream.Synchronize()
	}
	t.Logf("trap: %v", err)
	e.Fail(err)
	g := mesh.Hex27Graph(52, 52, 52) // above AutoMinVertices, so Auto tries the GPU
	_, err = Compute(g, Options{Device: GPU})
	if !errors.Is(err, ErrNoGPU) {
		t.Fatalf("GPU after a sticky error: %v", err)
	}
	t.Log(err)
	keys, _ := Keys(g, Priority{})
	for i := 0; i < 2; i++ {
		res, err := Compute(g, Options{Device: Auto})
		if err != nil || res.Backend == "gpu" || testgraphs.FirstDiff(res.In, greedy(g, keys, 1).In) >= 0 {
			t.Fatalf("Auto after a sticky error: %v", err)
		}
	}
}

// Compute honours the device index: an index past the last device is an
// error naming it with Device GPU, and Auto falls back to the CPU.
func TestGPUDeviceIndex(t *testing.T) {
	needGPU(t)
	n, err := cuda.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	g := mesh.Hex27Graph(10, 10, 10)
	keys, _ := Keys(g, Priority{})
	want := greedy(g, keys, 1).In
	last := GPU.On(n - 1)
	if res, err := Compute(g, Options{Device: last}); err != nil || testgraphs.FirstDiff(res.In, want) >= 0 || res.Backend != "gpu" {
		t.Fatalf("%v: %v", last, err)
	}
	_, err = Compute(g, Options{Device: GPU.On(n)})
	if !errors.Is(err, ErrNoGPU) {
		t.Fatalf("%v of %d devices: %v, want ErrNoGPU", GPU.On(n), n, err)
	}
	t.Log(err)
	if res, err := Compute(mesh.Hex27Graph(52, 52, 52), Options{Device: Auto.On(n)}); err != nil || res.Backend == "gpu" {
		t.Fatalf("%v: %v", Auto.On(n), err)
	}
}
