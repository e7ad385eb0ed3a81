package amg

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// randVec returns a fixed pseudo-random vector in [−1, 1).
func randVec(n int, seed uint64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = 2*float64(mis.Hash32(int32(i), seed))/(1<<32) - 1
	}
	return x
}

func mustCSR(t testing.TB, a *mesh.CSR[float64]) *csr {
	t.Helper()
	m, err := fromMesh(newPool(2), a)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mulDense(a *csr, x []float64) []float64 {
	y := make([]float64, a.rows)
	newPool(1).mulVec(a, x, y)
	return y
}

func dotv(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func norm(x []float64) float64 { return math.Sqrt(dotv(x, x)) }

// energy returns ‖e‖_A.
func energy(a *csr, e []float64) float64 { return math.Sqrt(dotv(e, mulDense(a, e))) }

// toDense expands a (small) sparse matrix.
func toDense(a *csr) [][]float64 {
	d := make([][]float64, a.rows)
	for i := range d {
		d[i] = make([]float64, a.cols)
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			d[i][a.col[k]] += a.val[k]
		}
	}
	return d
}

// plainCG returns the iterations unpreconditioned CG needs to reach tol.
func plainCG(a *csr, b []float64, tol float64, maxit int) int {
	n := a.rows
	x := make([]float64, n)
	r := append([]float64(nil), b...)
	p := append([]float64(nil), b...)
	rr := dotv(r, r)
	bn := math.Sqrt(rr)
	for it := 1; it <= maxit; it++ {
		q := mulDense(a, p)
		al := rr / dotv(p, q)
		for i := range x {
			x[i] += al * p[i]
			r[i] -= al * q[i]
		}
		rn := dotv(r, r)
		if math.Sqrt(rn) <= tol*bn {
			return it
		}
		for i := range p {
			p[i] = r[i] + rn/rr*p[i]
		}
		rr = rn
	}
	return maxit
}

// problemOptions returns options that fit the problem: rigid-body modes
// for elasticity.
func problemOptions(pr *fem.Problem, o Options) Options {
	if pr.Block == 3 {
		o.BlockSize, o.Nullspace = 3, RigidBody
		o.Coords, o.Dim = pr.Coords, pr.Dim
	}
	return o
}

// sameSolveAcrossWorkers checks that New(a, o) and a solve converge and
// give bitwise the same solution on every worker count given.
func sameSolveAcrossWorkers(t *testing.T, a *mesh.CSR[float64], o Options, workers ...int) {
	t.Helper()
	var ref []float64
	for _, w := range workers {
		o.Workers = w
		pc, err := New(a, o)
		if err != nil {
			t.Fatal(err)
		}
		b := randVec(pc.Rows(), 1)
		x := make([]float64, len(b))
		res, err := pc.Solve(b, x)
		if err != nil || !res.Converged {
			t.Fatalf("workers %d: %v, %v", w, res.Status, err)
		}
		if ref == nil {
			ref = x
			continue
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(ref[i]) {
				t.Fatalf("workers %d: x[%d] = %v, workers %d: %v", w, i, x[i], workers[0], ref[i])
			}
		}
	}
}

// banded is an SPD matrix of n rows coupled to every row within half of
// them, with couplings that weaken with distance: rows of up to 2·half+1
// entries, longer than the device setup's kernels keep in shared memory.
func banded(n, half int) *mesh.CSR[float64] {
	a := &mesh.CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := range n {
		sum, d := 0.0, 0
		for j := max(0, i-half); j <= min(n-1, i+half); j++ {
			v := 0.0
			if j == i {
				d = len(a.Val)
			} else {
				v = -1 / float64(1+max(i-j, j-i))
				sum -= v
			}
			a.Col, a.Val = append(a.Col, int32(j)), append(a.Val, v)
		}
		a.Val[d] = sum + 1
		a.RowPtr[i+1] = int64(len(a.Col))
	}
	return a
}

type longRowCase struct {
	name string
	a    *mesh.CSR[float64]
	o    Options
}

// longRowCases are matrices whose rows pass what the device setup's
// kernels stage in shared memory. Banded ones: su_at's 384 entries
// (300), and su_strength's 512 node entries by 3 dofs a node, taking its
// span's bitmap (300) or staying under it (140). Hubs: nodes whose
// neighbours pass both the staging and a bitmap's span, left to one lane
// (elasticity with weak couplings added).
func longRowCases() []longRowCase {
	var cs []longRowCase
	for _, half := range []int{140, 300} {
		for _, bs := range []int{1, 3} {
			cs = append(cs, longRowCase{fmt.Sprintf("banded-%d-bs%d", half, bs), banded(900, half),
				Options{Theta: 0.08, BlockSize: bs, MaxCoarse: 60}})
		}
	}
	if testing.Short() {
		return cs // the hub's dense coarse levels take seconds
	}
	pr := fem.Elasticity(26) // 18,954 nodes: wider than su_strength's bitmap
	pr.A = withHubs(pr.A, 3, 1, 180, 1e-3)
	return append(cs, longRowCase{"hubs-elasticity", pr.A, problemOptions(pr, Options{Theta: 0.08, MaxCoarse: 60})})
}

// withHubs is a (bs dofs a node) with its first h nodes coupled weakly
// (−w·I on the block, w added to both diagonals, so it stays SPD) to
// spread nodes spaced evenly over all of them: hub rows of spread more
// nodes, spanning every node.
func withHubs(a *mesh.CSR[float64], bs, h, spread int, w float64) *mesh.CSR[float64] {
	type entry struct {
		col int32
		val float64
	}
	extra := make([][]entry, a.Rows)
	couple := func(i, j int) {
		extra[i] = append(extra[i], entry{int32(j), -w}, entry{int32(i), w})
		extra[j] = append(extra[j], entry{int32(i), -w}, entry{int32(j), w})
	}
	nodes := a.Rows / bs
	stride := (nodes - h) / spread
	for c := 0; c < h; c++ {
		for k := 1; k <= spread; k++ {
			for d := 0; d < bs; d++ {
				couple(c*bs+d, (c+k*stride)*bs+d)
			}
		}
	}
	out := &mesh.CSR[float64]{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int64, 1, a.Rows+1)}
	var row []entry
	for i := range a.Rows {
		row = row[:0]
		for q := a.RowPtr[i]; q < a.RowPtr[i+1]; q++ {
			row = append(row, entry{a.Col[q], a.Val[q]})
		}
		row = append(row, extra[i]...)
		slices.SortStableFunc(row, func(x, y entry) int { return int(x.col) - int(y.col) })
		for q, e := range row {
			if q > 0 && e.col == out.Col[len(out.Col)-1] {
				out.Val[len(out.Val)-1] += e.val
				continue
			}
			out.Col, out.Val = append(out.Col, e.col), append(out.Val, e.val)
		}
		out.RowPtr = append(out.RowPtr, int64(len(out.Col)))
	}
	return out
}
