package misgpu

import (
	"errors"
	"fmt"
	"math"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
)

// This file is the fast way in and out of the engine: host graphs
// uploaded through pinned chunks and checked on the device, boundary
// classes by degree computed there, and runs that leave their set on
// the device (hierarchies), with a graph that moves from level to level
// without reallocating its working memory.

// UploadStaged copies a CSR graph (n+1 offsets, the adjacency) and, when
// not nil, its class bytes to the loader's device through st (made on
// the loader's stream; nil: the context's Stager), so that packing
// each chunk into pinned memory overlaps the transfer of the one before,
// and checks it on the device (csr_check, which also gives the largest
// degree): the host reads no entry of the graph. A bad row is a
// *mesh.ValidationError; every other failure wraps cuda.ErrUnavailable.
func UploadStaged(l *gpu.Loader, st *cuda.Stager, offsets []int64, adj []int32, cls []uint8) (*Graph, error) {
	n, m := max(len(offsets)-1, 0), int64(len(adj))
	if err := fits(l, n, m); err != nil {
		return nil, err
	}
	if cls != nil && len(cls) != n {
		return nil, fmt.Errorf("%d classes for %d vertices", len(cls), n)
	}
	dg := &Graph{l: l, n: n, m: m, owned: true, capN: n}
	if err := dg.stage(st, offsets, adj, cls); err != nil {
		dg.Close()
		return nil, fmt.Errorf("%w: uploading the graph: %w", cuda.ErrUnavailable, l.Fail(err))
	}
	if err := dg.check(); err != nil {
		dg.Close()
		return nil, err
	}
	return dg, nil
}

func (dg *Graph) stage(st *cuda.Stager, offs []int64, adj []int32, cls []uint8) error {
	l := dg.l
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if st == nil {
		return l.Stage(l.Stream, func(st *cuda.Stager) error { return dg.stageWith(st, offs, adj, cls) })
	}
	return dg.stageWith(st, offs, adj, cls)
}

func (dg *Graph) stageWith(st *cuda.Stager, offs []int64, adj []int32, cls []uint8) error {
	l := dg.l
	var err error
	if st.Stream() != l.Stream {
		return errors.New("the stager runs on another stream than the engine's")
	}
	if dg.n == 0 {
		offs = []int64{0}
	}
	ctx := l.Ctx
	if dg.off, err = ctx.Alloc(8 * int64(len(offs))); err != nil {
		return err
	}
	// Padded to 16 bytes so that the 16-byte row loads may read the
	// whole last chunk.
	if dg.adj, err = ctx.Alloc((4*max(dg.m, 1) + 15) / 16 * 16); err != nil {
		return err
	}
	dg.vec = dg.adj.Ptr()%16 == 0
	if cls != nil {
		if err = dg.ownClasses(); err != nil {
			return err
		}
	}
	// The offsets first: they are what the classes by degree read.
	err = errors.Join(cuda.StageToDevice(st, dg.off, 0, offs), cuda.StageToDevice(st, dg.adj, 0, adj))
	if err == nil && cls != nil {
		err = cuda.StageToDevice(st, dg.class, 0, cls)
	}
	return err
}

// ownClasses makes sure the graph holds a class buffer of its own.
func (dg *Graph) ownClasses() error {
	if dg.ownClass {
		return nil
	}
	buf, err := dg.l.Ctx.Alloc(int64(max(dg.capN, dg.n, 1)))
	if err != nil {
		return err
	}
	dg.class, dg.ownClass = buf, true
	return nil
}

// DegreeLogs is the table the device classification reads: log((maxDeg+1)
// / (d+1)) for d = 0..maxDeg, computed as mesh.ClassifyByDegree computes
// it per vertex, so that the classes are the host's bit for bit.
func DegreeLogs(maxDeg int64) []float64 {
	maxd := float64(maxDeg)
	lg := make([]float64, maxDeg+1)
	for d := range lg {
		lg[d] = math.Log((maxd + 1) / float64(d+1))
	}
	return lg
}

// ClassifyByDegree queues the boundary classes of mesh.ClassifyByDegree,
// computed on the device from the rows' lengths, into the graph's class
// buffer (one of its own: a caller's set by UseClasses is left alone).
// Nothing waits. Priority.DegreeClass does the same for one run without
// keeping the classes.
func (dg *Graph) ClassifyByDegree() error {
	e := dg.l
	e.Mu.Lock()
	defer e.Mu.Unlock()
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if err := dg.ownClasses(); err != nil {
		return err
	}
	return dg.classifyInto(dg.class)
}

// classifyInto queues the classes by degree into cls; the host builds a
// table of maxDeg+1 logarithms. The caller holds the locks.
func (dg *Graph) classifyInto(cls *cuda.Buffer) error {
	e := dg.l
	if dg.n == 0 {
		return nil
	}
	lg := DegreeLogs(dg.maxDeg)
	need := 8 * int64(len(lg)+1)
	if dg.ws.lg != nil && dg.ws.lg.Size() < need {
		if err := errors.Join(e.Stream.Synchronize(), dg.ws.lg.Free()); err != nil {
			return e.Fail(err)
		}
		dg.ws.lg = nil
	}
	if dg.ws.lg == nil {
		b, err := e.Ctx.Alloc(max(need, 4096))
		if err != nil {
			return err
		}
		dg.ws.lg = b
	}
	lmax, err := dg.ws.lg.View(0, 8)
	if err != nil {
		return err
	}
	table, err := dg.ws.lg.View(8, 8*int64(len(lg)))
	if err != nil {
		return err
	}
	grid := e.Grid("degree_class", int64(dg.n), blockSize)
	return e.Fail(errors.Join(
		gpu.StageTo(e, e.Stream, table, 0, lg),
		lmax.MemsetAsync32(0, e.Stream),
		e.Launch(nil, "degree_lmax", grid, dg.off, int32(dg.n), table, int32(dg.maxDeg), lmax),
		e.Launch(nil, "degree_class", grid, dg.off, int32(dg.n), table, int32(dg.maxDeg), lmax, cls),
	))
}

// UseClasses makes cls (one byte per vertex, in the graph's context,
// complete in the loader's stream order) the graph's classes, in place;
// Close leaves it alone.
func (dg *Graph) UseClasses(cls *cuda.Buffer) error {
	if cls == nil || cls.Size() < int64(dg.n) {
		return errors.New("class buffer shorter than the vertex count")
	}
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if dg.ownClass {
		if err := errors.Join(dg.l.Stream.Synchronize(), dg.class.Free()); err != nil {
			return err
		}
	}
	dg.class, dg.ownClass = cls, false
	return nil
}

// WrapLevel uses a graph that is already in GPU memory and known to be
// well formed (a coarse level built on the device), without checking or
// waiting: n vertices, m edges, the largest degree maxDeg, buffers as
// for Wrap, complete in the loader's stream order. Rebind moves it to
// the next level.
func WrapLevel(l *gpu.Loader, n int, m, maxDeg int64, offsets, adj *cuda.Buffer) *Graph {
	dg := &Graph{l: l, capN: n}
	dg.bind(n, m, maxDeg, offsets, adj)
	return dg
}

func (dg *Graph) bind(n int, m, maxDeg int64, offsets, adj *cuda.Buffer) {
	dg.n, dg.m, dg.maxDeg, dg.off, dg.adj = n, m, maxDeg, offsets, adj
	dg.vec = adj.Ptr()%16 == 0 && adj.Size() >= (4*m+15)/16*16
	dg.locality = 0
}

// Rebind points a graph of WrapLevel at another well-formed graph of at
// most as many vertices, keeping the working memory. Classes go: set
// them again (ClassifyByDegree or UseClasses).
func (dg *Graph) Rebind(n int, m, maxDeg int64, offsets, adj *cuda.Buffer) error {
	dg.mu.Lock()
	defer dg.mu.Unlock()
	switch {
	case dg.owned:
		return errors.New("Rebind of an uploaded graph")
	case n > dg.capN:
		return fmt.Errorf("Rebind to %d vertices, but the working memory serves %d", n, dg.capN)
	}
	dg.bind(n, m, maxDeg, offsets, adj)
	if !dg.ownClass {
		dg.class = nil
	}
	return nil
}

// RunTo computes the MIS like Run but leaves the set on the device: flags
// gets one byte per vertex, 1 for members, in the loader's stream order.
// It returns the set's size and the sweeps that found work.
func (dg *Graph) RunTo(dist int, pri Priority, flags *cuda.Buffer) (size, rounds int, err error) {
	if flags == nil || flags.Size() < int64(dg.n) {
		return 0, 0, errors.New("flag buffer shorter than the vertex count")
	}
	e := dg.l
	unlock, err := dg.lock()
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	if dg.n == 0 {
		return 0, 0, nil
	}
	r, err := dg.prepare(dist, pri, nil)
	if err != nil {
		return 0, 0, e.Fail(err)
	}
	if rounds, err = r.sweeps(nil, nil); err != nil {
		return 0, 0, e.Fail(err)
	}
	if err = errors.Join(dg.queueMembers(flags), e.Stream.Synchronize()); err != nil {
		return 0, 0, e.Fail(err)
	}
	return dg.memberCount(), rounds, nil
}

// Loader returns the loader the graph runs on.
func (dg *Graph) Loader() *gpu.Loader { return dg.l }

// Buffers returns the graph's offsets, adjacency and classes (nil when
// it has none), in the loader's context.
func (dg *Graph) Buffers() (offsets, adj, class *cuda.Buffer) { return dg.off, dg.adj, dg.class }
