package amg

import (
	"fmt"
	"math"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/mis"
)

// The solve phase on the device: the same cycle and PCG as cycle.go,
// smoother.go and pcg.go, step for step, on device vectors. Launch
// errors are kept in g.err (later launches are skipped) and surface at
// the next scalar read-back or at the end.

// Row pass and vector modes of amg.cu.
const (
	rowMV int32 = iota
	rowMVAdd
	rowResid
	rowCheb0
	rowCheb
	rowChebLast
)

const (
	vecChebZero int32 = iota
	vecAdd
	vecScale
	vecScaleAdd
	vecXpay
	vecCopy
)

const gpuThreads = gpu.BlockSize

var rowKernel = map[int]string{1: "amg_rows_g1", 4: "amg_rows_g4", 8: "amg_rows_g8", 16: "amg_rows_g16", 32: "amg_rows_g32"}

func (g *gpuSolver) launch(name string, grid int64, args ...any) {
	if g.err != nil {
		return
	}
	g.err = g.e.Launch(g.stream, name, uint32(max(grid, 1)), args...)
}

// rows runs one row pass of m (see the modes in amg.cu); v is the vector
// multiplied. Unused vectors may be nil.
func (g *gpuSolver) rows(m *dcsr, mode int32, v, y, b, r, x, d, dn, dinv *cuda.Buffer, c1, c2 float64) {
	grid := (int64(m.rows)*int64(m.g) + gpuThreads - 1) / gpuThreads
	g.launch(rowKernel[m.g], grid, mode, int32(m.rows), m.ptr, m.col, m.val, v, y, b, r, x, d, dn, dinv, c1, c2)
}

func (g *gpuSolver) vec(mode int32, n int, o0, o1, o2, i0, i1 *cuda.Buffer, a float64) {
	grid := min((int64(n)+gpuThreads-1)/gpuThreads, 4096)
	g.launch("amg_vec", grid, mode, int32(n), o0, o1, o2, i0, i1, a)
}

// scalar returns the sum the last amg_dot or amg_cg left in g.part.
func (g *gpuSolver) scalar() (float64, error) {
	g.launch("amg_sum", 1, g.part, g.scal)
	return g.readScal()
}

// readScal waits for the queued work and returns the device word g.scal.
func (g *gpuSolver) readScal() (float64, error) {
	if g.err != nil {
		return 0, g.err
	}
	if err := g.scal.CopyToHostAsync(g.host, 0, 0, 8, g.stream); err != nil {
		return 0, err
	}
	if err := g.stream.Synchronize(); err != nil {
		return 0, err
	}
	return cuda.HostSlice[float64](g.host)[0], nil
}

func (g *gpuSolver) dot(n int, x, y *cuda.Buffer) (float64, error) {
	g.dotTo(n, x, y, g.scal)
	return g.readScal()
}

// dotTo queues x·y (amg_dot's parts, summed by amg_sum) into the device
// word out.
func (g *gpuSolver) dotTo(n int, x, y, out *cuda.Buffer) {
	g.launch("amg_dot", gpuParts, int32(n), x, y, g.part)
	g.launch("amg_sum", 1, g.part, out)
}

// cycleOn mirrors Preconditioner.cycle.
func (g *gpuSolver) cycleOn(lv int, x, b *cuda.Buffer, zero bool) {
	if lv == len(g.levels)-1 {
		g.launch("amg_dense_mv", (int64(g.nc)*32+gpuThreads-1)/gpuThreads, int32(g.nc), g.cinv, b, x)
		return
	}
	l := &g.levels[lv]
	next := &g.levels[lv+1]
	g.smooth(l, x, b, zero, true)
	g.rows(l.r, rowMV, l.res, next.b, nil, nil, nil, nil, nil, nil, 0, 0)
	g.cycleOn(lv+1, next.x, next.b, true)
	if g.cycle == WCycle && lv+1 < len(g.levels)-1 {
		g.cycleOn(lv+1, next.x, next.b, false)
	}
	g.rows(l.p, rowMVAdd, next.x, x, nil, nil, nil, nil, nil, nil, 0, 0)
	g.smooth(l, x, b, false, false)
}

// smooth mirrors pool.smooth for Chebyshev and l1-Jacobi; the residual
// is left in l.res when wantRes.
func (g *gpuSolver) smooth(l *gpuLevel, x, b *cuda.Buffer, zero, wantRes bool) {
	a, n := l.a, l.a.rows
	r := l.res
	switch l.kind {
	case Chebyshev:
		theta := 0.5 * (l.hi + l.lo)
		delta := 0.5 * (l.hi - l.lo)
		sigma := theta / delta
		rho := 1 / sigma
		d, dn := l.t, l.t2
		if zero {
			g.vec(vecChebZero, n, r, d, x, b, l.dinv, 1/theta)
		} else {
			g.rows(a, rowCheb0, x, nil, b, r, nil, d, nil, l.dinv, 1/theta, 0)
		}
		for k := 1; k < l.sweeps; k++ {
			rhoNew := 1 / (2*sigma - rho)
			g.rows(a, rowCheb, d, nil, nil, r, x, d, dn, l.dinv, rhoNew*rho, 2*rhoNew/delta)
			d, dn = dn, d
			rho = rhoNew
		}
		if wantRes {
			g.rows(a, rowChebLast, d, nil, nil, r, x, d, nil, nil, 0, 0)
		} else {
			g.vec(vecAdd, n, x, nil, nil, d, nil, 0)
		}
	case L1Jacobi:
		for k := 0; k < l.sweeps; k++ {
			if k == 0 && zero {
				g.vec(vecScale, n, x, nil, nil, b, l.dinv, 0)
				continue
			}
			g.rows(a, rowResid, x, nil, b, r, nil, nil, nil, nil, 0, 0)
			g.vec(vecScaleAdd, n, x, nil, nil, r, l.dinv, 0)
		}
		if wantRes {
			g.rows(a, rowResid, x, nil, b, r, nil, nil, nil, nil, 0, 0)
		}
	}
}

// idle waits for work an earlier call left queued (an error return
// skips the final wait): the synchronous copies that start a call run on
// the legacy stream, which does not wait for g.stream.
func (g *gpuSolver) idle() error {
	g.err = nil
	return g.stream.Synchronize()
}

// apply is Apply on the device: r up, one cycle, z down.
func (g *gpuSolver) apply(r, z []float64) error {
	if err := g.idle(); err != nil {
		return err
	}
	if err := stageTo(g, g.vr, r); err != nil {
		return err
	}
	g.cycleOn(0, g.vz, g.vr, true)
	if g.err != nil {
		return g.err
	}
	return stageFrom(g, z, g.vz)
}

// solve is Solve's PCG on the device; b is checked and nonzero.
func (g *gpuSolver) solve(pc *Preconditioner, b, x []float64, bn float64, start time.Time) (*Result, error) {
	if err := g.idle(); err != nil {
		return nil, err
	}
	n := pc.op.rows
	res := &Result{}
	done := func(err error) (*Result, error) {
		res.Elapsed = time.Since(start)
		return res, err
	}
	if err := stageTo(g, g.vb, b); err != nil {
		return nil, err
	}
	if err := stageTo(g, g.vx, x); err != nil {
		return nil, err
	}
	g.rows(g.op, rowResid, g.vx, nil, g.vb, g.vr, nil, nil, nil, nil, 0, 0)
	rr, err := g.dot(n, g.vr, g.vr)
	if err != nil {
		return nil, err
	}
	res.Residuals = append(res.Residuals, math.Sqrt(rr)/bn)
	tol := pc.opts.Tol
	if math.Sqrt(rr)/bn <= tol {
		res.Converged = true
		return done(nil)
	}
	g.cycleOn(0, g.vz, g.vr, true)
	g.vec(vecCopy, n, g.vd, nil, nil, g.vz, nil, 0)
	rz, err := g.dot(n, g.vr, g.vz)
	if err != nil {
		return nil, err
	}
	for it := 1; it <= pc.opts.MaxIter; it++ {
		if !(rz > 0) {
			return done(g.fetch(x, fmt.Errorf("%w at iteration %d: rᵀM⁻¹r = %g (is the matrix SPD?)", ErrBreakdown, it, rz)))
		}
		g.rows(g.op, rowMV, g.vd, g.vq, nil, nil, nil, nil, nil, nil, 0, 0)
		dq, err := g.dot(n, g.vd, g.vq)
		if err != nil {
			return nil, err
		}
		if !(dq > 0) {
			return done(g.fetch(x, fmt.Errorf("%w at iteration %d: pᵀAp = %g (is the matrix SPD?)", ErrBreakdown, it, dq)))
		}
		alpha := rz / dq
		g.launch("amg_cg", gpuParts, int32(n), alpha, g.vx, g.vr, g.vd, g.vq, g.part)
		rr, err := g.scalar()
		if err != nil {
			return nil, err
		}
		res.Iterations = it
		res.Residuals = append(res.Residuals, math.Sqrt(rr)/bn)
		if math.Sqrt(rr)/bn <= tol {
			res.Converged = true
			break
		}
		g.cycleOn(0, g.vz, g.vr, true)
		rzNew, err := g.dot(n, g.vr, g.vz)
		if err != nil {
			return nil, err
		}
		beta := rzNew / rz
		rz = rzNew
		g.vec(vecXpay, n, g.vd, nil, nil, g.vz, nil, beta)
	}
	if err := g.fetch(x, nil); err != nil {
		return nil, err
	}
	return done(nil)
}

// fetch copies the iterate back into x and returns err (or a copy error).
func (g *gpuSolver) fetch(x []float64, err error) error {
	if g.err != nil {
		return g.err
	}
	if e := stageFrom(g, x, g.vx); e != nil {
		return e
	}
	return err
}

// applyDevice runs Apply on the device. handled is false when the
// hierarchy is not on a device, or when an Auto run failed and
// the device copy was dropped: the caller then runs on the CPU.
func (pc *Preconditioner) applyDevice(r, z []float64) (handled bool, err error) {
	if pc.dev == nil {
		return false, nil
	}
	err = pc.dev.apply(r, z)
	if err != nil && pc.opts.Device.Kind() == mis.Auto {
		_ = pc.Close()
		return false, nil
	}
	return true, err
}

// solveDevice runs Solve's PCG on the device, as applyDevice does Apply.
func (pc *Preconditioner) solveDevice(b, x []float64, bn float64, start time.Time) (res *Result, handled bool, err error) {
	if pc.dev == nil {
		return nil, false, nil
	}
	x0 := x
	if pc.opts.Device.Kind() == mis.Auto {
		x0 = append([]float64(nil), x...) // the CPU retry starts from the same guess
	}
	res, err = pc.dev.solve(pc, b, x, bn, start)
	if err != nil && res == nil && pc.opts.Device.Kind() == mis.Auto {
		_ = pc.Close()
		copy(x, x0)
		return nil, false, nil
	}
	return res, true, err
}
