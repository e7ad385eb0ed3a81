package amg

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
)

// withDirichletRows turns the rows and columns of every 7th node into an
// identity block, as FEM codes that keep constrained unknowns do.
func withDirichletRows(a *mesh.CSR[float64], bs int) *mesh.CSR[float64] {
	c := *a
	c.Val = slices.Clone(a.Val)
	fixed := func(i int) bool { return (i/bs)%7 == 3 }
	for i := 0; i < a.Rows; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := int(a.Col[k])
			if fixed(i) || fixed(j) {
				c.Val[k] = 0
				if i == j {
					c.Val[k] = 1
				}
			}
		}
	}
	return &c
}

// strengthGraph builds the graph mesh.FromCSR does, faster.
func TestStrengthGraphMatchesMesh(t *testing.T) {
	for _, pr := range []*fem.Problem{fem.Poisson(2, 12), fem.Poisson(3, 6), fem.Elasticity(4)} {
		for _, dir := range []bool{false, true} {
			for _, theta := range []float64{0, 0.02, 0.1, 0.3} {
				t.Run(fmt.Sprintf("bs%d-dir%v-theta%g", pr.Block, dir, theta), func(t *testing.T) {
					m := pr.A
					if dir {
						m = withDirichletRows(m, pr.Block)
					}
					a := mustCSR(t, m)
					got, err := strengthGraph(newPool(3), a, theta, pr.Block)
					if err != nil {
						t.Fatal(err)
					}
					if err := got.Validate(); err != nil {
						t.Fatal(err)
					}
					want, err := mesh.FromCSR(m, mesh.MatrixOptions{Theta: theta, BlockSize: pr.Block})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got.Offsets, want.Offsets) || !slices.Equal(got.Adj, want.Adj) {
						t.Fatalf("graphs differ: %d and %d edges", len(got.Adj), len(want.Adj))
					}
					nd := 0
					for v := range want.Dirichlet {
						if want.Dirichlet[v] != (got.Dirichlet != nil && got.Dirichlet[v]) {
							t.Fatalf("node %d: Dirichlet %v, mesh.FromCSR says %v", v, got.Dirichlet != nil && got.Dirichlet[v], want.Dirichlet[v])
						}
						if want.Dirichlet[v] {
							nd++
						}
					}
					if dir != (nd > 0) {
						t.Fatalf("%d Dirichlet nodes", nd)
					}
				})
			}
		}
	}
}

// Dirichlet rows stay out of the aggregates and the solver still converges.
func TestDirichletRows(t *testing.T) {
	for _, pr := range []*fem.Problem{fem.Poisson(3, 10), fem.Elasticity(5)} {
		a := withDirichletRows(pr.A, pr.Block)
		pc, err := New(a, problemOptions(pr, Options{MaxCoarse: 40}))
		if err != nil {
			t.Fatal(err)
		}
		l := pc.levels[0]
		for v, g := range l.of {
			if (v%7 == 3) != (g < 0) {
				t.Fatalf("node %d: aggregate %d", v, g)
			}
		}
		b := randVec(a.Rows, 4)
		res, err := pc.Solve(b, make([]float64, a.Rows))
		if err != nil || !res.Converged || res.Iterations > 20 {
			t.Errorf("block %d: %v after %d iterations (%v)", pr.Block, res.Converged, res.Iterations, err)
		}
	}
}

// The strength test is scale-invariant; at entries near 1e160 or 1e-170
// the squares of a block norm overflow or vanish unless the norm scales
// first. Power-of-two factors make the scaled matrix exact.
func TestStrengthGraphExtremeScales(t *testing.T) {
	for _, pr := range []*fem.Problem{fem.Poisson(2, 8), fem.Elasticity(3)} {
		for _, theta := range []float64{0.02, 0.1} {
			a := mustCSR(t, pr.A)
			want, err := strengthGraph(newPool(1), a, theta, pr.Block)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Adj) == 0 {
				t.Fatal("no strong couplings at scale 1: the test would prove nothing")
			}
			for _, e := range []int{531, -565} { // 1.1e160, 1.5e-170
				m := *pr.A
				m.Val = slices.Clone(pr.A.Val)
				for k := range m.Val {
					m.Val[k] = math.Ldexp(m.Val[k], e)
				}
				got, err := strengthGraph(newPool(1), mustCSR(t, &m), theta, pr.Block)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Offsets, want.Offsets) || !slices.Equal(got.Adj, want.Adj) {
					t.Errorf("bs %d θ %g scale 2^%d: %d strong edges, want %d", pr.Block, theta, e, len(got.Adj), len(want.Adj))
				}
				fromCSR, err := mesh.FromCSR(&m, mesh.MatrixOptions{Theta: theta, BlockSize: pr.Block})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(fromCSR.Adj, want.Adj) {
					t.Errorf("mesh.FromCSR bs %d θ %g scale 2^%d: %d strong edges, want %d", pr.Block, theta, e, len(fromCSR.Adj), len(want.Adj))
				}
			}
		}
	}
}

// unionTranspose adds the missing reverse edges, and returns a symmetric
// edge set as it is.
func TestUnionTranspose(t *testing.T) {
	// 0→1, 0→2, 1→0, 2→3 (2→0, 3→2 missing), 3 none.
	s, cnt := []int32{1, 2, 0, 3}, []int{0, 2, 3, 4, 4}
	off, adj := unionTranspose(s, cnt)
	if want := []int64{0, 2, 3, 5, 6}; !slices.Equal(off, want) {
		t.Fatalf("offsets %v, want %v", off, want)
	}
	if want := []int32{1, 2, 0, 0, 3, 2}; !slices.Equal(adj, want) {
		t.Fatalf("adjacency %v, want %v", adj, want)
	}
	sym, scnt := []int32{1, 2, 0, 0}, []int{0, 2, 3, 4}
	off, adj = unionTranspose(sym, scnt)
	if !slices.Equal(off, []int64{0, 2, 3, 4}) || &adj[0] != &sym[0] || len(adj) != 4 {
		t.Fatalf("symmetric set: offsets %v, adjacency %v", off, adj)
	}
}
