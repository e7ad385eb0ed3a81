package amg

import (
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions([]string{"smoother=jacobi", "cycle=W", "theta=0.08", "block_size=3", "nullspace=rbm",
		"aggregation=pairwise", "sweeps=3", "max_coarse=200", "tol=1e-6", "maxit=50", " threads = 2 ", "prolongation=tentative"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Smoother: L1Jacobi, Cycle: WCycle, Theta: 0.08, BlockSize: 3, Nullspace: RigidBody,
		Aggregation: Pairwise, Sweeps: 3, MaxCoarse: 200, Tol: 1e-6, MaxIter: 50, Workers: 2, Prolongation: Tentative}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("got %+v\nwant %+v", o, want)
	}
	// The text form reads back to the same options.
	back, err := ParseOptions(o.KeyValues())
	if err != nil || !reflect.DeepEqual(back, o.fill()) {
		t.Errorf("KeyValues %q read back as %+v, %v", o.KeyValues(), back, err)
	}
	var zero Options
	if err := zero.Parse(); err != nil {
		t.Errorf("zero options rejected: %v", err)
	}
	// Every key accepts its documented default, which is what a zero field
	// means: setting it changes nothing that Setup sees.
	zd, _ := zero.withDefaults()
	for _, k := range OptionKeys() {
		var o Options
		if err := o.Set(k.Key, k.Default); err != nil {
			t.Errorf("key %q rejects its default %q: %v", k.Key, k.Default, err)
		}
		od, _ := o.withDefaults()
		if !reflect.DeepEqual(od, zd) {
			t.Errorf("key %q = its default %q changes the options: %+v", k.Key, k.Default, od)
		}
	}
}

func TestParseOptionsErrors(t *testing.T) {
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"smooth=jacobi"}, `unknown option "smooth"`},
		{[]string{"block=2"}, `unknown option "block": the key is "block_size"`},
		{[]string{"workers=2"}, `unknown option "workers": the key is "threads"`},
		{[]string{"smoother=sor"}, `option smoother="sor": want chebyshev, jacobi, gs`},
		{[]string{"theta"}, `option 0 "theta": want key=value`},
		{[]string{"theta=x"}, `option theta="x": want a number in [0,1)`},
		{[]string{"theta=NaN"}, `option theta="NaN"`},
		{[]string{"theta=1.5"}, "theta = 1.5"},
		{[]string{"sweeps=two"}, `option sweeps="two": want an integer in [1, 20]`},
		{[]string{"sweeps=0", "sweeps=50"}, `option sweeps="0"`},
		{[]string{"cycle=f"}, `option cycle="f"`},
		{[]string{"damping=2"}, "damping = 2"},
		{[]string{"block_size=-1"}, `option block_size="-1"`},
		{[]string{"tol=0.5", "tol=2"}, "tol = 2"},
		{[]string{"device=gpu:x"}, `option device="gpu:x"`},
	} {
		_, err := ParseOptions(c.kv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.kv, err, c.want)
		}
	}
}

// A refused value leaves the options as they were.
func TestSetKeepsOnError(t *testing.T) {
	o := Options{Tol: 1e-6}
	if err := o.Set("tol", "3"); err == nil || o.Tol != 1e-6 {
		t.Errorf("tol=3: error %v, Tol now %g", err, o.Tol)
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

// docs/amg.md's option table lists every key with the registry's default.
func TestOptionsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/amg.md")
	if err != nil {
		t.Skip(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, "|")
		if len(f) > 4 && strings.HasPrefix(strings.TrimSpace(f[1]), "`") {
			rows[strings.Trim(strings.TrimSpace(f[1]), "`")] = strings.TrimSpace(f[3])
		}
	}
	for _, k := range OptionKeys() {
		if def, ok := rows[k.Key]; !ok || def != k.Default {
			t.Errorf("docs/amg.md: key %s has default %q, the registry %q", k.Key, def, k.Default)
		}
	}
}
