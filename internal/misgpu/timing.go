package misgpu

import (
	"errors"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// Times holds device times measured with CUDA events around all device
// work of each repetition: state initialisation and every sweep for the
// MIS; one pass that streams the row offsets and the adjacency and
// writes a byte per vertex for the floor, the least traffic any MIS
// needs.
type Times struct {
	MIS, Floor []time.Duration
	Rounds     int     // sweeps that found work (the most of the repetitions)
	Tuning     Tuning  // the tuning of the run
	Plan       *Plan   // its plan
	Result     *Result // the set of the last repetition
	// With profile: each sweep's device time and the vertices it found
	// still in play (the last sweep finds none).
	SweepTimes []time.Duration
	SweepLive  []int
}

// Time runs the MIS on dg repeatedly and times it against the
// memory-streaming floor, alternating the two so that both see the same
// clocks: warmup untimed runs, then reps timed ones. tune, when not nil,
// adjusts the default tuning; profile adds one run that times each
// sweep on its own. Each repetition starts from scratch; the set is
// copied back once, after the last.
func (dg *Graph) Time(dist int, pri Priority, tune func(*Tuning), reps, warmup int, profile bool) (*Times, error) {
	if dg.n == 0 {
		return nil, errors.New("empty graph")
	}
	unlock, err := dg.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	e := dg.l
	out := &Times{}
	run, err := dg.prepare(dist, pri, func(t *Tuning) {
		if tune != nil {
			tune(t)
		}
		out.Tuning = *t
	})
	if err != nil {
		return nil, e.Fail(err)
	}
	out.Plan = run.plan
	var evs [2]*cuda.Event
	for i := range evs {
		if evs[i], err = e.Ctx.NewEvent(); err != nil {
			return nil, e.Fail(err)
		}
		defer evs[i].Close()
	}
	for i := 0; i < warmup+reps; i++ {
		timed := i >= warmup
		rounds, err := run.sweeps(evs[0], evs[1])
		if err != nil {
			return nil, e.Fail(err)
		}
		if timed {
			d, err := cuda.Elapsed(evs[0], evs[1])
			if err != nil {
				return nil, e.Fail(err)
			}
			out.MIS = append(out.MIS, d)
			// Asynchronous sweeps may settle in a different number of
			// sweeps from run to run (the set does not change): report
			// the most.
			out.Rounds = max(out.Rounds, rounds)
		}
		d, err := dg.floor(evs[0], evs[1])
		if err != nil {
			return nil, e.Fail(err)
		}
		if timed {
			out.Floor = append(out.Floor, d)
		}
	}
	if profile {
		if err := run.profile(out); err != nil {
			return nil, e.Fail(err)
		}
	}
	res, err := dg.members()
	if err != nil {
		return nil, e.Fail(err)
	}
	res.Rounds = out.Rounds
	out.Result = res
	return out, nil
}

// profile runs the sweeps one by one with an event after each (the
// count tells when to stop), so the time of every sweep can be read.
func (r *run) profile(out *Times) error {
	e, ws := r.dg.l, &r.dg.ws
	start, err := e.Ctx.NewEvent()
	if err != nil {
		return err
	}
	defer start.Close()
	if err := r.initStates(); err != nil {
		return err
	}
	if err := start.Record(e.Stream); err != nil {
		return err
	}
	prev := start
	var one [1]uint32
	r.stageAt = append(r.stageAt[:0], 0)
	for pass := 0; pass < nCount; pass++ {
		if err := r.launchSweep(pass); err != nil {
			return err
		}
		ev, err := e.Ctx.NewEvent()
		if err != nil {
			return err
		}
		defer ev.Close()
		if err := ev.Record(e.Stream); err != nil {
			return err
		}
		if err := ev.Synchronize(); err != nil {
			return err
		}
		d, err := cuda.Elapsed(prev, ev)
		if err != nil {
			return err
		}
		if err := cuda.CopyToHost(one[:], ws.count, 4*int64(pass)); err != nil {
			return err
		}
		out.SweepTimes = append(out.SweepTimes, d)
		out.SweepLive = append(out.SweepLive, int(one[0]))
		prev = ev
		if one[0] != 0 {
			continue
		}
		if k := len(r.stageAt) - 1; r.plan.Buckets && pass >= r.stageAt[k]+r.plan.Stages[k].Launches() {
			if k+1 < len(r.plan.Stages) {
				r.stageAt = append(r.stageAt, pass+1) // the next stage
				continue
			}
			break
		}
		if !r.plan.Buckets {
			break
		}
	}
	return nil
}

// floor times one streaming pass over the graph (stream_floor in mis.cu).
func (dg *Graph) floor(start, end *cuda.Event) (time.Duration, error) {
	e := dg.l
	m4 := dg.m / 4
	if dg.adj.Ptr()%16 != 0 {
		m4 = 0 // the vector loads need 16-byte alignment
	}
	if dg.ws.floor == nil {
		b, err := e.Ctx.Alloc(int64(dg.n))
		if err != nil {
			return 0, err
		}
		dg.ws.floor = b
	}
	out := dg.ws.floor
	if err := start.Record(e.Stream); err != nil {
		return 0, err
	}
	g := e.Grid("stream_floor", max(int64(dg.n), dg.m/4), blockSize)
	if err := e.Launch(nil, "stream_floor", g, dg.off, dg.adj, m4, dg.adj, dg.m, out, int32(dg.n)); err != nil {
		return 0, err
	}
	if err := end.Record(e.Stream); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	return cuda.Elapsed(start, end)
}
