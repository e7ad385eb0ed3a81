package amg

import (
	"math"
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
	m, err := fromMesh(a)
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
