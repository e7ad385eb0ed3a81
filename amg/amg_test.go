package amg

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

type testProblem struct {
	name string
	pr   *fem.Problem
}

func problems() []testProblem {
	return []testProblem{
		{"poisson2d-48", fem.Poisson(2, 48)},
		{"poisson3d-20", fem.Poisson(3, 20)},
		{"elasticity3d-8", fem.Elasticity(8)},
	}
}

// PCG with AMG converges in a bounded number of iterations, far fewer than
// unpreconditioned CG, for every smoother, cycle and aggregation.
func TestSolveConverges(t *testing.T) {
	variants := []struct {
		name string
		kv   []string
		max  int // iteration bound
	}{
		{"chebyshev-v", nil, 15},
		{"chebyshev3-w", []string{"sweeps=3", "cycle=w"}, 12},
		{"jacobi-v", []string{"smoother=jacobi", "sweeps=2"}, 30},
		{"gs-v", []string{"smoother=gs", "sweeps=1"}, 25},
		{"pairwise", []string{"aggregation=pairwise"}, 25},
		{"tentative", []string{"prolongation=tentative", "cycle=w"}, 40},
	}
	for _, tp := range problems() {
		a := mustCSR(t, tp.pr.A)
		b := mulDense(a, randVec(a.rows, 3))
		cgIts := plainCG(a, b, 1e-8, 5000)
		for _, v := range variants {
			t.Run(tp.name+"/"+v.name, func(t *testing.T) {
				o, err := ParseOptions(append([]string{"max_coarse=60"}, v.kv...))
				if err != nil {
					t.Fatal(err)
				}
				pc, err := New(tp.pr.A, problemOptions(tp.pr, o))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(pc.Stats().Levels); got < 2 {
					t.Fatalf("%d levels, want a hierarchy", got)
				}
				x := make([]float64, a.rows)
				res, err := pc.Solve(b, x)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Converged || res.Iterations > v.max {
					t.Errorf("converged %v after %d iterations, want ≤ %d (plain CG: %d)", res.Converged, res.Iterations, v.max, cgIts)
				}
				if 3*res.Iterations > cgIts {
					t.Errorf("%d iterations against %d of plain CG: want at least 3× fewer", res.Iterations, cgIts)
				}
				r := mulDense(a, x)
				for i := range r {
					r[i] = b[i] - r[i]
				}
				if rel := norm(r) / norm(b); rel > 2e-8 {
					t.Errorf("true relative residual %g, want ≤ 2e-8", rel)
				}
				if len(res.Residuals) != res.Iterations+1 || res.Residuals[0] != 1 {
					t.Errorf("history %v does not start at 1 with one entry per iteration", res.Residuals)
				}
			})
		}
	}
}

// The coarse operators equal Pᵀ·A·P formed densely.
func TestGalerkinMatchesDense(t *testing.T) {
	for _, tp := range []testProblem{{"poisson2d-12", fem.Poisson(2, 12)}, {"elasticity-3", fem.Elasticity(3)}} {
		t.Run(tp.name, func(t *testing.T) {
			pc, err := New(tp.pr.A, problemOptions(tp.pr, Options{MaxCoarse: 10, Workers: 3}))
			if err != nil {
				t.Fatal(err)
			}
			if len(pc.levels) < 2 {
				t.Fatal("no coarse level")
			}
			for lv := 0; lv+1 < len(pc.levels); lv++ {
				l := pc.levels[lv]
				A, P, Ac := toDense(l.a), toDense(l.p), toDense(pc.levels[lv+1].a)
				scale := 0.0
				for i := range Ac {
					scale = math.Max(scale, math.Abs(Ac[i][i]))
				}
				for I := range Ac {
					for J := range Ac {
						s := 0.0
						for i := range A {
							if P[i][I] == 0 {
								continue
							}
							for j := range A {
								s += P[i][I] * A[i][j] * P[j][J]
							}
						}
						if math.Abs(s-Ac[I][J]) > 1e-12*scale {
							t.Fatalf("level %d: Ac[%d][%d] = %g, dense Pᵀ·A·P gives %g", lv+1, I, J, Ac[I][J], s)
						}
					}
				}
			}
		})
	}
}

// The tentative prolongator reproduces the near-nullspace, P·B_c = B, and
// has orthonormal columns; for elasticity the rigid-body modes are in its
// range.
func TestTentativeReproducesNullspace(t *testing.T) {
	for _, tp := range []testProblem{{"poisson3d", fem.Poisson(3, 10)}, {"elasticity", fem.Elasticity(6)}} {
		t.Run(tp.name, func(t *testing.T) {
			o, _ := problemOptions(tp.pr, Options{MaxCoarse: 10}).withDefaults()
			a := mustCSR(t, tp.pr.A)
			p := newPool(2)
			g, err := strengthGraph(p, a, 0, o.BlockSize)
			if err != nil {
				t.Fatal(err)
			}
			of, na, err := aggregateMIS2(g, 2, mis.CPU)
			if err != nil {
				t.Fatal(err)
			}
			b, k, err := nearNullspace(&o, a.rows, o.BlockSize)
			if err != nil {
				t.Fatal(err)
			}
			of, na = fixAggregates(g, of, na, o.BlockSize, k)
			if err := checkAggregates(of, na); err != nil {
				t.Fatal(err)
			}
			tt, bc := tentative(of, na, o.BlockSize, b, k)
			for j := 0; j < k; j++ {
				col := make([]float64, tt.cols)
				for i := range col {
					col[i] = bc[i*k+j]
				}
				got := mulDense(tt, col)
				for i := range got {
					if d := math.Abs(got[i] - b[i*k+j]); d > 1e-12*(1+math.Abs(b[i*k+j])) {
						t.Fatalf("mode %d, row %d: P·B_c = %g, B = %g", j, i, got[i], b[i*k+j])
					}
				}
			}
			// PᵀP = I.
			ptp := toDense(p.mulMat(tt.transpose(), tt, 1))
			for i := range ptp {
				for j := range ptp[i] {
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(ptp[i][j]-want) > 1e-12 {
						t.Fatalf("(PᵀP)[%d][%d] = %g, want %g", i, j, ptp[i][j], want)
					}
				}
			}
		})
	}
}

// householderQR factors random and rank-deficient blocks: Q orthonormal,
// Q·R = input, R upper triangular with a non-negative diagonal.
func TestHouseholderQR(t *testing.T) {
	cases := []struct{ m, k int }{{6, 6}, {9, 6}, {27, 1}, {4, 3}, {3, 6}, {12, 6}}
	for c, tc := range cases {
		m, k := tc.m, tc.k
		a := randVec(m*k, uint64(c))
		if c == 5 {
			for i := 0; i < m; i++ { // two equal columns: rank deficient
				a[i*k+4] = a[i*k+1]
			}
		}
		q := append([]float64(nil), a...)
		r := make([]float64, k*k)
		householderQR(q, m, k, r, make([]float64, m*k))
		for i := 0; i < m; i++ {
			for j := 0; j < k; j++ {
				s := 0.0
				for l := 0; l < k; l++ {
					s += q[i*k+l] * r[l*k+j]
				}
				if math.Abs(s-a[i*k+j]) > 1e-13 {
					t.Fatalf("%d×%d: (QR)[%d][%d] = %g, want %g", m, k, i, j, s, a[i*k+j])
				}
			}
		}
		for j := 0; j < k; j++ {
			if r[j*k+j] < 0 {
				t.Errorf("%d×%d: R[%d][%d] = %g < 0", m, k, j, j, r[j*k+j])
			}
			for l := 0; l < j; l++ {
				if r[j*k+l] != 0 {
					t.Errorf("%d×%d: R[%d][%d] = %g below the diagonal", m, k, j, l, r[j*k+l])
				}
			}
			for l := 0; l < k && j < m && l < m; l++ {
				s := 0.0
				for i := 0; i < m; i++ {
					s += q[i*k+j] * q[i*k+l]
				}
				want := 0.0
				if j == l {
					want = 1
				}
				if math.Abs(s-want) > 1e-13 {
					t.Errorf("%d×%d: (QᵀQ)[%d][%d] = %g, want %g", m, k, j, l, s, want)
				}
			}
		}
	}
}

// Each smoother reduces the A-norm of the error of a rough initial guess
// (b = 0, so the iterate is the error).
func TestSmoothersReduceError(t *testing.T) {
	for _, tp := range problems() {
		for _, sm := range []string{"chebyshev", "jacobi", "gs"} {
			t.Run(tp.name+"/"+sm, func(t *testing.T) {
				o, _ := ParseOptions([]string{"smoother=" + sm, "max_coarse=60"})
				pc, err := New(tp.pr.A, problemOptions(tp.pr, o))
				if err != nil {
					t.Fatal(err)
				}
				pc.workVectors()
				l := pc.levels[0]
				n := l.a.rows
				x := randVec(n, 11)
				b := make([]float64, n)
				e0 := energy(l.a, x)
				pc.pool.smooth(l.a, &l.sm, x, b, l.res, l.tmp, l.tmp2, false, false, false)
				e1 := energy(l.a, x)
				if !(e1 < 0.7*e0) {
					t.Errorf("‖e‖_A from %g to %g: want a reduction below 0.7", e0, e1)
				}
			})
		}
	}
}

// As a stationary iteration x ← x + M⁻¹(b − A·x), the two-grid and the
// multilevel V-cycle reduce the error by at least a fixed factor per step.
func TestCycleErrorReduction(t *testing.T) {
	for _, tp := range problems() {
		for _, c := range []struct {
			name   string
			kv     []string
			factor float64
		}{
			{"two-grid", []string{"max_levels=2", "max_coarse=10"}, 0.35},
			{"v-cycle", []string{"max_coarse=40"}, 0.35},
		} {
			t.Run(tp.name+"/"+c.name, func(t *testing.T) {
				o, err := ParseOptions(c.kv)
				if err != nil {
					t.Fatal(err)
				}
				pc, err := New(tp.pr.A, problemOptions(tp.pr, o))
				if err != nil {
					t.Fatal(err)
				}
				if c.name == "two-grid" && len(pc.levels) != 2 {
					t.Fatalf("%d levels, want 2", len(pc.levels))
				}
				a := pc.op
				n := a.rows
				x := randVec(n, 5) // b = 0: x is the error
				r, z := make([]float64, n), make([]float64, n)
				e0 := energy(a, x)
				var rate float64
				const steps = 6
				prev := e0
				for s := 0; s < steps; s++ {
					ax := mulDense(a, x)
					for i := range r {
						r[i] = -ax[i]
					}
					if err := pc.Apply(r, z); err != nil {
						t.Fatal(err)
					}
					for i := range x {
						x[i] += z[i]
					}
					e := energy(a, x)
					rate = e / prev
					prev = e
				}
				factor := c.factor
				if tp.pr.Block == 3 {
					factor = 0.5 // elasticity: rigid-body modes make it harder
				}
				if rate > factor {
					t.Errorf("error reduction per cycle %.3f, want ≤ %.2f", rate, factor)
				}
				t.Logf("asymptotic reduction %.3f per cycle, %d levels", rate, len(pc.levels))
			})
		}
	}
}

// The preconditioner is symmetric, xᵀM⁻¹y = yᵀM⁻¹x, and positive
// definite, for every smoother and cycle.
func TestPreconditionerSPD(t *testing.T) {
	tp := fem.Elasticity(6)
	pois := fem.Poisson(3, 12)
	for _, kv := range [][]string{{}, {"cycle=w"}, {"smoother=jacobi"}, {"smoother=gs"}, {"aggregation=pairwise", "sweeps=3"}} {
		for _, pr := range []*fem.Problem{pois, tp} {
			t.Run(fmt.Sprint(kv, pr.Block), func(t *testing.T) {
				o, err := ParseOptions(append([]string{"max_coarse=30"}, kv...))
				if err != nil {
					t.Fatal(err)
				}
				pc, err := New(pr.A, problemOptions(pr, o))
				if err != nil {
					t.Fatal(err)
				}
				n := pc.Rows()
				for s := uint64(0); s < 3; s++ {
					x, y := randVec(n, 100+s), randVec(n, 200+s)
					mx, my := make([]float64, n), make([]float64, n)
					pc.Apply(x, mx)
					pc.Apply(y, my)
					xmy, ymx := dotv(x, my), dotv(y, mx)
					if math.Abs(xmy-ymx) > 1e-10*math.Abs(xmy)+1e-14 {
						t.Errorf("xᵀMy = %.15g, yᵀMx = %.15g", xmy, ymx)
					}
					if xmx := dotv(x, mx); !(xmx > 0) {
						t.Errorf("xᵀMx = %g, want > 0", xmx)
					}
				}
			})
		}
	}
}

// Update with new values on the same pattern gives the hierarchy a fresh
// setup builds (the strength graph at θ = 0 depends on the pattern only;
// at θ > 0, the test's symmetric scaling leaves it unchanged), renumbered
// or not.
func TestUpdateMatchesNew(t *testing.T) {
	for _, tc := range []struct {
		testProblem
		reuse bool
		order Ordering
	}{{testProblem{"poisson3d", fem.Poisson(3, 12)}, true, NaturalOrdering},
		{testProblem{"elasticity", fem.Elasticity(5)}, true, NaturalOrdering},
		{testProblem{"poisson3d-rebuild", fem.Poisson(3, 12)}, false, NaturalOrdering},
		{testProblem{"poisson3d-rcm", fem.Poisson(3, 12)}, true, RCMOrdering},
		{testProblem{"elasticity-rcm", fem.Elasticity(5)}, true, RCMOrdering},
		{testProblem{"poisson3d-rcm-rebuild", fem.Poisson(3, 12)}, false, RCMOrdering}} {
		tp := tc.testProblem
		t.Run(tp.name, func(t *testing.T) {
			o := problemOptions(tp.pr, Options{MaxCoarse: 30, Reuse: tc.reuse, Ordering: tc.order})
			pc, err := New(tp.pr.A, o)
			if err != nil {
				t.Fatal(err)
			}
			// New values: a variable coefficient, kept symmetric by scaling
			// A → S·A·S with a positive diagonal S per node.
			a2 := *tp.pr.A
			a2.Val = append([]float64(nil), a2.Val...)
			s := make([]float64, a2.Rows)
			for i := range s {
				s[i] = 1 + 0.5*math.Sin(float64(i/tp.pr.Block))
			}
			for i := 0; i < a2.Rows; i++ {
				for k := a2.RowPtr[i]; k < a2.RowPtr[i+1]; k++ {
					a2.Val[k] *= s[i] * s[a2.Col[k]]
				}
			}
			if err := pc.Update(&a2); err != nil {
				t.Fatal(err)
			}
			fresh, err := New(&a2, o)
			if err != nil {
				t.Fatal(err)
			}
			sameHierarchy(t, pc, fresh)
			bad := a2
			bad.Col = append([]int32(nil), a2.Col...)
			bad.Col[1], bad.Col[2] = bad.Col[2], bad.Col[1]
			bad.Col[3] = bad.Col[4]
			if err := pc.Update(&bad); err == nil {
				t.Error("Update accepted a different pattern")
			}
		})
	}
}

// Setup and solve give bitwise the same results for any worker count.
func TestDeterministicAcrossWorkers(t *testing.T) {
	for _, tp := range []testProblem{{"poisson3d", fem.Poisson(3, 20)}, {"elasticity", fem.Elasticity(7)}} {
		for _, kv := range [][]string{{}, {"smoother=gs"}, {"aggregation=pairwise"}} {
			t.Run(fmt.Sprint(tp.name, kv), func(t *testing.T) {
				var ref []float64
				var refIts int
				for _, w := range []int{1, 2, 3, 8} {
					o, err := ParseOptions(append([]string{fmt.Sprintf("threads=%d", w), "max_coarse=50"}, kv...))
					if err != nil {
						t.Fatal(err)
					}
					pc, err := New(tp.pr.A, problemOptions(tp.pr, o))
					if err != nil {
						t.Fatal(err)
					}
					b := randVec(pc.Rows(), 1)
					x := make([]float64, len(b))
					res, err := pc.Solve(b, x)
					if err != nil {
						t.Fatal(err)
					}
					if ref == nil {
						ref, refIts = x, res.Iterations
						continue
					}
					if res.Iterations != refIts {
						t.Fatalf("workers %d: %d iterations, workers 1: %d", w, res.Iterations, refIts)
					}
					for i := range x {
						if math.Float64bits(x[i]) != math.Float64bits(ref[i]) {
							t.Fatalf("workers %d: x[%d] = %v, workers 1: %v", w, i, x[i], ref[i])
						}
					}
				}
			})
		}
	}
}

// dropSmall removes exactly the off-diagonal entries at or below the
// relative tolerance, rows copied in parallel (nnz past minParallel);
// the hierarchy is built without them, PCG with them.
func TestDropSmall(t *testing.T) {
	pr := fem.Poisson(3, 24)
	a := mustCSR(t, pr.A)
	d := a.diag()
	c, keep := a.dropSmall(newPool(3), 1e-15, 1)
	if keep == nil || c.nnz() >= a.nnz() {
		t.Fatal("the Q1 Laplacian's round-off couplings were not dropped")
	}
	kept := map[int]bool{}
	for _, k := range keep {
		kept[int(k)] = true
	}
	for i := 0; i < a.rows; i++ {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			j := a.col[k]
			small := int(j) != i && math.Abs(a.val[k]) <= 1e-15*math.Sqrt(d[i]*d[j])
			if small == kept[k] {
				t.Fatalf("entry (%d,%d) = %g: kept %v", i, j, a.val[k], kept[k])
			}
		}
	}
	if same, none := a.dropSmall(newPool(3), -1, 1); same != a || none != nil {
		t.Error("a negative tolerance dropped entries")
	}
	pc, err := New(pr.A, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pc.op.nnz() != a.nnz() || pc.levels[0].a.nnz() != c.nnz() || pc.Stats().Levels[0].Dropped != a.nnz()-c.nnz() {
		t.Errorf("operator %d entries, finest level %d, dropped %d", pc.op.nnz(), pc.levels[0].a.nnz(), pc.Stats().Levels[0].Dropped)
	}
}

// fromMesh checks row ranges side by side and still names the first bad
// entry, even after an earlier row out of order.
func TestFromMeshFirstError(t *testing.T) {
	good := fem.Poisson(3, 24).A // 13,824 rows, 10 ranges of entries
	nz := good.RowPtr[good.Rows]
	a := cloneCSR(good, func(a *mesh.CSR[float64]) {
		a.Col[3], a.Col[4] = a.Col[4], a.Col[3] // row 0 out of order
		a.Val[nz/2] = math.NaN()
		a.Val[nz-5] = math.Inf(1)
	})
	i, _ := slices.BinarySearch(a.RowPtr, nz/2+1)
	want := fmt.Sprintf("entry (%d,%d) is NaN", i-1, a.Col[nz/2])
	for _, w := range []int{1, 4} {
		_, err := fromMesh(newPool(w), a)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d workers: %v, want an error naming %s", w, err, want)
		}
	}
	m, err := fromMesh(newPool(4), cloneCSR(good, func(a *mesh.CSR[float64]) { a.Col[3], a.Col[4] = a.Col[4], a.Col[3] }))
	if err != nil || !slices.IsSorted(m.col[m.ptr[0]:m.ptr[1]]) {
		t.Errorf("a row out of order: %v, not sorted", err)
	}
}
