package misgpu

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
)

// PartsResult is what a run of the parts found: per part, the flags of
// its owned vertices.
type PartsResult struct {
	In      [][]bool
	Rounds  int   // the most launches that found work on any part
	Bytes   int64 // sent between parts in the run
	Stalled bool  // some part stopped when its rounds stopped paying (see Result.Stalled)
	// Time is the wall time from the first launch until every part's
	// sweeps are done (the reads of the sweep counters and the copies of
	// the sets back are not in it); PartTime holds each part's, and
	// PartRounds its launches that found work.
	Time       time.Duration
	PartTime   []time.Duration
	PartRounds []int
	Plans      []string // each part's image and the kernels of its plan
	// Trace (PartsOptions.Trace) holds each part's launches and
	// exchanges, timed on its stream.
	Trace []PartTrace
}

// PartError is the failure of one part.
type PartError struct {
	Part, Device int
	Err          error
}

func (e *PartError) Error() string {
	return fmt.Sprintf("part %d on device %d: %v", e.Part, e.Device, e.Err)
}

func (e *PartError) Unwrap() error { return e.Err }

// errAborted stops the other parts once one has failed.
var errAborted = errors.New("another part failed")

// Run computes the MIS on every part at once. Each part runs the plan
// the engine makes for its shape; at distance 2, where there are several
// parts, always by key buckets, which need no per-vertex state but the
// byte (the ball sweeps would need the balls of the ghosts).
func (pp *Parts) Run(ctx context.Context) (*PartsResult, error) {
	o := pp.opts
	runs := make([]*run, len(pp.ps))
	res := &PartsResult{In: make([][]bool, len(pp.ps))}
	var stop atomic.Bool
	own := make([]int, len(pp.ps))
	for q, p := range pp.ps {
		own[q] = p.dg.n
	}
	// The bound of parts that may wait on each other: they stop together
	// when their rounds stop paying, and the caller finishes on the host.
	watch := newPartsWatch(own)
	epoch := nextEpoch()
	res.PartRounds = make([]int, len(pp.ps))
	res.PartTime = make([]time.Duration, len(pp.ps))
	// The parts' goroutines start now, and wait at the gate until the
	// parts are prepared, so that they start together. A single part
	// runs on the caller's goroutine, as the engine does.
	errs := make([]error, len(pp.ps))
	gate := newStartGate(waiters(len(pp.ps)))
	body := pp.partBody(gate, runs, res, watch, &stop, errs)
	wg := launch(gate, body)
	opened := false
	defer func() {
		if !opened {
			gate.shut()
			wg.Wait()
		}
	}()
	for q, p := range pp.ps {
		r, err := pp.prepare(q, p)
		if err != nil {
			return nil, pp.fail(q, err)
		}
		r.part = &partRun{p: p, q: q, inject: o.Inject, stop: &stop, ctx: ctx, watch: watch, epoch: epoch,
			last: uint32(min(p.dg.n, 1<<32-1)), extra: p.extra(o.KeepIDs), split: o.SplitExchange,
			tailSends: p.dg.n > 0 && r.plan.Stages[0].Tail == partTailName(r.plan.Key)}
		if r.part.tailSends {
			r.part.tailAt = r.tailAt()
		}
		if o.Trace {
			if r.part.trace, err = newPartTrace(p.ctx); err != nil {
				return nil, pp.fail(q, err)
			}
			defer r.part.trace.close()
		}
		runs[q] = r
		image, _ := partImage(p.windows)
		res.Plans = append(res.Plans, image+": "+r.plan.kernels())
	}
	// Every context, not only the parts' streams: a copy from pageable
	// memory (the priorities prepare uploads) may return before its DMA
	// has landed, and the parts' streams do not wait for it.
	if err := pp.synchronize(); err != nil {
		return nil, err
	}
	// The parts' time counts from here, before their first launches are
	// queued.
	start := time.Now()
	if err := pp.queueFirst(runs); err != nil {
		return nil, err
	}
	opened = true
	gate.open(start)
	if gate.parts == 0 {
		body(0)
	}
	wg.Wait()
	// The first part that failed for a reason of its own.
	for q, err := range errs {
		if err != nil && !errors.Is(err, errAborted) {
			return nil, pp.fail(q, err)
		}
	}
	if err := pp.flags(res.In); err != nil {
		return nil, err
	}
	for q, r := range runs {
		if tr := r.part.trace; tr != nil {
			t, err := tr.result()
			if err != nil {
				return nil, pp.fail(q, err)
			}
			t.Lead = tr.first.Sub(gate.start)
			res.Trace = append(res.Trace, t)
		}
		res.Rounds = max(res.Rounds, res.PartRounds[q])
		res.Time = max(res.Time, res.PartTime[q])
		res.Stalled = res.Stalled || r.stall.stopped
		var b [1]uint64
		if err := cuda.CopyToHost(b[:], pp.ps[q].bytes, 0); err != nil {
			return nil, pp.fail(q, err)
		}
		res.Bytes += int64(b[0])
	}
	return res, nil
}

// queueFirst queues every part's first launch, one part after the
// other, from the caller's goroutine. Queued by the parts' goroutines
// at once, as soon as the gate opened, a first launch took 36-50 µs
// of the host's time, against 9-14 µs for a single part: the driver
// took 19-32 µs over each with both queuing at once, and Go 15-20 µs
// more on return from a call that long; the GPUs waited for it. Each
// part's lock is taken here and released by its goroutine (part.run).
func (pp *Parts) queueFirst(runs []*run) error {
	for q, r := range runs {
		if err := pp.ps[q].queueFirst(r); err != nil {
			// The goroutines will not run: release what they would have.
			for _, r := range runs {
				if r.part.unlock != nil {
					r.part.unlock()
					r.part.unlock = nil
				}
			}
			return pp.fail(q, err)
		}
	}
	return nil
}

// queueFirst takes part p's lock and queues its first launch of run r.
func (p *part) queueFirst(r *run) error {
	if p.dg.n == 0 {
		return nil
	}
	unlock, err := p.dg.lock()
	if err != nil {
		return err
	}
	r.part.unlock = unlock
	if err := r.part.trace.mark(p.l.Stream); err != nil {
		return err
	}
	if err := r.launch(0, r.tailAt()); err != nil {
		return err
	}
	r.part.trace.queued()
	r.part.queued = true
	return nil
}

// epochs numbers the runs of every Parts of the process, so that no
// mailbox pair of an earlier run (or of another graph's mailboxes in
// the same memory) passes for one of this run.
var epochs atomic.Uint64

// nextEpoch returns the tag of a run's mailbox pairs: 24 bits, never 0
// (PART_EPOCH_SHIFT in part.cu; zeroed memory must not pass).
func nextEpoch() uint32 { return uint32(epochs.Add(1)%(1<<24-1)) + 1 }

// prepare makes part q's run: its plan, its priority uploaded, its
// ghosts initialised and its boundary unsent.
func (pp *Parts) prepare(q int, p *part) (*run, error) {
	o := pp.opts
	l, ws, s := p.l, &p.dg.ws, p.spec
	// Every run starts from zero counts, an empty part too (Run reads
	// its bytes): memory from the allocator holds whatever it held.
	for _, b := range []*cuda.Buffer{p.sent, p.fill, p.bytes, p.back} {
		if err := b.MemsetAsync8(0, l.Stream); err != nil {
			return nil, err
		}
	}
	if p.dg.n == 0 {
		return &run{dg: p.dg, plan: &Plan{}}, nil
	}
	pri := Priority{Seed: o.Seed, Class: p.spec.Class, Prim: p.spec.Prim}
	tail := o.Tail || len(pp.ps) == 1 || pp.tailSends
	// One part has no ghosts: the engine's plan, but for partTuning's
	// rules.
	ghosts := len(pp.ps) > 1
	r, err := p.dg.prepare(o.Dist, pri, func(t *Tuning) {
		partTuning(t, o.Dist, tail, ghosts)
		if ghosts && p.spec.hashKeys() && o.Dist == 2 {
			partHashBuckets(t)
		}
		if o.Tune != nil {
			o.Tune(t)
		}
	})
	if err != nil {
		return nil, err
	}
	if st := &r.plan.Stages[0]; pp.tailSends && st.Tail != "" && o.Dist == 1 {
		// Its own grid: its share of what fits of it on the device at
		// once, so that the tails of the parts there run together.
		st.Tail = partTailName(r.plan.Key)
		r.tailGrid = gridShare(l, st.Tail, int64(p.dg.n), p.sharers)
	}
	if o.Dist == 2 && ghosts && !r.plan.Buckets {
		if r.plan.Key != KeyPrim {
			return nil, fmt.Errorf("the plan of a part at distance 2 goes by %s, not by buckets", r.plan.Stages[0].Kernel)
		}
		r.plan = primBuckets(p.dg.n, Defaults(Shape{N: p.dg.n, M: p.dg.m}, 2))
		r.ball = nil
		if err := r.bind(); err != nil {
			return nil, err
		}
	}
	// The owned states now, not at the start of the part's sweeps: a
	// neighbour that pulls (part_pull) reads them from its first launch
	// on, which may come before this part's first, and would read what
	// the last run (or whatever used the memory before) left there.
	if err := r.initStates(); err != nil {
		return nil, err
	}
	gf, slots := int64(GhostFrom(s.Own)), int64(len(s.Offsets)-1)
	if slots > gf {
		st, err := ws.st.View(gf, slots-gf)
		if err != nil {
			return nil, err
		}
		var cls *cuda.Buffer
		if r.cls != nil {
			if cls, err = r.cls.View(gf, slots-gf); err != nil {
				return nil, err
			}
		}
		if err := l.Launch(nil, "part_ghosts", l.Grid("part_ghosts", slots-gf, blockSize), st, cls, int32(slots-gf)); err != nil {
			return nil, err
		}
	}
	if r.plan.Key == KeyHash {
		// The part images' comparisons of hash keys read the top bits of
		// the hashes from the states (PART_PREFIX in mis.cu).
		args := append([]any{ws.st, int32(p.dg.n), int32(gf), int32(slots), uint32(r.seed), uint32(r.seed >> 32)},
			p.extra(o.KeepIDs)...)
		if err := l.Launch(nil, "part_prefix", l.Grid("part_prefix", int64(p.dg.n)+slots-gf, blockSize), args...); err != nil {
			return nil, err
		}
	}
	for _, in := range p.inbox {
		if err := in.at.MemsetAsync32(0, l.Stream); err != nil {
			return nil, err
		}
	}
	if p.pubDev != nil {
		if err := p.pubDev.MemsetAsync32(0, l.Stream); err != nil {
			return nil, err
		}
	}
	if p.pubHost != nil {
		clear(p.pubHost.Bytes())
	}
	return r, nil
}

// partTuning is the engine's tuning t made a part's: without the tail
// unless tail, and at distance 2 never a split run, whose second stage
// runs the hash kernels on class keys: in the part images those read a
// state's class bits as its hash's prefix (PART_PREFIX in mis.cu), and
// with ghosts of other parts the stage would compare by hash once the
// part's own larger classes are decided, which its ghosts may not be.
// With ghosts, buckets (a part has no balls for its ghosts).
func partTuning(t *Tuning, dist int, tail, ghosts bool) {
	if !tail {
		t.Tail = 0
	}
	if dist != 2 {
		return
	}
	t.Split = 0
	if ghosts {
		t.Group = 1
		if t.Buckets == 0 {
			t.Buckets = buckets2
		}
	}
}

// partHashBuckets gives a part of several with hash keys partBuckets
// MIS-2 buckets where the engine runs buckets2 (rows of average degree
// 10 and more, but a tet mesh's) or farBuckets (scattered rows of 20 and
// more: a random graph's parts, whose ghosts' rows count in their
// shape). A part's every launch comes with its pulls, which moves the
// best trade between launches and the waits in each. On two H200s
// (misgrid bench -gpus 2, the builds in turn) two parts of hex27 256³
// took 1.644 and 1.636 ms against 1.655 and 1.647 with 12 buckets, those
// of the random graph 1.823 and 1.821 against 1.880 and 1.879 with 8,
// relabelled hex27 by locality 1.847 against 1.893 with 12. Sparser and
// tet rows keep theirs, and class keys, whose buckets follow the
// classes, were not measured so.
func partHashBuckets(t *Tuning) {
	if t.Buckets == buckets2 {
		t.Buckets = partBuckets
	}
	if t.FarBuckets == farBuckets {
		t.FarBuckets = partBuckets
	}
}

const partBuckets = 10

// gridShare is the grid of kernel name over items threads when sharers
// launches of it split the device: the grid the items ask for, at most
// a sharers-th of the blocks resident on the device at once (a part's
// persistent tail beside the other parts' of its device; a pull's
// segment beside the others).
func gridShare(l *gpu.Loader, name string, items int64, sharers int) uint32 {
	return share(l.Grid(name, items, blockSize), l.Grid(name, 1<<40, blockSize), sharers)
}

// share is gridShare's grid: want, at most a sharers-th of fits, at
// least 1.
func share(want, fits uint32, sharers int) uint32 {
	return max(min(want, fits/uint32(max(sharers, 1))), 1)
}

// primBuckets is the plan of MIS-2 with rank keys in a part: buckets by
// the hash alone (a threshold only orders the work; the ranks decide),
// in the kernel part.cu adds for them.
func primBuckets(n int, t Tuning) *Plan {
	return &Plan{Dist: 2, Key: KeyPrim, First: t.First, Batch: 2, Buckets: true, Stages: []Stage{{
		Kernel: "mis2b_p2", KF: uint32(flushSparse) << 8, Items: (int64(n) + tile - 1) / tile,
		Keys: bucketThresholds(t.Buckets, 1.5, nil, false)}}}
}

// run runs the prepared sweeps of part p and returns their number; done
// is called when the sweeps are, with their error.
func (p *part) run(r *run, done func(error)) (int, error) {
	unlock, err := r.part.unlock, error(nil)
	if unlock == nil {
		if unlock, err = p.dg.lock(); err != nil {
			done(err)
			return 0, err
		}
	}
	defer unlock()
	if p.dg.n == 0 {
		done(nil)
		return 0, nil
	}
	if !r.part.queued {
		err = r.part.trace.mark(p.l.Stream)
	}
	rounds := 0
	if err == nil {
		rounds, err = r.sweeps(nil, nil)
	}
	done(err)
	if err != nil {
		return 0, p.l.Fail(err)
	}
	return rounds, nil
}

// fail waits for whatever is still queued on every part, so that Close
// can free the memory, and names part q.
func (pp *Parts) fail(q int, err error) error {
	for _, p := range pp.ps {
		p.l.Stream.Synchronize()
	}
	return &PartError{Part: q, Device: pp.ps[q].spec.Device, Err: err}
}

// synchronize waits for all work in every part's context.
func (pp *Parts) synchronize() error {
	for q, p := range pp.ps {
		if err := p.ctx.Synchronize(); err != nil {
			return pp.fail(q, p.l.Fail(err))
		}
	}
	return nil
}

// kernels names the kernels of a plan, for reports.
func (p *Plan) kernels() string {
	s := ""
	for i, st := range p.Stages {
		if i > 0 {
			s += "+"
		}
		s += st.Kernel
		if st.Tail != "" {
			s += "+" + st.Tail
		}
	}
	return s
}
