package amg

import (
	"math"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
)

// coarseRef bounds the absolute energy from above, and is the absolute
// energy itself where a diagonal entry is rounding against the bound: the
// coarse solver sees the same rows as rounding either way.
func TestCoarseRef(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pr    *fem.Problem
		exact bool // a rounding diagonal entry: the exact energy comes back
	}{
		{"poisson", fem.Poisson(3, 10), false},
		{"elasticity", fem.Elasticity(5), false},
		{"zero-energy-column", fem.Poisson(3, 10), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc, err := New(tc.pr.A, problemOptions(tc.pr, Options{MaxLevels: 2}))
			if err != nil {
				t.Fatal(err)
			}
			l, ac := pc.levels[0], pc.levels[1].a
			if tc.exact {
				// A coarse column of zero energy: the diagonal entry
				// of an aggregate whose energy cancelled to rounding.
				ac = &csr{rows: ac.rows, cols: ac.cols, ptr: ac.ptr, col: ac.col, val: slices.Clone(ac.val)}
				for k := ac.ptr[0]; k < ac.ptr[1]; k++ {
					if ac.col[k] == 0 {
						ac.val[k] = 1e-20
					}
				}
			}
			ref, exact := coarseRef(newPool(3), l.a, l.p, ac), absEnergy(l.a, l.p)
			if tc.exact {
				if !slices.Equal(ref, exact) {
					t.Fatal("a rounding diagonal did not get the exact absolute energy")
				}
				return
			}
			looser := false
			for i := range ref {
				if ref[i] < exact[i]*(1-1e-12) {
					t.Fatalf("column %d: bound %g below the absolute energy %g", i, ref[i], exact[i])
				}
				looser = looser || ref[i] > exact[i]*(1+1e-12)
			}
			if !looser {
				t.Error("the bound is the exact energy: not the cheap path")
			}
		})
	}
}

// The coarse inverse the GPU applies is the same whatever the workers,
// and inverts the coarsest operator.
func TestCoarseInverse(t *testing.T) {
	pr := fem.Elasticity(8)
	pc, err := New(pr.A, problemOptions(pr, Options{MaxCoarse: 200}))
	if err != nil {
		t.Fatal(err)
	}
	c, a := pc.coarse, pc.levels[len(pc.levels)-1].a
	if c.rank != c.n || c.n < 50 {
		t.Fatalf("coarsest operator of %d rows, rank %d: want a nonsingular one of some size", c.n, c.rank)
	}
	x := c.inverse(newPool(1))
	if y := c.inverse(newPool(5)); !slices.Equal(x, y) {
		t.Error("the inverse depends on the workers")
	}
	n := c.n
	for j := range n { // (A·X)_:j = e_j
		col := make([]float64, n)
		for i := range n {
			col[i] = x[i*n+j]
		}
		r := make([]float64, n)
		newPool(1).mulVec(a, col, r)
		for i, v := range r {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(v-want) > 1e-8 {
				t.Fatalf("(A·X)[%d,%d] = %g, want %g", i, j, v, want)
			}
		}
	}
}
