package amg

import (
	"errors"
	"fmt"
	"math"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mis"
)

// Host copies of the device setup's matrices. The hierarchy's matrices
// live on the device; the host holds mirrors of them (row offsets and
// sizes) and fills one only when the host needs its arrays: the coarse
// factor, l1-Jacobi, a singular coarse operator's kernel, the host's PCG
// on a caller's device matrix, or Close, which leaves the hierarchy on
// the host.

// mirror is a host matrix whose arrays are on the device only (nil on
// the host) until fill downloads them, or the inverse diagonal of a
// level (l, dv).
type mirror struct {
	h  *csr
	d  *dcsr
	l  *level
	dv *cuda.Buffer
}

// mirror returns the host's copy of d, its sizes only, and registers it
// with the solver for fill.
func (ds *devSetup) mirror(d *dcsr, cols int) (*csr, error) {
	h := &csr{rows: d.rows, cols: cols, nz: d.nnz}
	ds.g.mirrors = append(ds.g.mirrors, mirror{h: h, d: d})
	return h, nil
}

// mirrorDinv registers the device's inverse diagonal of level l for
// fill, which sets l.dinv (and the Chebyshev smoother's, the same).
func (ds *devSetup) mirrorDinv(l *level, d *cuda.Buffer) {
	l.dinv = nil
	for _, m := range ds.g.mirrors {
		if m.l == l {
			return
		}
	}
	ds.g.mirrors = append(ds.g.mirrors, mirror{l: l, dv: d})
}

// fill downloads what the host copy h of a device matrix lacks; a matrix
// that is not a mirror is left alone.
func (g *gpuSolver) fill(h *csr) error {
	if h == nil || (h.ptr != nil && h.col != nil && h.val != nil) {
		return nil
	}
	for _, m := range g.mirrors {
		if m.h != h {
			continue
		}
		nz := h.nnz()
		var p32, col []int32
		if h.ptr == nil {
			p32 = make([]int32, h.rows+1)
		}
		if h.col == nil {
			col = make([]int32, nz)
		}
		val := make([]float64, nz)
		// Through the Stager: the level above the coarsest can hold tens
		// of megabytes, which a pageable copy takes milliseconds over.
		err := g.e.Stage(g.stream, func(st *cuda.Stager) error {
			return errors.Join(cuda.StageToHost(st, p32, m.d.ptr, 0), cuda.StageToHost(st, col, m.d.col, 0), cuda.StageToHost(st, val, m.d.val, 0))
		})
		if err != nil {
			return err
		}
		if p32 != nil {
			h.ptr = make([]int, h.rows+1)
			for i, p := range p32 {
				h.ptr[i] = int(p)
			}
		}
		if col != nil {
			h.col = col
		}
		h.val = val
		return nil
	}
	return nil
}

// hostNeeds downloads what the host's part of the setup reads: the
// coarsest operator (its factor), the level above it (absEnergy), every
// operator for l1-Jacobi, and every prolongator where the coarsest
// operator is singular (findKernel).
func (pc *Preconditioner) hostNeeds(g *gpuSolver) error {
	last := len(pc.levels) - 1
	need := []*csr{pc.levels[last].a}
	if last > 0 {
		need = append(need, pc.levels[last-1].a, pc.levels[last-1].p)
	}
	if pc.opts.Smoother == L1Jacobi {
		for _, l := range pc.levels {
			need = append(need, l.a)
		}
	}
	for _, h := range need {
		if err := g.fill(h); err != nil {
			return err
		}
	}
	return nil
}

// singularNeeds fills what findKernel reads: the operator where a kernel
// is given or the coarsest operator is singular, the prolongators it
// interpolates with in the latter case.
func (pc *Preconditioner) singularNeeds(g *gpuSolver) error {
	c := pc.coarse
	singular := c != nil && c.rank < c.n && len(pc.opts.Kernel) == 0
	if !singular && len(pc.opts.Kernel) == 0 {
		return nil
	}
	if err := g.fill(pc.op); err != nil {
		return err
	}
	for _, l := range pc.levels {
		if err := g.fill(l.p); err != nil && singular {
			return err
		}
	}
	return nil
}

// hostOp fills the host's operator where it mirrors the caller's device
// matrix (NewDevice), and the hierarchy's where it mirrors the one the
// device renumbered, for the host's PCG and kernel checks.
func (pc *Preconditioner) hostOp() error {
	if pc.dev == nil {
		return nil
	}
	return errors.Join(pc.dev.fill(pc.op), pc.dev.fill(pc.fine))
}

// deviceResidual is trueResidual on the device for an operator the host
// does not hold: the caller's device matrix (NewDevice), or the one the
// device renumbered (a mirror).
func (pc *Preconditioner) deviceResidual(b, x []float64, bn float64) (float64, bool) {
	g := pc.dev
	if g == nil || pc.fine.val != nil {
		return 0, false
	}
	if err := errors.Join(g.idle(), stageTo(g, g.vb, b), stageTo(g, g.vx, x)); err != nil {
		return math.NaN(), true
	}
	g.rows(g.op, rowResid, g.vx, nil, g.vb, g.vr, nil, nil, nil, nil, 0, 0)
	rr, err := g.dot(len(b), g.vr, g.vr)
	if err != nil {
		return math.NaN(), true
	}
	return math.Sqrt(rr) / bn, true
}

// hostCopies completes every host copy of the device's matrices, before
// the device copy goes (Close). Where the device cannot give them back,
// the hierarchy is set up again on the host.
func (pc *Preconditioner) hostCopies() error {
	g := pc.dev
	if g == nil || len(g.mirrors) == 0 {
		return nil
	}
	err := g.fillAll()
	if err == nil {
		g.mirrors = nil
		return nil
	}
	if pc.op.ptr == nil || pc.op.val == nil {
		// The operator is the caller's device matrix (NewDevice): no
		// host setup without it; the device copy stays.
		return fmt.Errorf("amg: Close: the hierarchy cannot come to the host: %w", err)
	}
	pc.levels, pc.coarse, pc.kernel, pc.userKernel = nil, nil, nil, nil
	pc.dev, pc.reuse = nil, nil
	return errors.Join(err, g.free(), pc.hostSetup())
}

// reopen sets up on the host the hierarchy that Close dropped (a
// Preconditioner without levels).
func (pc *Preconditioner) reopen() error {
	if pc.levels != nil {
		return nil
	}
	pc.kernel, pc.userKernel = nil, nil
	return pc.hostSetup()
}

// hostSetup sets the hierarchy up on the host, whatever the options'
// device.
func (pc *Preconditioner) hostSetup() error {
	dev := pc.opts.Device
	pc.opts.Device = mis.CPU
	err := pc.setup(false)
	pc.opts.Device = dev
	return err
}

// fillAll completes every mirror.
func (g *gpuSolver) fillAll() error {
	for _, m := range g.mirrors {
		var err error
		if m.l != nil {
			err = g.fillDinv(m)
		} else {
			err = g.fill(m.h)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (g *gpuSolver) fillDinv(m mirror) error {
	l := m.l
	if l.dinv != nil {
		return nil
	}
	d := make([]float64, l.a.rows)
	if err := errors.Join(g.stream.Synchronize(), cuda.CopyToHost(d, m.dv, 0)); err != nil {
		return err
	}
	l.dinv = d
	if l.sm.kind == Chebyshev {
		l.sm.dinv = d
	}
	return nil
}

// stale marks the values of every mirror as old after a numeric Update
// on the device.
func (g *gpuSolver) stale() {
	for _, m := range g.mirrors {
		if m.l != nil {
			m.l.dinv = nil
			if m.l.sm.kind == Chebyshev {
				m.l.sm.dinv = nil
			}
			continue
		}
		m.h.val = nil
	}
}
