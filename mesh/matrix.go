package mesh

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"
)

// MatrixOptions controls FromCSR and FromCOO. The zero value keeps every
// stored entry and makes each row a vertex.
type MatrixOptions struct {
	// Theta is the strength-of-connection threshold θ ≥ 0: node j stays a
	// neighbour of node i when |a_ij| > θ·sqrt(|a_ii|·|a_jj|), the test of
	// classical smoothed aggregation. Zero keeps the stored pattern,
	// explicit zeros included. θ > 0 needs values.
	Theta float64

	// BlockSize b groups b consecutive rows and columns into one node, for
	// vector PDEs with b unknowns per mesh node (elasticity: 2 or 3). Rows
	// must be a multiple of b. Nodes I and J are adjacent when block
	// (I,J) holds a stored entry (θ = 0), or when its Frobenius norm passes
	// the test above against the Frobenius norms of the diagonal blocks
	// (θ > 0), as GAMG and ML do. Zero and one both mean scalar.
	BlockSize int

	// MaxBytes bounds the memory the build may take: positive is a limit
	// in bytes, zero what the process may still take on this machine,
	// negative no check (see CheckMemory). A matrix whose size implies
	// more is refused with a *MemoryError before anything is allocated.
	MaxBytes int64
}

// FromCSR returns the graph of a square sparse matrix: one vertex per row
// (or per block of rows), an edge where an off-diagonal entry (or block)
// passes the strength test of opt. Duplicate entries are summed before the
// test. The diagonal is dropped.
//
// A Dirichlet row, whose only nonzero (after summing duplicates and
// dropping explicit zeros) is its diagonal, becomes an isolated vertex
// flagged in Graph.Dirichlet; for blocks, a node is Dirichlet when all of
// its rows are. The entries of other rows in a Dirichlet node's columns
// are dropped too, so FEM codes that keep the symmetric column entries of
// eliminated unknowns still get isolated Dirichlet vertices.
//
// A non-symmetric pattern is symmetrized: i and j are adjacent when either
// a_ij or a_ji passes the test (each against the same diagonals).
//
// The input is validated first; errors name the array and index at fault.
// Memory is the result plus one adjacency-sized array, with no per-entry
// maps, and rows are processed in parallel.
func FromCSR[T Float](a *CSR[T], opt MatrixOptions) (*Graph, error) {
	const who = "FromCSR"
	if a == nil {
		return nil, errors.New("mesh: FromCSR: nil matrix")
	}
	b, err := checkMatrixShape(who, a.Rows, a.Cols, a.Val == nil, opt)
	if err != nil {
		return nil, err
	}
	if err := validateCSR(a); err != nil {
		return nil, err
	}
	if err := CheckMemory(who, matrixWhat(a.Rows, int64(len(a.Col))), matrixGraphBytes(a.Rows/b, int64(len(a.Col))), opt.MaxBytes); err != nil {
		return nil, err
	}
	return matrixGraph(a, b, opt.Theta), nil
}

// FromCOO is FromCSR for a matrix given as (row, column, value) triplets,
// in any order and with repeats (summed). It builds a CSR copy first
// (COOToCSR).
func FromCOO[T Float](a *COO[T], opt MatrixOptions) (*Graph, error) {
	const who = "FromCOO"
	if a == nil {
		return nil, errors.New("mesh: FromCOO: nil matrix")
	}
	b, err := checkMatrixShape(who, a.Rows, a.Cols, a.Val == nil, opt)
	if err != nil {
		return nil, err
	}
	nnz := int64(len(a.Row))
	need := bytesOf(1, csrBytes[T](a.Rows, nnz, a.Val != nil), 1, matrixGraphBytes(a.Rows/b, nnz))
	if err := CheckMemory(who, matrixWhat(a.Rows, nnz), need, opt.MaxBytes); err != nil {
		return nil, err
	}
	c, err := cooToCSR(who, a)
	if err != nil {
		return nil, err
	}
	return matrixGraph(c, b, opt.Theta), nil
}

// COOToCSR returns a as a CSR matrix with the triplets grouped by row in
// their input order (a stable counting sort), repeats kept. Indices must
// be in range and values finite. maxBytes bounds the memory of the copy
// as MatrixOptions.MaxBytes does: 0 means what the process may still take.
func COOToCSR[T Float](a *COO[T], maxBytes int64) (*CSR[T], error) {
	const who = "COOToCSR"
	if a == nil {
		return nil, errors.New("mesh: COOToCSR: nil matrix")
	}
	if a.Rows < 0 || a.Cols < 0 || a.Rows > math.MaxInt32 || a.Cols > math.MaxInt32 {
		return nil, fmt.Errorf("mesh: COOToCSR: size %d×%d out of range [0, 2³¹)", a.Rows, a.Cols)
	}
	nnz := int64(len(a.Row))
	if err := CheckMemory(who, matrixWhat(a.Rows, nnz), csrBytes[T](a.Rows, nnz, a.Val != nil), maxBytes); err != nil {
		return nil, err
	}
	return cooToCSR(who, a)
}

// cooToCSR validates the triplets of a and groups them by row.
func cooToCSR[T Float](who string, a *COO[T]) (*CSR[T], error) {
	if len(a.Col) != len(a.Row) {
		return nil, fmt.Errorf("mesh: %s: len(Col) = %d, but len(Row) = %d", who, len(a.Col), len(a.Row))
	}
	if a.Val != nil && len(a.Val) != len(a.Row) {
		return nil, fmt.Errorf("mesh: %s: len(Val) = %d, but len(Row) = %d", who, len(a.Val), len(a.Row))
	}
	if err := firstEntryError(len(a.Row), func(lo, hi int) error {
		for k := lo; k < hi; k++ {
			if r := a.Row[k]; r < 0 || int(r) >= a.Rows {
				return fmt.Errorf("mesh: %s: Row[%d] = %d out of range [0,%d)", who, k, r, a.Rows)
			}
			if c := a.Col[k]; c < 0 || int(c) >= a.Cols {
				return fmt.Errorf("mesh: %s: Col[%d] = %d out of range [0,%d) (row %d)", who, k, c, a.Cols, a.Row[k])
			}
			if a.Val != nil {
				if x := float64(a.Val[k]); math.IsNaN(x) || math.IsInf(x, 0) {
					return fmt.Errorf("mesh: %s: Val[%d] = %v (row %d, column %d)", who, k, x, a.Row[k], a.Col[k])
				}
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// Counting sort by row, stable, so that the result does not depend
	// on anything but the input.
	c := &CSR[T]{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int64, a.Rows+1), Col: make([]int32, len(a.Col))}
	for _, r := range a.Row {
		c.RowPtr[r+1]++
	}
	for i := range a.Rows {
		c.RowPtr[i+1] += c.RowPtr[i]
	}
	pos := slices.Clone(c.RowPtr[:a.Rows])
	if a.Val != nil {
		c.Val = make([]T, len(a.Val))
	}
	for k, r := range a.Row {
		p := pos[r]
		pos[r]++
		c.Col[p] = a.Col[k]
		if a.Val != nil {
			c.Val[p] = a.Val[k]
		}
	}
	return c, nil
}

// csrBytes estimates COOToCSR's memory: the CSR arrays and the row cursor.
func csrBytes[T Float](rows int, nnz int64, values bool) int64 {
	var zero T
	vb := int64(0)
	if values {
		vb = int64(unsafe.Sizeof(zero))
	}
	return bytesOf(int64(rows)+1, 8, int64(rows), 8, nnz, 4+vb)
}

// matrixGraphBytes estimates matrixGraph's peak for n nodes and nnz
// stored entries: per node the diagonal norm, Dirichlet flag, offsets,
// row lengths and symmetrize's counts, offsets and cursors (45 bytes);
// per entry the strong adjacency and, when the pattern is not symmetric,
// its symmetrized copy, which can double it (12 bytes).
func matrixGraphBytes(n int, nnz int64) int64 {
	return bytesOf(int64(n), 45, nnz, 12)
}

func matrixWhat(rows int, nnz int64) string {
	return fmt.Sprintf("a matrix of %d rows and %d entries", rows, nnz)
}

// checkMatrixShape validates what does not depend on the entries and
// returns the block size.
func checkMatrixShape(who string, rows, cols int, pattern bool, opt MatrixOptions) (int, error) {
	if rows < 0 || cols < 0 {
		return 0, fmt.Errorf("mesh: %s: negative size %d×%d", who, rows, cols)
	}
	if rows != cols {
		return 0, fmt.Errorf("mesh: %s: matrix is %d×%d, not square", who, rows, cols)
	}
	if !(opt.Theta >= 0) || math.IsInf(opt.Theta, 0) {
		return 0, fmt.Errorf("mesh: %s: threshold θ = %v, want a finite θ ≥ 0", who, opt.Theta)
	}
	if opt.Theta > 0 && pattern {
		return 0, fmt.Errorf("mesh: %s: threshold θ = %v needs values, but the matrix is a pattern (Val is nil)", who, opt.Theta)
	}
	b := max(opt.BlockSize, 1)
	if opt.BlockSize < 0 || opt.BlockSize > math.MaxInt32 {
		return 0, fmt.Errorf("mesh: %s: block size %d, want 0 ≤ b < 2³¹", who, opt.BlockSize)
	}
	if rows%b != 0 {
		return 0, fmt.Errorf("mesh: %s: %d rows are not a multiple of block size %d", who, rows, b)
	}
	if rows/b > math.MaxInt32 {
		return 0, fmt.Errorf("mesh: %s: %d nodes exceed the int32 vertex id range", who, rows/b)
	}
	return b, nil
}

func validateCSR[T Float](a *CSR[T]) error {
	if len(a.RowPtr) != a.Rows+1 {
		return fmt.Errorf("mesh: FromCSR: len(RowPtr) = %d, want Rows+1 = %d", len(a.RowPtr), a.Rows+1)
	}
	if a.RowPtr[0] != 0 {
		return fmt.Errorf("mesh: FromCSR: RowPtr[0] = %d, want 0", a.RowPtr[0])
	}
	for i := 1; i <= a.Rows; i++ {
		if a.RowPtr[i] < a.RowPtr[i-1] {
			return fmt.Errorf("mesh: FromCSR: RowPtr not monotone at %d: RowPtr[%d] = %d < RowPtr[%d] = %d", i, i, a.RowPtr[i], i-1, a.RowPtr[i-1])
		}
	}
	if a.RowPtr[a.Rows] != int64(len(a.Col)) {
		return fmt.Errorf("mesh: FromCSR: RowPtr[%d] = %d, but len(Col) = %d", a.Rows, a.RowPtr[a.Rows], len(a.Col))
	}
	if a.Val != nil && len(a.Val) != len(a.Col) {
		return fmt.Errorf("mesh: FromCSR: len(Val) = %d, but len(Col) = %d", len(a.Val), len(a.Col))
	}
	return firstEntryError(a.Rows, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				if c := a.Col[k]; c < 0 || int(c) >= a.Cols {
					return fmt.Errorf("mesh: FromCSR: Col[%d] = %d out of range [0,%d) (row %d)", k, c, a.Cols, i)
				}
				if a.Val != nil {
					if x := float64(a.Val[k]); math.IsNaN(x) || math.IsInf(x, 0) {
						return fmt.Errorf("mesh: FromCSR: Val[%d] = %v (row %d, column %d)", k, x, i, a.Col[k])
					}
				}
			}
		}
		return nil
	})
}

// firstEntryError runs check over [0,n) in parallel spans and returns the
// error of the lowest span that has one: the same error a serial scan
// would find first.
func firstEntryError(n int, check func(lo, hi int) error) error {
	spans := splitRange(n, 1<<14)
	errs := make([]error, len(spans))
	runSpans(spans, func(i int, s workSpan) { errs[i] = check(s.lo, s.hi) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// entry is one stored matrix entry of a node's rows: its column, its row
// within the node's block, and its value (1 for a pattern).
type entry struct {
	col, r int32
	v      float64
}

// gatherer collects the entries of the b rows of a node, sorted by column
// and row, duplicates summed. Sorted rows, the common case, need no sort:
// scalar rows are used as they come and block rows are merged.
type gatherer[T Float] struct {
	a           *CSR[T]
	b           int
	buf, tmp    []entry
	starts, end []int
}

func (g *gatherer[T]) node(I int) []entry {
	a, b := g.a, g.b
	buf := g.buf[:0]
	g.starts = g.starts[:0]
	sorted := true
	for r := range b {
		row := I*b + r
		start := len(buf)
		g.starts = append(g.starts, start)
		for k := a.RowPtr[row]; k < a.RowPtr[row+1]; k++ {
			v := 1.0
			if a.Val != nil {
				v = float64(a.Val[k])
			}
			c := a.Col[k]
			if len(buf) > start && c <= buf[len(buf)-1].col {
				sorted = false
			}
			buf = append(buf, entry{c, int32(r), v})
		}
	}
	g.buf = buf
	switch {
	case sorted && b == 1:
		return buf
	case sorted:
		return g.merge()
	}
	// Stable, so that duplicates are summed in input order.
	slices.SortStableFunc(buf, func(x, y entry) int {
		if c := cmp.Compare(x.col, y.col); c != 0 {
			return c
		}
		return cmp.Compare(x.r, y.r)
	})
	w := 0
	for i, e := range buf {
		if i > 0 && e.col == buf[w-1].col && e.r == buf[w-1].r {
			buf[w-1].v += e.v
			continue
		}
		buf[w] = e
		w++
	}
	return buf[:w]
}

// merge merges the b strictly increasing rows in g.buf by column, the
// lower row first on equal columns.
func (g *gatherer[T]) merge() []entry {
	buf, b := g.buf, g.b
	head := g.starts
	ends := append(g.end[:0], g.starts[1:]...)
	ends = append(ends, len(buf))
	g.end = ends
	out := g.tmp[:0]
	for {
		best := -1
		for r := range b {
			if head[r] < ends[r] && (best < 0 || buf[head[r]].col < buf[head[best]].col) {
				best = r
			}
		}
		if best < 0 {
			break
		}
		out = append(out, buf[head[best]])
		head[best]++
	}
	g.tmp = out
	return out
}

// matrixGraph builds the graph of a validated matrix in two passes over
// the nodes: the first finds diagonal norms, Dirichlet nodes and an upper
// bound on each row's length; the second applies the strength test into
// rows at those bounds, which are then packed and symmetrized.
func matrixGraph[T Float](a *CSR[T], b int, theta float64) *Graph {
	n := a.Rows / b
	diag := make([]float64, n) // norm of the diagonal block (|a_ii| for b = 1)
	dirichlet := make([]bool, n)
	off := make([]int64, n+1)
	spans := splitRange(n, 1<<10)
	runSpans(spans, func(_ int, s workSpan) {
		ga := &gatherer[T]{a: a, b: b}
		hasDiag := make([]bool, b)
		for I := s.lo; I < s.hi; I++ {
			buf := ga.node(I)
			clear(hasDiag)
			offDiag := false
			var dn Norm2
			blocks, lastJ := int64(0), int32(-1)
			for _, e := range buf {
				J := e.col / int32(b)
				if int(J) == I {
					dn.Add(e.v)
					if int(e.col) == I*b+int(e.r) {
						hasDiag[e.r] = hasDiag[e.r] || e.v != 0
						continue
					}
				} else if J != lastJ {
					blocks++
					lastJ = J
				}
				offDiag = offDiag || e.v != 0
			}
			diag[I] = dn.Value()
			if b == 1 {
				diag[I] = 0
				for _, e := range buf {
					if int(e.col) == I {
						diag[I] = math.Abs(e.v)
					}
				}
			}
			dirichlet[I] = !offDiag && !slices.Contains(hasDiag, false)
			off[I+1] = blocks
		}
	})
	for I := range n {
		off[I+1] += off[I]
	}
	adj := make([]int32, off[n])
	length := make([]int64, n)
	runSpans(spans, func(_ int, s workSpan) {
		ga := &gatherer[T]{a: a, b: b}
		for I := s.lo; I < s.hi; I++ {
			if dirichlet[I] {
				continue
			}
			buf := ga.node(I)
			w := off[I]
			for i := 0; i < len(buf); {
				J := buf[i].col / int32(b)
				j, bn := i, Norm2{}
				for ; j < len(buf) && buf[j].col/int32(b) == J; j++ {
					bn.Add(buf[j].v)
				}
				strength := bn.Value()
				if b == 1 {
					strength = math.Abs(buf[i].v)
				}
				if int(J) != I && !dirichlet[J] &&
					(theta == 0 || strength > theta*math.Sqrt(diag[I])*math.Sqrt(diag[J])) {
					adj[w] = J
					w++
				}
				i = j
			}
			length[I] = w - off[I]
		}
	})
	off, adj = packRows(off, length, adj, spans)
	off, adj = symmetrize(off, adj, spans)
	return &Graph{Offsets: off, Adj: adj, Dirichlet: dirichlet}
}

// symmetrize adds the reverse of every edge that lacks one. Rows must be
// sorted and free of repeats; they stay so. A symmetric pattern, the
// common case, is returned as is after one read-only pass.
func symmetrize(off []int64, adj []int32, spans []workSpan) ([]int64, []int32) {
	n := len(off) - 1
	missing := func(I int, J int32) bool {
		_, ok := slices.BinarySearch(adj[off[J]:off[J+1]], int32(I))
		return !ok
	}
	extra := make([]int32, n)
	var total atomic.Int64
	runSpans(spans, func(_ int, s workSpan) {
		c := int64(0)
		for I := s.lo; I < s.hi; I++ {
			for _, J := range adj[off[I]:off[I+1]] {
				if missing(I, J) {
					atomic.AddInt32(&extra[J], 1)
					c++
				}
			}
		}
		total.Add(c)
	})
	if total.Load() == 0 {
		return off, adj
	}
	newOff := make([]int64, n+1)
	for v := range n {
		newOff[v+1] = newOff[v] + off[v+1] - off[v] + int64(extra[v])
	}
	newAdj := make([]int32, newOff[n])
	pos := make([]int64, n)
	runSpans(spans, func(_ int, s workSpan) {
		for v := s.lo; v < s.hi; v++ {
			pos[v] = newOff[v] + int64(copy(newAdj[newOff[v]:], adj[off[v]:off[v+1]]))
		}
	})
	runSpans(spans, func(_ int, s workSpan) {
		for I := s.lo; I < s.hi; I++ {
			for _, J := range adj[off[I]:off[I+1]] {
				if missing(I, J) {
					newAdj[atomic.AddInt64(&pos[J], 1)-1] = int32(I)
				}
			}
		}
	})
	runSpans(spans, func(_ int, s workSpan) {
		for v := s.lo; v < s.hi; v++ {
			if extra[v] > 0 {
				slices.Sort(newAdj[newOff[v]:newOff[v+1]])
			}
		}
	})
	return newOff, newAdj
}

// Norm2 accumulates a Euclidean (Frobenius) norm with scaling, as LAPACK's
// dnrm2 does, so that entries near the ends of the float64 range (1e160,
// 1e-170) neither overflow nor vanish when squared. The zero value is the
// norm of nothing.
type Norm2 struct{ scale, ssq float64 }

// Add includes x in the norm.
func (n *Norm2) Add(x float64) {
	if x == 0 {
		return
	}
	a := math.Abs(x)
	if a > n.scale {
		r := n.scale / a
		n.ssq = 1 + n.ssq*r*r
		n.scale = a
		return
	}
	r := a / n.scale
	n.ssq += r * r
}

// Value returns the norm of the values added so far.
func (n *Norm2) Value() float64 { return n.scale * math.Sqrt(n.ssq) }
