package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// laplace2D writes the 5-point Laplacian on an m×m grid to dir/A.mtx, and
// the grid coordinates to dir/c.mtx.
func laplace2D(t *testing.T, dir string, m int) (string, string) {
	t.Helper()
	a := &mesh.COO[float64]{Rows: m * m, Cols: m * m}
	var xy []float64
	for j := 0; j < m; j++ {
		for i := 0; i < m; i++ {
			v := int32(j*m + i)
			xy = append(xy, float64(i), float64(j))
			a.Row, a.Col, a.Val = append(a.Row, v), append(a.Col, v), append(a.Val, 4)
			for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
				x, y := i+d[0], j+d[1]
				if x < 0 || y < 0 || x >= m || y >= m {
					continue
				}
				a.Row, a.Col, a.Val = append(a.Row, v), append(a.Col, int32(y*m+x)), append(a.Val, -1)
			}
		}
	}
	ap, cp := filepath.Join(dir, "A.mtx"), filepath.Join(dir, "c.mtx")
	if err := createFile(ap, func(w io.Writer) error { return mesh.WriteMatrixMarket(w, a) }); err != nil {
		t.Fatal(err)
	}
	if err := createFile(cp, func(w io.Writer) error { return mesh.WriteMatrixMarketArray(w, m*m, 2, xy) }); err != nil {
		t.Fatal(err)
	}
	return ap, cp
}

func TestSolveJSON(t *testing.T) {
	dir := t.TempDir()
	ap, _ := laplace2D(t, dir, 40)
	var out, errb bytes.Buffer
	if err := runSolve([]string{"-json", "-update", "-max_coarse", "50", ap}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var rep solveReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !rep.Converged || rep.Iterations > 20 || rep.Iterations < 2 {
		t.Errorf("converged %v in %d iterations, want convergence in 2..20", rep.Converged, rep.Iterations)
	}
	if len(rep.Levels) < 2 || rep.Levels[0].Rows != 1600 {
		t.Errorf("levels %+v, want ≥ 2 with 1600 fine rows", rep.Levels)
	}
	if rep.FinalResidual > 1e-7 || rep.Error == nil || *rep.Error > 1e-5 {
		t.Errorf("final residual %g, error %v", rep.FinalResidual, rep.Error)
	}
	if rep.Options["max_coarse"] != "50" || rep.Options["smoother"] != "chebyshev" || len(rep.Options) != len(defaultAMG) {
		t.Errorf("options %v, want every key with max_coarse=50", rep.Options)
	}
	// Every key of the report, at any depth, is snake_case.
	var raw any
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k != strings.ToLower(k) || strings.ContainsAny(k, " -") {
					t.Errorf("JSON key %q is not snake_case", k)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(raw)
	if rep.UpdateIterations == nil || *rep.UpdateIterations != rep.Iterations {
		t.Errorf("after update %v iterations, want %d (same operator up to scale)", rep.UpdateIterations, rep.Iterations)
	}
}

func TestSolveText(t *testing.T) {
	dir := t.TempDir()
	ap, cp := laplace2D(t, dir, 30)
	png := filepath.Join(dir, "conv.png")
	xo := filepath.Join(dir, "x.mtx")
	var out bytes.Buffer
	err := runSolve([]string{"-coords", cp, "-plot", png, "-o", xo, "-max_coarse", "40", "-smoother", "jacobi", ap}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"hierarchy:", "operator complexity", "converged in", "PCG relative residual"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	for _, f := range []string{png, xo} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestSolveErrors(t *testing.T) {
	dir := t.TempDir()
	ap, _ := laplace2D(t, dir, 6)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-smoothr", "jacobi", ap}, "flag provided but not defined: -smoothr"},
		{[]string{"-theta", "abc", ap}, `invalid value "abc" for flag -theta`},
		{[]string{"-theta", "0.99", "-tol", "3", ap}, "tol = 3"},
		{[]string{"-nullspace", "rbm", ap}, "needs -coords"},
		{[]string{filepath.Join(dir, "missing.mtx")}, "missing.mtx"},
		{[]string{}, "no A.mtx given"},
		{[]string{"-b", ap, ap}, "sparse coordinate file"},
	} {
		err := runSolve(c.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// The residual plot's labels are short: 1e-08 and 0.0001, not
// 9.999999999999999e-05.
func TestPlotTickLabels(t *testing.T) {
	n := 0
	for _, tk := range (roundLogTicks{}).Ticks(3e-11, 1) {
		if tk.Label == "" {
			continue
		}
		n++
		if len(tk.Label) > 6 {
			t.Errorf("tick %g labelled %q", tk.Value, tk.Label)
		}
	}
	if n < 3 {
		t.Errorf("%d labelled ticks over 11 decades", n)
	}
}
