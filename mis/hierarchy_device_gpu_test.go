package mis

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// deviceCopy puts g's CSR into buffers of device 0's engine context and
// wraps them, with no classes: a graph as a CUDA code hands it over.
func deviceCopy(t *testing.T, g *mesh.Graph) *DeviceGraph {
	t.Helper()
	l, err := misgpu.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	off, err := l.Ctx.Alloc(8 * int64(g.N()+1))
	if err != nil {
		t.Fatal(err)
	}
	adj, err := l.Ctx.Alloc(4 * max(g.NumEdges(), 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := cuda.CopyToDevice(off, 0, g.Offsets); err != nil {
		t.Fatal(err)
	}
	if err := cuda.CopyToDevice(adj, 0, g.Adj); err != nil {
		t.Fatal(err)
	}
	dg, err := NewDeviceGraph(g.N(), off, adj)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dg.Close(); off.Free(); adj.Free() })
	return dg
}

// HierarchyDevice builds the host's levels from a graph in device memory:
// with no classes, every level ranks by its classes by degree; with the
// graph's classes, they travel to the coarse levels.
func TestGPUHierarchyDevice(t *testing.T) {
	needGPU(t)
	hex := *mesh.Hex27Graph(14, 12, 13)
	hex.Coords, hex.Dim = nil, 0
	bare := mesh.RandomGraph(20000, 10, 3)
	for _, c := range []struct {
		name    string
		g       *mesh.Graph
		classes bool
		p       Priority
	}{
		{"hex27 classes", &hex, true, Priority{}},
		{"hex27 by degree", &mesh.Graph{Offsets: hex.Offsets, Adj: hex.Adj}, false, Priority{}},
		{"random by degree", bare, false, Priority{}},
		{"random degree priority", bare, false, Priority{Kind: Degree}},
	} {
		for _, dist := range []int{1, 2} {
			o := HierarchyOptions{Distance: dist, Priority: c.p, MinVertices: 8, Device: CPU}
			want, err := Hierarchy(c.g, o)
			if err != nil {
				t.Fatal(err)
			}
			dg := deviceCopy(t, c.g)
			if c.classes {
				if err := dg.SetClasses(c.g.Class); err != nil {
					t.Fatal(err)
				}
			}
			got, err := HierarchyDevice(dg, o)
			if err != nil {
				t.Fatalf("%s d%d: %v", c.name, dist, err)
			}
			if err := sameLevels(got, want); err != nil {
				t.Errorf("%s d%d: %v", c.name, dist, err)
			}
		}
	}
}

// ComputeDeviceTo leaves Compute's set on the device; the boundary
// priority of a graph without classes ranks by the classes by degree.
func TestGPUComputeDeviceTo(t *testing.T) {
	needGPU(t)
	g := mesh.RandomGraph(30000, 12, 8)
	dg := deviceCopy(t, g)
	for _, dist := range []int{1, 2} {
		want, err := Compute(g, Options{Distance: dist, Device: CPU})
		if err != nil {
			t.Fatal(err)
		}
		flags, err := dg.g.Loader().Ctx.Alloc(int64(g.N()))
		if err != nil {
			t.Fatal(err)
		}
		size, err := ComputeDeviceTo(dg, Options{Distance: dist}, flags)
		if err != nil {
			t.Fatal(err)
		}
		in := make([]bool, g.N())
		if err := cuda.CopyToHost(unsafe.Slice((*uint8)(unsafe.Pointer(&in[0])), len(in)), flags, 0); err != nil {
			t.Fatal(err)
		}
		flags.Free()
		if size != want.Size || !slices.Equal(in, want.In) {
			t.Fatalf("d%d: the device set (%d members) differs from Compute's (%d)", dist, size, want.Size)
		}
	}
}
