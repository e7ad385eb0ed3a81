package amg

import (
	"fmt"
	"math"
)

// coarseSolver solves the coarsest level with a dense Cholesky factor of
// the diagonally scaled operator S = D^-½·A·D^-½ with diagonal pivoting
// (LAPACK's dpstrf): the pivot is the largest remaining diagonal of S, and
// the factorization stops where every remaining one is below pivotTol.
// So a singular or semidefinite coarsest operator (a pure-Neumann problem,
// a free-floating body, or a prolongator whose columns became dependent)
// gets a generalized inverse instead of a failure, and its null vectors
// come out of the factor. Scaling makes the rank test independent of
// coefficient contrast.
type coarseSolver struct {
	n, rank int
	s       []float64 // D^-½
	perm    []int     // position k of the factor holds row perm[k]
	l       []float64 // n×n row-major; lower triangle of the first rank columns is L
	w       []float64 // scratch
}

// pivotTol is the Schur-complement diagonal, relative to the scaled unit
// diagonal, below which a coarse row counts as dependent on the pivots
// before it. A direction dropped wrongly costs PCG a few iterations; a
// null direction kept amplifies rounding by 1/pivot.
const pivotTol = 1e-10

// ref, when not nil, is the absolute energy (|P|ᵀ|A||P|)_ii of every
// coarse row (see absEnergy), the scale of its rounding errors.
// coarseRound is the ratio of a diagonal entry of the coarsest operator to
// its absolute energy below which the entry is rounding.
const coarseRound = 1e-12

func newCoarseSolver(a *csr, ref []float64) (*coarseSolver, error) {
	if a.rows > maxDense {
		return nil, fmt.Errorf("amg: coarsest operator of %d rows, more than the dense solver takes (%d)", a.rows, maxDense)
	}
	n := a.rows
	c := &coarseSolver{n: n, s: make([]float64, n), perm: make([]int, n), l: make([]float64, n*n), w: make([]float64, n)}
	// A row whose diagonal vanishes against its absolute energy ref_i (a
	// coarse vector of zero energy, such as a rigid motion of the whole
	// body in one aggregate, computed as rounding) is, in a semidefinite
	// matrix, zero: it stays out of the factor (s = 0) and is a null
	// vector by itself.
	d := a.diag()
	for i, x := range d {
		r := x
		if ref != nil {
			r = ref[i]
		}
		if x > coarseRound*r {
			c.s[i] = 1 / math.Sqrt(x)
		}
		c.perm[i] = i
	}
	m := c.l
	for i := 0; i < n; i++ {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			// Average the two triangles, so that rounding asymmetry
			// from the Galerkin products does not matter.
			j := int(a.col[k])
			v := a.val[k] * c.s[i] * c.s[j]
			switch {
			case j == i:
				m[i*n+i] += v
			case j < i:
				m[i*n+j] += 0.5 * v
			default:
				m[j*n+i] += 0.5 * v
			}
		}
	}
	c.factor()
	return c, nil
}

// factor runs the pivoted outer-product Cholesky on the lower triangle.
func (c *coarseSolver) factor() {
	n, m := c.n, c.l
	col := c.w
	c.rank = n
	for k := 0; k < n; k++ {
		p, best := k, m[k*n+k]
		for j := k + 1; j < n; j++ {
			if v := m[j*n+j]; v > best {
				p, best = j, v
			}
		}
		if !(best > pivotTol) {
			c.rank = k
			return
		}
		if p != k {
			c.swap(k, p)
		}
		lkk := math.Sqrt(m[k*n+k])
		m[k*n+k] = lkk
		for i := k + 1; i < n; i++ {
			m[i*n+k] /= lkk
			col[i] = m[i*n+k]
		}
		for i := k + 1; i < n; i++ {
			f := m[i*n+k]
			if f == 0 {
				continue
			}
			row := m[i*n+k+1 : i*n+i+1]
			cc := col[k+1 : i+1]
			cc = cc[:len(row)]
			for j := range row {
				row[j] -= f * cc[j]
			}
		}
	}
}

// swap exchanges positions k < p of the symmetric matrix held in the lower
// triangle, rows of L found so far included.
func (c *coarseSolver) swap(k, p int) {
	n, m := c.n, c.l
	m[k*n+k], m[p*n+p] = m[p*n+p], m[k*n+k]
	for j := 0; j < k; j++ {
		m[k*n+j], m[p*n+j] = m[p*n+j], m[k*n+j]
	}
	for i := k + 1; i < p; i++ {
		m[i*n+k], m[p*n+i] = m[p*n+i], m[i*n+k]
	}
	for i := p + 1; i < n; i++ {
		m[i*n+k], m[i*n+p] = m[i*n+p], m[i*n+k]
	}
	c.perm[k], c.perm[p] = c.perm[p], c.perm[k]
}

// solve sets x = A⁺b for the generalized inverse D^-½·Πᵀ·[L⁻ᵀL⁻¹ 0; 0 0]·Π·D^-½,
// which is A⁻¹ when A is nonsingular and symmetric positive semidefinite
// otherwise.
func (c *coarseSolver) solve(b, x []float64) { c.solveWith(b, x, c.w) }

// solveWith is solve with the scratch y (n entries).
func (c *coarseSolver) solveWith(b, x, y []float64) {
	n, r, m := c.n, c.rank, c.l
	for k := 0; k < r; k++ {
		i := c.perm[k]
		y[k] = b[i] * c.s[i]
	}
	for k := 0; k < r; k++ {
		row := m[k*n : k*n+k]
		s := y[k]
		for j, v := range row {
			s -= v * y[j]
		}
		y[k] = s / m[k*n+k]
	}
	// Lᵀ·w = y by rows of L (contiguous), not by its columns.
	for i := r - 1; i >= 0; i-- {
		yi := y[i] / m[i*n+i]
		y[i] = yi
		row := m[i*n : i*n+i]
		yy := y[:len(row)]
		for k, v := range row {
			yy[k] -= v * yi
		}
	}
	clear(x[:n])
	for k := 0; k < r; k++ {
		i := c.perm[k]
		x[i] = y[k] * c.s[i]
	}
}

// nullVectors returns a basis of the null space of the coarsest operator
// as the factor sees it: for every dropped pivot j, the vector with 1 at j
// and −L₁₁⁻ᵀL₂₁ᵀ on the pivots, unscaled to A's variables.
func (c *coarseSolver) nullVectors() [][]float64 {
	n, r, m := c.n, c.rank, c.l
	var out [][]float64
	y := make([]float64, r)
	for j := r; j < n; j++ {
		for k := 0; k < r; k++ {
			y[k] = -m[j*n+k]
		}
		for k := r - 1; k >= 0; k-- {
			s := y[k]
			for i := k + 1; i < r; i++ {
				s -= m[i*n+k] * y[i]
			}
			y[k] = s / m[k*n+k]
		}
		v := make([]float64, n)
		for k := 0; k < r; k++ {
			i := c.perm[k]
			v[i] = y[k] * c.s[i]
		}
		if sj := c.s[c.perm[j]]; sj > 0 {
			v[c.perm[j]] = sj
		} else {
			v[c.perm[j]] = 1
		}
		out = append(out, v)
	}
	return out
}

// inverse returns the generalized inverse that solve applies, row-major
// (the GPU applies it as one dense product): a solve per column, the
// columns side by side, each the same whatever the workers.
func (c *coarseSolver) inverse(p pool) []float64 {
	n := c.n
	inv := make([]float64, n*n)
	p.forRange(n, 2*n*n*n, func(lo, hi int) {
		e, x, y := make([]float64, n), make([]float64, n), make([]float64, n)
		for j := lo; j < hi; j++ {
			e[j] = 1
			c.solveWith(e, x, y)
			e[j] = 0
			for i, v := range x {
				inv[i*n+j] = v
			}
		}
	})
	return inv
}

// coarseRef returns what newCoarseSolver compares the diagonal of the
// coarsest operator ac = pᵀ·a·p with: a bound of absEnergy, max|p|·
// (|p|ᵀ·|a|·1)_i, from one pass over a and one over p, where it already
// clears every diagonal entry; absEnergy, which costs a product, only
// where some entry is rounding against the bound (a singular ac).
func coarseRef(w pool, a, p, ac *csr) []float64 {
	rs := make([]float64, a.rows) // |a|·1, a row a worker
	w.forRows(a, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			for _, v := range a.val[a.ptr[k]:a.ptr[k+1]] {
				rs[k] += math.Abs(v)
			}
		}
	})
	pmax := 0.0
	ref := make([]float64, p.cols)
	for k := 0; k < p.rows; k++ {
		for t := p.ptr[k]; t < p.ptr[k+1]; t++ {
			v := math.Abs(p.val[t])
			pmax = max(pmax, v)
			ref[p.col[t]] += v * rs[k]
		}
	}
	for i, x := range ac.diag() {
		if ref[i] *= pmax; !(x > coarseRound*ref[i]) {
			return absEnergy(a, p)
		}
	}
	return ref
}

// absEnergy returns (|P|ᵀ·|A|·|P|)_ii for every column i of p: the
// diagonal of the Galerkin product without cancellation, the size of the
// rounding error of the computed one. Row k of |A|·|P| is formed on the
// columns of p's row k only.
func absEnergy(a, p *csr) []float64 {
	out := make([]float64, p.cols)
	acc := make([]float64, p.cols)
	mark := make([]int32, p.cols)
	for i := range mark {
		mark[i] = -1
	}
	for k := 0; k < a.rows; k++ {
		for _, i := range p.col[p.ptr[k]:p.ptr[k+1]] {
			mark[i], acc[i] = int32(k), 0
		}
		for q := a.ptr[k]; q < a.ptr[k+1]; q++ {
			l, av := a.col[q], math.Abs(a.val[q])
			for t := p.ptr[l]; t < p.ptr[l+1]; t++ {
				if i := p.col[t]; mark[i] == int32(k) {
					acc[i] += av * math.Abs(p.val[t])
				}
			}
		}
		for t := p.ptr[k]; t < p.ptr[k+1]; t++ {
			i := p.col[t]
			out[i] += math.Abs(p.val[t]) * acc[i]
		}
	}
	return out
}
