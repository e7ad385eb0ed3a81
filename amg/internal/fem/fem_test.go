package fem

import (
	"math"
	"testing"
)

// Rows of nodes away from the eliminated boundary annihilate the
// near-nullspace: constants for Poisson, the six rigid-body modes for
// elasticity. This checks the element matrices and the assembly.
func TestNullspaceAwayFromBoundary(t *testing.T) {
	check := func(t *testing.T, pr *Problem, n int, modes [][]float64, interior func(x []float64) bool) {
		t.Helper()
		a := pr.A
		bs := pr.Block
		for _, m := range modes {
			for i := 0; i < a.Rows; i++ {
				node := i / bs
				if !interior(pr.Coords[node*pr.Dim : (node+1)*pr.Dim]) {
					continue
				}
				s, scale := 0.0, 0.0
				for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
					s += a.Val[k] * m[a.Col[k]]
					scale += math.Abs(a.Val[k] * m[a.Col[k]])
				}
				if math.Abs(s) > 1e-12*scale {
					t.Fatalf("row %d: (A·mode)_i = %g", i, s)
				}
			}
		}
	}
	n := 6
	h := 1 / float64(n)
	away := func(x []float64) bool { // no neighbour on the boundary
		for _, c := range x {
			if c < 1.5*h || c > 1-1.5*h {
				return false
			}
		}
		return true
	}
	for _, dim := range []int{2, 3} {
		pr := Poisson(dim, n)
		if want := int(math.Pow(float64(n-1), float64(dim))); pr.A.Rows != want {
			t.Fatalf("Poisson %dD: %d rows, want %d", dim, pr.A.Rows, want)
		}
		one := make([]float64, pr.A.Rows)
		for i := range one {
			one[i] = 1
		}
		check(t, pr, n, [][]float64{one}, away)
	}
	pr := Elasticity(n)
	if want := 3 * n * (n + 1) * (n + 1); pr.A.Rows != want {
		t.Fatalf("elasticity: %d rows, want %d", pr.A.Rows, want)
	}
	var modes [][]float64
	for j := 0; j < 6; j++ {
		m := make([]float64, pr.A.Rows)
		for v := 0; v < pr.A.Rows/3; v++ {
			x, y, z := pr.Coords[3*v], pr.Coords[3*v+1], pr.Coords[3*v+2]
			u := [6][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {-y, x, 0}, {0, -z, y}, {z, 0, -x}}[j]
			copy(m[3*v:3*v+3], u[:])
		}
		modes = append(modes, m)
	}
	check(t, pr, n, modes, func(x []float64) bool { return x[0] > 1.5*h })
}

// The matrices are symmetric up to round-off (element sums meet in
// different orders) with a positive diagonal.
func TestSymmetric(t *testing.T) {
	for _, pr := range []*Problem{Poisson(2, 5), Poisson(3, 4), Elasticity(3)} {
		a := pr.A
		val := map[[2]int32]float64{}
		dmax := 0.0
		for i := 0; i < a.Rows; i++ {
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				val[[2]int32{int32(i), a.Col[k]}] = a.Val[k]
				dmax = math.Max(dmax, math.Abs(a.Val[k]))
			}
		}
		for ij, v := range val {
			w, ok := val[[2]int32{ij[1], ij[0]}]
			if !ok || math.Abs(v-w) > 1e-14*dmax {
				t.Fatalf("a%v = %g, transpose %g", ij, v, w)
			}
			if ij[0] == ij[1] && !(v > 0) {
				t.Fatalf("diagonal %v = %g", ij, v)
			}
		}
	}
}
