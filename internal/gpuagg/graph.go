package gpuagg

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
)

// Graph is a graph in device memory in the CSR form of mesh.Graph: N+1
// int64 offsets and M int32 neighbour ids (rows sorted, symmetric, no
// duplicates or self loops), with optional per-vertex data: one class
// byte, one Dirichlet byte (0 or 1), Dim float64 coordinates.
type Graph struct {
	N         int
	M         int64
	MaxDegree int
	Offsets   *cuda.Buffer
	Adj       *cuda.Buffer // padded to a multiple of 16 bytes when allocated here
	Class     *cuda.Buffer // or nil
	Dirichlet *cuda.Buffer // or nil
	Dim       int
	Coords    *cuda.Buffer // or nil

	owned bool
}

// Free releases the buffers this package allocated (none of a Graph the
// caller assembled from its own buffers); it is idempotent.
func (g *Graph) Free() error {
	if g == nil || !g.owned {
		return nil
	}
	return errors.Join(g.Offsets.Free(), g.Adj.Free(), g.Class.Free(), g.Dirichlet.Free(), g.Coords.Free())
}

// allocGraph allocates the buffers of a graph of n vertices and m edges
// with the per-vertex data that like has.
func (d *Device) allocGraph(n int, m int64, class, dirichlet bool, dim int) (*Graph, error) {
	g := &Graph{N: n, M: m, Dim: dim, owned: true}
	var err error
	alloc := func(b **cuda.Buffer, bytes int64) {
		if err == nil {
			*b, err = d.ctx.Alloc(bytes)
		}
	}
	alloc(&g.Offsets, 8*int64(n+1))
	alloc(&g.Adj, (4*m+15)/16*16)
	if class {
		alloc(&g.Class, int64(n))
	}
	if dirichlet {
		alloc(&g.Dirichlet, int64(n))
	}
	if dim > 0 {
		alloc(&g.Coords, 8*int64(dim)*int64(n))
	}
	if err != nil {
		g.Free()
		return nil, fmt.Errorf("gpuagg: a graph of %d vertices and %d edges: %w", n, m, err)
	}
	return g, nil
}

// Upload copies g to the device through st (pinned chunks, transfers
// queued on the Device's stream, for which st must have been made), or
// with plain pageable copies when st is nil. The graph is complete in the
// stream's order.
func (d *Device) Upload(g *mesh.Graph, st *cuda.Stager) (*Graph, error) {
	if err := checkHostGraph(g); err != nil {
		return nil, err
	}
	if st != nil && st.Stream() != d.stream {
		return nil, errors.New("gpuagg: Upload: the stager runs on another stream than the Device's")
	}
	n, m := g.N(), g.NumEdges()
	dg, err := d.allocGraph(n, m, g.Class != nil, g.Dirichlet != nil, g.Dim*btoi(g.Coords != nil))
	if err != nil {
		return nil, err
	}
	dg.MaxDegree = g.MaxDegree()
	offs := g.Offsets
	if n == 0 {
		offs = []int64{0}
	}
	var dir []uint8
	if g.Dirichlet != nil {
		dir = unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(g.Dirichlet))), n)
	}
	err = errors.Join(
		put(d, st, dg.Offsets, offs),
		put(d, st, dg.Adj, g.Adj),
		put(d, st, dg.Class, g.Class),
		put(d, st, dg.Dirichlet, dir),
		put(d, st, dg.Coords, g.Coords),
	)
	if err == nil {
		err = d.Check(dg)
	}
	if err != nil {
		dg.Free()
		return nil, fmt.Errorf("gpuagg: uploading a graph of %d vertices: %w", n, err)
	}
	return dg, nil
}

// Wrap uses a graph that is already in device memory, in place: n+1
// int64 offsets and the int32 neighbour ids, in the Device's context and
// complete in its stream's order. Nothing is copied and Free leaves the
// buffers alone. Per-vertex data may be set on the result (Class,
// Dirichlet, Dim and Coords) before use. Wrap runs Check.
func (d *Device) Wrap(n int, offsets, adj *cuda.Buffer) (*Graph, error) {
	switch {
	case n < 0 || int64(n) > 1<<31-1:
		return nil, fmt.Errorf("gpuagg: Wrap: vertex count %d out of range [0, 2³¹)", n)
	case offsets == nil || adj == nil:
		return nil, errors.New("gpuagg: Wrap: nil buffer")
	case offsets.Context() != d.ctx || adj.Context() != d.ctx:
		return nil, errors.New("gpuagg: Wrap: the buffers belong to another context than the Device's")
	case offsets.Size() < 8*int64(n+1):
		return nil, fmt.Errorf("gpuagg: Wrap: offsets buffer has %d bytes, %d vertices need %d", offsets.Size(), n, 8*int64(n+1))
	case offsets.Ptr()%8 != 0 || adj.Ptr()%4 != 0:
		return nil, fmt.Errorf("gpuagg: Wrap: misaligned buffers (offsets at %#x, adjacency at %#x)", offsets.Ptr(), adj.Ptr())
	}
	if err := d.stream.Synchronize(); err != nil {
		return nil, err
	}
	var last [1]int64
	if err := cuda.CopyToHost(last[:], offsets, 8*int64(n)); err != nil {
		return nil, err
	}
	if last[0] < 0 || 4*last[0] > adj.Size() {
		return nil, fmt.Errorf("gpuagg: Wrap: offsets[%d] = %d, but the adjacency buffer holds %d ids", n, last[0], adj.Size()/4)
	}
	g := &Graph{N: n, M: last[0], Offsets: offsets, Adj: adj}
	if err := d.Check(g); err != nil {
		return nil, err
	}
	return g, nil
}

// Check verifies on the device that g's offsets and neighbour ids stay
// inside its buffers (what a Graph assembled from a caller's buffers must
// satisfy before Coarsen reads it; rows must also be sorted, symmetric
// and free of duplicates, which Check cannot afford to verify) and sets
// g.MaxDegree. A bad row is a *mesh.ValidationError naming it.
func (d *Device) Check(g *Graph) error {
	switch {
	case g == nil || g.Offsets == nil || g.Adj == nil:
		return errors.New("gpuagg: Check: nil graph or buffer")
	case g.N < 0 || g.M < 0 || g.Offsets.Size() < 8*int64(g.N+1) || g.Adj.Size() < 4*g.M:
		return fmt.Errorf("gpuagg: Check: %d vertices and %d edges do not fit buffers of %d and %d bytes", g.N, g.M, g.Offsets.Size(), g.Adj.Size())
	case g.N == 0:
		return nil
	}
	bad := cuda.HostSlice[uint64](d.host)[:2]
	bad[0], bad[1] = ^uint64(0), 0
	if err := errors.Join(
		d.checkWords.CopyFromHostAsync(0, d.host, 0, 16, d.stream),
		d.launch("csr_bounds", d.grid(int64(g.N)), g.Offsets, g.Adj, int64(g.N), g.M, d.checkWords),
		d.checkWords.CopyToHostAsync(d.host, 0, 0, 16, d.stream),
		d.stream.Synchronize(),
	); err != nil {
		return err
	}
	if v := bad[0]; v != ^uint64(0) {
		return &mesh.ValidationError{Row: int(v), Index: -1, Msg: "device graph: an offset or a neighbour id is out of range, or a self loop"}
	}
	g.MaxDegree = int(bad[1])
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func put[T cuda.Word](d *Device, st *cuda.Stager, dst *cuda.Buffer, src []T) error {
	if dst == nil || len(src) == 0 {
		return nil
	}
	if st != nil {
		return cuda.StageToDevice(st, dst, 0, src)
	}
	return cuda.CopyToDevice(dst, 0, src)
}

// checkHostGraph checks the sizes a device graph relies on: the rest of
// mesh.Graph's invariants are the caller's (Validate).
func checkHostGraph(g *mesh.Graph) error {
	if g == nil {
		return errors.New("gpuagg: nil graph")
	}
	n := g.N()
	switch {
	case n > 1<<31-1:
		return fmt.Errorf("gpuagg: %d vertices exceed the int32 id range", n)
	case n > 0 && int64(len(g.Adj)) != g.Offsets[n]:
		return fmt.Errorf("gpuagg: offsets end at %d but the adjacency holds %d ids", g.Offsets[n], len(g.Adj))
	case g.Class != nil && len(g.Class) != n:
		return fmt.Errorf("gpuagg: %d classes for %d vertices", len(g.Class), n)
	case g.Dirichlet != nil && len(g.Dirichlet) != n:
		return fmt.Errorf("gpuagg: %d Dirichlet flags for %d vertices", len(g.Dirichlet), n)
	case g.Coords != nil && (g.Dim < 1 || g.Dim > 3 || len(g.Coords) != g.Dim*n):
		return fmt.Errorf("gpuagg: %d coordinates for %d vertices of dimension %d", len(g.Coords), n, g.Dim)
	}
	return nil
}

// Download copies a device graph back to the host, after the work queued
// on the Device's stream, through the context's Stager (at the bus's
// speed where a copy into pageable memory reaches a fraction of it).
func (d *Device) Download(g *Graph) (*mesh.Graph, error) {
	h := &mesh.Graph{Offsets: make([]int64, g.N+1), Adj: make([]int32, g.M)}
	var dirichlet []uint8
	err := d.l.Stage(d.stream, func(st *cuda.Stager) error {
		err := errors.Join(get(st, h.Offsets, g.Offsets), get(st, h.Adj, g.Adj))
		if g.Class != nil {
			h.Class = make([]mesh.Class, g.N)
			err = errors.Join(err, get(st, h.Class, g.Class))
		}
		if g.Dirichlet != nil {
			dirichlet = make([]uint8, g.N)
			err = errors.Join(err, get(st, dirichlet, g.Dirichlet))
		}
		if g.Coords != nil {
			h.Dim, h.Coords = g.Dim, make([]float64, g.Dim*g.N)
			err = errors.Join(err, get(st, h.Coords, g.Coords))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gpuagg: downloading a graph of %d vertices: %w", g.N, err)
	}
	if dirichlet != nil {
		h.Dirichlet = make([]bool, g.N)
		for v, x := range dirichlet {
			h.Dirichlet[v] = x != 0
		}
	}
	return h, nil
}

func get[T cuda.Word](st *cuda.Stager, dst []T, src *cuda.Buffer) error {
	if len(dst) == 0 {
		return nil
	}
	return cuda.StageToHost(st, dst, src, 0)
}
