package misgpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/mesh"
)

// Graph is a graph in GPU memory, in the CSR form of mesh.Graph: N()+1
// int64 row offsets and int32 neighbour ids, either copied by Upload or
// the caller's memory used in place (Wrap). The working memory of a run
// stays allocated with the graph for the next run, until Close.
type Graph struct {
	l        *gpu.Loader
	n        int
	m        int64
	off, adj *cuda.Buffer
	owned    bool         // off and adj were allocated here
	vec      bool         // adj is 16-byte aligned and readable to a 16-byte boundary past its end
	locality int8         // 0 not measured yet, 1 local rows, 2 scattered rows (see rowLocality)
	runs     bool         // rows hold runs in one state word (rowLocality)
	class    *cuda.Buffer // boundary classes, one byte per vertex, or nil
	ownClass bool         // class was allocated here (not a caller's, UseClasses)
	maxDeg   int64        // the largest degree (from the host graph or csr_check)
	capN     int          // the most vertices the working memory serves (Rebind)

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
	lg    *cuda.Buffer   // the log table of ClassifyByDegree
}

const (
	tile   = 128  // vertices per warp tile, as in mis.cu
	nCount = 1024 // sweep counters kept on the device
)

func padded(n int) int64 { return (int64(n) + tile - 1) / tile * tile }

// TestFreeMemory, when set by a test, replaces the free device memory
// that uploads check against.
var TestFreeMemory int64

// deviceBytes is the device memory a run on a graph of n vertices and m
// directed edges needs: graph, state, MIS-2 balls, ranks and counters.
func deviceBytes(n int, m int64) (graph, work int64) {
	graph = 8*int64(n+1) + 4*m
	work = padded(n)*(1+8+4) + 4*int64(n) + 4*(nCount+2) + 4096
	return graph, work
}

// Upload copies a CSR graph (offsets of n+1 entries, adjacency adj,
// the largest degree maxDeg) and, when not nil, its boundary classes to
// the loader's device. When the device lacks the memory, the error says
// how much was needed and wraps cuda.ErrUnavailable, as every failure
// here does.
func Upload(l *gpu.Loader, offsets []int64, adj []int32, maxDeg int64, cls []uint8) (*Graph, error) {
	n, m := max(len(offsets)-1, 0), int64(len(adj))
	if err := fits(l, n, m); err != nil {
		return nil, err
	}
	dg := &Graph{l: l, n: n, m: m, owned: true, maxDeg: maxDeg, capN: n}
	if err := dg.upload(offsets, adj, cls); err != nil {
		dg.Close()
		return nil, fmt.Errorf("%w: uploading the graph: %w", cuda.ErrUnavailable, l.Fail(err))
	}
	return dg, nil
}

// fits checks that a graph of n vertices and m edges and a run on it fit
// the device's free memory; the error says how much was needed and wraps
// cuda.ErrUnavailable.
func fits(l *gpu.Loader, n int, m int64) error {
	graph, work := deviceBytes(n, m)
	free, _, err := l.Ctx.MemInfo()
	if err != nil {
		return gpu.Unavailable(l.Fail(err))
	}
	if TestFreeMemory > 0 {
		free = TestFreeMemory
	}
	if graph+work > free {
		return fmt.Errorf("%w: a graph of %d vertices and %d edges needs %s of GPU memory (%s graph, %s working), but only %s is free: %w",
			cuda.ErrUnavailable, n, m, cuda.FormatBytes(graph+work), cuda.FormatBytes(graph), cuda.FormatBytes(work), cuda.FormatBytes(free), cuda.ErrorOutOfMemory)
	}
	return nil
}

func (dg *Graph) upload(offs []int64, adj []int32, cls []uint8) error {
	ctx := dg.l.Ctx
	var err error
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
	if err = cuda.CopyToDevice(dg.adj, 0, adj); err != nil {
		return err
	}
	dg.vec = dg.adj.Ptr()%16 == 0
	if cls != nil {
		if dg.class, err = ctx.Alloc(int64(len(cls))); err != nil {
			return err
		}
		dg.ownClass = true
		return cuda.CopyToDevice(dg.class, 0, cls)
	}
	return nil
}

// Wrap uses a graph already in GPU memory (offsets: n+1 int64 row
// offsets, adj: int32 neighbour ids, both in l's context; the caller
// checked sizes and contexts). Nothing is copied and Close does not
// free the buffers. Wrap checks on the device that every offset and
// neighbour id is in range (so that no kernel reads outside the
// buffers) and names the first bad row; it cannot afford to check
// symmetry.
func Wrap(l *gpu.Loader, n int, offsets, adj *cuda.Buffer) (*Graph, error) {
	var last [1]int64
	if err := cuda.CopyToHost(last[:], offsets, 8*int64(n)); err != nil {
		return nil, fmt.Errorf("reading offsets[%d]: %w", n, l.Fail(err))
	}
	m := last[0]
	if m < 0 || 4*m > adj.Size() {
		return nil, fmt.Errorf("offsets[%d] = %d, but the adjacency buffer holds %d ids", n, m, adj.Size()/4)
	}
	if adj.Ptr()%4 != 0 || offsets.Ptr()%8 != 0 {
		return nil, fmt.Errorf("misaligned buffers (offsets at %#x, adjacency at %#x)", offsets.Ptr(), adj.Ptr())
	}
	dg := &Graph{l: l, n: n, m: m, off: offsets, adj: adj, capN: n}
	dg.vec = adj.Ptr()%16 == 0 && adj.Size() >= (4*m+15)/16*16
	if err := dg.check(); err != nil {
		return nil, err
	}
	return dg, nil
}

// check runs csr_check and turns a failure into an error naming the row;
// it sets the largest degree. It waits for the work queued on the
// loader's stream before it (an upload through a Stager, say) and
// synchronises the host once.
func (dg *Graph) check() error {
	if dg.n == 0 {
		return nil
	}
	e := dg.l
	e.Mu.Lock()
	defer e.Mu.Unlock()
	small, err := dg.scratch()
	if err != nil {
		return err
	}
	if dg.ws.host == nil {
		if dg.ws.host, err = e.Ctx.AllocHost(64); err != nil {
			return err
		}
	}
	first, err := small.View(0, 4)
	if err != nil {
		return err
	}
	words, err := small.View(0, 8)
	if err != nil {
		return err
	}
	bad := cuda.HostSlice[int32](dg.ws.host)[:2]
	if err := errors.Join(
		words.MemsetAsync32(0, e.Stream), first.MemsetAsync32(uint32(dg.n), e.Stream),
		e.Launch(nil, "csr_check", e.Grid("csr_check", int64(dg.n), blockSize), dg.off, dg.adj, int32(dg.n), dg.m, small),
		small.CopyToHostAsync(dg.ws.host, 0, 0, 8, e.Stream),
		e.Stream.Synchronize(),
	); err != nil {
		return e.Fail(err)
	}
	dg.maxDeg = int64(bad[1])
	if v := bad[0]; v < int32(dg.n) {
		return &mesh.ValidationError{Row: int(v), Index: -1, Msg: "device graph: " + dg.badRow(v)}
	}
	return nil
}

// badRow says what is wrong with row v, which csr_check rejected.
func (dg *Graph) badRow(v int32) string {
	var o [2]int64
	if err := cuda.CopyToHost(o[:], dg.off, 8*int64(v)); err != nil {
		return "unreadable offsets"
	}
	msg := fmt.Sprintf("offsets %d..%d", o[0], o[1])
	if o[0] >= 0 && o[1] >= o[0] && o[1] <= dg.m && o[1]-o[0] <= 1<<20 {
		row := make([]int32, o[1]-o[0])
		if err := cuda.CopyToHost(row, dg.adj, 4*o[0]); err == nil {
			for i, u := range row {
				if u < 0 || int(u) >= dg.n || u == v {
					return fmt.Sprintf("neighbour %d at adjacency index %d is out of range [0,%d) or the vertex itself", u, o[0]+int64(i), dg.n)
				}
			}
		}
	}
	return msg
}

// rowLocality measures how the graph's rows name their neighbours, once,
// on the device, from a sample of rows (near_sample); the caller holds
// the engine's lock. scattered: fewer than a tenth of the entries lie
// within 1024 ids of their row. runs: at least a third share the state
// word of the entry before them in the row (rowRuns).
func (dg *Graph) rowLocality() (scattered, runs bool, err error) {
	if dg.locality == 0 && dg.n > 0 {
		c, err := dg.sampleRows()
		if err != nil {
			return false, false, err
		}
		dg.locality = 1
		if c[1] < c[0]/10 {
			dg.locality = 2
		}
		dg.runs = rowRuns(c[0], c[2])
	}
	return dg.locality == 2, dg.runs, nil
}

// sampleRows runs near_sample over every sampleStep(n)-th row: the
// entries it read, those within 1024 ids of their row, and those in the
// state word of the entry before them.
func (dg *Graph) sampleRows() ([3]uint32, error) {
	var c [3]uint32
	small, err := dg.scratch()
	if err != nil {
		return c, err
	}
	step := int32(sampleStep(dg.n))
	err = countWords(dg.l, small, c[:], "near_sample", int64(dg.n)/int64(step)+1, dg.off, dg.adj, int32(dg.n), step)
	return c, err
}

// sampleStep is the step between the rows near_sample reads: about 64Ki
// rows of any graph.
func sampleStep(n int) int { return max(1, n/(1<<16)) }

// rowRuns says whether rows hold runs of neighbours in one state word:
// at least a third of the sampled entries share the word of the entry
// before them. Meshes numbered along a structured grid have about half
// (27-point rows: consecutive triples); a Gmsh tet mesh refined twice
// has a quarter, where the word-wise pushes cost more than they save.
func rowRuns(entries, same uint32) bool { return entries > 0 && 3*uint64(same) >= uint64(entries) }

// N returns the number of vertices.
func (dg *Graph) N() int { return dg.n }

// NumEdges returns the number of directed edges.
func (dg *Graph) NumEdges() int64 { return dg.m }

// SetClasses uploads one boundary class byte per vertex for class keys
// of the graph's own (Priority.GraphClass).
func (dg *Graph) SetClasses(cls []uint8) error {
	if len(cls) != dg.n {
		return fmt.Errorf("%d classes for %d vertices", len(cls), dg.n)
	}
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if err := dg.ownClasses(); err != nil {
		return err
	}
	return cuda.CopyToDevice(dg.class, 0, cls)
}

// HasClasses says whether the graph holds boundary classes.
func (dg *Graph) HasClasses() bool { return dg.class != nil }

// Close frees the device memory this graph allocated (not the buffers
// of Wrap). It is idempotent.
func (dg *Graph) Close() error {
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
	for _, b := range []*cuda.Buffer{dg.ws.st, dg.ws.ball, dg.ws.list, dg.ws.prim, dg.ws.cls, dg.ws.rank, dg.ws.count, dg.ws.small, dg.ws.floor, dg.ws.lg} {
		errs = append(errs, b.Free())
	}
	if dg.ownClass {
		errs = append(errs, dg.class.Free())
	}
	errs = append(errs, dg.ws.host.Free(), dg.ws.evs[0].Close(), dg.ws.evs[1].Close())
	if dg.owned {
		errs = append(errs, dg.off.Free(), dg.adj.Free())
	}
	return errors.Join(errs...)
}

// scratch returns a small device buffer for helper kernels.
func (dg *Graph) scratch() (*cuda.Buffer, error) {
	if dg.ws.small == nil {
		b, err := dg.l.Ctx.Alloc(256)
		if err != nil {
			return nil, err
		}
		dg.ws.small = b
	}
	return dg.ws.small, nil
}

// Priority is a priority resolved for the device: class bytes or
// 32-bit ranks from the host, the graph's classes, ranks by degree
// computed on the device, or none of them (hash keys). Seed seeds the
// hash that breaks ties.
type Priority struct {
	Seed       uint64
	Class      []uint8  // host classes to upload
	Prim       []uint32 // host ranks to upload
	GraphClass bool     // the graph's classes (Upload or SetClasses)
	Degree     bool     // ranks by degree, computed on the device
	// DegreeClass: the classes of mesh.ClassifyByDegree, computed on the
	// device for this run (ClassifyByDegree keeps them with the graph).
	DegreeClass bool
}
