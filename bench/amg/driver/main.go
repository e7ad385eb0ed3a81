// Command driver times misgrid's AMG on one Matrix Market problem for the
// bench/amg harness and measures its memory the way run.py measures
// PETSc's: the resident-set high-water mark after the first solve minus
// the resident set before setup (Linux /proc, the peak reset through
// /proc/self/clear_refs). It prints one JSON object.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mesh"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

type report struct {
	Iterations         int                `json:"iterations"`
	Converged          bool               `json:"converged"`
	Status             string             `json:"status"`
	SetupS             float64            `json:"setup_s"`
	SolveS             float64            `json:"solve_s"`
	SetupCPU           float64            `json:"setup_cpu_s"`
	SolveCPU           float64            `json:"solve_cpu_s"`
	UpdateS            float64            `json:"update_s"`
	FinalResidual      float64            `json:"final_residual"`
	OperatorComplexity float64            `json:"operator_complexity"`
	Levels             []int              `json:"levels"`
	MemMB              float64            `json:"mem_mb"`
	Phases             map[string]float64 `json:"setup_phases"`
}

func main() {
	aPath := flag.String("A", "", "matrix (Matrix Market)")
	bPath := flag.String("b", "", "right-hand side (Matrix Market array)")
	cPath := flag.String("coords", "", "node coordinates for rigid-body modes")
	repeat := flag.Int("repeat", 1, "setups and solves; the fastest times are kept")
	update := flag.Bool("update", false, "also time Update with the values doubled")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the setups and solves here")
	var opts multi
	flag.Var(&opts, "o", "AMG option key=value (repeatable)")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "driver:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*aPath, *bPath, *cPath, *repeat, *update, opts); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(1)
	}
}

func run(aPath, bPath, cPath string, repeat int, update bool, kv []string) error {
	o, err := amg.ParseOptions(kv)
	if err != nil {
		return err
	}
	a, err := readMatrix(aPath)
	if err != nil {
		return err
	}
	b, _, err := readArray(bPath)
	if err != nil {
		return err
	}
	if cPath != "" {
		xyz, cols, err := readArray(cPath)
		if err != nil {
			return err
		}
		o.Coords, o.Dim, o.Nullspace = xyz, cols, amg.RigidBody
	}
	// The solution vector is the caller's, as PETSc's is created (and
	// zeroed) before its baseline. Garbage from reading goes back to the
	// system before the baseline.
	x := make([]float64, len(b))
	for i := range x {
		x[i] = 0 // touch its pages, as VecSet does
	}
	debug.FreeOSMemory()
	rss0 := status("VmRSS")
	resetPeak()
	var rep report
	rep.SetupS, rep.SolveS, rep.UpdateS = math.Inf(1), math.Inf(1), math.Inf(1)
	rep.SetupCPU, rep.SolveCPU = math.Inf(1), math.Inf(1)
	for r := 0; r < repeat; r++ {
		t0, c0 := time.Now(), cpuSeconds()
		pc, err := amg.New(a, o)
		if err != nil {
			return err
		}
		rep.SetupS = min(rep.SetupS, time.Since(t0).Seconds())
		c1 := cpuSeconds()
		rep.SetupCPU = min(rep.SetupCPU, c1-c0)
		clear(x)
		t1 := time.Now()
		res, err := pc.Solve(b, x)
		if err != nil {
			return err
		}
		rep.SolveS = min(rep.SolveS, time.Since(t1).Seconds())
		rep.SolveCPU = min(rep.SolveCPU, cpuSeconds()-c1)
		if r == 0 {
			rep.MemMB = float64(status("VmHWM")-rss0) / 1024
			st := pc.Stats()
			rep.Iterations, rep.Converged, rep.Status = res.Iterations, res.Converged, res.Status.String()
			rep.FinalResidual, rep.OperatorComplexity = res.TrueResidual, st.OperatorComplexity
			rep.Phases = map[string]float64{}
			for k, v := range st.Phases {
				rep.Phases[k] = v.Seconds()
			}
			for _, l := range st.Levels {
				rep.Levels = append(rep.Levels, l.Rows)
			}
		}
		if update {
			a2 := *a
			a2.Val = slices.Clone(a.Val)
			for i := range a2.Val {
				a2.Val[i] *= 2
			}
			t0 := time.Now()
			if err := pc.Update(&a2); err != nil {
				return err
			}
			rep.UpdateS = min(rep.UpdateS, time.Since(t0).Seconds())
		}
	}
	if !update {
		rep.UpdateS = 0
	}
	if p := os.Getenv("AMG_DRIVER_HEAP"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = pprof.WriteHeapProfile(f)
			f.Close()
		}
		if err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// cpuSeconds returns the user and system time of the process so far
// (every thread, the garbage collector's included): on a shared machine
// it varies less than the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// status returns a kB field of /proc/self/status.
func status(key string) int {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// resetPeak sets VmHWM to the current resident set.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// readMatrix reads a Matrix Market file into CSR with sorted rows, as a
// FEM code's assembled matrix comes.
func readMatrix(path string) (*mesh.CSR[float64], error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := mesh.ReadMatrixMarket(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a := &mesh.CSR[float64]{Rows: c.Rows, Cols: c.Cols, RowPtr: make([]int64, c.Rows+1)}
	for _, r := range c.Row {
		a.RowPtr[r+1]++
	}
	for i := 0; i < c.Rows; i++ {
		a.RowPtr[i+1] += a.RowPtr[i]
	}
	a.Col, a.Val = make([]int32, len(c.Row)), make([]float64, len(c.Row))
	pos := slices.Clone(a.RowPtr[:c.Rows])
	for k, r := range c.Row {
		a.Col[pos[r]], a.Val[pos[r]] = c.Col[k], c.Val[k]
		pos[r]++
	}
	type ent struct {
		c int32
		v float64
	}
	var buf []ent
	for i := 0; i < a.Rows; i++ {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		buf = buf[:0]
		for k := lo; k < hi; k++ {
			buf = append(buf, ent{a.Col[k], a.Val[k]})
		}
		slices.SortFunc(buf, func(x, y ent) int { return int(x.c) - int(y.c) })
		for j, e := range buf {
			a.Col[lo+int64(j)], a.Val[lo+int64(j)] = e.c, e.v
		}
	}
	return a, nil
}

func readArray(path string) ([]float64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	_, cols, d, err := mesh.ReadMatrixMarketArray(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, cols, nil
}
