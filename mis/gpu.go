package mis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// The GPU backend of Compute, and graphs kept in GPU memory. The engine
// (internal/misgpu) knows nothing of this package: priorities reach it
// resolved, and it returns flags, a size and a round count.

// computeGPU copies g to the GPU of o.Device through pinned chunks,
// checks it there (the host reads none of its entries unless the device
// finds a bad one, when the host's ValidateStructure says what is wrong
// in its own words), derives the priority there (classes by degree,
// ranks by degree) and runs the MIS.
func computeGPU(g *mesh.Graph, dist int, o *Options) (*Result, error) {
	if err := cheapStructure(g); err != nil {
		return nil, err
	}
	l, err := misgpu.Open(o.Device.Index())
	if err != nil {
		return nil, fmt.Errorf("mis: device %v: %w", o.Device, err)
	}
	p := o.Priority
	pri := misgpu.Priority{Seed: p.Seed}
	switch p.Kind {
	case Hash:
	case Boundary:
		// g's classes go with the graph; without them, the classes by
		// degree that Primaries derives, computed on the device.
		pri.GraphClass, pri.DegreeClass = g.Class != nil, g.Class == nil
	case Degree:
		pri.Degree = true
	case User:
		if pri.Prim, err = userRanks(p.Values, g.N()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mis: unknown priority kind %d", int(p.Kind))
	}
	var cls []uint8
	if p.Kind == Boundary && g.Class != nil {
		cls = unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(g.Class))), len(g.Class))
	}
	dg, err := misgpu.UploadStaged(l, nil, g.Offsets, g.Adj, cls)
	if err != nil {
		if _, bad := errors.AsType[*mesh.ValidationError](err); bad {
			if herr := g.ValidateStructure(); herr != nil {
				return nil, fmt.Errorf("mis: %w", herr)
			}
			// What the host's check lets through (a self loop) but the
			// kernels cannot take: Auto runs it on the CPU.
			return nil, fmt.Errorf("mis: device %v cannot run this graph: %v", o.Device, err)
		}
		return nil, fmt.Errorf("mis: device %v: %w", o.Device, err)
	}
	defer dg.Close()
	r, err := dg.RunOrStall(dist, pri)
	if err == nil && r.Stalled {
		// A chained priority: the serial greedy finishes from the
		// members decided so far, the same set by the contract.
		keys, kerr := Keys(g, p)
		if kerr != nil {
			return nil, kerr
		}
		r.Size += finishGreedy(g, keys, dist, r.In)
	}
	return result(r, err)
}

// cheapStructure is the part of mesh.Graph.ValidateStructure that costs
// nothing (sizes and the offsets' ends); the device checks the rest. On
// a failure the host's check gives its error.
func cheapStructure(g *mesh.Graph) error {
	n := g.N()
	ok := n <= math.MaxInt32 && (n == 0 && len(g.Adj) == 0 || n > 0 && g.Offsets[0] == 0 && g.Offsets[n] == int64(len(g.Adj))) &&
		(g.Coords == nil || g.Dim >= 1 && g.Dim <= 3 && len(g.Coords) == g.Dim*n) &&
		(g.Class == nil || len(g.Class) == n) && (g.Dirichlet == nil || len(g.Dirichlet) == n)
	if ok {
		return nil
	}
	if err := g.ValidateStructure(); err != nil {
		return fmt.Errorf("mis: %w", err)
	}
	return nil
}

// finishGreedy completes in, the members of a valid prefix of the greedy
// order (every one in the greedy set, no undecided vertex within dist of
// one), into the greedy set of keys, and returns how many it added.
func finishGreedy(g *mesh.Graph, keys []uint64, dist int, in []bool) int {
	blocked := make([]bool, len(in))
	for v, x := range in {
		if x {
			blockBall(g, int32(v), dist, blocked)
		}
	}
	return greedyFinish(g, Order(keys), dist, in, blocked)
}

func result(r *misgpu.Result, err error) (*Result, error) {
	if err != nil {
		return nil, fmt.Errorf("mis: %w", err)
	}
	return &Result{In: r.In, Size: r.Size, Rounds: r.Rounds, Backend: "gpu"}, nil
}

// DeviceGraph is a graph in GPU memory, in the CSR form of mesh.Graph:
// N()+1 int64 row offsets and int32 neighbour ids. It comes either from
// UploadGraph (a copy of a host graph) or from NewDeviceGraph (memory the
// caller already holds on the device, used in place). ComputeDevice runs
// the MIS on it; the working memory of a run stays allocated with the
// graph for the next run, until Close.
type DeviceGraph struct {
	g *misgpu.Graph
}

// UploadGraph copies g to the GPU of ctx, or of device 0's primary
// context when ctx is nil, through pinned chunks, and checks it there (a
// bad row is a *mesh.ValidationError). Boundary classes go along: g's,
// or those mesh.ClassifyByDegree gives, computed on the device, when g
// has none. When the device lacks the memory, the error says how much
// was needed.
func UploadGraph(g *mesh.Graph, ctx *cuda.Context) (*DeviceGraph, error) {
	if g == nil {
		return nil, errors.New("mis: UploadGraph: nil graph")
	}
	if len(g.Class) != g.N() && g.Class != nil {
		return nil, fmt.Errorf("mis: UploadGraph: %d classes for %d vertices", len(g.Class), g.N())
	}
	if err := cheapStructure(g); err != nil {
		return nil, err
	}
	l, err := loader(ctx)
	if err != nil {
		return nil, err
	}
	var cls []uint8
	if g.Class != nil {
		cls = unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(g.Class))), len(g.Class))
	}
	dg, err := misgpu.UploadStaged(l, nil, g.Offsets, g.Adj, cls)
	if err == nil && cls == nil {
		// The classes Primaries derives on the host, so that the zero
		// Options (boundary priority) give the same set here.
		if err = dg.ClassifyByDegree(); err != nil {
			dg.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mis: UploadGraph: %w", err)
	}
	return &DeviceGraph{dg}, nil
}

func loader(ctx *cuda.Context) (*gpu.Loader, error) {
	if ctx == nil {
		return misgpu.Open(0)
	}
	return misgpu.OpenContext(ctx)
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
	l, err := misgpu.OpenContext(offsets.Context())
	if err != nil {
		return nil, err
	}
	dg, err := misgpu.Wrap(l, n, offsets, adj)
	if err != nil {
		var ve *mesh.ValidationError
		if errors.As(err, &ve) {
			return nil, err
		}
		return nil, fmt.Errorf("mis: NewDeviceGraph: %w", err)
	}
	return &DeviceGraph{dg}, nil
}

// N returns the number of vertices.
func (dg *DeviceGraph) N() int { return dg.g.N() }

// NumEdges returns the number of directed edges.
func (dg *DeviceGraph) NumEdges() int64 { return dg.g.NumEdges() }

// SetClasses uploads boundary classes for the Boundary priority (a graph
// from UploadGraph takes them from mesh.Graph.Class).
func (dg *DeviceGraph) SetClasses(cls []mesh.Class) error {
	b := make([]uint8, len(cls))
	for v, c := range cls {
		if c >= mesh.NumClasses {
			return fmt.Errorf("mis: SetClasses: vertex %d has class %d, out of range", v, c)
		}
		b[v] = uint8(c)
	}
	if err := dg.g.SetClasses(b); err != nil {
		return fmt.Errorf("mis: SetClasses: %w", err)
	}
	return nil
}

// Close frees the device memory this graph allocated (not the caller's
// buffers of NewDeviceGraph). It is idempotent.
func (dg *DeviceGraph) Close() error {
	if dg == nil {
		return nil
	}
	return dg.g.Close()
}

// ComputeDevice runs the MIS on a graph in GPU memory and returns the
// same set as Compute on the host graph with the same options (Device
// and Workers are ignored). Boundary priorities take the graph's classes
// (UploadGraph's, SetClasses' or ClassifyByDegree's) or, when it has
// none, the classes by degree, computed on the device for the run as
// Compute derives them for a host graph without classes; Degree ranks
// are computed on the device; User values are ranked on the host and
// copied.
func ComputeDevice(dg *DeviceGraph, opts Options) (*Result, error) {
	if dg == nil {
		return nil, errors.New("mis: ComputeDevice: nil graph")
	}
	dist, err := opts.distance()
	if err != nil {
		return nil, err
	}
	pri, err := devicePriority(dg.g, opts.Priority)
	if err != nil {
		return nil, fmt.Errorf("mis: ComputeDevice: %w", err)
	}
	return result(dg.g.Run(dist, pri, nil))
}

// ClassifyByDegree gives the graph the boundary classes that
// mesh.ClassifyByDegree derives from the degrees, computed on the device
// (the same classes bit for bit), for Boundary priorities.
func (dg *DeviceGraph) ClassifyByDegree() error {
	if err := dg.g.ClassifyByDegree(); err != nil {
		return fmt.Errorf("mis: ClassifyByDegree: %w", err)
	}
	return nil
}

// ComputeDeviceTo is ComputeDevice with the set left on the device:
// flags (at least N() bytes, in the graph's context) receives one byte
// per vertex, 1 for members, 0 otherwise, and only once the run has
// succeeded. It returns the set's size; the flags are complete when it
// returns.
func ComputeDeviceTo(dg *DeviceGraph, opts Options, flags *cuda.Buffer) (int, error) {
	if dg == nil || flags == nil {
		return 0, errors.New("mis: ComputeDeviceTo: nil graph or flags")
	}
	n := dg.N()
	if flags.Size() < int64(n) {
		return 0, fmt.Errorf("mis: ComputeDeviceTo: flags buffer has %d bytes for %d vertices", flags.Size(), n)
	}
	dist, err := opts.distance()
	if err != nil {
		return 0, err
	}
	pri, err := devicePriority(dg.g, opts.Priority)
	if err != nil {
		return 0, fmt.Errorf("mis: ComputeDeviceTo: %w", err)
	}
	l := dg.g.Loader()
	tmp, err := l.Ctx.Alloc(int64(max(n, 1)))
	if err != nil {
		return 0, fmt.Errorf("mis: ComputeDeviceTo: %w", err)
	}
	defer tmp.Free()
	size, _, err := dg.g.RunTo(dist, pri, tmp)
	if err == nil && n > 0 {
		err = errors.Join(cuda.CopyDeviceAsync(flags, 0, tmp, 0, int64(n), l.Stream), l.Stream.Synchronize())
	}
	if err != nil {
		return 0, fmt.Errorf("mis: ComputeDeviceTo: %w", err)
	}
	return size, nil
}

// devicePriority turns p into what the kernels read: nothing for Hash
// (the hash is computed on the fly), the uploaded classes for Boundary,
// ranks computed on the device for Degree, host-ranked values for User.
func devicePriority(dg *misgpu.Graph, p Priority) (misgpu.Priority, error) {
	pri := misgpu.Priority{Seed: p.Seed}
	switch p.Kind {
	case Hash:
	case Boundary:
		pri.GraphClass, pri.DegreeClass = dg.HasClasses(), !dg.HasClasses()
	case Degree:
		pri.Degree = true
	case User:
		prim, err := userRanks(p.Values, dg.N())
		if err != nil {
			return pri, err
		}
		pri.Prim = prim
	default:
		return pri, fmt.Errorf("unknown priority kind %d", int(p.Kind))
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
