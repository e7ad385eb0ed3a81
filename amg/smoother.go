package amg

import "math"

// smootherData is what a level's smoother needs beyond the matrix; it is
// rebuilt on every Update because it depends on the values.
type smootherData struct {
	kind   Smoother
	sweeps int
	dinv   []float64 // 1/a_ii (Chebyshev), 1/Σ_j|a_ij| (l1-Jacobi), 1/a_ii (GS)
	// Chebyshev interval [lo, hi] of D⁻¹A.
	lo, hi float64
	colors [][]int32 // Gauss–Seidel sweep classes
	// ax holds the products of spmvMasked for Chebyshev's loops (see
	// variedRows), allocated by the first sweep that needs it.
	ax []float64
}

// l1Inverse returns 1/Σ_j |a_ij| for every row: with this diagonal, Jacobi
// converges for every SPD matrix without a damping parameter.
func l1Inverse(p pool, a *csr) []float64 {
	d := make([]float64, a.rows)
	p.forRange(a.rows, a.nnz(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s := 0.0
			for _, v := range a.val[a.ptr[i]:a.ptr[i+1]] {
				s += math.Abs(v)
			}
			d[i] = 1 / s
		}
	})
	return d
}

// smooth relaxes a·x = b. With zero set, x is taken as zero on entry
// (and need not be cleared), which saves a product. With wantRes, r holds
// b − a·x on return. t and u are scratch of the level's size.
func (p pool) smooth(a *csr, s *smootherData, x, b, r, t, u []float64, zero, wantRes, backward bool) {
	switch s.kind {
	case Chebyshev:
		p.chebyshev(a, s, x, b, r, t, u, zero, wantRes)
	case L1Jacobi:
		p.jacobi(a, s, x, b, r, zero, wantRes)
	case GaussSeidel:
		if zero {
			clear(x)
		}
		for range s.sweeps {
			p.gaussSeidel(a, s, x, b, backward)
		}
		if wantRes {
			p.residual(a, x, b, r)
		}
	}
}

// chebyshev runs s.sweeps steps of the Chebyshev iteration for D⁻¹A on
// [s.lo, s.hi] (Saad, Iterative Methods, alg. 12.1), keeping the residual
// r up to date by one product per step. Each step is one fused pass over
// the rows: the product with the current direction d, the residual and
// next-direction updates, and the pending x += d (x is not read by the
// product, so it can trail by one step). With wantRes the last product
// also leaves r = b − A·x for the cycle to restrict. d and dn are scratch.
func (p pool) chebyshev(a *csr, s *smootherData, x, b, r, d, dn []float64, zero, wantRes bool) {
	n := a.rows
	theta := 0.5 * (s.hi + s.lo)
	delta := 0.5 * (s.hi - s.lo)
	sigma := theta / delta
	rho := 1 / sigma
	dinv := s.dinv
	it := 1 / theta
	// Where the rows vary in length, spmvMasked forms the products into
	// s.ax and a loop of vector updates reads them; elsewhere one fused
	// loop forms them as it goes. The same sums either way.
	if s.ax == nil && variedRows(a, 0, n) {
		s.ax = make([]float64, n)
	}
	cr := chebRows{a: a, ax: s.ax}
	// Every loop works on subslices of one length, so that the compiler
	// drops the bounds checks, and walks the entries with one running
	// index (dotTo): rows of a 2D mesh hold about seven entries, and a
	// check per vector per row costs as much as the row.
	if zero {
		p.forRange(n, 2*n, func(lo, hi int) {
			rr, dd, xx, bb, di := r[lo:hi], d[lo:hi], x[lo:hi], b[lo:hi], dinv[lo:hi]
			dd, xx, bb, di = dd[:len(rr)], xx[:len(rr)], bb[:len(rr)], di[:len(rr)]
			for i := range rr {
				rr[i] = bb[i]
				dd[i] = it * di[i] * bb[i]
				xx[i] = 0
			}
		})
	} else {
		p.chebFirst(cr, x, b, r, d, dinv, it)
	}
	for k := 1; k < s.sweeps; k++ {
		rhoNew := 1 / (2*sigma - rho)
		p.chebSweep(cr, x, r, d, dn, dinv, rhoNew*rho, 2*rhoNew/delta)
		d, dn = dn, d
		rho = rhoNew
	}
	if wantRes {
		p.chebLast(cr, x, r, d)
		return
	}
	p.forRange(n, n, func(lo, hi int) {
		xx, dd := x[lo:hi], d[lo:hi]
		dd = dd[:len(xx)]
		for i := range xx {
			xx[i] += dd[i]
		}
	})
}

// chebRows is the operator of a Chebyshev smoothing with, where its rows
// vary in length, the vector spmvMasked forms its products into.
type chebRows struct {
	a  *csr
	ax []float64
}

// masked forms A·v over rows [lo, hi) into ax and returns them, or
// returns nil where the fused loops are to form them.
func (c chebRows) masked(v []float64, lo, hi int) []float64 {
	if c.ax == nil || !variedRows(c.a, lo, hi) {
		return nil
	}
	spmvMasked(c.a, v, c.ax, lo, hi)
	return c.ax[lo:hi]
}

// chebFirst is the first step from x: r = b − A·x, d = it·D⁻¹r.
func (p pool) chebFirst(c chebRows, x, b, r, d, dinv []float64, it float64) {
	p.forRows(c.a, func(lo, hi int) {
		col, val, ends, base := rowsFrom(c.a, lo, hi)
		rr, dd, bb, di := r[lo:hi], d[lo:hi], b[lo:hi], dinv[lo:hi]
		dd, bb, di, ends = dd[:len(rr)], bb[:len(rr)], di[:len(rr)], ends[:len(rr)]
		if av := c.masked(x, lo, hi); av != nil {
			av = av[:len(rr)]
			for i := range rr {
				ri := bb[i] - av[i]
				rr[i] = ri
				dd[i] = it * di[i] * ri
			}
			return
		}
		k := 0
		for i := range rr {
			end := ends[i] - base
			ri := bb[i] - dotTo(col, val, x, k, end)
			k = end
			rr[i] = ri
			dd[i] = it * di[i] * ri
		}
	})
}

// chebSweep is one middle step: r −= A·d, x += d, dn = c1·d + c2·D⁻¹r.
func (p pool) chebSweep(c chebRows, x, r, dcur, dnext, dinv []float64, c1, c2 float64) {
	p.forRows(c.a, func(lo, hi int) {
		col, val, ends, base := rowsFrom(c.a, lo, hi)
		rr, dd, xx, nn, di := r[lo:hi], dcur[lo:hi], x[lo:hi], dnext[lo:hi], dinv[lo:hi]
		dd, xx, nn, di, ends = dd[:len(rr)], xx[:len(rr)], nn[:len(rr)], di[:len(rr)], ends[:len(rr)]
		if av := c.masked(dcur, lo, hi); av != nil {
			av = av[:len(rr)]
			for i := range rr {
				ri := rr[i] - av[i]
				rr[i] = ri
				dv := dd[i]
				xx[i] += dv
				nn[i] = c1*dv + c2*di[i]*ri
			}
			return
		}
		k := 0
		for i := range rr {
			end := ends[i] - base
			ri := rr[i] - dotTo(col, val, dcur, k, end)
			k = end
			rr[i] = ri
			dv := dd[i]
			xx[i] += dv
			nn[i] = c1*dv + c2*di[i]*ri
		}
	})
}

// chebLast is the last step with the residual wanted: r −= A·d, x += d.
func (p pool) chebLast(c chebRows, x, r, d []float64) {
	p.forRows(c.a, func(lo, hi int) {
		col, val, ends, base := rowsFrom(c.a, lo, hi)
		rr, dd, xx := r[lo:hi], d[lo:hi], x[lo:hi]
		dd, xx, ends = dd[:len(rr)], xx[:len(rr)], ends[:len(rr)]
		if av := c.masked(d, lo, hi); av != nil {
			av = av[:len(rr)]
			for i := range rr {
				rr[i] -= av[i]
				xx[i] += dd[i]
			}
			return
		}
		k := 0
		for i := range rr {
			end := ends[i] - base
			rr[i] -= dotTo(col, val, d, k, end)
			k = end
			xx[i] += dd[i]
		}
	})
}

// jacobi runs s.sweeps l1-Jacobi sweeps.
func (p pool) jacobi(a *csr, s *smootherData, x, b, r []float64, zero, wantRes bool) {
	n := a.rows
	dinv := s.dinv
	for k := 0; k < s.sweeps; k++ {
		if k == 0 && zero {
			p.forRange(n, n, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					x[i] = dinv[i] * b[i]
				}
			})
			continue
		}
		p.residual(a, x, b, r)
		p.forRange(n, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x[i] += dinv[i] * r[i]
			}
		})
	}
	if wantRes {
		p.residual(a, x, b, r)
	}
}

// gaussSeidel sweeps the color classes in order (or reversed). Rows of one
// class are not coupled, so each class updates in parallel and the result
// does not depend on the worker count.
func (p pool) gaussSeidel(a *csr, s *smootherData, x, b []float64, backward bool) {
	nc := len(s.colors)
	for c := 0; c < nc; c++ {
		cls := s.colors[c]
		if backward {
			cls = s.colors[nc-1-c]
		}
		p.forRange(len(cls), len(cls)*(a.nnz()/max(1, a.rows)), func(lo, hi int) {
			ptr, col, val := a.ptr, a.col, a.val
			for _, i := range cls[lo:hi] {
				// x_i += (b_i − A_i·x)/a_ii; the diagonal term cancels.
				x[i] += s.dinv[i] * (b[i] - dotTo(col, val, x, ptr[i], ptr[i+1]))
			}
		})
	}
}
