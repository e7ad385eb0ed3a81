package amg

// mulVec sets y = a·x.
func (p pool) mulVec(a *csr, x, y []float64) {
	p.forRows(a, func(lo, hi int) { spmvRows(a, x, y, lo, hi) })
}

// residual sets r = b − a·x.
func (p pool) residual(a *csr, x, b, r []float64) {
	p.forRows(a, func(lo, hi int) { residualRows(a, x, b, r, lo, hi) })
}

// mulVecAdd sets y += a·x (a prolongation added to a correction).
func (p pool) mulVecAdd(a *csr, x, y []float64) {
	p.forRows(a, func(lo, hi int) { spmvAddRows(a, x, y, lo, hi) })
}

// rowDot is the inner loop of every product: the entries of one row times
// x, in column order with two accumulators.
func rowDot(c []int32, v []float64, x []float64) float64 {
	v = v[:len(c)]
	var s0, s1 float64
	k := 0
	for ; k+2 <= len(c); k += 2 {
		s0 += v[k] * x[c[k]]
		s1 += v[k+1] * x[c[k+1]]
	}
	if k < len(c) {
		s0 += v[k] * x[c[k]]
	}
	return s0 + s1
}

func spmvRows(a *csr, x, y []float64, lo, hi int) {
	ptr, col, val := a.ptr[lo:hi+1], a.col, a.val
	yy := y[lo:hi]
	ptr = ptr[:len(yy)+1]
	for i := range yy {
		yy[i] = rowDot(col[ptr[i]:ptr[i+1]], val[ptr[i]:ptr[i+1]], x)
	}
}

func spmvAddRows(a *csr, x, y []float64, lo, hi int) {
	ptr, col, val := a.ptr[lo:hi+1], a.col, a.val
	yy := y[lo:hi]
	ptr = ptr[:len(yy)+1]
	for i := range yy {
		yy[i] += rowDot(col[ptr[i]:ptr[i+1]], val[ptr[i]:ptr[i+1]], x)
	}
}

func residualRows(a *csr, x, b, r []float64, lo, hi int) {
	ptr, col, val := a.ptr[lo:hi+1], a.col, a.val
	rr, bb := r[lo:hi], b[lo:hi]
	bb, ptr = bb[:len(rr)], ptr[:len(rr)+1]
	for i := range rr {
		rr[i] = bb[i] - rowDot(col[ptr[i]:ptr[i+1]], val[ptr[i]:ptr[i+1]], x)
	}
}
