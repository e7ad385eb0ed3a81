package amg

import (
	"math"
)

// tentative builds the tentative prolongator of a level and the coarse
// near-nullspace. of[v] is the aggregate of node v (−1: not aggregated,
// its rows of P stay empty), bs the dofs per node, b the row-major n×k
// near-nullspace. Aggregate a owns coarse dofs a·k … a·k+k−1.
//
// On each aggregate the rows of b are factored b_a = Q·R by Householder
// QR; Q fills the aggregate's rows of P and R its rows of the coarse
// near-nullspace, so P·B_c = B exactly and the columns of P are
// orthonormal. A rank-deficient b_a (collinear nodes under rotations)
// still gives orthonormal Householder columns, so the coarse operator
// keeps a positive diagonal.
func tentative(of []int32, nagg, bs int, b []float64, k int) (*csr, []float64) {
	nodes := len(of)
	n := nodes * bs
	// Members of each aggregate, in increasing node order.
	ptr := make([]int, nagg+1)
	for _, a := range of {
		if a >= 0 {
			ptr[a+1]++
		}
	}
	for a := 0; a < nagg; a++ {
		ptr[a+1] += ptr[a]
	}
	mem := make([]int32, ptr[nagg])
	pos := make([]int, nagg)
	copy(pos, ptr[:nagg])
	for v, a := range of {
		if a >= 0 {
			mem[pos[a]] = int32(v)
			pos[a]++
		}
	}

	p := &csr{rows: n, cols: nagg * k, ptr: make([]int, n+1)}
	for v, a := range of {
		w := 0
		if a >= 0 {
			w = k
		}
		for d := 0; d < bs; d++ {
			p.ptr[v*bs+d+1] = w
		}
	}
	for i := 0; i < n; i++ {
		p.ptr[i+1] += p.ptr[i]
	}
	p.col = make([]int32, p.ptr[n])
	p.val = make([]float64, p.ptr[n])
	bc := make([]float64, nagg*k*k)

	var work, r []float64
	var v []float64
	for a := 0; a < nagg; a++ {
		ms := mem[ptr[a]:ptr[a+1]]
		m := len(ms) * bs
		work = grow(work, m*k)
		for i, node := range ms {
			for d := 0; d < bs; d++ {
				copy(work[(i*bs+d)*k:(i*bs+d+1)*k], b[(int(node)*bs+d)*k:(int(node)*bs+d+1)*k])
			}
		}
		r = grow(r, k*k)
		v = grow(v, m*k)
		householderQR(work[:m*k], m, k, r, v[:m*k])
		copy(bc[a*k*k:(a+1)*k*k], r[:k*k])
		for i, node := range ms {
			for d := 0; d < bs; d++ {
				row := int(node)*bs + d
				s := p.ptr[row]
				for j := 0; j < k; j++ {
					p.col[s+j] = int32(a*k + j)
					p.val[s+j] = work[(i*bs+d)*k+j]
				}
			}
		}
	}
	return p, bc
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// householderQR factors the row-major m×k matrix a = Q·R in place: on
// return a holds the thin Q (m×k) and r the upper triangular k×k R, with
// R's diagonal non-negative. v is scratch of m·k. When m < k the missing
// columns of Q are zero and R's last rows are those of the full factor.
func householderQR(a []float64, m, k int, r, v []float64) {
	clear(r)
	steps := min(m, k)
	// beta[j] = 2/(vᵀv) of reflector j, stored after use in v's layout:
	// reflector j lives in v[i*k+j] for i ≥ j.
	var betaBuf [16]float64
	beta := betaBuf[:0]
	if steps > len(betaBuf) {
		beta = make([]float64, 0, steps)
	}
	for j := 0; j < steps; j++ {
		nrm := 0.0
		for i := j; i < m; i++ {
			nrm += a[i*k+j] * a[i*k+j]
		}
		nrm = math.Sqrt(nrm)
		alpha := -nrm
		if a[j*k+j] < 0 {
			alpha = nrm
		}
		// v = x − alpha·e1, reflecting x onto alpha·e1.
		vv := 0.0
		for i := j; i < m; i++ {
			x := a[i*k+j]
			if i == j {
				x -= alpha
			}
			v[i*k+j] = x
			vv += x * x
		}
		bt := 0.0
		if vv > 0 {
			bt = 2 / vv
		}
		beta = append(beta, bt)
		// Apply H = I − bt·v·vᵀ to columns j..k−1.
		for c := j; c < k; c++ {
			s := 0.0
			for i := j; i < m; i++ {
				s += v[i*k+j] * a[i*k+c]
			}
			s *= bt
			for i := j; i < m; i++ {
				a[i*k+c] -= s * v[i*k+j]
			}
		}
	}
	for i := 0; i < steps; i++ {
		for c := i; c < k; c++ {
			r[i*k+c] = a[i*k+c]
		}
	}
	// Form the thin Q = H_0·…·H_{steps−1}·[I; 0] backwards.
	clear(a[:m*k])
	for j := 0; j < steps; j++ {
		a[j*k+j] = 1
	}
	for j := steps - 1; j >= 0; j-- {
		bt := beta[j]
		for c := j; c < k; c++ {
			s := 0.0
			for i := j; i < m; i++ {
				s += v[i*k+j] * a[i*k+c]
			}
			s *= bt
			for i := j; i < m; i++ {
				a[i*k+c] -= s * v[i*k+j]
			}
		}
	}
	// Make R's diagonal non-negative: flip the matching Q column and R row.
	for j := 0; j < steps; j++ {
		if r[j*k+j] < 0 {
			for c := j; c < k; c++ {
				r[j*k+c] = -r[j*k+c]
			}
			for i := 0; i < m; i++ {
				a[i*k+j] = -a[i*k+j]
			}
		}
	}
}
