package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

const solveUsage = `usage: misgrid solve [flags] A.mtx

Solves A·x = b with conjugate gradients preconditioned by smoothed-
aggregation AMG on MIS-2 aggregates, and prints the hierarchy (levels,
rows, nonzeros, operator and grid complexity), the convergence history
and the setup and solve times. Without -b, b = A·x* for a fixed
pseudo-random x*, and the error against x* is reported too. Flags go
before A.mtx.

AMG options are flags named by their keys, the keys of the C ABI's
options strings and of amg.Options.Set. -json prints the report in the
schema of docs/cli.md.
`

// solveConfig holds the flags of the solve command.
type solveConfig struct {
	b, coords, plot, out string
	opts                 amg.Options
	json, update         bool
}

// solveRenamed are flags of earlier versions and names of other
// interfaces, refused with the flag to use.
var solveRenamed = map[string]string{"x": "o", "block": "block_size", "workers": "threads"}

func solveFlags() (*flag.FlagSet, *solveConfig) {
	c := &solveConfig{}
	fs := newFlagSet("solve", solveUsage)
	fs.StringVar(&c.b, "b", "", "right-hand side, Matrix Market array `file`")
	fs.StringVar(&c.coords, "coords", "", "node coordinates, Matrix Market array `file` (nodes × dim), for -nullspace rbm")
	fs.StringVar(&c.out, "o", "", "write the solution to `file` (.mtx, Matrix Market array)")
	fs.BoolVar(&c.json, "json", false, "print the results as JSON instead of text")
	fs.BoolVar(&c.update, "update", false, "also time a numeric re-setup (values doubled, same pattern) and solve again")
	fs.StringVar(&c.plot, "plot", "", "draw the residual history to `file` (.png, .svg, .pdf)")
	addOptions(fs, solveUsage, solveRenamed, optionGroup{"AMG options", amg.OptionKeys(), c.opts.Set})
	return fs, c
}

// solveReport is the -json output; docs/cli.md documents its schema,
// and its keys stay stable.
type solveReport struct {
	Matrix             string             `json:"matrix"`
	Rows               int                `json:"rows"`
	Nonzeros           int                `json:"nonzeros"`
	Options            map[string]string  `json:"options"`
	Levels             []levelReport      `json:"levels"`
	OperatorComplexity float64            `json:"operator_complexity"`
	GridComplexity     float64            `json:"grid_complexity"`
	ReadSeconds        float64            `json:"read_seconds"`
	SetupSeconds       float64            `json:"setup_seconds"`
	SetupPhases        map[string]float64 `json:"setup_phases"`
	SolveSeconds       float64            `json:"solve_seconds"`
	Iterations         int                `json:"iterations"`
	Converged          bool               `json:"converged"`
	Residuals          []float64          `json:"residuals"`
	FinalResidual      float64            `json:"final_residual"`
	Error              *float64           `json:"relative_error,omitempty"`
	UpdateSeconds      *float64           `json:"update_seconds,omitempty"`
	UpdateIterations   *int               `json:"update_iterations,omitempty"`
}

// levelReport is one level of the hierarchy in the -json output.
type levelReport struct {
	Rows       int     `json:"rows"`
	Nonzeros   int     `json:"nonzeros"`
	BlockSize  int     `json:"block_size"`
	Aggregates int     `json:"aggregates"`
	Lambda     float64 `json:"lambda_max"`
	Dropped    int     `json:"dropped"`
}

func runSolve(args []string, stdout, stderr io.Writer) error {
	fs, c := solveFlags()
	rest, err := parseArgs(fs, args, stdout, 1, "A.mtx")
	if err != nil {
		return err
	}
	path := rest[0]
	opts := c.opts
	if c.out != "" && strings.ToLower(filepath.Ext(c.out)) != ".mtx" {
		return fmt.Errorf("solve: -o %q: the solution is written as Matrix Market, want a .mtx file (AMG options are flags: -theta 0.1)", c.out)
	}
	for _, out := range []string{c.out, c.plot} {
		if err := checkWritable(out); err != nil {
			return fmt.Errorf("solve: %w", err)
		}
	}
	switch ext := strings.ToLower(filepath.Ext(c.plot)); {
	case c.plot == "", ext == ".png", ext == ".svg", ext == ".pdf":
	default:
		return fmt.Errorf("solve: -plot %q: want a .png, .svg or .pdf file", c.plot)
	}
	if opts.Nullspace == amg.RigidBody && c.coords == "" {
		return errors.New("solve: -nullspace rbm needs -coords")
	}

	t0 := time.Now()
	a, b, xs, err := readSolveInputs(c, path, &opts)
	if err != nil {
		return fmt.Errorf("solve: %w", err)
	}
	n := a.Rows
	read := time.Since(t0)

	pc, err := amg.New(a, opts)
	if err != nil {
		return fmt.Errorf("solve: %w", err)
	}
	st := pc.Stats()
	x := make([]float64, n)
	res, err := pc.Solve(b, x)
	if err != nil {
		return fmt.Errorf("solve: %w", err)
	}
	rep := solveReport{
		Matrix: path, Rows: n, Nonzeros: st.Levels[0].Nonzeros, Options: optionMap(opts),
		OperatorComplexity: st.OperatorComplexity, GridComplexity: st.GridComplexity,
		ReadSeconds: read.Seconds(), SetupSeconds: st.Setup.Seconds(), SetupPhases: map[string]float64{},
		SolveSeconds: res.Elapsed.Seconds(), Iterations: res.Iterations, Converged: res.Converged,
		Residuals: res.Residuals, FinalResidual: trueResidual(a, x, b),
	}
	for k, v := range st.Phases {
		rep.SetupPhases[k] = v.Seconds()
	}
	for _, l := range st.Levels {
		rep.Levels = append(rep.Levels, levelReport{l.Rows, l.Nonzeros, l.BlockSize, l.Aggregates, l.Lambda, l.Dropped})
	}
	if xs != nil {
		e := relErr(x, xs)
		rep.Error = &e
	}
	if c.out != "" {
		if err := createFile(c.out, func(w io.Writer) error { return mesh.WriteMatrixMarketArray(w, n, 1, x) }); err != nil {
			return fmt.Errorf("solve: %w", err)
		}
	}
	if c.update {
		us, it, err := timeUpdate(pc, a, b)
		if err != nil {
			return fmt.Errorf("solve: %w", err)
		}
		rep.UpdateSeconds, rep.UpdateIterations = &us, &it
	}
	if c.plot != "" {
		if err := plotConvergence(res.Residuals, path, c.plot); err != nil {
			return fmt.Errorf("solve: %w", err)
		}
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(rep)
	}
	printSolve(stdout, &rep, &st)
	if !res.Converged {
		return fmt.Errorf("solve: not converged in %d iterations (relative residual %.3g)", res.Iterations, res.Residuals[len(res.Residuals)-1])
	}
	return nil
}

// readSolveInputs reads the matrix, the right-hand side (or makes one from
// a known solution xs) and the coordinates, which go into opts.
func readSolveInputs(c *solveConfig, path string, opts *amg.Options) (a *mesh.CSR[float64], b, xs []float64, err error) {
	if a, err = readCSR(path); err != nil {
		return nil, nil, nil, err
	}
	n := a.Rows
	if a.Rows != a.Cols {
		return nil, nil, nil, fmt.Errorf("%s: matrix is %d×%d, want square", path, a.Rows, a.Cols)
	}
	if c.b != "" {
		rows, cols, data, err := readArray(c.b)
		if err != nil {
			return nil, nil, nil, err
		}
		if rows != n || cols != 1 {
			return nil, nil, nil, fmt.Errorf("%s: right-hand side is %d×%d, want %d×1", c.b, rows, cols, n)
		}
		b = data
	} else {
		xs = make([]float64, n)
		for i := range xs {
			xs[i] = 2*float64(mis.Hash32(int32(i), 12345))/(1<<32) - 1
		}
		b = mulCSR(a, xs)
	}
	if c.coords != "" {
		rows, cols, data, err := readArray(c.coords)
		if err != nil {
			return nil, nil, nil, err
		}
		opts.Coords, opts.Dim = data, cols
		if bs := max(opts.BlockSize, 1); rows*bs != n {
			return nil, nil, nil, fmt.Errorf("%s: %d nodes × -block_size %d ≠ %d matrix rows", c.coords, rows, bs, n)
		}
	}
	return a, b, xs, nil
}

// timeUpdate gives pc new values on the same pattern, as in a Newton or
// time step: the matrix and right-hand side doubled, so the solution is
// the same. It returns the re-setup time and the iterations after it.
func timeUpdate(pc *amg.Preconditioner, a *mesh.CSR[float64], b []float64) (float64, int, error) {
	a2 := *a
	a2.Val = slices.Clone(a.Val)
	for i := range a2.Val {
		a2.Val[i] *= 2
	}
	b2 := slices.Clone(b)
	for i := range b2 {
		b2[i] *= 2
	}
	if err := pc.Update(&a2); err != nil {
		return 0, 0, fmt.Errorf("update: %w", err)
	}
	us := pc.Stats().Setup.Seconds()
	r2, err := pc.Solve(b2, make([]float64, len(b2)))
	if err != nil {
		return 0, 0, fmt.Errorf("after update: %w", err)
	}
	return us, r2.Iterations, nil
}

// defaultAMG is the text form of the zero amg.Options: the text report
// lists only the options that differ from it.
var defaultAMG = optionMap(amg.Options{})

// optionMap is the text form of o, key by key, with zero fields shown as
// the defaults they mean.
func optionMap(o amg.Options) map[string]string {
	m := map[string]string{}
	for _, kv := range o.KeyValues() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func printSolve(w io.Writer, r *solveReport, st *amg.Stats) {
	fmt.Fprintf(w, "matrix %s: %d rows, %d nonzeros (read in %.3f s)\n", r.Matrix, r.Rows, r.Nonzeros, r.ReadSeconds)
	var set []string
	for k, v := range r.Options {
		if defaultAMG[k] != v {
			set = append(set, k+"="+v)
		}
	}
	if len(set) > 0 {
		slices.Sort(set)
		fmt.Fprintf(w, "options: %s\n", strings.Join(set, " "))
	}
	fmt.Fprintf(w, "hierarchy: %d levels, operator complexity %.3f, grid complexity %.3f\n", len(r.Levels), r.OperatorComplexity, r.GridComplexity)
	if d := r.Levels[0].Dropped; d > 0 {
		fmt.Fprintf(w, "  (%d round-off entries below drop_tol left out of the hierarchy, kept in CG)\n", d)
	}
	fmt.Fprintf(w, "  %5s %10s %12s %6s %10s %10s\n", "level", "rows", "nonzeros", "block", "aggregates", "λmax(D⁻¹A)")
	for i, l := range r.Levels {
		lam := "-"
		if l.Lambda > 0 {
			lam = fmt.Sprintf("%.3f", l.Lambda)
		}
		fmt.Fprintf(w, "  %5d %10d %12d %6d %10d %10s\n", i, l.Rows, l.Nonzeros, l.BlockSize, l.Aggregates, lam)
	}
	phases := make([]string, 0, len(st.Phases))
	for k := range st.Phases {
		phases = append(phases, k)
	}
	// Pipeline order first (amg's phase names), the rest by name.
	order := []string{"open", "input", "check", "upload", "theta", "strength", "mis", "aggregate", "tentative", "eigen",
		"prolongator", "download", "galerkin", "wait", "smoother", "coarse", "close"}
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(phases, func(a, b string) int {
		if c := rank(a) - rank(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var ps []string
	for _, k := range phases {
		ps = append(ps, fmt.Sprintf("%s %.3f", k, st.Phases[k].Seconds()))
	}
	fmt.Fprintf(w, "setup %.3f s (%s)\n", r.SetupSeconds, strings.Join(ps, ", "))
	fmt.Fprintln(w, "PCG relative residual ‖b−Ax‖/‖b‖:")
	for k, v := range r.Residuals {
		fmt.Fprintf(w, "  %4d  %.3e\n", k, v)
	}
	state := "converged"
	if !r.Converged {
		state = "NOT converged"
	}
	fmt.Fprintf(w, "%s in %d iterations, solve %.3f s, true relative residual %.3e", state, r.Iterations, r.SolveSeconds, r.FinalResidual)
	if r.Error != nil {
		fmt.Fprintf(w, ", relative error %.3e", *r.Error)
	}
	fmt.Fprintln(w)
	if r.UpdateSeconds != nil {
		fmt.Fprintf(w, "re-setup with new values %.3f s, then %d iterations\n", *r.UpdateSeconds, *r.UpdateIterations)
	}
}

func readCSR(path string) (*mesh.CSR[float64], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	coo, err := mesh.ReadMatrixMarket(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if coo.Val == nil {
		return nil, fmt.Errorf("%s: a pattern matrix has no values to solve with", path)
	}
	a, err := mesh.COOToCSR(coo, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

func readArray(path string) (int, int, []float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, nil, err
	}
	defer f.Close()
	r, c, d, err := mesh.ReadMatrixMarketArray(f)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, c, d, nil
}

func mulCSR(a *mesh.CSR[float64], x []float64) []float64 {
	y := make([]float64, a.Rows)
	for i := 0; i < a.Rows; i++ {
		s := 0.0
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			s += a.Val[k] * x[a.Col[k]]
		}
		y[i] = s
	}
	return y
}

func trueResidual(a *mesh.CSR[float64], x, b []float64) float64 {
	ax := mulCSR(a, x)
	var rr, bb float64
	for i := range b {
		rr += (b[i] - ax[i]) * (b[i] - ax[i])
		bb += b[i] * b[i]
	}
	if bb == 0 {
		return math.Sqrt(rr)
	}
	return math.Sqrt(rr / bb)
}

func relErr(x, xs []float64) float64 {
	var ee, ss float64
	for i := range x {
		ee += (x[i] - xs[i]) * (x[i] - xs[i])
		ss += xs[i] * xs[i]
	}
	return math.Sqrt(ee / ss)
}

// roundLogTicks are gonum's log-scale ticks labelled with three
// significant digits: the powers of ten come out of the scale as
// 9.999999999999999e-05, and their labels should read 0.0001.
type roundLogTicks struct{}

func (roundLogTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 3, 64)
		}
	}
	return ts
}

// plotConvergence draws the relative residual per iteration on a log axis.
func plotConvergence(res []float64, title, path string) error {
	p := plot.New()
	p.Title.Text = "PCG with misgrid AMG: " + title
	p.X.Label.Text = "iteration"
	p.Y.Label.Text = "‖b − Ax‖ / ‖b‖"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = roundLogTicks{}
	pts := make(plotter.XYs, 0, len(res))
	for k, r := range res {
		if r > 0 {
			pts = append(pts, plotter.XY{X: float64(k), Y: r})
		}
	}
	if len(pts) == 0 {
		return errors.New("plot: no positive residuals to draw")
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	p.Add(l, s, plotter.NewGrid())
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
