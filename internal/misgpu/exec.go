package misgpu

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
)

// Result is the set a run found: one flag per vertex, their number, and
// the sweeps (or bucket launches) that found work.
type Result struct {
	In     []bool
	Size   int
	Rounds int
	// Stalled (RunOrStall only): the sweeps stopped paying, and In holds
	// the members decided so far. Every one of them is in the greedy set,
	// and no undecided vertex is within the distance of one, so the
	// caller finishes with the serial greedy over the rest.
	Stalled bool
	// Time is the wall time from the first launch until the device was
	// done with the sweeps: what PartsResult.Time measures of the parts,
	// for comparisons with them (the copy of the set back is in neither).
	Time time.Duration
}

// Run computes the MIS of distance dist in the order of pri on the
// device and copies the set back. tune, when not nil, adjusts the
// default tuning (tests and the developers' benchmark).
func (dg *Graph) Run(dist int, pri Priority, tune func(*Tuning)) (*Result, error) {
	return dg.run(dist, pri, tune, false)
}

// RunOrStall is Run, except that it stops once sweeps settle too few
// vertices (see stalled): priorities that chain the greedy order along
// the graph (user values rising along a path) take one sweep per link.
// The Result then says Stalled.
func (dg *Graph) RunOrStall(dist int, pri Priority) (*Result, error) {
	return dg.run(dist, pri, nil, true)
}

func (dg *Graph) run(dist int, pri Priority, tune func(*Tuning), mayStall bool) (*Result, error) {
	e := dg.l
	unlock, err := dg.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if dg.n == 0 {
		return &Result{In: []bool{}}, nil
	}
	r, err := dg.prepare(dist, pri, tune)
	if err != nil {
		return nil, e.Fail(err)
	}
	r.mayStall = mayStall
	// What prepare queued is not the sweeps' (the parts too start
	// once their preparation is done).
	if err := e.Stream.Synchronize(); err != nil {
		return nil, e.Fail(err)
	}
	start := time.Now()
	rounds, err := r.sweeps(nil, nil)
	if err != nil {
		return nil, e.Fail(err)
	}
	swept := r.swept(start)
	res, err := dg.members()
	if err != nil {
		return nil, e.Fail(err)
	}
	res.Rounds, res.Stalled, res.Time = rounds, r.stall.stopped, swept
	return res, nil
}

// lock takes the loader's lock (runs in a context share its stream) and
// the graph's, and checks that both are usable.
func (dg *Graph) lock() (unlock func(), err error) {
	dg.l.Mu.Lock()
	if err := dg.l.Usable(); err != nil {
		dg.l.Mu.Unlock()
		return nil, fmt.Errorf("%w: the GPU context failed earlier: %w", cuda.ErrUnavailable, err)
	}
	dg.mu.Lock()
	if dg.done {
		dg.mu.Unlock()
		dg.l.Mu.Unlock()
		return nil, fmt.Errorf("device graph is closed")
	}
	return func() { dg.mu.Unlock(); dg.l.Mu.Unlock() }, nil
}

// run is a plan bound to a graph's buffers, with its grids.
type run struct {
	dg    *Graph
	plan  *Plan
	grids []uint32 // per stage
	// Sweep stages: the grids of the first sweep's kernel and the tail.
	firstGrid, tailGrid uint32
	prim, cls, ball     *cuda.Buffer
	list                *cuda.Buffer // the tail's vertex list, or a list stage's
	nlist               int          // a list stage's vertices
	seed                uint64
	stageAt             []int // the pass at which each stage started in the current run
	pass                int   // the next sweep to queue
	mayStall            bool  // stop when sweeps stop paying (RunOrStall)
	stall               stallWatch
	part                *partRun // a part of a multi-GPU run (part.go), or nil
	// end is when the stream was done with the sweeps: the sweep
	// counters are read back after it (rounds), which no run's time
	// counts.
	end time.Time
}

// prepare allocates the working memory, uploads the priority, measures
// what the plan depends on and binds the plan to the buffers. tune, when
// not nil, adjusts the default tuning.
func (dg *Graph) prepare(dist int, pri Priority, tune func(*Tuning)) (*run, error) {
	s := Shape{N: dg.n, M: dg.m, MaxDeg: dg.maxDeg, Vec: dg.vec}
	var err error
	if s.Scattered, s.Runs, err = dg.rowLocality(); err != nil {
		return nil, err
	}
	t := Defaults(s, dist)
	if tune != nil {
		tune(&t)
	}
	if err := dg.alloc(dist, t); err != nil {
		return nil, err
	}
	r := &run{dg: dg, seed: pri.Seed}
	key, err := r.priority(pri)
	if err != nil {
		return nil, err
	}
	if NeedClasses(s, dist, key, t) {
		if s.Classes, err = dg.classCounts(r.cls); err != nil {
			return nil, err
		}
	}
	if r.plan, err = NewPlan(s, dist, key, t); err != nil {
		return nil, err
	}
	return r, r.bind()
}

// alloc makes sure the working memory of a run exists.
func (dg *Graph) alloc(dist int, t Tuning) error {
	ctx, ws := dg.l.Ctx, &dg.ws
	np := padded(dg.n)
	var err error
	for _, b := range []struct {
		buf  **cuda.Buffer
		need bool
		size int64
	}{
		{&ws.st, true, np},
		{&ws.ball, dist == 2 || t.Tail > 0, 8 * np},
		{&ws.list, dist == 2 && t.Tail > 0, 4 * np},
		// The ring of live counts, then the tail's most passes and its
		// list length.
		{&ws.count, true, 4 * (nCount + 2)},
		{&ws.small, true, 256},
	} {
		if b.need && *b.buf == nil {
			if *b.buf, err = ctx.Alloc(b.size); err != nil {
				return err
			}
		}
	}
	if ws.host == nil {
		if ws.host, err = ctx.AllocHost(64); err != nil {
			return err
		}
	}
	for i := range ws.evs {
		if ws.evs[i] == nil {
			if ws.evs[i], err = ctx.NewEvent(); err != nil {
				return err
			}
		}
	}
	return nil
}

// priority uploads or computes what the kernels read for pri and
// returns the kind of key.
func (r *run) priority(pri Priority) (Key, error) {
	dg, e, ws := r.dg, r.dg.l, &r.dg.ws
	var err error
	if (pri.Prim != nil || pri.Degree) && ws.prim == nil {
		if ws.prim, err = e.Ctx.Alloc(4 * int64(dg.n)); err != nil {
			return 0, err
		}
	}
	class := pri.Class
	if class == nil && pri.Prim != nil {
		// Ranks that fit the state byte go there (smallRanks).
		class = smallRanks(pri.Prim)
	}
	switch {
	case class != nil:
		if err = dg.allocClasses(); err != nil {
			return 0, err
		}
		r.cls = ws.cls
		return KeyClass, cuda.CopyToDevice(ws.cls, 0, class)
	case pri.DegreeClass:
		if err = dg.allocClasses(); err == nil {
			err = dg.classifyInto(ws.cls)
		}
		r.cls = ws.cls
		return KeyClass, err
	case pri.GraphClass:
		if dg.class == nil {
			return 0, fmt.Errorf("the graph has no classes")
		}
		r.cls = dg.class
		return KeyClass, nil
	case pri.Prim != nil:
		r.prim = ws.prim
		return KeyPrim, cuda.CopyToDevice(ws.prim, 0, pri.Prim)
	case pri.Degree:
		if err = ws.small.MemsetAsync32(0, e.Stream); err != nil {
			return 0, err
		}
		g := e.Grid("degree_prim", int64(dg.n), blockSize)
		for phase := int32(0); phase < 2; phase++ {
			if err = e.Launch(nil, "degree_prim", g, dg.off, int32(dg.n), ws.prim, ws.small, phase); err != nil {
				return 0, err
			}
		}
		small, err := dg.rankPrimaries()
		if err != nil || !small {
			r.prim = ws.prim
			return KeyPrim, err
		}
		r.cls = ws.cls
		return KeyClass, nil
	}
	return KeyHash, nil
}

// bind sizes the grids of the plan's kernels and picks their buffers.
func (r *run) bind() error {
	dg, e, ws, p := r.dg, r.dg.l, &r.dg.ws, r.plan
	if p.Ball {
		r.ball = ws.ball
	}
	r.grids = make([]uint32, len(p.Stages))
	for i := range p.Stages {
		st := &p.Stages[i]
		items := st.Items
		if st.List {
			if err := r.listClasses(); err != nil {
				return err
			}
			items = (int64(r.nlist) + 31) / 32
		}
		r.grids[i] = e.Grid(st.Kernel, items, blockSize/32)
		if st.First != "" {
			r.firstGrid = e.Grid(st.First, int64(dg.n), blockSize)
		}
		if st.Tail != "" {
			// The tail's threads wait on each other: its grid must fit on
			// the device at once, which Grid's cap at the resident blocks
			// ensures. MIS-1 lists in the ball buffer, which it does not
			// use.
			r.list = ws.ball
			if p.Dist == 2 {
				r.list = ws.list
			}
			r.tailGrid = e.Grid(st.Tail, int64(dg.n), blockSize)
		}
	}
	return nil
}

// maxSmallRanks is the most primary values the state byte holds (bits
// 2-7; CLASS in mis.cu). A primary with no more values goes there as
// its rank, and the kernels read it with the state instead of loading a
// 32-bit rank per neighbour: the greedy order, and so the set, is the
// same, since ranks order as the values do.
const (
	maxSmallRanks = 64
	primWords     = 64 // PRIM_WORDS of helpers.cuh: primaries below 2048 are ranked on the device
)

// smallRanks returns dense ranks as class bytes when they fit the state
// byte, else nil.
func smallRanks(prim []uint32) []uint8 {
	if len(prim) == 0 || slices.Max(prim) >= maxSmallRanks {
		return nil
	}
	cls := make([]uint8, len(prim))
	for v, p := range prim {
		cls[v] = uint8(p)
	}
	return cls
}

// allocClasses makes sure the class bytes of host-given primaries exist.
func (dg *Graph) allocClasses() error {
	if dg.ws.cls != nil {
		return nil
	}
	b, err := dg.l.Ctx.Alloc(int64(dg.n))
	if err != nil {
		return err
	}
	dg.ws.cls = b
	return nil
}

// rankPrimaries turns the primaries that degree_prim left in ws.prim
// (and their maximum in ws.small) into class bytes in ws.cls when they
// take at most maxSmallRanks values below 32*primWords, and says whether
// it did.
func (dg *Graph) rankPrimaries() (bool, error) {
	e, ws := dg.l, &dg.ws
	var mx [1]uint32
	if err := e.Stream.Synchronize(); err != nil {
		return false, err
	}
	if err := cuda.CopyToHost(mx[:], ws.small, 0); err != nil {
		return false, err
	}
	if mx[0] >= 32*primWords {
		return false, nil
	}
	if ws.rank == nil {
		b, err := e.Ctx.Alloc(4*primWords + 32*primWords)
		if err != nil {
			return false, err
		}
		ws.rank = b
	}
	words, err := ws.rank.View(0, 4*primWords)
	if err != nil {
		return false, err
	}
	var bits [primWords]uint32
	if err := countWords(e, words, bits[:], "prim_bitmap", int64(dg.n), ws.prim, int32(dg.n)); err != nil {
		return false, err
	}
	rank := make([]uint8, mx[0]+1)
	k := 0
	for p := range rank {
		rank[p] = uint8(min(k, 255))
		if bits[p/32]&(1<<(p%32)) != 0 {
			k++
		}
	}
	if k > maxSmallRanks {
		return false, nil
	}
	if err := cuda.CopyToDevice(ws.rank, 4*primWords, rank); err != nil {
		return false, err
	}
	if err := dg.allocClasses(); err != nil {
		return false, err
	}
	table, err := ws.rank.View(4*primWords, int64(len(rank)))
	if err != nil {
		return false, err
	}
	return true, e.Launch(nil, "prim_classes", e.Grid("prim_classes", int64(dg.n), blockSize), ws.prim, int32(dg.n), table, ws.cls)
}

// classCounts counts the vertices of each class byte in cls (class_hist
// in helpers.cuh), in the scratch words.
func (dg *Graph) classCounts(cls *cuda.Buffer) ([]int64, error) {
	var h [maxSmallRanks]uint32
	if err := countWords(dg.l, dg.ws.small, h[:], "class_hist", int64(dg.n), cls, int32(dg.n)); err != nil {
		return nil, err
	}
	out := make([]int64, maxSmallRanks)
	for i, c := range h {
		out[i] = int64(c)
	}
	return out, nil
}

// listClasses lists the vertices of the classes above 0 for a list
// stage, in the ball buffer, which bucket runs do not use otherwise.
func (r *run) listClasses() error {
	dg := r.dg
	var c [1]uint32
	if err := countWords(dg.l, dg.ws.small, c[:], "class_list", int64(dg.n), r.cls, int32(dg.n), dg.ws.ball); err != nil {
		return err
	}
	r.list, r.nlist = dg.ws.ball, int(c[0])
	return nil
}

// members turns the state bytes into the set and copies it back, with
// its size, in one wait: through the context's Stager, since a copy into
// pageable memory runs at a fraction of the bus's speed.
func (dg *Graph) members() (*Result, error) {
	e, ws := dg.l, &dg.ws
	in := make([]bool, dg.n)
	// bool is one byte holding 0 or 1, which is what mis_members writes.
	flags := unsafe.Slice((*uint8)(unsafe.Pointer(&in[0])), dg.n)
	err := dg.queueMembers(ws.st)
	if err == nil {
		err = gpu.StageFrom(e, e.Stream, flags, ws.st, 0)
	}
	if err != nil {
		return nil, err
	}
	return &Result{In: in, Size: dg.memberCount()}, nil
}

// queueMembers queues mis_members, which turns the state bytes into the
// set's flags in flags (one byte a vertex, 1 for members; ws.st itself
// will do) and counts them, and the copy of the count to the host; the
// caller waits, then reads it with memberCount.
func (dg *Graph) queueMembers(flags *cuda.Buffer) error {
	e, ws := dg.l, &dg.ws
	return errors.Join(
		ws.small.MemsetAsync32(0, e.Stream),
		e.Launch(nil, "mis_members", e.Grid("mis_members", int64(dg.n), blockSize), ws.st, flags, int32(dg.n), ws.small),
		ws.small.CopyToHostAsync(ws.host, 0, 0, 4, e.Stream),
	)
}

// memberCount is the count queueMembers copied to the host.
func (dg *Graph) memberCount() int { return int(cuda.HostSlice[uint32](dg.ws.host)[0]) }
