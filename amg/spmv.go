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

// dotTo returns Σ val[q]·x[col[q]] over q in [k, end): one row of a
// product, in column order. Loops over rows in order keep one running
// index into col and val rather than two subslices a row, whose bounds
// and pointer arithmetic cost as much as the seven entries of a 2D row;
// the clamp, which rows within the arrays never meet, lets the compiler
// drop the check on col.
func dotTo(col []int32, val []float64, x []float64, k, end int) float64 {
	if end > len(col) {
		end = len(col)
	}
	s := 0.0
	for ; k < end; k++ {
		s += val[k] * x[col[k]]
	}
	return s
}

// rowsFrom returns the entries of a from row lo on and the ends of rows
// lo+1 … hi among them (end i is ends[i] − base).
func rowsFrom(a *csr, lo, hi int) (col []int32, val []float64, ends []int, base int) {
	base = a.ptr[lo]
	return a.col[base:], a.val[base:], a.ptr[lo+1 : hi+1], base
}

func spmvRows(a *csr, x, y []float64, lo, hi int) {
	col, val, ends, base := rowsFrom(a, lo, hi)
	yy := y[lo:hi]
	ends = ends[:len(yy)]
	k := 0
	for i := range yy {
		end := ends[i] - base
		yy[i] = dotTo(col, val, x, k, end)
		k = end
	}
}

func spmvAddRows(a *csr, x, y []float64, lo, hi int) {
	col, val, ends, base := rowsFrom(a, lo, hi)
	yy := y[lo:hi]
	ends = ends[:len(yy)]
	k := 0
	for i := range yy {
		end := ends[i] - base
		yy[i] += dotTo(col, val, x, k, end)
		k = end
	}
}

func residualRows(a *csr, x, b, r []float64, lo, hi int) {
	col, val, ends, base := rowsFrom(a, lo, hi)
	rr, bb := r[lo:hi], b[lo:hi]
	bb, ends = bb[:len(rr)], ends[:len(rr)]
	k := 0
	for i := range rr {
		end := ends[i] - base
		rr[i] = bb[i] - dotTo(col, val, x, k, end)
		k = end
	}
}
