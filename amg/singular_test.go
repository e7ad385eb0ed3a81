package amg

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
)

// A pure-Neumann Poisson problem and a free-floating elastic body are
// singular: the setup finds their null spaces (constants, rigid-body
// modes) on the coarsest level and Solve converges for a consistent b, to
// the solution orthogonal to the null space.
func TestSingularSolved(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pr     *fem.Problem
		kernel int
		its    int
	}{
		{"neumann2d", fem.Neumann(2, 40), 1, 20},
		{"neumann3d", fem.Neumann(3, 14), 1, 20},
		{"free-elasticity", fem.FreeElasticity(6), 6, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc, err := New(tc.pr.A, problemOptions(tc.pr, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(pc.Kernel()); got != tc.kernel {
				t.Fatalf("found a null space of %d vectors, want %d", got, tc.kernel)
			}
			a := mustCSR(t, tc.pr.A)
			for j, v := range pc.Kernel() {
				if r := norm(mulDense(a, v)); r > 1e-10 {
					t.Errorf("kernel vector %d: ‖A·v‖ = %g", j, r)
				}
			}
			// A consistent b: A times a random vector.
			b := mulDense(a, randVec(a.rows, 5))
			x := make([]float64, a.rows)
			res, err := pc.Solve(b, x)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != Converged || res.Iterations > tc.its || res.TrueResidual > 1e-8 {
				t.Errorf("%v after %d iterations, true residual %g; want converged in ≤ %d", res.Status, res.Iterations, res.TrueResidual, tc.its)
			}
			for j, v := range pc.Kernel() {
				if c := dotv(v, x) / norm(x); math.Abs(c) > 1e-10 {
					t.Errorf("x has a component %g along kernel vector %d", c, j)
				}
			}
			// Adding a null-space part to b makes it inconsistent.
			for i := range b {
				b[i] += 1e-3 * norm(b) / math.Sqrt(float64(len(b)))
				if tc.pr.Block == 3 {
					b[i] *= float64(i%3 + 1) // not a rigid motion's residual either
				}
			}
			res, err = pc.Solve(b, x)
			if !errors.Is(err, ErrInconsistent) || res == nil || res.Status != Inconsistent || res.KernelPart < 1e-5 {
				t.Fatalf("inconsistent b: err %v, result %+v", err, res)
			}
		})
	}
}

// The null space can be given: here the constants of the Neumann problem,
// with a coarsest level that is not singular by itself (one level).
func TestKernelGiven(t *testing.T) {
	pr := fem.Neumann(2, 30)
	n := pr.A.Rows
	one := make([]float64, n)
	for i := range one {
		one[i] = 3
	}
	pc, err := New(pr.A, Options{Kernel: [][]float64{one}})
	if err != nil {
		t.Fatal(err)
	}
	if k := pc.Kernel(); len(k) != 1 || math.Abs(norm(k[0])-1) > 1e-14 {
		t.Fatalf("kernel %d vectors, want one of norm 1", len(k))
	}
	a := mustCSR(t, pr.A)
	b := mulDense(a, randVec(n, 2))
	x := make([]float64, n)
	res, err := pc.Solve(b, x)
	if err != nil || !res.Converged || res.TrueResidual > 1e-8 {
		t.Fatalf("err %v, %+v", err, res)
	}
	if _, err := New(pr.A, Options{Kernel: [][]float64{one[1:]}}); err == nil {
		t.Error("a kernel vector of the wrong length was accepted")
	}
	ramp := make([]float64, n)
	for i := range ramp {
		ramp[i] = float64(i)
	}
	if _, err := New(pr.A, Options{Kernel: [][]float64{ramp}}); err == nil || !strings.Contains(err.Error(), "not a null vector") {
		t.Errorf("a vector outside the null space was accepted as a kernel vector: %v", err)
	}
}

// Issue 21 item 5: the identity plus one coupling, an SPD matrix of
// condition ≤ 4, with singleton aggregates whose smoothed prolongator
// columns are dependent; the coarsest operator is singular but the setup
// and the solve succeed.
func TestDependentProlongatorColumns(t *testing.T) {
	n := 25
	coo := &mesh.COO[float64]{Rows: n, Cols: n}
	for i := 0; i < n; i++ {
		coo.Row, coo.Col, coo.Val = append(coo.Row, int32(i)), append(coo.Col, int32(i)), append(coo.Val, 1)
	}
	coo.Row, coo.Col, coo.Val = append(coo.Row, 3, 17), append(coo.Col, 17, 3), append(coo.Val, -1.0/7, -1.0/7)
	a := cooCSR(coo)
	for _, scale := range []float64{1, 2, 3, 4} {
		as := *a
		as.Val = append([]float64(nil), a.Val...)
		for i := range as.Val {
			as.Val[i] *= scale
		}
		o, err := ParseOptions([]string{"max_coarse=1", "theta=0.25"})
		if err != nil {
			t.Fatal(err)
		}
		pc, err := New(&as, o)
		if err != nil {
			t.Fatalf("scale %g: %v", scale, err)
		}
		b := randVec(n, 4)
		x := make([]float64, n)
		res, err := pc.Solve(b, x)
		if err != nil || !res.Converged || res.TrueResidual > 1e-8 {
			t.Fatalf("scale %g: err %v, %+v", scale, err, res)
		}
		if len(pc.Kernel()) != 0 {
			t.Errorf("scale %g: a null space of %d vectors for a nonsingular matrix", scale, len(pc.Kernel()))
		}
	}
}

// Issue 21 item 4: a 1D diffusion problem with a coefficient contrast of
// 1e8 and a small reaction term, where the residual CG updates drifts
// three orders of magnitude below the true one. Solve must not report
// convergence unless the true residual meets the tolerance.
func TestHonestConvergence(t *testing.T) {
	n := 2000
	coo := &mesh.COO[float64]{Rows: n, Cols: n}
	add := func(i, j int, v float64) {
		coo.Row, coo.Col, coo.Val = append(coo.Row, int32(i)), append(coo.Col, int32(j)), append(coo.Val, v)
	}
	k := func(e int) float64 { // element coefficients: 1 and 1e8 in bands
		if (e/50)%2 == 0 {
			return 1
		}
		return 1e8
	}
	for i := 0; i < n; i++ {
		d := 1e-6
		if i > 0 {
			d += k(i - 1)
			add(i, i-1, -k(i-1))
		}
		d += k(i)
		if i < n-1 {
			add(i, i+1, -k(i))
		}
		add(i, i, d)
	}
	a := cooCSR(coo)
	for _, kv := range [][]string{{"max_coarse=10"}, {"max_coarse=10", "smoother=jacobi"}, {"max_coarse=10", "aggregation=pairwise"}} {
		o, _ := ParseOptions(kv)
		pc, err := New(a, o)
		if err != nil {
			t.Fatal(err)
		}
		b := randVec(n, 8)
		x := make([]float64, n)
		res, err := pc.Solve(b, x)
		if err != nil {
			t.Fatal(err)
		}
		m := mustCSR(t, a)
		r := mulDense(m, x)
		for i := range r {
			r[i] = b[i] - r[i]
		}
		tr := norm(r) / norm(b)
		if math.Abs(tr-res.TrueResidual) > 1e-3*tr {
			t.Errorf("%v: TrueResidual %g, recomputed %g", kv, res.TrueResidual, tr)
		}
		if res.Converged != (tr <= o.Tol) || (res.Status == Converged) != res.Converged {
			t.Errorf("%v: status %v (converged %v) with true residual %g", kv, res.Status, res.Converged, tr)
		}
		t.Logf("%v: %v, %d iterations, %d restarts, true residual %.3g", kv, res.Status, res.Iterations, res.Restarts, tr)
	}
}

// Ill-conditioned SPD matrices (condition 1e12–1e14): a diagonal scaling
// of the 2D Laplacian with entries spread over seven orders of magnitude.
// Whatever Solve reports, it reports truly.
func TestHonestIllConditioned(t *testing.T) {
	pr := fem.Poisson(2, 40)
	a := *pr.A
	a.Val = append([]float64(nil), a.Val...)
	s := make([]float64, a.Rows)
	for i := range s {
		s[i] = math.Pow(10, 3.5*math.Sin(float64(i)*0.37))
	}
	for i := 0; i < a.Rows; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			a.Val[k] *= s[i] * s[a.Col[k]]
		}
	}
	pc, err := New(&a, Options{MaxCoarse: 20, Tol: 1e-10})
	if err != nil {
		t.Fatal(err)
	}
	b := randVec(a.Rows, 3)
	x := make([]float64, a.Rows)
	res, err := pc.Solve(b, x)
	if err != nil {
		t.Fatal(err)
	}
	m := mustCSR(t, &a)
	r := mulDense(m, x)
	for i := range r {
		r[i] = b[i] - r[i]
	}
	tr := norm(r) / norm(b)
	if res.Converged != (tr <= 1e-10) {
		t.Errorf("status %v with true residual %g", res.Status, tr)
	}
	t.Logf("%v, %d iterations, %d restarts, true residual %.3g", res.Status, res.Iterations, res.Restarts, tr)
}

// The streamed and whole Galerkin products are bitwise the two-product
// one, and so are restriction and prolongation with and without the
// stored transpose.
func TestGalerkinStreamed(t *testing.T) {
	for _, tp := range problems() {
		for _, w := range []int{1, 3} {
			pc, err := New(tp.pr.A, problemOptions(tp.pr, Options{MaxCoarse: 30, Workers: w, Reuse: true}))
			if err != nil {
				t.Fatal(err)
			}
			pc.workVectors() // prolong's scratch
			for lv, l := range pc.levels[:len(pc.levels)-1] {
				want := pc.pool.mulMat(l.r, pc.pool.mulMat(l.a, l.p, l.ga), l.gr)
				streamed, _ := pc.pool.galerkinStreamed(l.a, l.p, l.ga, l.gr)
				whole, _ := pc.pool.galerkinWhole(l.a, l.p, l.ga, l.gr)
				for _, got := range []*csr{streamed, whole} {
					if !samePattern(want, got) {
						t.Fatalf("%s workers %d level %d: patterns differ", tp.name, w, lv)
					}
					for k := range want.val {
						if math.Float64bits(want.val[k]) != math.Float64bits(got.val[k]) && want.val[k] != got.val[k] {
							t.Fatalf("%s workers %d level %d entry %d: %g vs %g", tp.name, w, lv, k, got.val[k], want.val[k])
						}
					}
				}
				x := randVec(l.a.rows, 3)
				y1, y2 := make([]float64, l.p.cols), make([]float64, l.p.cols)
				pc.pool.restrict(l, x, y1)
				pc.pool.restrict(&level{p: l.p}, x, y2)
				for i := range y1 {
					if y1[i] != y2[i] {
						t.Fatalf("%s level %d: restriction by rows %g, by scatter %g", tp.name, lv, y1[i], y2[i])
					}
				}
				xc := randVec(l.p.cols, 4)
				z1, z2 := randVec(l.a.rows, 5), randVec(l.a.rows, 5)
				newPool(1).prolong(l, xc, z1)
				newPool(1).mulVecAdd(l.p, xc, z2)
				for i := range z1 {
					if z1[i] != z2[i] {
						t.Fatalf("%s level %d: prolongation by scatter %g, by rows %g", tp.name, lv, z1[i], z2[i])
					}
				}
			}
		}
	}
}
