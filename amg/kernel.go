package amg

import (
	"fmt"
	"math"
)

// kernelRound scales the rounding bound of isNull: a null vector of A
// leaves ‖A·v‖ ≈ ε·sqrt(m)·‖|A|·|v|‖ for rows of m entries (measured 2e-16
// to 3e-15: constants of a Neumann Laplacian, rigid motions of a free
// body); a nonsingular A leaves more, by its conditioning (FuzzSolve found
// SPD matrices at 5e-11 and 5e-14, a stiff cluster on a weak spring), or
// O(1) when its coarsest operator is singular only through dependent
// prolongator columns.
const kernelRound = 16

// maxKernel bounds the null space the setup looks for: rigid-body modes
// are 6, and more dropped pivots mean a coarsest operator that is singular
// for another reason.
const maxKernel = 16

// givenKernelTol bounds ‖A·v‖/‖|A|·|v|‖ for a kernel vector the caller
// gives: looser than the setup's own test (the caller's vectors may come
// from coordinates or another code's assembly), tight enough that a
// vector outside the null space, which Solve would project out of the
// solution, is refused.
const givenKernelTol = 1e-8

// findKernel sets pc.kernel: Options.Kernel checked and orthonormalized, or
// else the null vectors of the coarsest operator interpolated to the
// finest level, kept where they are null vectors of A.
func (pc *Preconditioner) findKernel() error {
	pc.setKernel(nil)
	n := pc.op.rows
	if len(pc.opts.Kernel) > 0 {
		for j, v := range pc.opts.Kernel {
			if len(v) != n {
				return fmt.Errorf("amg: kernel vector %d has length %d, want %d (the matrix rows)", j, len(v), n)
			}
			for i, x := range v {
				if x-x != 0 {
					return fmt.Errorf("amg: kernel vector %d: entry %d is %v", j, i, x)
				}
			}
		}
		given := pc.opts.Kernel
		if q := pc.perm; q != nil {
			given = make([][]float64, len(pc.opts.Kernel))
			for j, v := range pc.opts.Kernel {
				given[j] = make([]float64, n)
				q.gather(pc.pool, v, given[j])
			}
		}
		if err := pc.hostOp(); err != nil {
			return err
		}
		for j, v := range given {
			if r := pc.nullResidual(v); !(r <= givenKernelTol) {
				return fmt.Errorf("amg: kernel vector %d is not a null vector of the matrix: ‖A·v‖ = %.3g·‖|A|·|v|‖, want at most %g", j, r, givenKernelTol)
			}
		}
		k, err := pc.orthonormal(given)
		if err != nil {
			return err
		}
		pc.setKernel(k)
		return nil
	}
	c := pc.coarse
	if c == nil || c.rank == c.n {
		return nil
	}
	if c.n-c.rank > maxKernel {
		return nil // not a null space of a few modes: leave the solve unprojected
	}
	if err := pc.hostOp(); err != nil {
		return err
	}
	nv := c.nullVectors()
	var cand [][]float64
	for _, v := range nv {
		for lv := len(pc.levels) - 2; lv >= 0; lv-- {
			l := pc.levels[lv]
			f := make([]float64, l.p.rows)
			pc.pool.mulVec(l.p, v, f)
			v = f
		}
		if pc.isNull(v) {
			cand = append(cand, v)
		}
	}
	if len(cand) == 0 {
		return nil
	}
	k, err := pc.orthonormal(cand)
	if err != nil {
		return nil // dependent candidates: leave the solve unprojected
	}
	pc.setKernel(k)
	return nil
}

// setKernel sets the null space basis, k in the hierarchy's numbering,
// and the caller's copy that Kernel returns.
func (pc *Preconditioner) setKernel(k [][]float64) {
	pc.kernel, pc.userKernel = k, k
	if q := pc.perm; q != nil {
		pc.userKernel = make([][]float64, len(k))
		for j, v := range k {
			pc.userKernel[j] = make([]float64, len(v))
			q.scatter(pc.pool, v, pc.userKernel[j])
		}
	}
}

// isNull reports whether ‖A·v‖ ≤ kernelRound·ε·sqrt(m)·‖|A|·|v|‖, m the
// longest row of A: v is a null vector of A up to rounding.
func (pc *Preconditioner) isNull(v []float64) bool {
	m := 1
	for i := 0; i < pc.fine.rows; i++ {
		m = max(m, pc.fine.ptr[i+1]-pc.fine.ptr[i])
	}
	return pc.nullResidual(v) <= kernelRound*0x1p-52*math.Sqrt(float64(m))
}

// nullResidual returns ‖A·v‖/‖|A|·|v|‖ (+Inf for a zero v): how far v is
// from a null vector of A, relative to the rounding of the product.
func (pc *Preconditioner) nullResidual(v []float64) float64 {
	a := pc.fine
	var r2, s2 float64
	for i := 0; i < a.rows; i++ {
		var r, s float64
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			x := a.val[k] * v[a.col[k]]
			r += x
			s += math.Abs(x)
		}
		r2 += r * r
		s2 += s * s
	}
	if !(s2 > 0) {
		return math.Inf(1)
	}
	return math.Sqrt(r2) / math.Sqrt(s2)
}

// orthonormal returns an orthonormal basis of vs by modified Gram–Schmidt,
// twice (the second pass restores orthogonality lost to cancellation).
func (pc *Preconditioner) orthonormal(vs [][]float64) ([][]float64, error) {
	p := pc.pool
	out := make([][]float64, 0, len(vs))
	for j, v := range vs {
		u := append([]float64(nil), v...)
		n0 := math.Sqrt(p.dot(u, u))
		for range 2 {
			for _, q := range out {
				axpy(-p.dot(q, u), q, u)
			}
		}
		nu := math.Sqrt(p.dot(u, u))
		if !(nu > 1e-10*n0) {
			return nil, fmt.Errorf("amg: kernel vector %d is zero or a combination of the ones before it", j)
		}
		for i := range u {
			u[i] /= nu
		}
		out = append(out, u)
	}
	return out, nil
}

func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// project removes the kernel components of x: x ← x − N·Nᵀx, and returns
// ‖Nᵀx‖.
func (pc *Preconditioner) project(x []float64) float64 {
	s := 0.0
	for _, q := range pc.kernel {
		c := pc.pool.dot(q, x)
		axpy(-c, q, x)
		s += c * c
	}
	return math.Sqrt(s)
}

// Kernel returns the orthonormal basis of A's null space that Solve
// projects out: Options.Kernel orthonormalized, the one the setup found,
// or nil for a nonsingular matrix. The caller must not change it.
func (pc *Preconditioner) Kernel() [][]float64 { return pc.userKernel }
