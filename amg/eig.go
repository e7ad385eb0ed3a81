package amg

import "math"

// maxEigDinvA estimates the largest eigenvalue of D⁻¹A, D = diag(A), by
// steps of Lanczos on the similar symmetric D^{-1/2}·A·D^{-1/2}. The start
// vector is a fixed hash of the row index, so the estimate is the same on
// every run. Lanczos converges to the extreme eigenvalues much faster
// than the power method; its Ritz value is a lower bound, which the
// callers widen by a safety factor.
func (p pool) maxEigDinvA(a *csr, dinv []float64, steps int) float64 {
	n := a.rows
	s := make([]float64, n) // D^{-1/2}
	for i, d := range dinv {
		s[i] = math.Sqrt(d)
	}
	q := make([]float64, n)
	for i := range q {
		q[i] = startValue(i)
	}
	nq := math.Sqrt(p.dot(q, q))
	for i := range q {
		q[i] /= nq
	}
	qPrev := make([]float64, n)
	t := make([]float64, n)
	w := make([]float64, n)
	alpha := make([]float64, 0, steps)
	beta := make([]float64, 0, steps)
	bPrev := 0.0
	steps = min(steps, n)
	for j := 0; j < steps; j++ {
		p.forRange(n, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				t[i] = s[i] * q[i]
			}
		})
		p.mulVec(a, t, w)
		p.forRange(n, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				w[i] = s[i]*w[i] - bPrev*qPrev[i]
			}
		})
		al := p.dot(w, q)
		alpha = append(alpha, al)
		p.forRange(n, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				w[i] -= al * q[i]
			}
		})
		b := math.Sqrt(p.dot(w, w))
		if j == steps-1 || b <= 1e-12*math.Abs(al) {
			break
		}
		beta = append(beta, b)
		qPrev, q, w = q, w, qPrev
		for i := range q {
			q[i] /= b
		}
		bPrev = b
	}
	return tridiagMaxEig(alpha, beta)
}

// tridiagMaxEig returns the largest eigenvalue of the symmetric tridiagonal
// matrix with diagonal d and off-diagonal e, by Sturm-sequence bisection
// inside the Gershgorin interval.
func tridiagMaxEig(d, e []float64) float64 {
	n := len(d)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		r := 0.0
		if i > 0 {
			r += math.Abs(e[i-1])
		}
		if i < n-1 && i < len(e) {
			r += math.Abs(e[i])
		}
		lo = min(lo, d[i]-r)
		hi = max(hi, d[i]+r)
	}
	// count returns the number of eigenvalues smaller than x.
	count := func(x float64) int {
		c := 0
		q := 1.0
		for i := 0; i < n; i++ {
			off := 0.0
			if i > 0 {
				off = e[i-1] * e[i-1]
			}
			q = d[i] - x - off/q
			if q == 0 {
				q = -1e-300
			}
			if q < 0 {
				c++
			}
		}
		return c
	}
	for it := 0; it < 200 && hi-lo > 1e-12*math.Max(math.Abs(hi), 1e-300); it++ {
		mid := 0.5 * (lo + hi)
		if count(mid) < n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
