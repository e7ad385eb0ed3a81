package mis

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
)

// DeviceGraph is a graph in GPU memory, in the CSR form of mesh.Graph:
// N()+1 int64 row offsets and int32 neighbour ids. It comes either from
// UploadGraph (a copy of a host graph) or from NewDeviceGraph (memory the
// caller already holds on the device, used in place). ComputeDevice runs
// the MIS on it; the working memory of a run stays allocated with the
// graph for the next run, until Close.
type DeviceGraph struct {
	eng      *engine
	n        int
	m        int64
	off, adj *cuda.Buffer
	owned    bool         // off and adj were allocated here
	vec      bool         // adj is 16-byte aligned and readable to a 16-byte boundary past its end
	locality int8         // 0 not measured yet, 1 local rows, 2 scattered rows (see scattered)
	class    *cuda.Buffer // boundary classes, one byte per vertex, or nil
	maxDeg   int64        // the largest degree (from the host graph or csr_check)

	mu   sync.Mutex
	ws   workspace
	done bool
}

// workspace is the per-graph working memory of the sweeps.
type workspace struct {
	st    *cuda.Buffer // state byte per vertex, padded to whole tiles
	ball  *cuda.Buffer // MIS-2 champion, then runner-up, per vertex, padded likewise (MIS-1: the tail's list)
	list  *cuda.Buffer // MIS-2 tail's list of vertices in play
	prim  *cuda.Buffer // uint32 primary ranks (Degree, User)
	cls   *cuda.Buffer // class bytes of the last run with a small primary (mis_init puts them into the states)
	rank  *cuda.Buffer // primary bitmap and rank table of rankPrimaries
	count *cuda.Buffer // live count per sweep, a ring of nCount slots
	small *cuda.Buffer // scratch words for helper kernels
	host  *cuda.HostBuffer
	evs   [2]*cuda.Event // sweep-count checks
	floor *cuda.Buffer   // output of the floor kernel (TimeDevice)
}

const (
	tile   = 128  // vertices per warp tile, as in mis.cu
	nCount = 1024 // sweep counters kept on the device
)

func padded(n int) int64 { return (int64(n) + tile - 1) / tile * tile }

// UploadGraph copies g to the GPU of ctx, or of device 0's primary
// context when ctx is nil. Boundary classes of g, when present, go along.
// When the device lacks the memory, the error says how much was needed.
func UploadGraph(g *mesh.Graph, ctx *cuda.Context) (*DeviceGraph, error) {
	if g == nil {
		return nil, errors.New("mis: UploadGraph: nil graph")
	}
	eng, err := engineFor(ctx)
	if err != nil {
		return nil, err
	}
	var cls []uint8
	if g.Class != nil {
		if len(g.Class) != g.N() {
			return nil, fmt.Errorf("mis: UploadGraph: %d classes for %d vertices", len(g.Class), g.N())
		}
		cls = make([]uint8, len(g.Class))
		for v, c := range g.Class {
			cls[v] = uint8(c)
		}
	}
	return uploadGraph(eng, g, cls)
}

// testFreeMemory, when set by a test, replaces the free device memory
// that uploads check against.
var testFreeMemory int64

// deviceBytes is the device memory a run on a graph of n vertices and m
// directed edges needs: graph, state, MIS-2 balls, ranks and counters.
func deviceBytes(n int, m int64) (graph, work int64) {
	graph = 8*int64(n+1) + 4*m
	work = padded(n)*(1+8+4) + 4*int64(n) + 4*(nCount+2) + 4096
	return graph, work
}

func uploadGraph(eng *engine, g *mesh.Graph, cls []uint8) (*DeviceGraph, error) {
	n, m := g.N(), g.NumEdges()
	graph, work := deviceBytes(n, m)
	free, _, err := eng.ctx.MemInfo()
	if err != nil {
		return nil, eng.fail(err)
	}
	if testFreeMemory > 0 {
		free = testFreeMemory
	}
	if graph+work > free {
		return nil, fmt.Errorf("%w: a graph of %d vertices and %d edges needs %s of GPU memory (%s graph, %s working), but only %s is free: %w",
			ErrNoGPU, n, m, cuda.FormatBytes(graph+work), cuda.FormatBytes(graph), cuda.FormatBytes(work), cuda.FormatBytes(free), cuda.ErrorOutOfMemory)
	}
	dg := &DeviceGraph{eng: eng, n: n, m: m, owned: true, maxDeg: int64(g.MaxDegree())}
	if err := dg.upload(g, cls); err != nil {
		dg.Close()
		return nil, fmt.Errorf("%w: uploading the graph: %w", ErrNoGPU, eng.fail(err))
	}
	return dg, nil
}

func (dg *DeviceGraph) upload(g *mesh.Graph, cls []uint8) error {
	ctx := dg.eng.ctx
	var err error
	offs := g.Offsets
	if dg.n == 0 {
		offs = []int64{0}
	}
	if dg.off, err = ctx.Alloc(8 * int64(len(offs))); err != nil {
		return err
	}
	if err = cuda.CopyToDevice(dg.off, 0, offs); err != nil {
		return err
	}
	// Padded to 16 bytes so that the 16-byte row loads may read the
	// whole last chunk.
	if dg.adj, err = ctx.Alloc((4*max(dg.m, 1) + 15) / 16 * 16); err != nil {
		return err
	}
	if err = cuda.CopyToDevice(dg.adj, 0, g.Adj); err != nil {
		return err
	}
	dg.vec = dg.adj.Ptr()%16 == 0
	if cls != nil {
		if dg.class, err = ctx.Alloc(int64(len(cls))); err != nil {
			return err
		}
		return cuda.CopyToDevice(dg.class, 0, cls)
	}
	return nil
}

// NewDeviceGraph uses a graph that is already in GPU memory: offsets
// holds n+1 int64 row offsets and adj the int32 neighbour ids, both in
// the context the buffers belong to (see cuda.Context.WrapDevicePtr for
// memory allocated outside this module). Nothing is copied; the buffers
// must stay valid until Close, which does not free them.
//
// The rows must be symmetric and free of duplicates, as for mesh.Graph;
// NewDeviceGraph checks on the device that every offset and neighbour id
// is in range (so that no kernel reads outside the buffers) and names the
// first bad row, but it cannot afford to check symmetry.
func NewDeviceGraph(n int, offsets, adj *cuda.Buffer) (*DeviceGraph, error) {
	if n < 0 || int64(n) > 1<<31-1 {
		return nil, fmt.Errorf("mis: NewDeviceGraph: vertex count %d out of range [0, 2³¹)", n)
	}
	if offsets == nil || adj == nil {
		return nil, errors.New("mis: NewDeviceGraph: nil buffer")
	}
	if offsets.Context() != adj.Context() {
		return nil, errors.New("mis: NewDeviceGraph: offsets and adjacency are in different contexts")
	}
	if offsets.Size() < 8*int64(n+1) {
		return nil, fmt.Errorf("mis: NewDeviceGraph: offsets buffer has %d bytes, %d vertices need %d", offsets.Size(), n, 8*int64(n+1))
	}
	eng, err := engineFor(offsets.Context())
	if err != nil {
		return nil, err
	}
	var last [1]int64
	if err := cuda.CopyToHost(last[:], offsets, 8*int64(n)); err != nil {
		return nil, fmt.Errorf("mis: NewDeviceGraph: reading offsets[%d]: %w", n, eng.fail(err))
	}
	m := last[0]
	if m < 0 || 4*m > adj.Size() {
		return nil, fmt.Errorf("mis: NewDeviceGraph: offsets[%d] = %d, but the adjacency buffer holds %d ids", n, m, adj.Size()/4)
	}
	if adj.Ptr()%4 != 0 || offsets.Ptr()%8 != 0 {
		return nil, fmt.Errorf("mis: NewDeviceGraph: misaligned buffers (offsets at %#x, adjacency at %#x)", offsets.Ptr(), adj.Ptr())
	}
	dg := &DeviceGraph{eng: eng, n: n, m: m, off: offsets, adj: adj}
	dg.vec = adj.Ptr()%16 == 0 && adj.Size() >= (4*m+15)/16*16
	if err := dg.check(); err != nil {
		return nil, err
	}
	return dg, nil
}

// check runs csr_check and turns a failure into an error naming the row.
func (dg *DeviceGraph) check() error {
	if dg.n == 0 {
		return nil
	}
	e := dg.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	small, err := dg.scratch()
	if err != nil {
		return err
	}
	bad := []int32{int32(dg.n), 0}
	if err := cuda.CopyToDevice(small, 0, bad); err != nil {
		return e.fail(err)
	}
	if err := e.launch("csr_check", e.grid("csr_check", int64(dg.n), blockSize), dg.off, dg.adj, int32(dg.n), dg.m, small); err != nil {
		return e.fail(err)
	}
	if err := e.stream.Synchronize(); err != nil {
		return e.fail(err)
	}
	if err := cuda.CopyToHost(bad, small, 0); err != nil {
		return e.fail(err)
	}
	dg.maxDeg = int64(bad[1])
	if v := bad[0]; v < int32(dg.n) {
		var o [2]int64
		if err := cuda.CopyToHost(o[:], dg.off, 8*int64(v)); err != nil {
			return e.fail(err)
		}
		msg := fmt.Sprintf("offsets %d..%d", o[0], o[1])
		if o[0] >= 0 && o[1] >= o[0] && o[1] <= dg.m && o[1]-o[0] <= 1<<20 {
			row := make([]int32, o[1]-o[0])
			if err := cuda.CopyToHost(row, dg.adj, 4*o[0]); err == nil {
				for i, u := range row {
					if u < 0 || int(u) >= dg.n || u == v {
						msg = fmt.Sprintf("neighbour %d at adjacency index %d is out of range [0,%d) or the vertex itself", u, o[0]+int64(i), dg.n)
						break
					}
				}
			}
		}
		return &mesh.ValidationError{Row: int(v), Index: -1, Msg: "device graph: " + msg}
	}
	return nil
}

// scattered says whether the graph's rows name vertices far from
// themselves: fewer than a tenth of the entries of a sample of rows lie
// within 1024 ids. Measured once, on the device; the caller holds the
// engine's lock.
func (dg *DeviceGraph) scattered() (bool, error) {
	if dg.locality == 0 && dg.n > 0 {
		e := dg.eng
		small, err := dg.scratch()
		if err != nil {
			return false, err
		}
		step := int32(max(1, dg.n/(1<<16)))
		var c [2]uint32
		if err := e.countWords(small, c[:], "near_sample", int64(dg.n)/int64(step)+1, dg.off, dg.adj, int32(dg.n), step); err != nil {
			return false, err
		}
		dg.locality = 1
		if c[1] < c[0]/10 {
			dg.locality = 2
		}
	}
	return dg.locality == 2, nil
}

// N returns the number of vertices.
func (dg *DeviceGraph) N() int { return dg.n }

// NumEdges returns the number of directed edges.
func (dg *DeviceGraph) NumEdges() int64 { return dg.m }

// SetClasses uploads boundary classes for the Boundary priority (a graph
// from UploadGraph takes them from mesh.Graph.Class).
func (dg *DeviceGraph) SetClasses(cls []mesh.Class) error {
	if len(cls) != dg.n {
		return fmt.Errorf("mis: SetClasses: %d classes for %d vertices", len(cls), dg.n)
	}
	b := make([]uint8, len(cls))
	for v, c := range cls {
		if c >= mesh.NumClasses {
			return fmt.Errorf("mis: SetClasses: vertex %d has class %d, out of range", v, c)
		}
		b[v] = uint8(c)
	}
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if dg.class == nil {
		buf, err := dg.eng.ctx.Alloc(int64(max(dg.n, 1)))
		if err != nil {
			return err
		}
		dg.class = buf
	}
	return cuda.CopyToDevice(dg.class, 0, b)
}

// Close frees the device memory this graph allocated (not the caller's
// buffers of NewDeviceGraph). It is idempotent.
func (dg *DeviceGraph) Close() error {
	if dg == nil {
		return nil
	}
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if dg.done {
		return nil
	}
	dg.done = true
	var errs []error
	for _, b := range []*cuda.Buffer{dg.ws.st, dg.ws.ball, dg.ws.list, dg.ws.prim, dg.ws.cls, dg.ws.rank, dg.ws.count, dg.ws.small, dg.ws.floor, dg.class} {
		errs = append(errs, b.Free())
	}
	errs = append(errs, dg.ws.host.Free(), dg.ws.evs[0].Close(), dg.ws.evs[1].Close())
	if dg.owned {
		errs = append(errs, dg.off.Free(), dg.adj.Free())
	}
	return errors.Join(errs...)
}

// scratch returns a small device buffer for helper kernels.
func (dg *DeviceGraph) scratch() (*cuda.Buffer, error) {
	if dg.ws.small == nil {
		b, err := dg.eng.ctx.Alloc(256)
		if err != nil {
			return nil, err
		}
		dg.ws.small = b
	}
	return dg.ws.small, nil
}

// devicePriority is a Priority resolved for the device: class bytes
// (Boundary) or 32-bit ranks (Degree, User) from the host, or neither.
type devicePriority struct {
	seed      uint64
	class     []uint8  // host classes to upload
	prim      []uint32 // host ranks to upload
	useClass  bool     // use the graph's class buffer
	devDegree bool     // compute Degree ranks on the device
}

// ComputeDevice runs the MIS on a graph in GPU memory and returns the
// same set as Compute on the host graph with the same options (Device
// and Workers are ignored). Boundary priorities need classes from
// UploadGraph or SetClasses; Degree ranks are computed on the device;
// User values are ranked on the host and copied.
func ComputeDevice(dg *DeviceGraph, opts Options) (*Result, error) {
	if dg == nil {
		return nil, errors.New("mis: ComputeDevice: nil graph")
	}
	dist, err := opts.distance()
	if err != nil {
		return nil, err
	}
	pri, err := dg.priority(opts.Priority, "ComputeDevice")
	if err != nil {
		return nil, err
	}
	return dg.compute(dist, pri, defaultTuning(dg, dist))
}

// priority turns p into what the kernels read: nothing for Hash (the hash
// is computed on the fly), the uploaded classes for Boundary, ranks
// computed on the device for Degree, host-ranked values for User.
func (dg *DeviceGraph) priority(p Priority, who string) (devicePriority, error) {
	pri := devicePriority{seed: p.Seed}
	switch p.Kind {
	case Hash:
	case Boundary:
		if dg.class == nil {
			return pri, fmt.Errorf("mis: %s: Boundary priority needs the graph's classes (mesh.Graph.Class before UploadGraph, or SetClasses)", who)
		}
		pri.useClass = true
	case Degree:
		pri.devDegree = true
	case User:
		prim, err := userRanks(p.Values, dg.n)
		if err != nil {
			return pri, err
		}
		pri.prim = prim
	default:
		return pri, fmt.Errorf("mis: %s: unknown priority kind %d", who, int(p.Kind))
	}
	return pri, nil
}

// userRanks ranks User values exactly as Primaries does.
func userRanks(vals []float64, n int) ([]uint32, error) {
	g := &mesh.Graph{Offsets: make([]int64, n+1)}
	if n == 0 {
		g.Offsets = nil
	}
	prim, err := Primaries(g, Priority{Kind: User, Values: vals})
	if err != nil {
		return nil, err
	}
	return slices.Clip(prim), nil
}
