package amg

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Status says how a solve ended.
type Status int

const (
	// Converged: the true residual ‖b − A·x‖/‖b‖ is at most Options.Tol.
	Converged Status = iota
	// IterationLimit: Options.MaxIter iterations passed first.
	IterationLimit
	// Stagnated: the updated residual reached the tolerance but the true
	// one did not, and restarting from the true one no longer reduced it
	// (rounding limits the attainable accuracy, as with condition numbers
	// near 1/ε).
	Stagnated
	// Inconsistent: A is singular and b has a component in its null space
	// larger than the tolerance allows; x is the least-squares solution
	// (that component removed) and Solve returns ErrInconsistent.
	Inconsistent
)

func (s Status) String() string {
	switch s {
	case Converged:
		return "converged"
	case IterationLimit:
		return "iteration limit"
	case Stagnated:
		return "stagnated"
	case Inconsistent:
		return "inconsistent right-hand side"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result reports a PCG solve.
type Result struct {
	Iterations int
	// Residuals holds ‖r_k‖/‖b‖ for k = 0 … Iterations, r_k the residual
	// that CG updates alongside x_k (b − A·x_k up to rounding), except
	// where CG stopped to check convergence: there it is the true
	// residual b − A·x_k, recomputed, from which CG restarts.
	Residuals []float64
	// TrueResidual is ‖b − A·x‖/‖b‖ for the x returned, computed with one
	// product at the end: the figure Status is judged on.
	TrueResidual float64
	// KernelPart is ‖Nᵀb‖/‖b‖ for the null space N of a singular A (see
	// Preconditioner.Kernel), the part of b no x can match; 0 otherwise.
	KernelPart float64
	Status     Status
	Converged  bool // Status == Converged
	Restarts   int  // restarts from the true residual
	Elapsed    time.Duration
}

// ErrBreakdown is wrapped by Solve when PCG cannot continue: a direction
// with pᵀAp ≤ 0 or rᵀz ≤ 0, which an SPD matrix and preconditioner never
// give in exact arithmetic.
var ErrBreakdown = errors.New("amg: PCG breakdown")

// ErrInconsistent is wrapped by Solve when A is singular and b is not in
// its range: no x reaches the tolerance. The Result is returned too, with
// the least-squares solution in x.
var ErrInconsistent = errors.New("amg: inconsistent right-hand side")

// maxRestarts bounds the restarts from the true residual in one solve.
const maxRestarts = 5

// Solve solves A·x = b by conjugate gradients preconditioned with one
// cycle per iteration (A the matrix as given, round-off entries included),
// from the initial guess in x, until the relative residual ‖b − A·x‖/‖b‖
// falls below Options.Tol or Options.MaxIter iterations pass. When the
// residual CG updates falls below the tolerance, the true residual is
// computed; if it is above, CG restarts from it, and reports Stagnated
// when restarting stops helping. Not converging is not an error: check
// Result.Status.
//
// For a singular A with a known null space N (Preconditioner.Kernel), b
// and every preconditioned residual are projected orthogonally to N, and
// so is x on return: x is the solution orthogonal to the null space. A b
// whose null-space part exceeds the tolerance is reported as Inconsistent,
// with the error ErrInconsistent.
func (pc *Preconditioner) Solve(b, x []float64) (*Result, error) {
	start := time.Now()
	n := pc.op.rows
	if len(b) != n || len(x) != n {
		return nil, fmt.Errorf("amg: Solve: len(b) = %d, len(x) = %d, want %d", len(b), len(x), n)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("amg: Solve: b[%d] is %v", i, v)
		}
	}
	if err := pc.reopen(); err != nil {
		return nil, err
	}
	q := pc.perm
	if q == nil {
		return pc.solve(b, x, start)
	}
	hb, hx := make([]float64, n), make([]float64, n)
	q.gather(pc.pool, b, hb)
	q.gather(pc.pool, x, hx)
	res, err := pc.solve(hb, hx, start)
	q.scatter(pc.pool, hx, x)
	return res, err
}

// solve is Solve in the hierarchy's numbering.
func (pc *Preconditioner) solve(b, x []float64, start time.Time) (*Result, error) {
	p := pc.pool
	res := &Result{}
	bn := math.Sqrt(p.dot(b, b))
	if bn == 0 {
		clear(x)
		res.Residuals = []float64{0}
		res.Converged = true
		res.Elapsed = time.Since(start)
		return res, nil
	}
	rhs := b
	if pc.kernel != nil {
		rhs = append([]float64(nil), b...)
		res.KernelPart = pc.project(rhs) / bn
	} else if dres, ok, err := pc.solveDevice(b, x, bn, start); ok {
		if dres == nil || err != nil {
			return dres, err
		}
		dres.Status = IterationLimit
		if dres.TrueResidual = pc.trueResidual(b, x, bn); dres.TrueResidual <= pc.opts.Tol {
			dres.Status = Converged
		} else if dres.Converged {
			// The device's updated residual drifted: go on from x on
			// the host, which checks and restarts as below.
			res.Iterations, res.Residuals = dres.Iterations, dres.Residuals
			dres = nil
		}
		if dres != nil {
			dres.Converged = dres.Status == Converged
			return dres, nil
		}
	}
	its, hist := res.Iterations, res.Residuals
	res.Iterations, res.Residuals = 0, nil
	tr, err := pc.pcg(rhs, x, bn, res)
	if its > 0 {
		res.Iterations += its
		res.Residuals = append(hist, res.Residuals[1:]...)
		res.Restarts++
	}
	if pc.kernel != nil {
		pc.project(x)
	}
	if tr < 0 || pc.kernel != nil {
		// PCG did not end on the true residual of this x (or x has
		// been projected since).
		tr = pc.trueResidual(b, x, bn)
	}
	res.TrueResidual = tr
	res.Elapsed = time.Since(start)
	if err == nil && res.KernelPart > pc.opts.Tol {
		res.Status, res.Converged = Inconsistent, false
		err = fmt.Errorf("%w: ‖Nᵀb‖/‖b‖ = %.3g for the %d null vectors of A exceeds the tolerance %g; x is the least-squares solution (‖b − A·x‖/‖b‖ = %.3g)",
			ErrInconsistent, res.KernelPart, len(pc.kernel), pc.opts.Tol, res.TrueResidual)
	}
	return res, err
}

// trueResidual returns ‖b − A·x‖/bn.
func (pc *Preconditioner) trueResidual(b, x []float64, bn float64) float64 {
	if r, ok := pc.deviceResidual(b, x, bn); ok {
		return r
	}
	r := make([]float64, len(b))
	pc.pool.residual(pc.fine, x, b, r)
	return math.Sqrt(pc.pool.dot(r, r)) / bn
}

// pcg runs preconditioned CG on A·x = b (b consistent), filling res. It
// returns ‖b − A·x‖/‖b‖ when it ended on that check (else −1), which
// Solve then need not form again.
func (pc *Preconditioner) pcg(b, x []float64, bn float64, res *Result) (float64, error) {
	if err := pc.hostOp(); err != nil {
		return -1, err
	}
	a := pc.fine
	n := a.rows
	p := pc.pool
	r := make([]float64, n)
	z := make([]float64, n)
	d := make([]float64, n)
	// q = A·d lives from the product to the residual update, z from
	// the cycle to the direction update: one vector serves both.
	q := z
	tol := pc.opts.Tol
	res.Status = IterationLimit
	// resid sets r = b − A·x and returns ‖r‖; precond sets d = z = M⁻¹r
	// and returns rᵀz.
	resid := func() float64 {
		p.residual(a, x, b, r)
		if pc.kernel != nil {
			pc.project(r)
		}
		return math.Sqrt(p.dot(r, r))
	}
	precond := func() float64 {
		pc.cycle(0, z, r, true)
		if pc.kernel != nil {
			pc.project(z)
		}
		copy(d, z)
		return p.dot(r, z)
	}
	rn := resid()
	res.Residuals = append(res.Residuals, rn/bn)
	if rn/bn <= tol {
		res.Status, res.Converged = Converged, true
		return rn / bn, nil
	}
	rz := precond()
	lastTrue := rn
	for it := 1; it <= pc.opts.MaxIter; it++ {
		if !(rz > 0) {
			return -1, fmt.Errorf("%w at iteration %d: rᵀM⁻¹r = %g (the preconditioner is not positive definite on this residual)", ErrBreakdown, it, rz)
		}
		p.mulVec(a, d, q)
		dq := p.dot(d, q)
		if !(dq > 0) {
			return -1, fmt.Errorf("%w at iteration %d: pᵀAp = %g (is the matrix positive semidefinite?)", ErrBreakdown, it, dq)
		}
		alpha := rz / dq
		rr := p.sumChunks(n, func(lo, hi int) float64 {
			s := 0.0
			xx, dd, rv, qq := x[lo:hi], d[lo:hi], r[lo:hi], q[lo:hi]
			dd, rv, qq = dd[:len(xx)], rv[:len(xx)], qq[:len(xx)]
			for i := range xx {
				xx[i] += alpha * dd[i]
				ri := rv[i] - alpha*qq[i]
				rv[i] = ri
				s += ri * ri
			}
			return s
		})
		res.Iterations = it
		res.Residuals = append(res.Residuals, math.Sqrt(rr)/bn)
		if math.Sqrt(rr)/bn <= tol {
			// The updated residual drifts from b − A·x: judge on the
			// true one, and restart from it when it falls short.
			tn := resid()
			res.Residuals[len(res.Residuals)-1] = tn / bn
			if tn/bn <= tol {
				res.Status, res.Converged = Converged, true
				return tn / bn, nil
			}
			if tn > 0.5*lastTrue || res.Restarts == maxRestarts {
				res.Status = Stagnated
				return tn / bn, nil
			}
			lastTrue, rz = tn, precond()
			res.Restarts++
			continue
		}
		pc.cycle(0, z, r, true)
		if pc.kernel != nil {
			pc.project(z)
		}
		rzNew := p.dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		p.forRange(n, n, func(lo, hi int) {
			dd, zz := d[lo:hi], z[lo:hi]
			zz = zz[:len(dd)]
			for i := range dd {
				dd[i] = zz[i] + beta*dd[i]
			}
		})
	}
	return -1, nil
}
