package gpusparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// hcsr is a host CSR in amg's layout, for the references and the models.
type hcsr struct {
	rows, cols int
	ptr        []int
	col        []int32
	val        []float64
}

func (a *hcsr) nnz() int { return a.ptr[a.rows] }

// refMul is the plain product in amg's order: for each row, the products
// a_ik·b_kj over k in a's row order, then b's; the first product of an
// entry is taken as it is (zeroStart: added to +0 instead). The explicit
// conversions forbid fused multiply-adds.
func refMul(a, b *hcsr, zeroStart bool) *hcsr {
	c := &hcsr{rows: a.rows, cols: b.cols, ptr: make([]int, a.rows+1)}
	acc := make([]float64, b.cols)
	mark := make([]int, b.cols)
	for i := range mark {
		mark[i] = -1
	}
	for i := 0; i < a.rows; i++ {
		var row []int32
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			k, av := a.col[q], a.val[q]
			for r := b.ptr[k]; r < b.ptr[k+1]; r++ {
				j := b.col[r]
				x := float64(av * b.val[r])
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
			c.col = append(c.col, j)
			c.val = append(c.val, acc[j])
		}
		c.ptr[i+1] = len(c.col)
	}
	return c
}

// refTranspose is the counting transpose: rows of the result ascending.
func refTranspose(a *hcsr) *hcsr {
	t := &hcsr{rows: a.cols, cols: a.rows, ptr: make([]int, a.cols+1)}
	for _, c := range a.col[:a.nnz()] {
		t.ptr[c+1]++
	}
	for j := 0; j < a.cols; j++ {
		t.ptr[j+1] += t.ptr[j]
	}
	t.col = make([]int32, a.nnz())
	t.val = make([]float64, a.nnz())
	pos := slices.Clone(t.ptr)
	for i := 0; i < a.rows; i++ {
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			c := a.col[q]
			t.col[pos[c]], t.val[pos[c]] = int32(i), a.val[q]
			pos[c]++
		}
	}
	return t
}

// refGalerkin is pᵀ·(a·p) in the order of amg's galerkinStreamed.
func refGalerkin(a, p *hcsr) *hcsr { return refMul(refTranspose(p), refMul(a, p, false), true) }

// sameBits reports the first difference of got from want: pattern, or
// values bit for bit.
func sameBits(got, want *hcsr) error {
	if got.rows != want.rows || got.cols != want.cols {
		return fmt.Errorf("%d×%d, want %d×%d", got.rows, got.cols, want.rows, want.cols)
	}
	for i := 0; i <= want.rows; i++ {
		if got.ptr[i] != want.ptr[i] {
			return fmt.Errorf("row offset %d is %d, want %d", i, got.ptr[i], want.ptr[i])
		}
	}
	for q := 0; q < want.nnz(); q++ {
		if got.col[q] != want.col[q] {
			return fmt.Errorf("entry %d: column %d, want %d", q, got.col[q], want.col[q])
		}
		if math.Float64bits(got.val[q]) != math.Float64bits(want.val[q]) {
			return fmt.Errorf("entry %d (column %d): value %v (%#x), want %v (%#x)", q, got.col[q], got.val[q],
				math.Float64bits(got.val[q]), want.val[q], math.Float64bits(want.val[q]))
		}
	}
	return nil
}

// randomCSR has rows with up to maxRow entries (a fraction empty), values
// of mixed signs and magnitudes, some of them ±0.
func randomCSR(rng *rand.Rand, rows, cols, maxRow int, empty float64) *hcsr {
	a := &hcsr{rows: rows, cols: cols, ptr: make([]int, rows+1)}
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
				a.val = append(a.val, randValue(rng))
			}
			a.col = append(a.col, row...)
		}
		a.ptr[i+1] = len(a.col)
	}
	return a
}

func randValue(rng *rand.Rand) float64 {
	switch rng.IntN(20) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	}
	return (rng.Float64()*2 - 1) * math.Ldexp(1, rng.IntN(40)-20)
}

// stencil is the pattern of a (2r+1)^3-point stencil on an n³ node grid
// with bs×bs blocks (point-major: the dofs of a node are consecutive),
// values from val(row, col).
func stencil(n, r, bs int, val func(i, j int) float64) *hcsr {
	nodes := n * n * n
	a := &hcsr{rows: nodes * bs, cols: nodes * bs, ptr: make([]int, nodes*bs+1)}
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
					a.col = append(a.col, int32(j))
					a.val = append(a.val, val(i, j))
				}
			}
			a.ptr[i+1] = len(a.col)
		}
	}
	return a
}

// poisson is the Q1 (27-point) Laplacian of an n³ node grid: 26 on the
// diagonal, -1 off it.
func poisson(n int) *hcsr {
	return stencil(n, 1, 1, func(i, j int) float64 {
		if i == j {
			return 26
		}
		return -1
	})
}

// elasticity is a 3-dof block version of the 27-point pattern with
// symmetric, diagonally dominant values.
func elasticity(n int) *hcsr {
	h := func(i, j int) float64 {
		u := uint64(min(i, j))*0x9E3779B97F4A7C15 ^ uint64(max(i, j))*0xC2B2AE3D27D4EB4F
		return float64(u>>40)/float64(1<<24) - 0.5
	}
	return stencil(n, 1, 3, func(i, j int) float64 {
		if i == j {
			return 60
		}
		return h(i, j)
	})
}

// smoothedAggregation returns P = (I − ω D⁻¹A)·T for aggregates of agg³
// nodes of an n³ grid with bs dofs a node: T holds the constant per dof
// (bs columns per aggregate), ω = 4/(3·ρ) with ρ bounded by the largest
// absolute row sum of D⁻¹A.
func smoothedAggregation(a *hcsr, n, agg, bs int) *hcsr {
	na := (n + agg - 1) / agg
	t := &hcsr{rows: a.rows, cols: na * na * na * bs, ptr: make([]int, a.rows+1)}
	for i := 0; i < a.rows; i++ {
		v := i / bs
		x, y, z := v%n/agg, v/n%n/agg, v/(n*n)/agg
		t.col = append(t.col, int32((x+na*(y+na*z))*bs+i%bs))
		t.val = append(t.val, 1)
		t.ptr[i+1] = i + 1
	}
	dinv := make([]float64, a.rows)
	rho := 0.0
	for i := 0; i < a.rows; i++ {
		s := 0.0
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			if int(a.col[q]) == i {
				dinv[i] = 1 / a.val[q]
			}
			s += math.Abs(a.val[q])
		}
		rho = max(rho, s*dinv[i])
	}
	omega := 4 / (3 * rho)
	p := refMul(a, t, false)
	for i := 0; i < p.rows; i++ {
		s := -omega * dinv[i]
		for q := p.ptr[i]; q < p.ptr[i+1]; q++ {
			v := s * p.val[q]
			if p.col[q] == t.col[i] {
				v += 1
			}
			p.val[q] = v
		}
	}
	return p
}

// corpus is the matrices every test runs on: pairs (A, B) of products
// and pairs (A, P) of Galerkin products.
type testCase struct {
	name string
	a, b *hcsr
	sq   bool // a is square and b has its rows: a Galerkin pair
}

func corpus(short bool) []testCase {
	rng := rand.New(rand.NewPCG(7, 11))
	var cs []testCase
	for _, sz := range []struct{ rows, inner, cols, maxRow int }{{0, 3, 4, 2}, {5, 0, 4, 1}, {1, 1, 1, 1}, {17, 13, 9, 4},
		{200, 150, 300, 12}, {300, 300, 300, 40}, {64, 2000, 2000, 200}, {200, 150, 50000, 12}, {100, 300, 30000, 90}} {
		a := randomCSR(rng, sz.rows, sz.inner, sz.maxRow, 0.1)
		b := randomCSR(rng, sz.inner, sz.cols, sz.maxRow, 0.1)
		cs = append(cs, testCase{name: fmt.Sprintf("random %d×%d·%d×%d", sz.rows, sz.inner, sz.inner, sz.cols), a: a, b: b})
	}
	// Long rows: a dense row of A, and a column of P that reaches
	// every fine row (a long row of the transpose and of Pᵀ·A·P).
	dense := randomCSR(rng, 40, 1500, 3, 0.2)
	dense.col, dense.val = dense.col[:0], dense.val[:0]
	for i := 0; i < dense.rows; i++ {
		if i == 7 {
			for j := 0; j < dense.cols; j += 2 {
				dense.col = append(dense.col, int32(j))
				dense.val = append(dense.val, randValue(rng))
			}
		} else {
			dense.col = append(dense.col, int32(i*3))
			dense.val = append(dense.val, randValue(rng))
		}
		dense.ptr[i+1] = len(dense.col)
	}
	// B's 20000 columns: rows wider than the window (hashed or long).
	cs = append(cs, testCase{name: "dense row", a: dense, b: randomCSR(rng, 1500, 20000, 3, 0)})
	cs = append(cs, testCase{name: "row at the shared limit", a: limitRows(rng), b: spread(600, 40)})
	// A column of B in 2500 rows: a row of Bᵀ past midLimit.
	col := randomCSR(rng, 2500, 40, 3, 0)
	for i := 0; i < col.rows; i++ {
		if col.col[col.ptr[i]] != 0 {
			col.col[col.ptr[i]] = 0
		}
	}
	cs = append(cs, testCase{name: "dense column", a: randomCSR(rng, 30, 2500, 200, 0), b: col})
	n := 9
	if !short {
		n = 15
	}
	pa := poisson(n)
	cs = append(cs, testCase{name: "poisson", a: pa, b: smoothedAggregation(pa, n, 3, 1), sq: true})
	el := elasticity(6)
	cs = append(cs, testCase{name: "elasticity", a: el, b: smoothedAggregation(el, 6, 3, 3), sq: true})
	ra := randomCSR(rng, 700, 700, 30, 0.05)
	rp := randomCSR(rng, 700, 90, 4, 0.05)
	for i := 0; i < rp.rows; i++ { // a coarse column that every second fine row reaches
		if i%2 == 0 && rp.ptr[i+1] > rp.ptr[i] && rp.col[rp.ptr[i]] != 0 && !slices.Contains(rp.col[rp.ptr[i]:rp.ptr[i+1]], 0) {
			rp.col[rp.ptr[i]] = 0
		}
	}
	cs = append(cs, testCase{name: "random Galerkin", a: ra, b: rp, sq: true})
	return cs
}

// limitRows has rows whose products have RowLimit−1, RowLimit and
// RowLimit+1 columns (with spread as B).
func limitRows(rng *rand.Rand) *hcsr {
	a := &hcsr{rows: 3, cols: 600, ptr: make([]int, 4)}
	for i, n := range []int{RowLimit - 1, RowLimit, RowLimit + 1} {
		for j := 0; j < n; j++ {
			a.col = append(a.col, int32(j*2))
			a.val = append(a.val, randValue(rng))
		}
		a.ptr[i+1] = len(a.col)
	}
	return a
}

// spread maps row k to column k·gap (one entry per row).
func spread(n, gap int) *hcsr {
	a := &hcsr{rows: n, cols: n * gap, ptr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		a.col = append(a.col, int32(i*gap))
		a.val = append(a.val, 1.5)
		a.ptr[i+1] = i + 1
	}
	return a
}

func TestCorpusShapes(t *testing.T) {
	for _, c := range corpus(true) {
		for _, m := range []*hcsr{c.a, c.b} {
			if _, err := checkHost(m.rows, m.cols, m.ptr, m.col, m.val); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
	}
	// The long-row cases reach past the shared-memory limit.
	for _, c := range corpus(true) {
		if c.name == "dense row" || c.name == "row at the shared limit" {
			ab := refMul(c.a, c.b, false)
			longest := 0
			for i := 0; i < ab.rows; i++ {
				longest = max(longest, ab.ptr[i+1]-ab.ptr[i])
			}
			if longest <= RowLimit {
				t.Errorf("%s: longest product row %d, want > %d", c.name, longest, RowLimit)
			}
		}
	}
}
