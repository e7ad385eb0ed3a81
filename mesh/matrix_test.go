package mesh

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// triplet is one stored entry, for writing small matrices by hand.
type triplet struct {
	i, j int32
	v    float64
}

// cooOf and csrOf build a matrix from triplets in the given order (so
// rows may be unsorted and hold repeats).
func cooOf(n int, ts []triplet) *COO[float64] {
	a := &COO[float64]{Rows: n, Cols: n}
	for _, t := range ts {
		a.Row = append(a.Row, t.i)
		a.Col = append(a.Col, t.j)
		a.Val = append(a.Val, t.v)
	}
	return a
}

func csrOf(n int, ts []triplet) *CSR[float64] {
	a := &CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := range n {
		for _, t := range ts {
			if int(t.i) == i {
				a.Col = append(a.Col, t.j)
				a.Val = append(a.Val, t.v)
			}
		}
		a.RowPtr[i+1] = int64(len(a.Col))
	}
	return a
}

// dense lists the entries of a dense matrix, zeros left out.
func dense(rows ...[]float64) []triplet {
	var ts []triplet
	for i, r := range rows {
		for j, v := range r {
			if v != 0 {
				ts = append(ts, triplet{int32(i), int32(j), v})
			}
		}
	}
	return ts
}

func TestFromMatrix(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		ts        []triplet
		opt       MatrixOptions
		want      [][]int32 // neighbours per vertex
		dirichlet []int     // flagged vertices
	}{
		{"path", 3, dense([]float64{4, -1, 0}, []float64{-1, 4, -1}, []float64{0, -1, 4}), MatrixOptions{},
			[][]int32{{1}, {0, 2}, {1}}, nil},
		// θ = 0.25 against diagonals 4: the bar is 1, and |−1| is not above it.
		{"theta strict", 3, dense([]float64{4, -1, -0.1}, []float64{-1, 4, -2}, []float64{-0.1, -2, 4}), MatrixOptions{Theta: 0.25},
			[][]int32{{}, {2}, {1}}, nil},
		{"theta keeps", 3, dense([]float64{4, -1, -0.1}, []float64{-1, 4, -2}, []float64{-0.1, -2, 4}), MatrixOptions{Theta: 0.2},
			[][]int32{{1}, {0, 2}, {1}}, nil},
		{"theta 0 keeps weak", 3, dense([]float64{4, -1, -0.1}, []float64{-1, 4, -2}, []float64{-0.1, -2, 4}), MatrixOptions{},
			[][]int32{{1, 2}, {0, 2}, {0, 1}}, nil},
		// The bar is θ·sqrt(1·100): 0.5 passes for θ = 0.04, not for 0.1.
		{"unequal diagonals pass", 2, dense([]float64{1, 0.5}, []float64{0.5, 100}), MatrixOptions{Theta: 0.04},
			[][]int32{{1}, {0}}, nil},
		{"unequal diagonals fail", 2, dense([]float64{1, 0.5}, []float64{0.5, 100}), MatrixOptions{Theta: 0.1},
			[][]int32{{}, {}}, nil},
		// Negative diagonals use absolute values.
		{"negative diagonal", 2, dense([]float64{-4, 2}, []float64{2, -4}), MatrixOptions{Theta: 0.45},
			[][]int32{{1}, {0}}, nil},
		// An explicit zero is part of the pattern for θ = 0 only.
		{"explicit zero θ=0", 3, []triplet{{0, 0, 2}, {0, 1, 0}, {0, 2, -1}, {1, 0, 0}, {1, 1, 2}, {1, 2, -1}, {2, 0, -1}, {2, 1, -1}, {2, 2, 2}}, MatrixOptions{},
			[][]int32{{1, 2}, {0, 2}, {0, 1}}, nil},
		{"explicit zero θ>0", 3, []triplet{{0, 0, 2}, {0, 1, 0}, {0, 2, -1}, {1, 0, 0}, {1, 1, 2}, {1, 2, -1}, {2, 0, -1}, {2, 1, -1}, {2, 2, 2}}, MatrixOptions{Theta: 0.01},
			[][]int32{{2}, {2}, {0, 1}}, nil},
		// −0.5 twice is −1: it passes a bar of 0.8 only once summed.
		{"duplicates summed", 2, []triplet{{0, 0, 4}, {0, 1, -0.5}, {1, 1, 4}, {0, 1, -0.5}, {1, 0, -0.1}}, MatrixOptions{Theta: 0.2},
			[][]int32{{1}, {0}}, nil},
		// Duplicates that cancel leave an explicit zero: row 0 is then a
		// Dirichlet row, whatever θ, and row 1 loses its entry in column 0.
		{"duplicates cancel", 2, []triplet{{0, 1, 1}, {0, 0, 4}, {0, 1, -1}, {1, 1, 4}, {1, 0, -1}}, MatrixOptions{},
			[][]int32{{}, {}}, []int{0}},
		// Row 1 holds only its diagonal; its column entries in rows 0 and
		// 2 are dropped too.
		{"dirichlet", 3, dense([]float64{4, -1, -1}, []float64{0, 1, 0}, []float64{-1, -1, 4}), MatrixOptions{},
			[][]int32{{2}, {}, {0}}, []int{1}},
		{"dirichlet with column entries only", 3, dense([]float64{4, -1, 0}, []float64{0, 1, 0}, []float64{0, -1, 4}), MatrixOptions{},
			[][]int32{{}, {}, {}}, []int{1}},
		// A zero row is singular, not Dirichlet.
		{"empty row", 2, dense([]float64{1, 0}, []float64{0, 0}), MatrixOptions{},
			[][]int32{{}, {}}, []int{0}},
		// A directed 4-cycle. (Storing one triangle of a symmetric matrix
		// would not do: its last row holds only the diagonal, a Dirichlet
		// row.)
		{"directed cycle symmetrized", 4, dense([]float64{4, -1, 0, 0}, []float64{0, 4, -1, 0}, []float64{0, 0, 4, -1}, []float64{-1, 0, 0, 4}), MatrixOptions{},
			[][]int32{{1, 3}, {0, 2}, {1, 3}, {0, 2}}, nil},
		{"triangle storage", 3, dense([]float64{4, -1, 0}, []float64{0, 4, -1}, []float64{0, 0, 4}), MatrixOptions{},
			[][]int32{{1}, {0}, {}}, []int{2}},
		// a_01 passes, a_10 does not: either direction makes the edge.
		{"one-sided strength", 2, dense([]float64{4, -2}, []float64{-0.1, 4}), MatrixOptions{Theta: 0.25},
			[][]int32{{1}, {0}}, nil},
		// Unsorted rows.
		{"unsorted", 3, []triplet{{0, 2, -1}, {0, 0, 4}, {1, 1, 4}, {2, 2, 4}, {2, 0, -1}}, MatrixOptions{},
			[][]int32{{2}, {}, {0}}, []int{1}},
	}
	for _, tc := range tests {
		for _, format := range []string{"CSR", "COO"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var g *Graph
				var err error
				if format == "CSR" {
					g, err = FromCSR(csrOf(tc.n, tc.ts), tc.opt)
				} else {
					g, err = FromCOO(cooOf(tc.n, tc.ts), tc.opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				checkGraph(t, g, tc.want, tc.dirichlet)
			})
		}
	}
}

func checkGraph(t *testing.T, g *Graph, want [][]int32, dirichlet []int) {
	t.Helper()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.N() != len(want) {
		t.Fatalf("%d vertices, want %d", g.N(), len(want))
	}
	for v, w := range want {
		if got := g.Neighbors(int32(v)); !slices.Equal(got, w) {
			t.Errorf("neighbours of %d: %v, want %v", v, got, w)
		}
	}
	if len(g.Dirichlet) != g.N() {
		t.Fatalf("len(Dirichlet) = %d, want %d", len(g.Dirichlet), g.N())
	}
	for v, d := range g.Dirichlet {
		if d != slices.Contains(dirichlet, v) {
			t.Errorf("vertex %d: Dirichlet %v, want %v", v, d, !d)
		}
	}
}

func TestFromMatrixBlocks(t *testing.T) {
	// Two 2×2 nodes; the diagonal blocks [[4,1],[1,4]] have Frobenius
	// norm √34 ≈ 5.83, the coupling block diag(0.5, 0.5) has 0.707: it
	// passes θ = 0.1 (bar 0.583) and fails θ = 0.15 (bar 0.875).
	coupled := dense(
		[]float64{4, 1, 0.5, 0},
		[]float64{1, 4, 0, 0.5},
		[]float64{0.5, 0, 4, 1},
		[]float64{0, 0.5, 1, 4})
	tests := []struct {
		name      string
		n         int
		ts        []triplet
		opt       MatrixOptions
		want      [][]int32
		dirichlet []int
	}{
		{"pattern", 4, coupled, MatrixOptions{BlockSize: 2}, [][]int32{{1}, {0}}, nil},
		{"frobenius passes", 4, coupled, MatrixOptions{BlockSize: 2, Theta: 0.1}, [][]int32{{1}, {0}}, nil},
		{"frobenius fails", 4, coupled, MatrixOptions{BlockSize: 2, Theta: 0.15}, [][]int32{{}, {}}, nil},
		// A single entry in the block is enough for the pattern.
		{"one entry", 6, dense(
			[]float64{2, 0, 0, 0, 0, 0},
			[]float64{0, 2, 0, 0, 0, -1},
			[]float64{0, 0, 2, 0, 0, 0},
			[]float64{0, 0, 0, 2, 0, 0},
			[]float64{0, 0, 0, 0, 2, 0},
			[]float64{0, -1, 0, 0, 0, 2}), MatrixOptions{BlockSize: 2}, [][]int32{{2}, {}, {0}}, []int{1}},
		// Node 1 has both rows Dirichlet; node 2 only one of its rows,
		// so it is not.
		{"dirichlet node", 6, dense(
			[]float64{4, 0, -1, 0, -1, 0},
			[]float64{0, 4, 0, -1, 0, 0},
			[]float64{0, 0, 1, 0, 0, 0},
			[]float64{0, 0, 0, 1, 0, 0},
			[]float64{-1, 0, 0, 0, 1, 0},
			[]float64{0, 0, 0, 0, 0, 1}), MatrixOptions{BlockSize: 2}, [][]int32{{2}, {}, {0}}, []int{1}},
		{"block size 1 is scalar", 2, dense([]float64{1, 2}, []float64{2, 1}), MatrixOptions{BlockSize: 1}, [][]int32{{1}, {0}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := FromCSR(csrOf(tc.n, tc.ts), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g, tc.want, tc.dirichlet)
		})
	}
}

func TestFromMatrixErrors(t *testing.T) {
	good := func() *CSR[float64] {
		return csrOf(3, dense([]float64{4, -1, 0}, []float64{-1, 4, -1}, []float64{0, -1, 4}))
	}
	tests := []struct {
		name string
		edit func(a *CSR[float64])
		opt  MatrixOptions
		want string
	}{
		{"not monotone", func(a *CSR[float64]) { a.RowPtr[2] = 1 }, MatrixOptions{}, "RowPtr not monotone at 2: RowPtr[2] = 1 < RowPtr[1] = 2"},
		{"col out of range", func(a *CSR[float64]) { a.Col[4] = 3 }, MatrixOptions{}, "Col[4] = 3 out of range [0,3) (row 1)"},
		{"negative col", func(a *CSR[float64]) { a.Col[0] = -2 }, MatrixOptions{}, "Col[0] = -2 out of range"},
		{"NaN", func(a *CSR[float64]) { a.Val[5] = math.NaN() }, MatrixOptions{}, "Val[5] = NaN (row 2, column 1)"},
		{"Inf", func(a *CSR[float64]) { a.Val[2] = math.Inf(-1) }, MatrixOptions{}, "Val[2] = -Inf (row 1, column 0)"},
		{"not square", func(a *CSR[float64]) { a.Cols = 4 }, MatrixOptions{}, "matrix is 3×4, not square"},
		{"RowPtr length", func(a *CSR[float64]) { a.RowPtr = a.RowPtr[:3] }, MatrixOptions{}, "len(RowPtr) = 3, want Rows+1 = 4"},
		{"RowPtr start", func(a *CSR[float64]) { a.RowPtr[0] = 1 }, MatrixOptions{}, "RowPtr[0] = 1, want 0"},
		{"RowPtr end", func(a *CSR[float64]) { a.Col = a.Col[:6] }, MatrixOptions{}, "RowPtr[3] = 7, but len(Col) = 6"},
		{"Val length", func(a *CSR[float64]) { a.Val = a.Val[:6] }, MatrixOptions{}, "len(Val) = 6, but len(Col) = 7"},
		{"pattern with theta", func(a *CSR[float64]) { a.Val = nil }, MatrixOptions{Theta: 0.1}, "needs values"},
		{"negative theta", func(a *CSR[float64]) {}, MatrixOptions{Theta: -0.1}, "θ = -0.1"},
		{"NaN theta", func(a *CSR[float64]) {}, MatrixOptions{Theta: math.NaN()}, "θ = NaN"},
		{"block size", func(a *CSR[float64]) {}, MatrixOptions{BlockSize: 2}, "3 rows are not a multiple of block size 2"},
		{"negative block size", func(a *CSR[float64]) {}, MatrixOptions{BlockSize: -1}, "block size -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := good()
			tc.edit(a)
			_, err := FromCSR(a, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := FromCSR[float64](nil, MatrixOptions{}); err == nil {
		t.Fatal("nil CSR: no error")
	}
}

func TestFromCOOErrors(t *testing.T) {
	good := func() *COO[float32] {
		return &COO[float32]{Rows: 2, Cols: 2, Row: []int32{0, 0, 1, 1}, Col: []int32{0, 1, 0, 1}, Val: []float32{2, -1, -1, 2}}
	}
	tests := []struct {
		name string
		edit func(a *COO[float32])
		want string
	}{
		{"row out of range", func(a *COO[float32]) { a.Row[2] = 2 }, "Row[2] = 2 out of range [0,2)"},
		{"col out of range", func(a *COO[float32]) { a.Col[3] = -1 }, "Col[3] = -1 out of range [0,2) (row 1)"},
		{"NaN", func(a *COO[float32]) { a.Val[1] = float32(math.NaN()) }, "Val[1] = NaN (row 0, column 1)"},
		{"lengths", func(a *COO[float32]) { a.Col = a.Col[:3] }, "len(Col) = 3, but len(Row) = 4"},
		{"val length", func(a *COO[float32]) { a.Val = a.Val[:1] }, "len(Val) = 1, but len(Row) = 4"},
		{"not square", func(a *COO[float32]) { a.Rows = 3 }, "matrix is 3×2, not square"},
		{"negative", func(a *COO[float32]) { a.Rows, a.Cols = -1, -1 }, "negative size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := good()
			tc.edit(a)
			_, err := FromCOO(a, MatrixOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// referenceGraph applies the definitions of FromCSR to a dense copy of
// the matrix, with no attempt at speed. Pairs whose strength lies
// within rounding of the threshold θ go into ties (when not nil)
// instead of the graph: the library's scaled norms round differently,
// and either answer is right for them.
func referenceGraph(n int, ts []triplet, b int, theta float64, pattern bool, ties map[[2]int32]bool) ([][]int32, []bool) {
	a := make([][]float64, n)
	stored := make([][]bool, n)
	for i := range a {
		a[i] = make([]float64, n)
		stored[i] = make([]bool, n)
	}
	for _, t := range ts {
		a[t.i][t.j] += t.v
		stored[t.i][t.j] = true
	}
	nonzero := func(i, j int) bool {
		if pattern {
			return stored[i][j]
		}
		return a[i][j] != 0
	}
	nn := n / b
	norm := func(I, J int) float64 {
		if b == 1 {
			return math.Abs(a[I][J])
		}
		s := 0.0
		for r := range b {
			for c := range b {
				s += a[I*b+r][J*b+c] * a[I*b+r][J*b+c]
			}
		}
		return math.Sqrt(s)
	}
	dir := make([]bool, nn)
	for I := range nn {
		dir[I] = true
		for r := I * b; r < I*b+b; r++ {
			if !nonzero(r, r) {
				dir[I] = false
			}
			for c := range n {
				if c != r && nonzero(r, c) {
					dir[I] = false
				}
			}
		}
	}
	// pass says whether block (I, J) is strong; tie, whether its norm
	// lies within rounding of the threshold, where the library's scaled
	// norms may decide either way.
	pass := func(I, J int) (strong, tie bool) {
		any := false
		for r := range b {
			for c := range b {
				any = any || stored[I*b+r][J*b+c]
			}
		}
		if !any {
			return false, false
		}
		if theta == 0 {
			return true, false
		}
		s, t := norm(I, J), theta*math.Sqrt(norm(I, I))*math.Sqrt(norm(J, J))
		return s > t, math.Abs(s-t) <= 1e-12*max(s, t)
	}
	adj := make([][]int32, nn)
	for I := range nn {
		adj[I] = []int32{}
		for J := range nn {
			if I == J || dir[I] || dir[J] {
				continue
			}
			s1, t1 := pass(I, J)
			s2, t2 := pass(J, I)
			switch {
			case s1 && !t1 || s2 && !t2:
				adj[I] = append(adj[I], int32(J))
			case t1 || t2:
				if ties != nil {
					ties[[2]int32{int32(I), int32(J)}] = true
				}
			}
		}
	}
	return adj, dir
}

func TestFromMatrixMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.IntRange(1, 3).Draw(t, "b")
		n := b * rapid.IntRange(0, 7).Draw(t, "nodes")
		theta := rapid.SampledFrom([]float64{0, 0, 0.1, 0.25, 0.5, 1}).Draw(t, "theta")
		pattern := theta == 0 && rapid.Bool().Draw(t, "pattern")
		var ts []triplet
		if n > 0 {
			// Small integers, so sums are exact in any order; repeats
			// and explicit zeros on purpose.
			ts = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) triplet {
				return triplet{
					int32(rapid.IntRange(0, n-1).Draw(t, "i")),
					int32(rapid.IntRange(0, n-1).Draw(t, "j")),
					float64(rapid.IntRange(-3, 3).Draw(t, "v")),
				}
			}), 0, 4*n*n).Draw(t, "entries")
		}
		ties := map[[2]int32]bool{}
		want, wantDir := referenceGraph(n, ts, b, theta, pattern, ties)
		opt := MatrixOptions{Theta: theta, BlockSize: b}
		csr, coo := csrOf(n, ts), cooOf(n, ts)
		c32 := &COO[float32]{Rows: n, Cols: n, Row: coo.Row, Col: coo.Col}
		for _, v := range coo.Val {
			c32.Val = append(c32.Val, float32(v))
		}
		if pattern {
			csr.Val, coo.Val, c32.Val = nil, nil, nil
		} else if len(ts) == 0 {
			csr.Val, coo.Val, c32.Val = []float64{}, []float64{}, []float32{}
		}
		for name, build := range map[string]func() (*Graph, error){
			"CSR":         func() (*Graph, error) { return FromCSR(csr, opt) },
			"COO":         func() (*Graph, error) { return FromCOO(coo, opt) },
			"COO float32": func() (*Graph, error) { return FromCOO(c32, opt) },
		} {
			g, err := build()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := g.Validate(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for v := range want {
				// A pair whose strength ties the threshold may be
				// either; every other must be as the reference says.
				got := slices.DeleteFunc(slices.Clone(g.Neighbors(int32(v))), func(u int32) bool { return ties[[2]int32{int32(v), u}] })
				if !slices.Equal(got, want[v]) {
					t.Fatalf("%s: neighbours of %d: %v, want %v (ties %v)", name, v, g.Neighbors(int32(v)), want[v], ties)
				}
			}
			if !slices.Equal(g.Dirichlet, wantDir) {
				t.Fatalf("%s: Dirichlet %v, want %v", name, g.Dirichlet, wantDir)
			}
		}
	})
}

// stencilMatrix returns the matrix of a graph with b×b blocks: diagonal
// blocks 2·deg·I plus a weak coupling, off-diagonal blocks −I.
func stencilMatrix(g *Graph, b int) *CSR[float64] {
	n := g.N() * b
	a := &CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	nnz := (g.NumEdges() + int64(g.N())) * int64(b*b)
	a.Col = make([]int32, 0, nnz)
	a.Val = make([]float64, 0, nnz)
	for v := range g.N() {
		for r := range b {
			row := g.Neighbors(int32(v))
			i, _ := slices.BinarySearch(row, int32(v))
			cols := slices.Insert(slices.Clone(row), i, int32(v))
			for _, u := range cols {
				for c := range b {
					x := 0.0
					switch {
					case u == int32(v) && c == r:
						x = float64(2 * len(row))
					case u == int32(v):
						x = 0.1
					case c == r:
						x = -1
					}
					a.Col = append(a.Col, u*int32(b)+int32(c))
					a.Val = append(a.Val, x)
				}
			}
			a.RowPtr[v*b+r+1] = int64(len(a.Col))
		}
	}
	return a
}

func TestFromCSRStencil(t *testing.T) {
	g := Hex27Graph(6, 5, 4)
	for _, b := range []int{1, 3} {
		h, err := FromCSR(stencilMatrix(g, b), MatrixOptions{BlockSize: b})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h.Offsets, g.Offsets) || !slices.Equal(h.Adj, g.Adj) {
			t.Fatalf("block size %d: matrix graph differs from the stencil graph", b)
		}
	}
}

// FuzzFromCSR feeds arbitrary arrays: the result is an error or a valid
// graph, never a panic.
func FuzzFromCSR(f *testing.F) {
	f.Add(3, 0, 0.0, []byte{0, 2, 4, 6}, []byte{0, 1, 1, 2, 2, 0}, []byte{4, 1, 4, 1, 4, 1})
	f.Add(4, 2, 0.1, []byte{0, 1, 1, 3, 4}, []byte{0, 3, 2, 1}, []byte{1, 2, 3, 0})
	f.Add(2, 1, 0.5, []byte{0, 3, 2}, []byte{0, 9}, []byte{})
	f.Fuzz(func(t *testing.T, n, b int, theta float64, rowPtr, col, val []byte) {
		if n < 0 || n > 64 {
			return
		}
		a := &CSR[float32]{Rows: n, Cols: n}
		for _, p := range rowPtr {
			a.RowPtr = append(a.RowPtr, int64(p))
		}
		for _, c := range col {
			a.Col = append(a.Col, int32(int8(c)))
		}
		if len(val) > 0 {
			for _, v := range val {
				a.Val = append(a.Val, float32(int8(v))/8)
			}
		}
		g, err := FromCSR(a, MatrixOptions{Theta: theta, BlockSize: b, MaxBytes: fuzzMaxBytes})
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFromCSRBlockExtremeScales: the strength test is scale-invariant, but
// with blocks the squares of entries near 1e160 overflow and those near
// 1e-170 vanish unless the norms scale first (issue 21, item 11).
// Power-of-two factors keep the scaled matrix exact.
func TestFromCSRBlockExtremeScales(t *testing.T) {
	g := Grid7Graph(5, 4, 3)
	for _, b := range []int{1, 2, 3} {
		for _, theta := range []float64{0.05, 0.09} {
			a := stencilMatrix(g, b)
			want, err := FromCSR(a, MatrixOptions{Theta: theta, BlockSize: b})
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Adj) == 0 {
				t.Fatalf("b %d θ %g: no strong edges at scale 1, the test would prove nothing", b, theta)
			}
			for _, e := range []int{531, -565} { // 1.1e160, 1.5e-170
				s := *a
				s.Val = slices.Clone(a.Val)
				for k := range s.Val {
					s.Val[k] = math.Ldexp(s.Val[k], e)
				}
				got, err := FromCSR(&s, MatrixOptions{Theta: theta, BlockSize: b})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Offsets, want.Offsets) || !slices.Equal(got.Adj, want.Adj) {
					t.Errorf("b %d θ %g scale 2^%d: %d strong edges, want %d", b, theta, e, len(got.Adj), len(want.Adj))
				}
			}
		}
	}
}

func TestNorm2(t *testing.T) {
	for _, s := range []float64{1, 1e160, 1e-170, 1e300} {
		var n Norm2
		for _, x := range []float64{3 * s, 0, -4 * s} {
			n.Add(x)
		}
		if got := n.Value(); math.Abs(got-5*s) > 1e-15*5*s {
			t.Errorf("norm of (3,0,-4)·%g = %g", s, got)
		}
	}
	var z Norm2
	if z.Value() != 0 {
		t.Errorf("empty norm %g", z.Value())
	}
}

// COOToCSR groups triplets by row in input order, repeats kept, and
// checks what it indexes by.
func TestCOOToCSR(t *testing.T) {
	a := cooOf(3, []triplet{{2, 0, 1}, {0, 2, 2}, {2, 1, 3}, {0, 2, 4}, {1, 1, 5}})
	c, err := COOToCSR(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.RowPtr, []int64{0, 2, 3, 5}) || !slices.Equal(c.Col, []int32{2, 2, 1, 0, 1}) || !slices.Equal(c.Val, []float64{2, 4, 5, 1, 3}) {
		t.Errorf("got %+v", c)
	}
	p := &COO[float32]{Rows: 2, Cols: 3, Row: []int32{1, 0}, Col: []int32{2, 0}}
	if c, err := COOToCSR(p, 0); err != nil || c.Val != nil || !slices.Equal(c.Col, []int32{0, 2}) {
		t.Errorf("pattern: %+v, %v", c, err)
	}
	for name, bad := range map[string]*COO[float64]{
		"nil":         nil,
		"row range":   {Rows: 2, Cols: 2, Row: []int32{2}, Col: []int32{0}, Val: []float64{1}},
		"col range":   {Rows: 2, Cols: 2, Row: []int32{0}, Col: []int32{-1}, Val: []float64{1}},
		"lengths":     {Rows: 2, Cols: 2, Row: []int32{0, 1}, Col: []int32{0}},
		"values":      {Rows: 2, Cols: 2, Row: []int32{0}, Col: []int32{0}, Val: []float64{1, 2}},
		"NaN":         {Rows: 2, Cols: 2, Row: []int32{0}, Col: []int32{0}, Val: []float64{math.NaN()}},
		"negative":    {Rows: -1, Cols: 2},
		"over memory": {Rows: 1 << 30, Cols: 1 << 30},
	} {
		if name == "over memory" {
			if _, err := COOToCSR(bad, 1<<20); !isMemoryError(err) {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if _, err := COOToCSR(bad, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
