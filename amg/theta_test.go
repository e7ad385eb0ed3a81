package amg

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// theta's text forms: auto is the zero Theta, 0 keeps every coupling (a
// negative Theta), and the options in force resolve auto by the
// near-nullspace.
func TestThetaAuto(t *testing.T) {
	for _, tc := range []struct {
		kv    []string
		field float64 // Options.Theta after parsing
		text  string  // its text form
		rbm   float64 // in force with rigid-body modes
		plain float64 // in force with constants
	}{
		{nil, 0, "auto", DefaultSystemTheta, 0},
		{[]string{"theta=auto"}, 0, "auto", DefaultSystemTheta, 0},
		{[]string{"theta=0"}, -1, "0", 0, 0},
		{[]string{"theta=0.08"}, 0.08, "0.08", 0.08, 0.08},
	} {
		o, err := ParseOptions(tc.kv)
		if err != nil {
			t.Fatal(err)
		}
		if o.Theta != tc.field {
			t.Errorf("%v: Theta %g, want %g", tc.kv, o.Theta, tc.field)
		}
		if kv := o.KeyValues(); !slices.Contains(kv, "theta="+tc.text) {
			t.Errorf("%v: KeyValues %v lack theta=%s", tc.kv, kv, tc.text)
		}
		if back, err := ParseOptions(o.KeyValues()); err != nil || back.Theta != o.Theta {
			t.Errorf("%v: KeyValues read back as Theta %g (%v)", tc.kv, back.Theta, err)
		}
		plain, err := o.withDefaults()
		if err != nil || plain.Theta != tc.plain {
			t.Errorf("%v: in force with constants %g (%v), want %g", tc.kv, plain.Theta, err, tc.plain)
		}
		o.Nullspace, o.BlockSize, o.Dim = RigidBody, 3, 3
		rbm, err := o.withDefaults()
		if err != nil || rbm.Theta != tc.rbm {
			t.Errorf("%v: in force with rigid-body modes %g (%v), want %g", tc.kv, rbm.Theta, err, tc.rbm)
		}
	}
	for _, bad := range []string{"theta=-0.1", "theta=1", "theta=x"} {
		if _, err := ParseOptions([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// jumpPoisson returns Q1 −∇·(k∇u) on the unit square, n elements a side,
// Dirichlet on the boundary (eliminated), k = c on a checkerboard of
// blocks of b elements and 1 elsewhere.
func jumpPoisson(n, b int, c float64) *mesh.CSR[float64] {
	ke := [4][4]float64{ // local node a at (a&1, a>>1)
		{2. / 3, -1. / 6, -1. / 6, -1. / 3},
		{-1. / 6, 2. / 3, -1. / 3, -1. / 6},
		{-1. / 6, -1. / 3, 2. / 3, -1. / 6},
		{-1. / 3, -1. / 6, -1. / 6, 2. / 3},
	}
	id := func(x, y int) int {
		if x <= 0 || y <= 0 || x >= n || y >= n {
			return -1
		}
		return (y-1)*(n-1) + x - 1
	}
	m := (n - 1) * (n - 1)
	rows := make([]map[int]float64, m)
	for i := range rows {
		rows[i] = map[int]float64{}
	}
	for ey := 0; ey < n; ey++ {
		for ex := 0; ex < n; ex++ {
			k := 1.0
			if (ex/b+ey/b)%2 == 1 {
				k = c
			}
			for a := range 4 {
				i := id(ex+a&1, ey+a>>1)
				for q := range 4 {
					if j := id(ex+q&1, ey+q>>1); i >= 0 && j >= 0 {
						rows[i][j] += k * ke[a][q]
					}
				}
			}
		}
	}
	a := &mesh.CSR[float64]{Rows: m, Cols: m, RowPtr: []int64{0}}
	for _, r := range rows {
		cols := slices.Sorted(maps.Keys(r))
		for _, j := range cols {
			a.Col = append(a.Col, int32(j))
			a.Val = append(a.Val, r[j])
		}
		a.RowPtr = append(a.RowPtr, int64(len(a.Col)))
	}
	return a
}

// The auto θ of scalar problems: 0 on plain Poisson problems (Q1
// hexahedra included, whose face couplings are rounding zeros), the
// systems' θ where a coefficient jump leaves weak couplings in numbers,
// for any symmetric scaling and worker count; an explicit θ wins, and
// the jump's θ saves iterations there.
func TestThetaFromMatrix(t *testing.T) {
	hex := fem.Poisson(3, 12).A
	plain, jump := jumpPoisson(64, 8, 1), jumpPoisson(64, 8, 1e6)
	scaled := *jump
	scaled.Val = slices.Clone(jump.Val)
	d := randVec(jump.Rows, 7)
	for i := range jump.Rows {
		for k := jump.RowPtr[i]; k < jump.RowPtr[i+1]; k++ {
			scaled.Val[k] *= math.Exp(3*d[i]) * math.Exp(3*d[jump.Col[k]])
		}
	}
	for _, tc := range []struct {
		name string
		a    *mesh.CSR[float64]
		want float64
	}{
		{"hex", hex, 0}, {"plain", plain, 0}, {"jump", jump, DefaultSystemTheta}, {"scaled", &scaled, DefaultSystemTheta},
		// Over thetaFull rows: counted on hash-picked rows.
		{"plain/sampled", jumpPoisson(160, 20, 1), 0}, {"jump/sampled", jumpPoisson(160, 20, 1e6), DefaultSystemTheta},
	} {
		for _, w := range []int{1, 3} {
			if got := scalarTheta(newPool(w), mustCSR(t, tc.a)); got != tc.want {
				t.Errorf("%s, %d workers: θ %g, want %g", tc.name, w, got, tc.want)
			}
		}
	}
	b := randVec(jump.Rows, 3)
	its := map[string]int{}
	for _, kv := range [][]string{nil, {"theta=0"}, {"theta=0.08"}} {
		o, err := ParseOptions(append([]string{"max_coarse=20", "device=cpu"}, kv...))
		if err != nil {
			t.Fatal(err)
		}
		pc, err := New(jump, o)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]float64{0: DefaultSystemTheta, 1: 0, 2: 0.08}[len(its)]
		if pc.opts.Theta != want {
			t.Errorf("%v: θ in force %g, want %g", kv, pc.opts.Theta, want)
		}
		res, err := pc.Solve(b, make([]float64, len(b)))
		if err != nil || !res.Converged {
			t.Fatalf("%v: %v %v", kv, err, res.Status)
		}
		its[fmt.Sprint(kv)] = res.Iterations
	}
	if its["[]"] >= its["[theta=0]"] {
		t.Errorf("jump: %d iterations with the auto θ, %d with θ = 0", its["[]"], its["[theta=0]"])
	}
}

// TestThetaAfterInputChecks: the auto θ reads the matrix's indices, so a
// bad matrix must meet the input checks first, on every device: the same
// error as on the CPU, not a panic (the device path resolved θ before
// its checks).
func TestThetaAfterInputChecks(t *testing.T) {
	for _, a := range []*mesh.CSR[float64]{
		{Rows: 3, Cols: 3, RowPtr: []int64{0, 2, 4, 5}, Col: []int32{0, 7, 0, 1, 2}, Val: []float64{2, -1, -1, 2, 2}},
		{Rows: 3, Cols: 3, RowPtr: []int64{0, 2, 4, 5}, Col: []int32{0, -1, 0, 1, 2}, Val: []float64{2, -1, -1, 2, 2}},
		{Rows: 3, Cols: 3, RowPtr: []int64{0, 9, 4, 5}, Col: []int32{0, 1, 0, 1, 2}, Val: []float64{2, -1, -1, 2, 2}},
	} {
		_, want := New(a, Options{Device: mis.CPU})
		if want == nil {
			t.Fatalf("%v: no error on the CPU", a)
		}
		for _, dev := range []mis.Device{mis.GPU, mis.Auto} {
			if _, err := New(a, Options{Device: dev}); err == nil || err.Error() != want.Error() {
				t.Errorf("%v, device %v: error %v, want %v", a.RowPtr, dev, err, want)
			}
		}
	}
}
