package amg

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions([]string{"smoother=jacobi", "cycle=W", "theta=0.08", "block=3", "nullspace=rbm",
		"aggregation=pairwise", "sweeps=3", "max_coarse=200", "tol=1e-6", "maxit=50", " workers = 2 ", "prolongation=tentative"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Smoother: L1Jacobi, Cycle: WCycle, Theta: 0.08, BlockSize: 3, Nullspace: RigidBody,
		Aggregation: Pairwise, Sweeps: 3, MaxCoarse: 200, Tol: 1e-6, MaxIter: 50, Workers: 2, Prolongation: Tentative}
	if o.Smoother != want.Smoother || o.Cycle != want.Cycle || o.Theta != want.Theta || o.BlockSize != want.BlockSize ||
		o.Nullspace != want.Nullspace || o.Aggregation != want.Aggregation || o.Sweeps != want.Sweeps ||
		o.MaxCoarse != want.MaxCoarse || o.Tol != want.Tol || o.MaxIter != want.MaxIter || o.Workers != want.Workers ||
		o.Prolongation != want.Prolongation {
		t.Errorf("got %+v\nwant %+v", o, want)
	}
	var zero Options
	if err := zero.Apply(nil); err != nil {
		t.Errorf("zero options rejected: %v", err)
	}
	// Every registered key accepts its documented default.
	for _, k := range OptionKeys() {
		if k.Default == "GOMAXPROCS" {
			continue
		}
		var o Options
		if err := o.Set(k.Key, k.Default); err != nil {
			t.Errorf("key %q rejects its default %q: %v", k.Key, k.Default, err)
		}
	}
}

func TestParseOptionsErrors(t *testing.T) {
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"smooth=jacobi"}, `unknown option "smooth"`},
		{[]string{"smoother=sor"}, `option "smoother": unknown value "sor"`},
		{[]string{"theta"}, `option 0 "theta": want key=value`},
		{[]string{"theta=x"}, `option "theta": "x" is not a finite number`},
		{[]string{"theta=NaN"}, `option "theta"`},
		{[]string{"theta=1.5"}, "theta = 1.5"},
		{[]string{"sweeps=two"}, `option "sweeps": "two" is not an integer`},
		{[]string{"sweeps=0", "sweeps=50"}, "sweeps = 50"},
		{[]string{"cycle=f"}, `option "cycle"`},
		{[]string{"damping=2"}, "damping = 2"},
		{[]string{"block=-1"}, "block = -1"},
		{[]string{"tol=0.5", "tol=2"}, "tol = 2"},
	} {
		_, err := ParseOptions(c.kv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.kv, err, c.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := fem.Poisson(2, 6).A
	clone := func(f func(a *mesh.CSR[float64])) *mesh.CSR[float64] {
		a := *good
		a.RowPtr = append([]int64(nil), good.RowPtr...)
		a.Col = append([]int32(nil), good.Col...)
		a.Val = append([]float64(nil), good.Val...)
		f(&a)
		return &a
	}
	diagIdx := func(a *mesh.CSR[float64], row int) int64 {
		for k := a.RowPtr[row]; k < a.RowPtr[row+1]; k++ {
			if int(a.Col[k]) == row {
				return k
			}
		}
		panic("no diagonal")
	}
	for _, c := range []struct {
		name string
		a    *mesh.CSR[float64]
		o    Options
		want string
	}{
		{"nil", nil, Options{}, "nil matrix"},
		{"non-square", clone(func(a *mesh.CSR[float64]) { a.Cols++ }), Options{}, "want square"},
		{"unsymmetric", clone(func(a *mesh.CSR[float64]) { a.Val[1] *= 1.5 }), Options{}, "not symmetric"},
		{"zero diagonal", clone(func(a *mesh.CSR[float64]) { a.Val[diagIdx(a, 7)] = 0 }), Options{}, "diagonal entry (7,7) is 0"},
		{"negative diagonal", clone(func(a *mesh.CSR[float64]) { a.Val[diagIdx(a, 3)] = -1 }), Options{}, "diagonal entry (3,3) is -1"},
		{"NaN", clone(func(a *mesh.CSR[float64]) { a.Val[10] = math.NaN() }), Options{}, "is NaN"},
		{"Inf", clone(func(a *mesh.CSR[float64]) { a.Val[12] = math.Inf(1) }), Options{}, "is +Inf"},
		{"column out of range", clone(func(a *mesh.CSR[float64]) { a.Col[5] = 99 }), Options{}, "Col[5] = 99 out of range"},
		{"short RowPtr", clone(func(a *mesh.CSR[float64]) { a.RowPtr = a.RowPtr[:3] }), Options{}, "len(RowPtr)"},
		{"no values", clone(func(a *mesh.CSR[float64]) { a.Val = nil }), Options{}, "len(Val) = 0"},
		{"block size", good, Options{BlockSize: 2}, "not a multiple of the block size 2"},
		{"nullspace length", good, Options{Nullspace: Vectors, Vectors: [][]float64{make([]float64, 5)}}, "near-nullspace vector 0 has length 5, want 25"},
		{"nullspace empty", good, Options{Nullspace: Vectors}, "Options.Vectors is empty"},
		{"nullspace NaN", good, Options{Nullspace: Vectors, Vectors: [][]float64{append(make([]float64, 24), math.NaN())}}, "entry 24 is NaN"},
		{"rbm without coords", good, Options{Nullspace: RigidBody, Dim: 2, BlockSize: 1}, "block size = dimension"},
		{"rbm coords length", fem.Elasticity(2).A, Options{Nullspace: RigidBody, Dim: 3, BlockSize: 3, Coords: make([]float64, 7)}, "7 coordinates for 18 nodes"},
		{"bad option", good, Options{Sweeps: -1}, "sweeps = -1"},
	} {
		_, err := New(c.a, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestSolveInputErrors(t *testing.T) {
	pc, err := New(fem.Poisson(2, 8).A, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := pc.Rows()
	if _, err := pc.Solve(make([]float64, n-1), make([]float64, n)); err == nil {
		t.Error("Solve accepted a short b")
	}
	b := make([]float64, n)
	b[3] = math.NaN()
	if _, err := pc.Solve(b, make([]float64, n)); err == nil || !strings.Contains(err.Error(), "b[3] is NaN") {
		t.Errorf("NaN in b: error %v", err)
	}
	if err := pc.Apply(make([]float64, n), make([]float64, n+1)); err == nil {
		t.Error("Apply accepted a long z")
	}
	// b = 0 gives x = 0 at once.
	x := randVec(n, 1)
	res, err := pc.Solve(make([]float64, n), x)
	if err != nil || !res.Converged || res.Iterations != 0 || norm(x) != 0 {
		t.Errorf("b = 0: %+v, %v, ‖x‖ = %g", res, err, norm(x))
	}
}

// An indefinite matrix with a positive diagonal makes PCG break down; the
// breakdown is reported, not looped on.
func TestBreakdownReported(t *testing.T) {
	// Pairs (2i, 2i+1) coupled by [[1, 2], [2, 1]] (eigenvalues 3 and −1)
	// and weakly to the next pair.
	const pairs = 200
	n := 2 * pairs
	a := &mesh.COO[float64]{Rows: n, Cols: n}
	add := func(i, j int, v float64) {
		a.Row, a.Col, a.Val = append(a.Row, int32(i)), append(a.Col, int32(j)), append(a.Val, v)
	}
	for p := 0; p < pairs; p++ {
		i := 2 * p
		add(i, i, 1)
		add(i+1, i+1, 1)
		add(i, i+1, 2)
		add(i+1, i, 2)
		if p+1 < pairs {
			add(i+1, i+2, -0.1)
			add(i+2, i+1, -0.1)
		}
	}
	m := cooCSR(a)
	// Unsmoothed aggregates of whole pairs keep the coarse operator
	// positive definite, so setup succeeds and only PCG can notice.
	pc, err := New(m, Options{MaxCoarse: 20, Prolongation: Tentative})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = float64(1 - 2*(i%2)) // along the negative eigenvectors
	}
	_, err = pc.Solve(b, make([]float64, n))
	if !errors.Is(err, ErrBreakdown) {
		t.Fatalf("error %v, want ErrBreakdown", err)
	}
}

func cooCSR(a *mesh.COO[float64]) *mesh.CSR[float64] {
	c := &mesh.CSR[float64]{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int64, a.Rows+1)}
	for _, r := range a.Row {
		c.RowPtr[r+1]++
	}
	for i := 0; i < a.Rows; i++ {
		c.RowPtr[i+1] += c.RowPtr[i]
	}
	c.Col = make([]int32, len(a.Row))
	c.Val = make([]float64, len(a.Row))
	pos := append([]int64(nil), c.RowPtr...)
	for k, r := range a.Row {
		c.Col[pos[r]], c.Val[pos[r]] = a.Col[k], a.Val[k]
		pos[r]++
	}
	return c
}
