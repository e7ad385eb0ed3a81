package mis

import (
	"errors"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// DeviceBench configures TimeDevice.
type DeviceBench struct {
	Reps   int // timed repetitions; 0 means 10
	Warmup int // untimed runs before them; 0 means 2
	// Group is the number of lanes that share one vertex's row: 1, 4, 8
	// or 32; 0 picks it from the average degree as Compute does.
	Group int
	// Tail is the number of full sweeps after which the vertices still
	// in play are settled by one persistent launch; 0 takes the default,
	// a negative value runs sweeps to the end.
	Tail int
	// Scalar keeps 4-byte row loads where 16-byte ones are possible
	// (MIS-1, one lane per vertex).
	Scalar bool
	// Single keeps no runner-up beside each ball's champion (MIS-2, one
	// lane per vertex): a ball is rescanned whenever its champion leaves.
	Single bool
	// Profile adds one run that times each sweep on its own.
	Profile bool
	// Bands and PerBand order the first sweeps by key (0: the default;
	// Bands 1: none); see the GPU notes in docs/gpu.md.
	Bands, PerBand int
	// KeyFilter is 0 for the default (by the graph's locality) or 1 +
	// gpuTuning.kf.
	KeyFilter int
	// NoFirst runs MIS-2's first sweep with the general kernel.
	NoFirst bool
	// BandShape is gpuTuning.bandShape in hundredths (0: the default).
	BandShape int
	// Buckets runs MIS-2 by key buckets in that many launches (0: the
	// default, -1: the ball sweeps); BucketShape is their shape in
	// hundredths (0: the default).
	Buckets, BucketShape int
	// Flush is the number of listed candidates at which a warp of a
	// bucket launch decides them (0: the default).
	Flush int
	// ClassBuckets is 1 to give each class buckets of its own where one
	// class holds most vertices (see bucketThresholds), -1 to run the
	// buckets over all keys, 0 for the default.
	ClassBuckets int
	// Split is 1 or 2 to run class keys whose class 0 holds most
	// vertices in two stages (gpuTuning.split), -1 in one, 0 for the
	// default.
	Split int
	// Balanced is 1 for the balanced bucket kernels (gpuTuning.balanced),
	// -1 for the others, 0 for the default.
	Balanced int
}

// DeviceTimes holds device times measured with CUDA events around all
// device work of each repetition: state initialisation and every sweep
// for the MIS; one pass that streams the row offsets and the adjacency and
// writes a byte per vertex for the floor, the least traffic any MIS needs.
type DeviceTimes struct {
	MIS, Floor []time.Duration
	Rounds     int     // sweeps that found work
	Group      int     // lanes per vertex used
	Tail       int     // full sweeps before the tail launch, -1 none
	Bands      int     // hash bands of the first sweeps (1: none)
	PerBand    int     // sweeps per band
	KeyFilter  int     // the read mode used (gpuTuning.kf)
	Buckets    int     // MIS-2 key buckets (0: the ball sweeps)
	Flush      int     // with buckets: candidates a warp lists before deciding
	PerClass   bool    // with buckets: per-class buckets asked for
	Stages     int     // with buckets: kernel stages (2: class 0 by the hash kernels)
	Balanced   bool    // with buckets: the balanced kernels
	Result     *Result // the set of the last repetition
	// With Profile: each sweep's device time and the vertices it found
	// still in play (the last sweep finds none).
	SweepTimes []time.Duration
	SweepLive  []int
}

// TimeDevice runs the MIS on dg repeatedly and times it against the
// memory-streaming floor, alternating the two so that both see the same
// clocks. Each repetition starts from scratch; the set is copied back
// once, after the last.
func TimeDevice(dg *DeviceGraph, opts Options, b DeviceBench) (*DeviceTimes, error) {
	if dg == nil {
		return nil, errors.New("mis: TimeDevice: nil graph")
	}
	if b.Reps <= 0 {
		b.Reps = 10
	}
	if b.Warmup <= 0 {
		b.Warmup = 2
	}
	dist, err := opts.distance()
	if err != nil {
		return nil, err
	}
	if opts.Priority.Kind == User {
		return nil, fmt.Errorf("mis: TimeDevice: priority %v not supported", opts.Priority.Kind)
	}
	pri, err := dg.priority(opts.Priority, "TimeDevice")
	if err != nil {
		return nil, err
	}
	t := defaultTuning(dg, dist)
	if b.Group != 0 {
		t.group = b.Group
	}
	if b.Bands != 0 {
		t.bands = b.Bands
	}
	if b.PerBand != 0 {
		t.perBand = b.PerBand
	}
	t.noFirst = b.NoFirst
	if b.BandShape > 0 {
		t.bandShape = float64(b.BandShape) / 100
	}
	if b.KeyFilter > 0 {
		t.kf, t.kfAuto = b.KeyFilter-1, false
	}
	t.scalar = b.Scalar
	t.single = b.Single
	if b.Buckets != 0 {
		t.buckets, t.farBuckets = max(b.Buckets, 0), 0
	}
	if b.ClassBuckets != 0 {
		t.classBuckets = b.ClassBuckets > 0
	}
	if b.Flush > 0 {
		t.flush = b.Flush
	}
	if b.Split != 0 {
		t.split = max(b.Split, 0)
	}
	if b.Balanced != 0 {
		t.balanced, t.balancedHash = b.Balanced > 0, false
	}
	if b.BucketShape > 0 {
		t.bucketShape = float64(b.BucketShape) / 100
	}
	if b.Tail != 0 {
		t.tail = max(b.Tail, 0)
	}
	e := dg.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.usable(); err != nil {
		return nil, fmt.Errorf("%w: the GPU context failed earlier: %w", ErrNoGPU, err)
	}
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if dg.n == 0 {
		return nil, errors.New("mis: TimeDevice: empty graph")
	}
	run, err := dg.prepare(dist, pri, t)
	if err != nil {
		return nil, e.fail(err)
	}
	var evs [2]*cuda.Event
	for i := range evs {
		if evs[i], err = e.ctx.NewEvent(); err != nil {
			return nil, e.fail(err)
		}
		defer evs[i].Close()
	}
	out := &DeviceTimes{Group: t.group, Tail: t.tail, Bands: max(run.bands, 1), PerBand: run.perBand, KeyFilter: int(run.kf & 0xff), Buckets: run.buckets}
	if run.buckets > 0 {
		out.Flush, out.PerClass, out.Stages = int(run.kf>>8&0xff), t.classBuckets, len(run.stages)
		out.Balanced = len(run.stages) > 0 && run.stages[0].balanced
	}
	if t.tail == 0 || run.buckets > 0 {
		out.Tail = -1
	}
	for i := 0; i < b.Warmup+b.Reps; i++ {
		timed := i >= b.Warmup
		rounds, err := run.sweeps(evs[0], evs[1])
		if err != nil {
			return nil, e.fail(err)
		}
		if timed {
			d, err := cuda.Elapsed(evs[0], evs[1])
			if err != nil {
				return nil, e.fail(err)
			}
			out.MIS = append(out.MIS, d)
			// Asynchronous sweeps may settle in a different number of
			// sweeps from run to run (the set does not change): report
			// the most.
			out.Rounds = max(out.Rounds, rounds)
		}
		d, err := dg.floor(evs[0], evs[1])
		if err != nil {
			return nil, e.fail(err)
		}
		if timed {
			out.Floor = append(out.Floor, d)
		}
	}
	if b.Profile {
		if err := run.profile(out); err != nil {
			return nil, e.fail(err)
		}
	}
	res, err := dg.members()
	if err != nil {
		return nil, e.fail(err)
	}
	res.Rounds = out.Rounds
	out.Result = res
	return out, nil
}

// profile runs the sweeps one by one with an event after each (the
// count tells when to stop), so the time of every sweep can be read.
func (r *sweepRun) profile(out *DeviceTimes) error {
	e, ws := r.dg.eng, &r.dg.ws
	start, err := e.ctx.NewEvent()
	if err != nil {
		return err
	}
	defer start.Close()
	if err := r.reset(); err != nil {
		return err
	}
	if err := start.Record(e.stream); err != nil {
		return err
	}
	prev := start
	var one [1]uint32
	r.stageAt = append(r.stageAt[:0], 0)
	for pass := 0; pass < nCount; pass++ {
		if err := r.launchSweep(pass); err != nil {
			return err
		}
		ev, err := e.ctx.NewEvent()
		if err != nil {
			return err
		}
		defer ev.Close()
		if err := ev.Record(e.stream); err != nil {
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
		if k := len(r.stageAt) - 1; len(r.stages) > 0 && pass >= r.stageAt[k]+r.stages[k].launches {
			if k+1 < len(r.stages) {
				r.stageAt = append(r.stageAt, pass+1) // the next stage
				continue
			}
			break
		}
		if len(r.stages) == 0 {
			break
		}
	}
	return nil
}

// floor times one streaming pass over the graph (stream_floor in mis.cu).
func (dg *DeviceGraph) floor(start, end *cuda.Event) (time.Duration, error) {
	e := dg.eng
	m4 := dg.m / 4
	if dg.adj.Ptr()%16 != 0 {
		m4 = 0 // the vector loads need 16-byte alignment
	}
	if dg.ws.floor == nil {
		b, err := e.ctx.Alloc(int64(dg.n))
		if err != nil {
			return 0, err
		}
		dg.ws.floor = b
	}
	out := dg.ws.floor
	if err := start.Record(e.stream); err != nil {
		return 0, err
	}
	g := e.grid("stream_floor", max(int64(dg.n), dg.m/4), blockSize)
	if err := e.launch("stream_floor", g, dg.off, dg.adj, m4, dg.adj, dg.m, out, int32(dg.n)); err != nil {
		return 0, err
	}
	if err := end.Record(e.stream); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	return cuda.Elapsed(start, end)
}
