package mis

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
)

// This file runs a prepared sweepRun (gpu_run.go): the launches, the
// checks of the live count between batches of them, and the result.

// bandSweeps is the number of sweeps that visit part of the vertices
// (with a band threshold), counting MIS-2's first.
func (r *sweepRun) bandSweeps() int {
	if r.bands < 2 {
		return 0
	}
	return r.band0 + (r.bands-1)*r.perBand
}

// band is the band threshold of sweep pass: vertices whose hash is below
// it wait (in_band in mis.cu).
func (r *sweepRun) band(pass int) uint32 {
	i := pass - r.band0
	if r.bands < 2 || i < 0 || i >= (r.bands-1)*r.perBand {
		return 0
	}
	f := float64(i/r.perBand+1) / float64(r.bands)
	if r.shape > 0 && r.shape != 1 {
		f = math.Pow(f, r.shape)
	}
	return uint32(min((1-f)*(1<<32), 1<<32-1))
}

// sweeps initialises the state and runs sweeps until one finds every
// vertex settled. Batches of sweeps are queued two ahead of the check of
// the live count, so the device never waits for the host; the sweeps
// queued past the end return at once. It returns the number of sweeps
// that found work. start and end, when not nil, are recorded around all
// device work.
func (r *sweepRun) sweeps(start, end *cuda.Event) (int, error) {
	dg, e, ws := r.dg, r.dg.eng, &r.dg.ws
	if start != nil {
		if err := start.Record(e.stream); err != nil {
			return 0, err
		}
	}
	if err := r.reset(); err != nil {
		return 0, err
	}
	host := cuda.HostSlice[uint32](ws.host)
	evs := ws.evs
	pass := 0
	batch := func(slot, count int) error {
		for i := 0; i < count; i++ {
			if pass >= nCount {
				// The ring slot was used nCount sweeps ago: clear it.
				v, err := ws.count.View(4*int64(pass%nCount), 4)
				if err != nil {
					return err
				}
				if err := v.MemsetAsync32(0, e.stream); err != nil {
					return err
				}
			}
			if r.tail > 0 && pass == r.tail {
				if err := r.launchTail(pass); err != nil {
					return err
				}
			} else if err := r.launchSweep(pass); err != nil {
				return err
			}
			pass++
		}
		if err := ws.count.CopyToHostAsync(ws.host, int64(4*slot), 4*int64((pass-1)%nCount), 4, e.stream); err != nil {
			return err
		}
		return evs[slot].Record(e.stream)
	}
	// Every sweep settles at least the undecided vertex of largest key
	// (MIS-2: within two sweeps), so more sweeps than this mean a bug.
	limit := 2*dg.n + 8
	done := false
	if r.tail > 0 {
		// The full sweeps and the tail in one go; it settles every
		// vertex unless its pass bound was hit, so one check suffices.
		if err := batch(0, r.tail+1); err != nil {
			return 0, err
		}
		if err := evs[0].Synchronize(); err != nil {
			return 0, err
		}
		done = host[0] == 0
	}
	// Bucket stages run one after the other: a stage starts once the
	// one before left nothing waiting (the launches queued past that
	// return at once).
	r.stageAt = r.stageAt[:0]
	for si := 0; !done && si < max(len(r.stages), 1); si++ {
		first := r.first
		if len(r.stages) > 0 {
			// A stage's first check follows its buckets, the first
			// launch of its last range, and one more that finds
			// nothing left most of the time.
			r.stageAt = append(r.stageAt, pass)
			first = r.stages[si].launches + 1
		}
		if err := batch(0, first); err != nil {
			return 0, err
		}
		if err := batch(1, r.batch); err != nil {
			return 0, err
		}
		for cur := 0; ; cur ^= 1 {
			if err := evs[cur].Synchronize(); err != nil {
				return 0, err
			}
			if host[cur] == 0 {
				break
			}
			if pass > limit {
				return 0, fmt.Errorf("mis: GPU sweeps did not converge after %d sweeps on %d vertices (a bug)", pass, dg.n)
			}
			if err := batch(cur, r.batch); err != nil {
				return 0, err
			}
		}
	}
	if end != nil {
		if err := end.Record(e.stream); err != nil {
			return 0, err
		}
	}
	if err := e.stream.Synchronize(); err != nil {
		return 0, err
	}
	counts := make([]uint32, nCount+1)
	if err := cuda.CopyToHost(counts, ws.count, 0); err != nil {
		return 0, err
	}
	// The run ended at the first launch of the last stage's last range
	// or later.
	from := 0
	if k := len(r.stageAt); k > 0 {
		from = r.stageAt[k-1] + r.stages[k-1].launches - 1
	}
	for p := max(0, pass-nCount); p < pass; p++ {
		if counts[p%nCount] == 0 && p >= from {
			if r.tail > 0 && p == r.tail {
				// The tail counts as the passes it made.
				return p + int(counts[nCount]), nil
			}
			return p, nil
		}
	}
	return pass, nil
}

// reset queues what every run starts with: the states (and balls), and
// zero live counts.
func (r *sweepRun) reset() error {
	dg, e, ws := r.dg, r.dg.eng, &r.dg.ws
	n, np := int32(dg.n), int32(padded(dg.n))
	if err := e.launch("mis_init", e.grid("mis_init", int64(np), blockSize), ws.st, r.ball, r.cls, n, np); err != nil {
		return err
	}
	return ws.count.MemsetAsync32(0, e.stream)
}

// launchSweep queues sweep number pass.
func (r *sweepRun) launchSweep(pass int) error {
	dg, e, ws := r.dg, r.dg.eng, &r.dg.ws
	if len(r.stages) > 0 {
		s, i := r.stage(pass)
		hi, lo := s.key(i)
		kf := s.kf
		if i < s.launches {
			kf |= kfAlways
		}
		args := []any{dg.off, dg.adj, ws.st, r.prim, ws.count, int32(dg.n), int32(nCount),
			int32(pass), uint32(r.seed), uint32(r.seed >> 32), hi, lo, kf}
		if s.list != nil {
			args = append(args, s.list, int32(s.nlist))
		}
		return e.launch(s.name, s.grid, args...)
	}
	name, grid := r.name, r.grid
	if pass == 0 && r.firstName != "" {
		name, grid = r.firstName, r.firstGrid
	}
	return e.launch(name, grid, dg.off, dg.adj, ws.st, r.ball, r.prim, ws.count, int32(dg.n), int32(nCount),
		int32(pass), uint32(r.seed), uint32(r.seed>>32), r.band(pass), r.kf)
}

// launchTail queues the MIS-1 tail as sweep number pass: compaction of
// the undecided vertices into r.list, then the persistent launch.
func (r *sweepRun) launchTail(pass int) error {
	dg, e, ws := r.dg, r.dg.eng, &r.dg.ws
	n := int32(dg.n)
	ln, err := ws.count.View(4*(nCount+1), 4)
	if err != nil {
		return err
	}
	if r.dist == 1 {
		err = e.launch("mis_compact", e.grid("mis_compact", int64(dg.n), blockSize), ws.st, n, r.list, ln)
	} else {
		err = e.launch("mis_compact2", e.grid("mis_compact2", int64(dg.n), blockSize), ws.st, r.ball, n, r.list, ln)
	}
	if err != nil {
		return err
	}
	return e.launch(r.tailName, r.tailGrid, dg.off, dg.adj, ws.st, r.ball, r.list, ln, r.prim, ws.count,
		n, int32(nCount), int32(pass), uint32(r.seed), uint32(r.seed>>32))
}

// members turns the state bytes into the set and copies it back.
func (dg *DeviceGraph) members() (*Result, error) {
	e, ws := dg.eng, &dg.ws
	if err := ws.small.MemsetAsync32(0, e.stream); err != nil {
		return nil, err
	}
	if err := e.launch("mis_members", e.grid("mis_members", int64(dg.n), blockSize), ws.st, ws.st, int32(dg.n), ws.small); err != nil {
		return nil, err
	}
	if err := e.stream.Synchronize(); err != nil {
		return nil, err
	}
	in := make([]bool, dg.n)
	// bool is one byte holding 0 or 1, which is what mis_members writes.
	if err := cuda.CopyToHost(unsafe.Slice((*uint8)(unsafe.Pointer(&in[0])), dg.n), ws.st, 0); err != nil {
		return nil, err
	}
	var size [1]uint32
	if err := cuda.CopyToHost(size[:], ws.small, 0); err != nil {
		return nil, err
	}
	return &Result{In: in, Size: int(size[0]), Backend: "gpu"}, nil
}
