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
	if variedRows(a, lo, hi) {
		spmvMasked(a, x, y, lo, hi)
	} else {
		spmvPlain(a, x, y, lo, hi)
	}
}

// spmvPlain sets y = a·x on rows [lo, hi) by dotTo.
func spmvPlain(a *csr, x, y []float64, lo, hi int) {
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

// spmvMasked sets y = a·x on rows [lo, hi) as spmvRows does, bitwise,
// without a loop exit branch per row: where consecutive rows differ in
// length (unstructured meshes, see variedRows) the predictor misses that
// branch on most rows, at the cost of about six entries. Rows are added
// in blocks of 8 entries, the last block read whole, past the row's end
// into the next rows, with the entries beyond multiplied by 0: ±0 terms,
// which leave a sum that starts from +0 unchanged. So the sums are
// dotTo's wherever x is finite (a non-finite x has ruined the solve
// already). The last rows, whose block would read past the arrays, take
// dotTo.
func spmvMasked(a *csr, x, y []float64, lo, hi int) {
	nz := a.ptr[a.rows]
	col, val := a.col[:nz], a.val[:nz]
	last := hi
	for last > lo && a.ptr[last]+8 > len(col) {
		last--
	}
	ptr := a.ptr[lo : last+1]
	yy := y[lo:last]
	for i := range yy {
		k, end := ptr[i], ptr[i+1]
		s := 0.0
		for ; k+8 < end; k += 8 {
			c, v := col[k:k+8:k+8], val[k:k+8:k+8]
			s += v[0] * x[c[0]]
			s += v[1] * x[c[1]]
			s += v[2] * x[c[2]]
			s += v[3] * x[c[3]]
			s += v[4] * x[c[4]]
			s += v[5] * x[c[5]]
			s += v[6] * x[c[6]]
			s += v[7] * x[c[7]]
		}
		m := &tailMask[end-k]
		c, v := col[k:k+8:k+8], val[k:k+8:k+8]
		s += v[0] * m[0] * x[c[0]]
		s += v[1] * m[1] * x[c[1]]
		s += v[2] * m[2] * x[c[2]]
		s += v[3] * m[3] * x[c[3]]
		s += v[4] * m[4] * x[c[4]]
		s += v[5] * m[5] * x[c[5]]
		s += v[6] * m[6] * x[c[6]]
		s += v[7] * m[7] * x[c[7]]
		yy[i] = s
	}
	spmvPlain(a, x, y, last, hi)
}

// tailMask[t] keeps the first t of 8 entries (spmvMasked's last block).
var tailMask = func() (m [9][8]float64) {
	for t := range m {
		for j := range t {
			m[t][j] = 1
		}
	}
	return m
}()

// maskSample is the number of row pairs that variedRows looks at.
const maskSample = 64

// variedRows reports whether consecutive rows of a in [lo, hi) differ in
// length more often than not, over maskSample pairs spread through the
// range: where they do, spmvMasked's padding (3.5 entries a row on
// average) costs less than dotTo's mispredicted row ends (P1 tetrahedra,
// 36k rows: 0.42 ms against 0.53 ms). Structured meshes, whose rows have
// one length, and block rows keep dotTo, which the padding would slow
// (Q1 quadrilaterals, rows of 9: 0.84 ms against 0.51 ms). It decides
// speed only: both give the same sums.
func variedRows(a *csr, lo, hi int) bool {
	if hi-lo < 2 {
		return false
	}
	step := max(1, (hi-lo-1)/maskSample)
	pairs, changes := 0, 0
	for i := lo; i+1 < hi && pairs < maskSample; i += step {
		if a.ptr[i+2]-a.ptr[i+1] != a.ptr[i+1]-a.ptr[i] {
			changes++
		}
		pairs++
	}
	return 2*changes > pairs
}
