package amg

import (
	"errors"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpusparse"
)

// devLevel is what a numeric Update of a device setup with Options.Reuse
// starts from: the pattern-only data of a level, kept on the device.
type devLevel struct {
	of    *cuda.Buffer // aggregate of every node
	t     *dcsr        // tentative prolongator
	scr   *cuda.Buffer // su_at's scratch, nnz of the level's operator
	dinv  *cuda.Buffer // 1/a_ii
	gal   *gpusparse.Galerkin
	bs, k int
}

// updateOnDevice is the numeric part of Update (Options.Reuse) on the
// device, for a hierarchy the device setup built: the new values go up,
// and every level recomputes D⁻¹ and the eigenvalue estimate, A·T and P
// on their patterns, and the numeric pass of its Galerkin product; the
// host's copies of D⁻¹ and of the matrices the host reads (hostNeeds) are
// refreshed, then the smoothers and the coarse factor (finish). It reports false for a
// hierarchy built on the host, whose Update runs there. A device copy
// that is gone (Close) or fails is replaced by a fresh setup.
func (pc *Preconditioner) updateOnDevice() (bool, error) {
	ds := pc.reuse
	if ds == nil {
		if len(pc.levels) < 2 || pc.levels[0].t != nil {
			return false, nil
		}
		return true, pc.rebuild()
	}
	err := ds.update()
	if err == nil {
		err = pc.hostPart(ds.g)
	}
	if err == nil {
		err = pc.findKernel()
	}
	if err != nil && ds.g.inPlace {
		return true, err // no host matrix to set up again from
	}
	if err != nil {
		return true, pc.rebuild()
	}
	return true, nil
}

// rebuild replaces the hierarchy by a fresh setup of pc.op, already
// checked.
func (pc *Preconditioner) rebuild() error {
	_ = pc.release()
	pc.levels, pc.coarse, pc.kernel, pc.userKernel = nil, nil, nil, nil
	return pc.setup(false)
}

func (ds *devSetup) update() error {
	pc, g := ds.pc, ds.g
	if err := g.idle(); err != nil {
		return err
	}
	ds.err = nil
	defer ds.freeLevel()
	t0 := time.Now()
	g.stale()
	var err error
	if !ds.staged {
		err = stage(ds, g.op.val, pc.fine.val[:pc.fine.nnz()])
	}
	ds.staged = false
	if d0 := g.levels[0].a; g.op != d0 && ds.dkeep != nil {
		// The hierarchy's finest level: the kept entries' new values.
		ds.launchIn("in_gather", int64(d0.nnz), int64(d0.nnz), ds.dkeep, g.op.val, d0.val)
	} else if g.op != d0 {
		a0 := pc.levels[0].a
		err = errors.Join(err, stage(ds, d0.val, a0.val[:a0.nnz()]))
	}
	if err != nil {
		return err
	}
	pc.phase("upload", t0)
	for i := range ds.lv {
		dl, l, gl := &ds.lv[i], pc.levels[i], &g.levels[i]
		if err := ds.numeric(l, gl.a, dl, gl); err != nil {
			return fmt.Errorf("amg: level %d: %w", i, err)
		}
		t0 = time.Now()
		if err := ds.sp.After(g.stream); err != nil {
			return err
		}
		if err := dl.gal.Numeric(); err != nil {
			return err
		}
		pc.phase("galerkin", t0)
	}
	return nil
}

// refreshDevice brings the device copy up to date after Update: the
// values of a host Update (refresh), or, after updateOnDevice, the
// smoother data and the coarse inverse that the host computed.
func (pc *Preconditioner) refreshDevice() error {
	if pc.reuse == nil {
		return pc.dev.refresh(pc)
	}
	g := pc.dev
	err := g.stream.Synchronize()
	last := len(pc.levels) - 1
	for i, l := range pc.levels[:last] {
		gl := &g.levels[i]
		gl.lo, gl.hi = l.sm.lo, l.sm.hi
		if err == nil && l.sm.kind != Chebyshev {
			err = cuda.CopyToDevice(gl.dinv, 0, l.sm.dinv)
		}
	}
	if err == nil {
		var m []float64
		if m, err = coarseInverse(pc.pool, pc.coarse); err == nil {
			err = cuda.CopyToDevice(g.cinv, 0, m)
		}
	}
	if err != nil {
		_ = pc.reuse.close()
		pc.reuse = nil
	}
	return err
}
