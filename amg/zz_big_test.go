package amg

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mis"
)

func TestBig(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BIGN"))
	if n == 0 {
		t.Skip()
	}
	var pr *fem.Problem
	o := Options{}
	o.Apply([]string{})
	if os.Getenv("ELAST") != "" {
		pr = fem.Elasticity(n)
		o.BlockSize, o.Nullspace = 3, RigidBody
	} else {
		pr = fem.Poisson(3, n)
	}
	if s := os.Getenv("OPTS"); s != "" {
		for _, kv := range splitComma(s) {
			if err := o.Set(splitKV(kv)); err != nil {
				t.Fatal(err)
			}
		}
	}
	o.Coords, o.Dim = pr.Coords, pr.Dim
	pc, err := New(pr.A, o)
	if err != nil {
		t.Fatal(err)
	}
	nr := pr.A.Rows
	xs := make([]float64, nr)
	for i := range xs {
		xs[i] = float64(mis.Hash32(int32(i), 7))/(1<<32) - 0.5
	}
	m, _ := fromMesh(pr.A)
	b := make([]float64, nr)
	pc.pool.mulVec(m, xs, b)
	x := make([]float64, nr)
	res, err := pc.Solve(b, x)
	if err != nil {
		t.Fatal(err)
	}
	st := pc.Stats()
	t.Logf("n=%d nnz=%d its=%d conv=%v oc=%.3f gc=%.3f setup=%v solve=%v", nr, m.nnz(), res.Iterations, res.Converged, st.OperatorComplexity, st.GridComplexity, st.Setup, res.Elapsed)
	for _, l := range st.Levels {
		t.Logf("  %+v", l)
	}
	for k, v := range st.Phases {
		t.Logf("  %s %v", k, v)
	}
	t0 := time.Now()
	for i := 0; i < 10; i++ {
		pc.pool.mulVec(m, xs, b)
	}
	t.Logf("spmv %v", time.Since(t0)/10)
	t0 = time.Now()
	if err := pc.Update(pr.A); err != nil {
		t.Fatal(err)
	}
	t.Logf("update %v", time.Since(t0))
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func splitKV(s string) (string, string) {
	for i := range s {
		if s[i] == '=' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}
