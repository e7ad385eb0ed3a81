package amg

import (
	"fmt"
	"math"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// csr is the package's sparse matrix: sorted rows without repeats, int32
// column ids and float64 values, the form every kernel here expects.
type csr struct {
	rows, cols int
	ptr        []int // len rows+1
	col        []int32
	val        []float64
	// nz is the entry count of a mirror of a device matrix whose arrays
	// are not on the host yet (ptr nil; gpu_input.go).
	nz int
}

func (a *csr) nnz() int {
	if a.ptr == nil {
		return a.nz
	}
	return a.ptr[a.rows]
}

// shapeError checks what fromMesh checks first, at no cost: a square,
// non-empty matrix within the int32 index range, with Rows+1 row offsets
// from 0.
func shapeError(a *mesh.CSR[float64]) error {
	if a == nil {
		return fmt.Errorf("amg: nil matrix")
	}
	if a.Rows != a.Cols {
		return fmt.Errorf("amg: matrix is %d×%d, want square", a.Rows, a.Cols)
	}
	n := a.Rows
	if n <= 0 {
		return fmt.Errorf("amg: empty matrix")
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("amg: %d rows exceed the int32 index range", n)
	}
	if len(a.RowPtr) != n+1 {
		return fmt.Errorf("amg: len(RowPtr) = %d, want Rows+1 = %d", len(a.RowPtr), n+1)
	}
	if a.RowPtr[0] != 0 {
		return fmt.Errorf("amg: RowPtr[0] = %d, want 0", a.RowPtr[0])
	}
	return nil
}

// lengthError checks that Col and Val hold the nz entries RowPtr ends at.
func lengthError(a *mesh.CSR[float64], nz int64) error {
	if int64(len(a.Col)) != nz {
		return fmt.Errorf("amg: len(Col) = %d, want RowPtr[Rows] = %d", len(a.Col), nz)
	}
	if int64(len(a.Val)) != nz {
		return fmt.Errorf("amg: len(Val) = %d, want RowPtr[Rows] = %d (a matrix with values)", len(a.Val), nz)
	}
	return nil
}

// fromMesh returns a in sorted, duplicate-free form, summing repeats, and
// checks the values a solver depends on. A sorted a keeps its Col and Val
// arrays (only the row offsets are converted); others are copied.
func fromMesh(p pool, a *mesh.CSR[float64]) (*csr, error) {
	if err := shapeError(a); err != nil {
		return nil, err
	}
	n := a.Rows
	for i := 0; i < n; i++ {
		if a.RowPtr[i+1] < a.RowPtr[i] {
			return nil, errRowPtr(i, a.RowPtr[i], a.RowPtr[i+1])
		}
	}
	nz := a.RowPtr[n]
	if err := lengthError(a, nz); err != nil {
		return nil, err
	}
	// One pass checks indices, order and values together, in row ranges
	// side by side (the first range's error is the first entry's); rows
	// found out of order are sorted (and repeats summed) on a second path.
	sorted, err := checkEntries(p, a)
	if err != nil {
		return nil, err
	}
	m := &csr{rows: n, cols: n, ptr: make([]int, n+1)}
	if sorted {
		for i := 0; i <= n; i++ {
			m.ptr[i] = int(a.RowPtr[i])
		}
		// Used in place: the caller's arrays are only read.
		m.col = a.Col[:nz:nz]
		m.val = a.Val[:nz:nz]
	} else {
		m.col = make([]int32, 0, nz)
		m.val = make([]float64, 0, nz)
		var idx []int
		for i := 0; i < n; i++ {
			lo, hi := int(a.RowPtr[i]), int(a.RowPtr[i+1])
			idx = idx[:0]
			for k := lo; k < hi; k++ {
				idx = append(idx, k)
			}
			slices.SortStableFunc(idx, func(x, y int) int { return int(a.Col[x]) - int(a.Col[y]) })
			for j, k := range idx {
				if j > 0 && a.Col[k] == m.col[len(m.col)-1] {
					m.val[len(m.val)-1] += a.Val[k]
					continue
				}
				m.col = append(m.col, a.Col[k])
				m.val = append(m.val, a.Val[k])
			}
			m.ptr[i+1] = len(m.col)
		}
	}
	if err := m.checkDiagonal(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkEntries returns whether a's rows are sorted without repeats, or
// the error of its first bad entry.
func checkEntries(p pool, a *mesh.CSR[float64]) (bool, error) {
	n := a.Rows
	w := min(p.workers, max(1, int(a.RowPtr[n]/minParallel)))
	errs := make([]error, w)
	unsorted := make([]bool, w)
	p.forRange(w, int(a.RowPtr[n]), func(t0, t1 int) {
		for t := t0; t < t1; t++ {
			unsorted[t], errs[t] = checkRows(a, n*t/w, n*(t+1)/w)
		}
	})
	for _, err := range errs {
		if err != nil {
			return false, err
		}
	}
	return !slices.Contains(unsorted, true), nil
}

// checkRows is checkEntries on rows [lo, hi): whether one is out of
// order, or the first bad entry's error.
func checkRows(a *mesh.CSR[float64], lo, hi int) (bool, error) {
	unsorted := false
	for i := lo; i < hi; i++ {
		prev := int32(-1)
		cols := a.Col[a.RowPtr[i]:a.RowPtr[i+1]]
		vals := a.Val[a.RowPtr[i]:a.RowPtr[i+1]]
		vals = vals[:len(cols)]
		for q, c := range cols {
			if err := entryError(i, a.RowPtr[i]+int64(q), c, vals[q], a.Rows); err != nil {
				return unsorted, err
			}
			unsorted = unsorted || c <= prev
			prev = c
		}
	}
	return unsorted, nil
}

// minDrop: dropSmall copies the matrix only when it drops at least
// 1/minDrop of the entries (the Q1 Laplacian's round-off couplings are a
// fifth; P1 elasticity has a few exact cancellations that are not worth
// a copy of the matrix).
const minDrop = 10

// dropSmall returns a copy of a without the off-diagonal entries that
// satisfy |a_ij| ≤ tol·sqrt(a_ii·a_jj), and the index in a of every entry
// kept, or (a, nil) when that drops less than 1/minDrop of the entries or
// would give the rows of a node of bs rows different patterns.
// The diagonal must be positive.
func (a *csr) dropSmall(p pool, tol float64, bs int) (*csr, []int32) {
	if tol <= 0 {
		return a, nil
	}
	d := a.diag()
	t2 := tol * tol
	small := func(i int, j int32, v float64) bool { return v*v <= t2*d[i]*d[j] && int(j) != i }
	// Each row's kept entries, then their offsets: the copy is the
	// rows' own, in parallel.
	ptr := make([]int, a.rows+1)
	p.forRows(a, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			vals := a.val[a.ptr[i]:a.ptr[i+1]]
			kept := 0
			for q, j := range a.col[a.ptr[i]:a.ptr[i+1]] {
				if !small(i, j, vals[q]) {
					kept++
				}
			}
			ptr[i+1] = kept
		}
	})
	for i := range a.rows {
		ptr[i+1] += ptr[i]
	}
	dropped := a.nnz() - ptr[a.rows]
	if dropped == 0 || dropped < a.nnz()/minDrop {
		// Too few to pay for a second copy of the matrix: the hierarchy
		// uses a in place, the small entries included.
		return a, nil
	}
	if bs > 1 && groupOf(a, bs) == bs {
		// Entries dropped inside node blocks would leave a node's rows
		// with different patterns: the products would lose their
		// grouping, which costs more than the entries save (and the copy
		// its memory). Drop only where every row of the node drops.
		for i0 := 0; i0 < a.rows; i0 += bs {
			for q := 0; q < a.ptr[i0+1]-a.ptr[i0]; q++ {
				j := a.col[a.ptr[i0]+q]
				s0 := small(i0, j, a.val[a.ptr[i0]+q])
				for r := 1; r < bs; r++ {
					if small(i0+r, j, a.val[a.ptr[i0+r]+q]) != s0 {
						return a, nil
					}
				}
			}
		}
	}
	w := ptr[a.rows]
	c := &csr{rows: a.rows, cols: a.cols, ptr: ptr, col: make([]int32, w), val: make([]float64, w)}
	keep := make([]int32, w)
	p.forRows(a, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			vals, o := a.val[a.ptr[i]:a.ptr[i+1]], ptr[i]
			for q, j := range a.col[a.ptr[i]:a.ptr[i+1]] {
				if small(i, j, vals[q]) {
					continue
				}
				c.col[o], c.val[o], keep[o] = j, vals[q], int32(a.ptr[i]+q)
				o++
			}
		}
	})
	return c, keep
}

// checkValues rejects NaN and Inf entries and non-positive diagonals.
func (a *csr) checkValues() error {
	for i := 0; i < a.rows; i++ {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			if v := a.val[k]; v-v != 0 {
				return entryError(i, int64(k), a.col[k], v, a.cols)
			}
		}
	}
	return a.checkDiagonal()
}

// checkDiagonal rejects a missing, zero, negative or NaN diagonal entry.
func (a *csr) checkDiagonal() error {
	for i := 0; i < a.rows; i++ {
		row := a.col[a.ptr[i]:a.ptr[i+1]]
		d := 0.0
		if k, ok := slices.BinarySearch(row, int32(i)); ok {
			d = a.val[a.ptr[i]+k]
		}
		if !(d > 0) {
			return errDiagonal(i, d)
		}
	}
	return nil
}

// The input's errors, which the host's checks and the device's
// (gpu_input.go) word alike.

func errRowPtr(i int, lo, hi int64) error {
	return fmt.Errorf("amg: RowPtr[%d] = %d < RowPtr[%d] = %d", i+1, hi, i, lo)
}

// entryError reports entry k of row i, column c, value v, if either is
// wrong (the column first).
func entryError(i int, k int64, c int32, v float64, n int) error {
	if c < 0 || int(c) >= n {
		return fmt.Errorf("amg: row %d: Col[%d] = %d out of range [0,%d)", i, k, c, n)
	}
	if v-v != 0 { // NaN or ±Inf
		return fmt.Errorf("amg: entry (%d,%d) is %v", i, c, v)
	}
	return nil
}

func errDiagonal(i int, d float64) error {
	return fmt.Errorf("amg: diagonal entry (%d,%d) is %v, want > 0 (a symmetric positive definite matrix)", i, i, d)
}

// toMesh returns a view of a as a mesh.CSR for the graph builders.
func (a *csr) toMesh() *mesh.CSR[float64] {
	return &mesh.CSR[float64]{Rows: a.rows, Cols: a.cols, RowPtr: offsets64(a.ptr), Col: a.col, Val: a.val}
}

// offsets64 returns row offsets as mesh keeps them.
func offsets64(ptr []int) []int64 {
	out := make([]int64, len(ptr))
	for i, p := range ptr {
		out[i] = int64(p)
	}
	return out
}

// diag returns the diagonal of a (zero where a row has none).
func (a *csr) diag() []float64 {
	d := make([]float64, a.rows)
	for i := 0; i < a.rows; i++ {
		row := a.col[a.ptr[i]:a.ptr[i+1]]
		if k, ok := slices.BinarySearch(row, int32(i)); ok {
			d[i] = a.val[a.ptr[i]+k]
		}
	}
	return d
}

// transpose returns aᵀ with sorted rows. Counting sort by column keeps the
// row order, so the result is deterministic.
func (a *csr) transpose() *csr {
	t := &csr{rows: a.cols, cols: a.rows, ptr: make([]int, a.cols+1)}
	nz := a.nnz()
	for _, c := range a.col[:nz] {
		t.ptr[c+1]++
	}
	for i := 0; i < a.cols; i++ {
		t.ptr[i+1] += t.ptr[i]
	}
	t.col = make([]int32, nz)
	t.val = make([]float64, nz)
	pos := slices.Clone(t.ptr[:a.cols])
	for i := 0; i < a.rows; i++ {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			c := a.col[k]
			p := pos[c]
			t.col[p] = int32(i)
			t.val[p] = a.val[k]
			pos[c]++
		}
	}
	return t
}

// sortRows orders the columns of every row, moving values along.
func (a *csr) sortRows(p pool) {
	p.forRange(a.rows, a.nnz()*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sortRow(a.col[a.ptr[i]:a.ptr[i+1]], a.val[a.ptr[i]:a.ptr[i+1]])
		}
	})
}

// sortRow is an insertion sort for short rows and a heap-free pair sort
// otherwise; columns in a row are distinct.
func sortRow(c []int32, v []float64) {
	if len(c) <= 32 {
		for i := 1; i < len(c); i++ {
			ci, vi := c[i], v[i]
			j := i - 1
			for j >= 0 && c[j] > ci {
				c[j+1], v[j+1] = c[j], v[j]
				j--
			}
			c[j+1], v[j+1] = ci, vi
		}
		return
	}
	idx := make([]int32, len(c))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(x, y int32) int { return int(c[x]) - int(c[y]) })
	cc := slices.Clone(c)
	vv := slices.Clone(v)
	for i, k := range idx {
		c[i], v[i] = cc[k], vv[k]
	}
}
