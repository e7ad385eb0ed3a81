package amg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// modelModes is su_modes: row by row, as each GPU thread writes it.
func modelModes(n, bs, k int, coords []float64, c [3]float64) []float64 {
	b := make([]float64, n*k)
	for i := range n {
		v, d := i/bs, i%bs
		r := b[i*k : (i+1)*k]
		for j := range r {
			if j == d {
				r[j] = 1
			}
		}
		if coords == nil {
			continue
		}
		x, y := coords[v*bs]-c[0], coords[v*bs+1]-c[1]
		if bs == 2 {
			r[2] = x
			if d == 0 {
				r[2] = -y
			}
			continue
		}
		z := coords[v*bs+2] - c[2]
		switch d {
		case 0:
			r[3], r[5] = -y, z
		case 1:
			r[3], r[4] = x, -z
		case 2:
			r[4], r[5] = y, -x
		}
	}
	return b
}

// The device's near-nullspace is the host's, bit for bit (signed zeros
// included), and deviceModes takes only what su_modes forms.
func TestModesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		kind    Nullspace
		dim, bs int
	}{{Constant, 0, 1}, {Constant, 0, 3}, {RigidBody, 2, 2}, {RigidBody, 3, 3}} {
		nodes := 257
		n := nodes * tc.bs
		o := &Options{Nullspace: tc.kind, Dim: tc.dim, Workers: 3}
		var c [3]float64
		if tc.kind == RigidBody {
			o.Coords = make([]float64, nodes*tc.dim)
			for i := range o.Coords {
				o.Coords[i] = float64(rng.IntN(7)) - 3 + rng.Float64()*float64(i%2)
			}
			var err error
			if c, err = centroid(o.Coords, tc.dim); err != nil {
				t.Fatal(err)
			}
		}
		want, k, err := nearNullspace(o, n, tc.bs)
		if err != nil {
			t.Fatal(err)
		}
		if dk, ok := deviceModes(o, n, tc.bs); !ok || dk != k {
			t.Fatalf("%v bs %d: deviceModes gives %d, %v; want %d", tc.kind, tc.bs, dk, ok, k)
		}
		got := modelModes(n, tc.bs, k, o.Coords, c)
		for q := range want {
			if math.Float64bits(got[q]) != math.Float64bits(want[q]) {
				t.Fatalf("%v bs %d: entry %d (row %d) is %v, want %v", tc.kind, tc.bs, q, q/k, got[q], want[q])
			}
		}
	}
	for _, o := range []*Options{
		{Nullspace: Vectors, Vectors: [][]float64{make([]float64, 6)}},
		{Nullspace: RigidBody, Dim: 3, Coords: make([]float64, 5)},
		{Nullspace: RigidBody, Dim: 2, Coords: make([]float64, 6)},
	} {
		if _, ok := deviceModes(o, 6, 3); ok {
			t.Errorf("deviceModes takes %v with %d coordinates in %dD", o.Nullspace, len(o.Coords), o.Dim)
		}
	}
}
