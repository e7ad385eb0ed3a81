package amg

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Result reports a PCG solve.
type Result struct {
	Iterations int
	// Residuals holds ‖r_k‖/‖b‖ for k = 0 … Iterations, r_k the residual
	// that CG updates alongside x_k (b − A·x_k up to rounding): the
	// unpreconditioned relative residual that the tolerance applies to.
	Residuals []float64
	Converged bool
	Elapsed   time.Duration
}

// ErrBreakdown is wrapped by Solve when PCG cannot continue: a direction
// with pᵀAp ≤ 0 or rᵀz ≤ 0, which an SPD matrix and preconditioner never
// give in exact arithmetic.
var ErrBreakdown = errors.New("amg: PCG breakdown")

// Solve solves A·x = b by conjugate gradients preconditioned with one
// cycle per iteration (A the matrix as given, round-off entries included), from the initial guess in x, until the relative
// residual ‖b − A·x‖/‖b‖ falls below Options.Tol or Options.MaxIter
// iterations pass. Not converging is not an error: check Result.Converged.
func (pc *Preconditioner) Solve(b, x []float64) (*Result, error) {
	start := time.Now()
	a := pc.op
	n := a.rows
	if len(b) != n || len(x) != n {
		return nil, fmt.Errorf("amg: Solve: len(b) = %d, len(x) = %d, want %d", len(b), len(x), n)
	}
	p := pc.pool
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("amg: Solve: b[%d] is %v", i, v)
		}
	}
	res := &Result{}
	bn := math.Sqrt(p.dot(b, b))
	if bn == 0 {
		clear(x)
		res.Residuals = []float64{0}
		res.Converged = true
		res.Elapsed = time.Since(start)
		return res, nil
	}
	if dres, ok, err := pc.solveDevice(b, x, bn, start); ok {
		return dres, err
	}
	r := make([]float64, n)
	z := make([]float64, n)
	d := make([]float64, n)
	q := make([]float64, n)
	p.residual(a, x, b, r)
	rn := math.Sqrt(p.dot(r, r))
	res.Residuals = append(res.Residuals, rn/bn)
	tol := pc.opts.Tol
	if rn/bn <= tol {
		res.Converged = true
		res.Elapsed = time.Since(start)
		return res, nil
	}
	pc.cycle(0, z, r, true)
	copy(d, z)
	rz := p.dot(r, z)
	for it := 1; it <= pc.opts.MaxIter; it++ {
		if !(rz > 0) {
			res.Elapsed = time.Since(start)
			return res, fmt.Errorf("%w at iteration %d: rᵀM⁻¹r = %g (is the matrix SPD?)", ErrBreakdown, it, rz)
		}
		p.mulVec(a, d, q)
		dq := p.dot(d, q)
		if !(dq > 0) {
			res.Elapsed = time.Since(start)
			return res, fmt.Errorf("%w at iteration %d: pᵀAp = %g (is the matrix SPD?)", ErrBreakdown, it, dq)
		}
		alpha := rz / dq
		rr := p.sumChunks(n, func(lo, hi int) float64 {
			s := 0.0
			for i := lo; i < hi; i++ {
				x[i] += alpha * d[i]
				r[i] -= alpha * q[i]
				s += r[i] * r[i]
			}
			return s
		})
		res.Iterations = it
		res.Residuals = append(res.Residuals, math.Sqrt(rr)/bn)
		if math.Sqrt(rr)/bn <= tol {
			res.Converged = true
			break
		}
		pc.cycle(0, z, r, true)
		rzNew := p.dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		p.forRange(n, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d[i] = z[i] + beta*d[i]
			}
		})
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
