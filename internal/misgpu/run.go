package misgpu

import (
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// This file executes a bound plan (exec.go): the launches and the checks
// of the live count between batches of them.

// sweeps initialises the state and runs sweeps until one finds every
// vertex settled. Batches of sweeps are queued two ahead of the check of
// the live count, so the device never waits for the host; the sweeps
// queued past the end return at once. It returns the number of sweeps
// that found work. start and end, when not nil, are recorded around all
// device work.
func (r *run) sweeps(start, end *cuda.Event) (int, error) {
	e, ws := r.dg.l, &r.dg.ws
	if start != nil {
		if err := start.Record(e.Stream); err != nil {
			return 0, err
		}
	}
	// A part's states were initialised before any part started
	// (Parts.prepare): its neighbours may pull them from their first
	// launch on.
	if r.part == nil {
		if err := r.initStates(); err != nil {
			return 0, err
		}
	}
	tail := r.tailAt()
	r.pass = 0
	done := false
	if tail > 0 {
		// The full sweeps and the tail in one go; it settles every
		// vertex unless its pass bound was hit, so one check suffices.
		if err := r.batch(0, tail+1, tail); err != nil {
			return 0, err
		}
		if err := ws.evs[0].Synchronize(); err != nil {
			return 0, err
		}
		done = cuda.HostSlice[uint32](ws.host)[0] == 0
	}
	if !done {
		if err := r.stages(tail); err != nil {
			return 0, err
		}
	}
	if end != nil {
		if err := end.Record(e.Stream); err != nil {
			return 0, err
		}
	}
	if err := e.Stream.Synchronize(); err != nil {
		return 0, err
	}
	r.end = time.Now()
	return r.rounds(tail)
}

// swept returns the time from start until the sweeps were done (until
// now if they did not get that far).
func (r *run) swept(start time.Time) time.Duration {
	if r.end.IsZero() {
		return time.Since(start)
	}
	return r.end.Sub(start)
}

// stages queues the launches of the plan's stages and checks the live
// count between batches of them until the last stage leaves nothing in
// play (or the sweeps stall, or a part's watch stops them).
//
// Bucket stages run one after the other: a stage starts once the one
// before left nothing waiting (the launches queued past that return at
// once).
func (r *run) stages(tail int) error {
	dg, ws, p := r.dg, &r.dg.ws, r.plan
	host := cuda.HostSlice[uint32](ws.host)
	// Every sweep settles at least the undecided vertex of largest key
	// (MIS-2: within two sweeps), so more sweeps than this mean a bug.
	limit := 2*dg.n + 8
	r.stageAt = r.stageAt[:0]
	r.stall = stallWatch{}
	for si := 0; !r.stall.stopped && si < len(p.Stages); si++ {
		first := p.First
		if p.Buckets {
			// A stage's first check follows its buckets, the first
			// launch of its last range, and one more that finds
			// nothing left most of the time.
			r.stageAt = append(r.stageAt, r.pass)
			first = p.Stages[si].Launches() + 1
		}
		if err := r.batch(0, first, tail); err != nil {
			return err
		}
		if err := r.batch(1, p.Batch, tail); err != nil {
			return err
		}
		for cur := 0; ; cur ^= 1 {
			if err := ws.evs[cur].Synchronize(); err != nil {
				return err
			}
			if host[cur] == 0 {
				break
			}
			// A part of a multi-GPU run may wait on its neighbours for
			// any number of sweeps: the parts' watch bounds it.
			if r.part != nil {
				stop, err := r.part.check(r.pass, host[cur])
				if err != nil {
					return err
				}
				if stop {
					r.stall.stopped = true
					break
				}
			} else if r.pass > limit {
				return fmt.Errorf("GPU sweeps did not converge after %d sweeps on %d vertices (a bug)", r.pass, dg.n)
			}
			if r.mayStall && r.stall.stalled(r.pass, host[cur]) {
				// The batches still queued only settle more vertices,
				// which keeps the state a valid prefix of the greedy.
				break
			}
			if err := r.batch(cur, p.Batch, tail); err != nil {
				return err
			}
		}
	}
	return nil
}

// stallWatch decides when sweeps stop paying: after stallFrom sweeps, two
// checks in a row that each find the live count down by less than a
// 64th. Hash, boundary and degree priorities settle a mesh in a few dozen
// sweeps; a priority that chains the greedy order takes one per link.
type stallWatch struct {
	live    uint32 // the live count at the previous check
	slow    int    // checks in a row that gained too little
	stopped bool
}

const stallFrom = 64

func (w *stallWatch) stalled(pass int, live uint32) bool {
	prev := w.live
	w.live = live
	if pass < stallFrom || prev == 0 {
		return false
	}
	if prev-min(prev, live) < prev/64 {
		w.slow++
	} else {
		w.slow = 0
	}
	w.stopped = w.slow >= 2
	return w.stopped
}

// batch queues count sweeps from r.pass on (the tail at sweep tail, when
// not 0), then the copy of the last one's live count into host slot slot
// and event slot.
func (r *run) batch(slot, count, tail int) error {
	e, ws := r.dg.l, &r.dg.ws
	for i := 0; i < count; i++ {
		pass := r.pass
		if pass >= nCount {
			// The ring slot was used nCount sweeps ago: clear it.
			v, err := ws.count.View(4*int64(pass%nCount), 4)
			if err != nil {
				return err
			}
			if err := v.MemsetAsync32(0, e.Stream); err != nil {
				return err
			}
		}
		if pass == 0 && r.part != nil && r.part.queued {
			// Parts.Run queued it (queueFirst).
			r.part.queued = false
		} else if err := r.launch(pass, tail); err != nil {
			return err
		}
		if err := r.part.after(pass); err != nil {
			return err
		}
		r.pass++
	}
	if err := ws.count.CopyToHostAsync(ws.host, int64(4*slot), 4*int64((r.pass-1)%nCount), 4, e.Stream); err != nil {
		return err
	}
	return ws.evs[slot].Record(e.Stream)
}

// launch queues sweep number pass: the tail at sweep tail (when not 0),
// else a sweep or a bucket launch.
func (r *run) launch(pass, tail int) error {
	if tail > 0 && pass == tail {
		return r.launchTail(pass)
	}
	return r.launchSweep(pass)
}

// rounds reads the live counts of a finished run and returns the number
// of sweeps that found work: the first with a count of 0, at or after
// the first launch of the last stage's last range (a tail counts as the
// passes it made).
func (r *run) rounds(tail int) (int, error) {
	counts := make([]uint32, nCount+1)
	if err := cuda.CopyToHost(counts, r.dg.ws.count, 0); err != nil {
		return 0, err
	}
	from := 0
	if k := len(r.stageAt); k > 0 {
		from = r.stageAt[k-1] + r.plan.Stages[k-1].Launches() - 1
	}
	for q := max(0, r.pass-nCount); q < r.pass; q++ {
		if counts[q%nCount] == 0 && q >= from {
			if tail > 0 && q == tail {
				return q + int(counts[nCount]), nil
			}
			return q, nil
		}
	}
	return r.pass, nil
}

// tailAt is the sweep that launches the tail, 0 for none.
func (r *run) tailAt() int {
	if s := &r.plan.Stages[0]; !r.plan.Buckets && s.Tail != "" {
		return s.TailAt
	}
	return 0
}

// stage returns the bucket stage of launch pass and the launch's index
// within it.
func (r *run) stage(pass int) (int, int) {
	for i := len(r.stageAt) - 1; i > 0; i-- {
		if r.stageAt[i] <= pass {
			return i, pass - r.stageAt[i]
		}
	}
	return 0, pass
}

// initStates queues what every run starts with: the states (and balls),
// and zero live counts.
func (r *run) initStates() error {
	dg, e, ws := r.dg, r.dg.l, &r.dg.ws
	n, np := int32(dg.n), int32(padded(dg.n))
	if err := e.Launch(nil, "mis_init", e.Grid("mis_init", int64(np), blockSize), ws.st, r.ball, r.cls, n, np); err != nil {
		return err
	}
	return ws.count.MemsetAsync32(0, e.Stream)
}

// launchSweep queues sweep number pass.
func (r *run) launchSweep(pass int) error {
	dg, e, ws := r.dg, r.dg.l, &r.dg.ws
	if r.plan.Buckets {
		si, i := r.stage(pass)
		s := &r.plan.Stages[si]
		k := s.Last
		if i < len(s.Keys) {
			k = s.Keys[i]
		}
		kf := s.KF
		if i < s.Launches() {
			kf |= kfAlways
		}
		args := []any{dg.off, dg.adj, ws.st, r.prim, ws.count, int32(dg.n), int32(nCount),
			int32(pass), uint32(r.seed), uint32(r.seed >> 32), uint32(k >> 32), uint32(k), kf}
		if s.List {
			args = append(args, r.list, int32(r.nlist))
		}
		return e.Launch(nil, s.Kernel, r.grids[si], r.part.args(args)...)
	}
	s := &r.plan.Stages[0]
	name, grid := s.Kernel, r.grids[0]
	if pass == 0 && s.First != "" {
		name, grid = s.First, r.firstGrid
	}
	band := uint32(0)
	if pass < len(s.Bands) {
		band = s.Bands[pass]
	}
	return e.Launch(nil, name, grid, r.part.args([]any{dg.off, dg.adj, ws.st, r.ball, r.prim, ws.count, int32(dg.n),
		int32(nCount), int32(pass), uint32(r.seed), uint32(r.seed >> 32), band, s.KF})...)
}

// launchTail queues the tail as sweep number pass: compaction of
// the undecided vertices into r.list, then the persistent launch.
func (r *run) launchTail(pass int) error {
	dg, e, ws := r.dg, r.dg.l, &r.dg.ws
	n := int32(dg.n)
	ln, err := ws.count.View(4*(nCount+1), 4)
	if err != nil {
		return err
	}
	pushed, err := r.part.beforeTail()
	if err != nil {
		return err
	}
	if r.plan.Dist == 1 {
		// After a part's push, which waited for the sweeps, the
		// compaction of its undecided vertices starts beside the push:
		// neither reads what the other writes.
		launch := e.Launch
		if pushed {
			launch = e.LaunchOverlap
		}
		err = launch(nil, "mis_compact", e.Grid("mis_compact", int64(dg.n), blockSize), ws.st, n, r.list, ln)
	} else {
		err = e.Launch(nil, "mis_compact2", e.Grid("mis_compact2", int64(dg.n), blockSize), ws.st, r.ball, n, r.list, ln)
	}
	if err != nil {
		return err
	}
	return e.Launch(nil, r.plan.Stages[0].Tail, r.tailGrid, r.part.tailArgs([]any{dg.off, dg.adj, ws.st, r.ball, r.list, ln,
		r.prim, ws.count, n, int32(nCount), int32(pass), uint32(r.seed), uint32(r.seed >> 32)})...)
}
