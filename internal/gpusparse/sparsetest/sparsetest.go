// Package sparsetest holds the host reference of internal/gpusparse's
// products, which sums every entry in the order of amg's host products,
// and the matrices their tests run on: random ones, Q1 Poisson, a 3-dof
// elasticity-like block operator, their smoothed-aggregation
// prolongators, and rows past the kernels' shared-memory limits. It
// serves the tests of gpusparse (kernels against the reference) and of
// amg (host products against the same reference), so that the device
// products equal the host's bit for bit by transitivity.
package sparsetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// RowLimit is gpusparse.RowLimit: the longest row the kernels keep in
// shared memory.
const RowLimit = 256

// CSR is a matrix on the host in amg's layout.
type CSR struct {
	Rows, Cols int
	Ptr        []int // Rows+1 offsets
	Col        []int32
	Val        []float64
}

// NNZ returns the number of stored entries.
func (a *CSR) NNZ() int { return a.Ptr[a.Rows] }

// Mul is the plain product in amg's order: for each row, the products
// a_ik·b_kj over k in a's row order, then b's; the first product of an
// entry is taken as it is (zeroStart: added to +0 instead). The explicit
// conversions forbid fused multiply-adds.
func Mul(a, b *CSR, zeroStart bool) *CSR {
	c := &CSR{Rows: a.Rows, Cols: b.Cols, Ptr: make([]int, a.Rows+1)}
	acc := make([]float64, b.Cols)
	mark := make([]int, b.Cols)
	for i := range mark {
		mark[i] = -1
	}
	for i := 0; i < a.Rows; i++ {
		var row []int32
		for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
			k, av := a.Col[q], a.Val[q]
			for r := b.Ptr[k]; r < b.Ptr[k+1]; r++ {
				j := b.Col[r]
				x := float64(av * b.Val[r])
				switch {
				case mark[j] != i && !zeroStart:
					acc[j] = x
				case mark[j] != i:
					acc[j] = float64(0 + x)
				default:
					acc[j] = float64(acc[j] + x)
				}
				if mark[j] != i {
					mark[j] = i
					row = append(row, j)
				}
			}
		}
		slices.Sort(row)
		for _, j := range row {
			c.Col = append(c.Col, j)
			c.Val = append(c.Val, acc[j])
		}
		c.Ptr[i+1] = len(c.Col)
	}
	return c
}

// Transpose is the counting transpose: rows of the result ascending.
func Transpose(a *CSR) *CSR {
	t := &CSR{Rows: a.Cols, Cols: a.Rows, Ptr: make([]int, a.Cols+1)}
	for _, c := range a.Col[:a.NNZ()] {
		t.Ptr[c+1]++
	}
	for j := 0; j < a.Cols; j++ {
		t.Ptr[j+1] += t.Ptr[j]
	}
	t.Col = make([]int32, a.NNZ())
	t.Val = make([]float64, a.NNZ())
	pos := slices.Clone(t.Ptr)
	for i := 0; i < a.Rows; i++ {
		for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
			c := a.Col[q]
			t.Col[pos[c]], t.Val[pos[c]] = int32(i), a.Val[q]
			pos[c]++
		}
	}
	return t
}

// Galerkin is pᵀ·(a·p) in the order of amg's galerkinStreamed.
func Galerkin(a, p *CSR) *CSR { return Mul(Transpose(p), Mul(a, p, false), true) }

// SameBits reports the first difference of got from want: pattern, or
// values bit for bit.
func SameBits(got, want *CSR) error {
	if got.Rows != want.Rows || got.Cols != want.Cols {
		return fmt.Errorf("%d×%d, want %d×%d", got.Rows, got.Cols, want.Rows, want.Cols)
	}
	for i := 0; i <= want.Rows; i++ {
		if got.Ptr[i] != want.Ptr[i] {
			return fmt.Errorf("row offset %d is %d, want %d", i, got.Ptr[i], want.Ptr[i])
		}
	}
	for q := 0; q < want.NNZ(); q++ {
		if got.Col[q] != want.Col[q] {
			return fmt.Errorf("entry %d: column %d, want %d", q, got.Col[q], want.Col[q])
		}
		if math.Float64bits(got.Val[q]) != math.Float64bits(want.Val[q]) {
			return fmt.Errorf("entry %d (column %d): value %v (%#x), want %v (%#x)", q, got.Col[q], got.Val[q],
				math.Float64bits(got.Val[q]), want.Val[q], math.Float64bits(want.Val[q]))
		}
	}
	return nil
}

// Random has rows with up to maxRow entries (a fraction empty), values
// of mixed signs and magnitudes, some of them ±0.
func Random(rng *rand.Rand, rows, cols, maxRow int, empty float64) *CSR {
	a := &CSR{Rows: rows, Cols: cols, Ptr: make([]int, rows+1)}
	for i := 0; i < rows; i++ {
		if rng.Float64() >= empty && cols > 0 {
			n := 1 + rng.IntN(min(maxRow, cols))
			seen := map[int32]bool{}
			var row []int32
			for len(row) < n {
				j := int32(rng.IntN(cols))
				if !seen[j] {
					seen[j] = true
					row = append(row, j)
				}
			}
			slices.Sort(row)
			for range row {
				a.Val = append(a.Val, RandValue(rng))
			}
			a.Col = append(a.Col, row...)
		}
		a.Ptr[i+1] = len(a.Col)
	}
	return a
}

func RandValue(rng *rand.Rand) float64 {
	switch rng.IntN(20) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	}
	return (rng.Float64()*2 - 1) * math.Ldexp(1, rng.IntN(40)-20)
}

// Stencil is a (2r+1)³-point stencil on an n³ node grid
// with bs×bs blocks (point-major: the dofs of a node are consecutive),
// values from val(row, col).
func Stencil(n, r, bs int, val func(i, j int) float64) *CSR {
	nodes := n * n * n
	a := &CSR{Rows: nodes * bs, Cols: nodes * bs, Ptr: make([]int, nodes*bs+1)}
	var nb []int
	for v := 0; v < nodes; v++ {
		x, y, z := v%n, v/n%n, v/(n*n)
		nb = nb[:0]
		for dz := -r; dz <= r; dz++ {
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					if xx, yy, zz := x+dx, y+dy, z+dz; xx >= 0 && xx < n && yy >= 0 && yy < n && zz >= 0 && zz < n {
						nb = append(nb, xx+n*(yy+n*zz))
					}
				}
			}
		}
		for d := 0; d < bs; d++ {
			i := v*bs + d
			for _, w := range nb {
				for e := 0; e < bs; e++ {
					j := w*bs + e
					a.Col = append(a.Col, int32(j))
					a.Val = append(a.Val, val(i, j))
				}
			}
			a.Ptr[i+1] = len(a.Col)
		}
	}
	return a
}

// poisson is the Q1 (27-point) Laplacian of an n³ node grid: 26 on the
// diagonal, -1 off it.
func Poisson(n int) *CSR {
	return Stencil(n, 1, 1, func(i, j int) float64 {
		if i == j {
			return 26
		}
		return -1
	})
}

// elasticity is a 3-dof block version of the 27-point pattern with
// symmetric, diagonally dominant values.
func Elasticity(n int) *CSR {
	h := func(i, j int) float64 {
		u := uint64(min(i, j))*0x9E3779B97F4A7C15 ^ uint64(max(i, j))*0xC2B2AE3D27D4EB4F
		return float64(u>>40)/float64(1<<24) - 0.5
	}
	return Stencil(n, 1, 3, func(i, j int) float64 {
		if i == j {
			return 60
		}
		return h(i, j)
	})
}

// SmoothedAggregation returns P = (I − ω D⁻¹A)·T for aggregates of agg³
// nodes of an n³ grid with bs dofs a node: T holds the constant per dof
// (bs columns per aggregate), ω = 4/(3·ρ) with ρ bounded by the largest
// absolute row sum of D⁻¹A.
func SmoothedAggregation(a *CSR, n, agg, bs int) *CSR {
	na := (n + agg - 1) / agg
	t := &CSR{Rows: a.Rows, Cols: na * na * na * bs, Ptr: make([]int, a.Rows+1)}
	for i := 0; i < a.Rows; i++ {
		v := i / bs
		x, y, z := v%n/agg, v/n%n/agg, v/(n*n)/agg
		t.Col = append(t.Col, int32((x+na*(y+na*z))*bs+i%bs))
		t.Val = append(t.Val, 1)
		t.Ptr[i+1] = i + 1
	}
	dinv := make([]float64, a.Rows)
	rho := 0.0
	for i := 0; i < a.Rows; i++ {
		s := 0.0
		for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
			if int(a.Col[q]) == i {
				dinv[i] = 1 / a.Val[q]
			}
			s += math.Abs(a.Val[q])
		}
		rho = max(rho, s*dinv[i])
	}
	omega := 4 / (3 * rho)
	p := Mul(a, t, false)
	for i := 0; i < p.Rows; i++ {
		s := -omega * dinv[i]
		for q := p.Ptr[i]; q < p.Ptr[i+1]; q++ {
			v := s * p.Val[q]
			if p.Col[q] == t.Col[i] {
				v += 1
			}
			p.Val[q] = v
		}
	}
	return p
}

// Case is a pair of matrices of the corpus: A·B, and with Sq the Galerkin
// product Bᵀ·A·B as well (A square, B with A's rows).
type Case struct {
	Name string
	A, B *CSR
	Sq   bool
}

// Corpus returns the matrices every test runs on (smaller grids when
// short).
func Corpus(short bool) []Case {
	rng := rand.New(rand.NewPCG(7, 11))
	var cs []Case
	for _, sz := range []struct{ rows, inner, cols, maxRow int }{{0, 3, 4, 2}, {5, 0, 4, 1}, {1, 1, 1, 1}, {17, 13, 9, 4},
		{200, 150, 300, 12}, {300, 300, 300, 40}, {64, 2000, 2000, 200}, {200, 150, 50000, 12}, {100, 300, 30000, 90}} {
		a := Random(rng, sz.rows, sz.inner, sz.maxRow, 0.1)
		b := Random(rng, sz.inner, sz.cols, sz.maxRow, 0.1)
		cs = append(cs, Case{Name: fmt.Sprintf("random %d×%d·%d×%d", sz.rows, sz.inner, sz.inner, sz.cols), A: a, B: b})
	}
	// Long Rows: a dense row of A, and a column of P that reaches
	// every fine row (a long row of the transpose and of Pᵀ·A·P).
	dense := Random(rng, 40, 1500, 3, 0.2)
	dense.Col, dense.Val = dense.Col[:0], dense.Val[:0]
	for i := 0; i < dense.Rows; i++ {
		if i == 7 {
			for j := 0; j < dense.Cols; j += 2 {
				dense.Col = append(dense.Col, int32(j))
				dense.Val = append(dense.Val, RandValue(rng))
			}
		} else {
			dense.Col = append(dense.Col, int32(i*3))
			dense.Val = append(dense.Val, RandValue(rng))
		}
		dense.Ptr[i+1] = len(dense.Col)
	}
	// B's 20000 columns: rows wider than the window (hashed or long).
	cs = append(cs, Case{Name: "dense row", A: dense, B: Random(rng, 1500, 20000, 3, 0)})
	cs = append(cs, Case{Name: "row at the shared limit", A: LimitRows(rng), B: Spread(600, 40)})
	// A column of B in 2500 Rows: a row of Bᵀ past midLimit.
	col := Random(rng, 2500, 40, 3, 0)
	for i := 0; i < col.Rows; i++ {
		if col.Col[col.Ptr[i]] != 0 {
			col.Col[col.Ptr[i]] = 0
		}
	}
	cs = append(cs, Case{Name: "dense column", A: Random(rng, 30, 2500, 200, 0), B: col})
	n := 9
	if !short {
		n = 15
	}
	pa := Poisson(n)
	cs = append(cs, Case{Name: "poisson", A: pa, B: SmoothedAggregation(pa, n, 3, 1), Sq: true})
	el := Elasticity(6)
	cs = append(cs, Case{Name: "elasticity", A: el, B: SmoothedAggregation(el, 6, 3, 3), Sq: true})
	ra := Random(rng, 700, 700, 30, 0.05)
	rp := Random(rng, 700, 90, 4, 0.05)
	for i := 0; i < rp.Rows; i++ { // a coarse column that every second fine row reaches
		if i%2 == 0 && rp.Ptr[i+1] > rp.Ptr[i] && rp.Col[rp.Ptr[i]] != 0 && !slices.Contains(rp.Col[rp.Ptr[i]:rp.Ptr[i+1]], 0) {
			rp.Col[rp.Ptr[i]] = 0
		}
	}
	cs = append(cs, Case{Name: "random Galerkin", A: ra, B: rp, Sq: true})
	// Runs of rows with one pattern, some longer than a chunk, some
	// chunks wider than a warp's accumulators, some in several passes of
	// a block's, some wider than those.
	cs = append(cs, Case{Name: "runs of rows", A: Runs(rng, 300, 400, 30, []int{1, 2, 3, 6, 8, 9, 20}), B: Random(rng, 400, 3000, 12, 0.05)})
	cs = append(cs, Case{Name: "wide runs", A: Runs(rng, 40, 400, 100, []int{8, 11}), B: Random(rng, 400, 3000, 12, 0)})
	cs = append(cs, Case{Name: "very wide runs", A: Runs(rng, 9, 1500, 600, []int{3, 1}), B: Random(rng, 1500, 20000, 20, 0)})
	cs = append(cs, Case{Name: "long rows of B", A: Random(rng, 30, 40, 4, 0), B: Random(rng, 40, 2000, 1500, 0)})
	el6 := Elasticity(6)
	cs = append(cs, Case{Name: "block prolongator", A: el6, B: BlockProlongator(rng, el6, 6, 3, 3, 6), Sq: true})
	// Long rows whose bitmap over B's 140000 columns is past what a block
	// holds in shared memory.
	cs = append(cs, Case{Name: "long rows over many columns", A: Random(rng, 20, 1500, 600, 0), B: Random(rng, 1500, 140000, 3, 0)})
	// Short rows of B but the first few of up to 70 entries, and rows of A
	// of up to 45: products of one k over several batches of a warp, and
	// rows of A over several of its chunks of k's.
	cs = append(cs, Case{Name: "a few long rows of B", A: Random(rng, 300, 400, 45, 0),
		B: stack(Random(rng, 5, 3000, 70, 0), Random(rng, 395, 3000, 6, 0.1))})
	return cs
}

// stack returns the rows of a then those of b (as many columns).
func stack(a, b *CSR) *CSR {
	c := &CSR{Rows: a.Rows + b.Rows, Cols: a.Cols, Ptr: slices.Clone(a.Ptr)}
	for _, p := range b.Ptr[1:] {
		c.Ptr = append(c.Ptr, a.NNZ()+p)
	}
	c.Col = append(slices.Clone(a.Col[:a.NNZ()]), b.Col[:b.NNZ()]...)
	c.Val = append(slices.Clone(a.Val[:a.NNZ()]), b.Val[:b.NNZ()]...)
	return c
}

// Runs has rows in runs of one pattern (of up to maxRow entries), the
// run lengths cycling through lens, the values random.
func Runs(rng *rand.Rand, rows, cols, maxRow int, lens []int) *CSR {
	a := &CSR{Rows: rows, Cols: cols, Ptr: make([]int, rows+1)}
	for i, r := 0, 0; i < rows; r++ {
		pat := Random(rng, 1, cols, maxRow, 0)
		for x := 0; x < lens[r%len(lens)] && i < rows; x++ {
			for range pat.Col {
				a.Val = append(a.Val, RandValue(rng))
			}
			a.Col = append(a.Col, pat.Col...)
			a.Ptr[i+1] = len(a.Col)
			i++
		}
	}
	return a
}

// BlockProlongator is a·T for T with modes columns per aggregate of agg³
// nodes (of an n³ grid, bs dofs a node) and every dof of a node in all
// of its aggregate's columns, with random values: the pattern of a
// smoothed prolongator of rigid-body modes, whose transpose has runs of
// modes rows.
func BlockProlongator(rng *rand.Rand, a *CSR, n, agg, bs, modes int) *CSR {
	na := (n + agg - 1) / agg
	t := &CSR{Rows: a.Rows, Cols: na * na * na * modes, Ptr: make([]int, a.Rows+1)}
	for i := 0; i < a.Rows; i++ {
		v := i / bs
		x, y, z := v%n/agg, v/n%n/agg, v/(n*n)/agg
		for m := 0; m < modes; m++ {
			t.Col = append(t.Col, int32((x+na*(y+na*z))*modes+m))
			t.Val = append(t.Val, RandValue(rng))
		}
		t.Ptr[i+1] = len(t.Col)
	}
	return Mul(a, t, false)
}

// LimitRows has rows whose products have RowLimit−1, RowLimit and
// RowLimit+1 columns (with spread as B).
func LimitRows(rng *rand.Rand) *CSR {
	a := &CSR{Rows: 3, Cols: 600, Ptr: make([]int, 4)}
	for i, n := range []int{RowLimit - 1, RowLimit, RowLimit + 1} {
		for j := 0; j < n; j++ {
			a.Col = append(a.Col, int32(j*2))
			a.Val = append(a.Val, RandValue(rng))
		}
		a.Ptr[i+1] = len(a.Col)
	}
	return a
}

// spread maps row k to column k·gap (one entry per row).
func Spread(n, gap int) *CSR {
	a := &CSR{Rows: n, Cols: n * gap, Ptr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		a.Col = append(a.Col, int32(i*gap))
		a.Val = append(a.Val, 1.5)
		a.Ptr[i+1] = i + 1
	}
	return a
}
