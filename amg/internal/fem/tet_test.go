package fem

import (
	"math"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// The P1 matrices are symmetric, their rows sorted, and away from the
// clamped end they annihilate what the operator does: constants for
// Poisson, the six rigid-body modes for elasticity.
func TestTetProblems(t *testing.T) {
	m := mesh.StructuredTet(7, 6, 5)
	fixed := Clamped(m)
	for _, c := range []struct {
		name  string
		build func(*mesh.Mesh) (*Problem, error)
		modes int
	}{{"poisson", TetPoisson, 1}, {"elasticity", TetElasticity, 6}} {
		pr, err := c.build(m)
		if err != nil {
			t.Fatal(err)
		}
		a, bs := pr.A, pr.Block
		checkSymmetricSorted(t, c.name, a)
		// Rows of nodes with no clamped neighbour: A·mode = 0.
		near := make([]bool, m.NumNodes())
		g, err := mesh.FromElements(m, mesh.ElementOptions{})
		if err != nil {
			t.Fatal(err)
		}
		free := 0
		for v := range near {
			for _, u := range g.Neighbors(int32(v)) {
				near[v] = near[v] || fixed[u]
			}
			if !fixed[v] {
				free++
			}
		}
		if a.Rows != free*bs {
			t.Fatalf("%s: %d rows, want %d free nodes × %d", c.name, a.Rows, free, bs)
		}
		var interior []int
		for v, id := 0, 0; v < len(near); v++ {
			if fixed[v] {
				continue
			}
			if !near[v] {
				interior = append(interior, id)
			}
			id++
		}
		if len(interior) == 0 {
			t.Fatalf("%s: no interior rows to test", c.name)
		}
		for k := 0; k < c.modes; k++ {
			x := rigidMode(pr.Coords, bs, k)
			for _, v := range interior {
				for i := 0; i < bs; i++ {
					r := v*bs + i
					s, scale := 0.0, 0.0
					for q := a.RowPtr[r]; q < a.RowPtr[r+1]; q++ {
						s += a.Val[q] * x[a.Col[q]]
						scale += math.Abs(a.Val[q])
					}
					if math.Abs(s) > 1e-12*scale {
						t.Fatalf("%s: mode %d, row %d: A·x = %g", c.name, k, r, s)
					}
				}
			}
		}
	}
}

// rigidMode is mode k at the nodes of coords: constants (bs 1), else the
// three translations and three rotations.
func rigidMode(coords []float64, bs, k int) []float64 {
	x := make([]float64, len(coords)/3*bs)
	for v := 0; v < len(coords)/3; v++ {
		p := coords[3*v : 3*v+3]
		if bs == 1 {
			x[v] = 1
			continue
		}
		if k < 3 {
			x[3*v+k] = 1
			continue
		}
		// Rotation about axis k−3: ω × p.
		var w [3]float64
		w[k-3] = 1
		x[3*v+0] = w[1]*p[2] - w[2]*p[1]
		x[3*v+1] = w[2]*p[0] - w[0]*p[2]
		x[3*v+2] = w[0]*p[1] - w[1]*p[0]
	}
	return x
}

func checkSymmetricSorted(t *testing.T, name string, a *mesh.CSR[float64]) {
	t.Helper()
	at := map[[2]int32]float64{}
	for r := 0; r < a.Rows; r++ {
		for q := a.RowPtr[r]; q < a.RowPtr[r+1]; q++ {
			if q > a.RowPtr[r] && a.Col[q] <= a.Col[q-1] {
				t.Fatalf("%s: row %d not sorted", name, r)
			}
			at[[2]int32{int32(r), a.Col[q]}] = a.Val[q]
		}
	}
	for k, v := range at {
		w, ok := at[[2]int32{k[1], k[0]}]
		if !ok || math.Abs(v-w) > 1e-14*math.Max(1, math.Abs(v)) {
			t.Fatalf("%s: entry %v = %g, its mirror %g (present %v)", name, k, v, w, ok)
		}
	}
}
