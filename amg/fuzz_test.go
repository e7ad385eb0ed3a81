package amg

import (
	"errors"
	"math"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"gonum.org/v1/gonum/mat"
)

// FuzzSolve builds a small SPD matrix from the input (a weighted graph
// Laplacian with random signs and weights over eight orders of magnitude,
// plus a positive diagonal shift, then a diagonal scaling), sets up AMG
// with options from the input and solves. Setup must accept every such
// matrix, and a solve that reports convergence must have a true residual
// within the tolerance; TrueResidual must be what it says.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{12, 3, 0, 1, 200, 17, 5, 9, 33, 250, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{25, 1, 1, 0, 7, 3, 17, 1, 1, 1})
	f.Add([]byte{40, 9, 2, 3, 255, 0, 128, 64, 32, 16, 8, 4, 2, 1, 99, 98, 97})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, o, ok := fuzzProblem(data)
		if !ok {
			return
		}
		pc, err := New(a, o)
		if err != nil {
			t.Fatalf("setup refused an SPD matrix: %v", err)
		}
		b := make([]float64, a.Rows)
		for i := range b {
			b[i] = math.Sin(float64(i*7 + len(data)))
		}
		x := make([]float64, a.Rows)
		res, err := pc.Solve(b, x)
		m := mustCSR(t, a)
		if err != nil {
			switch {
			case errors.Is(err, ErrBreakdown):
				return // reported, not hidden
			case errors.Is(err, ErrInconsistent) && condition(m) > 1/(64*0x1p-52):
				return // singular in floating point: a fair verdict
			}
			t.Fatalf("solve (condition %.3g): %v", condition(m), err)
		}
		r := mulDense(m, x)
		for i := range r {
			r[i] = b[i] - r[i]
		}
		tr := norm(r) / norm(b)
		if math.Abs(tr-res.TrueResidual) > 1e-6*tr+1e-300 {
			t.Fatalf("TrueResidual %g, recomputed %g", res.TrueResidual, tr)
		}
		if res.Converged && tr > o.Tol {
			t.Fatalf("reported converged with a true residual of %g > %g", tr, o.Tol)
		}
	})
}

// fuzzProblem decodes a matrix of 2 to 41 rows and options.
func fuzzProblem(data []byte) (*mesh.CSR[float64], Options, bool) {
	if len(data) < 4 {
		return nil, Options{}, false
	}
	n := 2 + int(data[0])%40
	o := Options{Tol: 1e-8}
	o.MaxCoarse = 1 + int(data[1])%20
	o.Theta = []float64{0, 0.08, 0.25, 0.5}[data[2]%4]
	o.Smoother = Smoother(data[3] % 3)
	o.Aggregation = Aggregation(data[3] / 3 % 2)
	o.Workers = 1 + int(data[3]/6)%3
	rest := data[4:]
	byteAt := func(i int) int { return int(rest[i%len(rest)]) }
	coo := &mesh.COO[float64]{Rows: n, Cols: n}
	diag := make([]float64, n)
	add := func(i, j int, v float64) {
		coo.Row, coo.Col, coo.Val = append(coo.Row, int32(i)), append(coo.Col, int32(j)), append(coo.Val, v)
	}
	if len(rest) == 0 {
		return nil, o, false
	}
	// A path keeps the graph connected; the bytes add chords.
	edges := len(rest) / 2
	for e := 0; e < n-1+edges; e++ {
		i, j := e, e+1
		if e >= n-1 {
			i, j = byteAt(2*e)%n, byteAt(2*e+1)%n
			if i == j {
				continue
			}
		}
		w := math.Pow(10, float64(byteAt(3*e+1)%9)-4)
		if byteAt(5*e+2)%3 == 0 {
			w = -w // a positive off-diagonal: still SPD with |w| on the diagonal
		}
		add(i, j, -w)
		add(j, i, -w)
		diag[i] += math.Abs(w)
		diag[j] += math.Abs(w)
	}
	s := make([]float64, n)
	for i := range diag {
		diag[i] += math.Pow(10, -float64(byteAt(7*i+3)%7))
		s[i] = math.Pow(10, float64(byteAt(11*i+5)%5)-2)
		add(i, i, diag[i])
	}
	for k := range coo.Val {
		coo.Val[k] *= s[coo.Row[k]] * s[coo.Col[k]]
	}
	return cooCSR(coo), o, true
}

// condition returns λmax/λmin of a small SPD matrix (+Inf when λmin ≤ 0
// in floating point).
func condition(a *csr) float64 {
	n := a.rows
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			if j := int(a.col[k]); j >= i {
				d.SetSym(i, j, a.val[k])
			}
		}
	}
	var e mat.EigenSym
	if !e.Factorize(d, false) {
		return math.Inf(1)
	}
	v := e.Values(nil)
	if !(v[0] > 0) {
		return math.Inf(1)
	}
	return v[n-1] / v[0]
}
