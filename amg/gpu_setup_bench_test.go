package amg

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// setupBenchProblems are Q1 Poisson 101³ (1M rows) and Q1 elasticity,
// or smaller ones with -short; MISGRID_SETUP_BENCH=name,... picks some,
// the P1 problems on the Gmsh part among them: tetpart2 (Poisson on the
// part refined twice, 3.1M nodes) and tetelast1 (elasticity on the part
// refined once, 1.3M rows).
func setupBenchProblems(b *testing.B) []testProblem {
	names := []string{"poisson101", "elasticity48", "elasticity69"}
	if testing.Short() {
		names = []string{"poisson40", "elasticity16"}
	}
	if pick := os.Getenv("MISGRID_SETUP_BENCH"); pick != "" {
		names = strings.Split(pick, ",")
	}
	var ps []testProblem
	for _, name := range names {
		pr, err := benchProblem(name)
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, testProblem{name, pr})
	}
	return ps
}

// benchProblem builds a problem by name: poissonN and elasticityN on
// uniform grids, tetpartL and tetelastL on bench/meshes/part.msh.gz
// refined L times.
func benchProblem(name string) (*fem.Problem, error) {
	var n int
	for _, k := range []struct {
		prefix string
		build  func(n int) (*fem.Problem, error)
	}{
		{"poisson", func(n int) (*fem.Problem, error) { return fem.Poisson(3, n), nil }},
		{"elasticity", func(n int) (*fem.Problem, error) { return fem.Elasticity(n), nil }},
		{"tetpart", func(l int) (*fem.Problem, error) { return partProblem(l, fem.TetPoisson) }},
		{"tetelast", func(l int) (*fem.Problem, error) { return partProblem(l, fem.TetElasticity) }},
	} {
		if v, ok := strings.CutPrefix(name, k.prefix); ok {
			if _, err := fmt.Sscanf(v, "%d", &n); err != nil {
				return nil, fmt.Errorf("benchmark problem %q: want a size after %q", name, k.prefix)
			}
			return k.build(n)
		}
	}
	return nil, fmt.Errorf("benchmark problem %q: unknown (poissonN, elasticityN, tetpartL, tetelastL)", name)
}

// partProblem assembles build's P1 problem on the Gmsh part refined
// levels times.
func partProblem(levels int, build func(*mesh.Mesh) (*fem.Problem, error)) (*fem.Problem, error) {
	_, m, err := mesh.ReadFile("../bench/meshes/part.msh.gz")
	if err == nil && levels > 0 {
		m, err = mesh.Refine(m, mesh.RefineOptions{Levels: levels})
	}
	if err != nil {
		return nil, err
	}
	return build(m)
}

// deviceCopyRate is the device-to-device copy rate (bytes read plus
// written per second) of a 512 MiB copy, the best of five.
func deviceCopyRate(b *testing.B) float64 {
	e, err := engineOn(0)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 29
	src, err1 := e.Ctx.Alloc(n)
	dst, err2 := e.Ctx.Alloc(n)
	if err1 != nil || err2 != nil {
		b.Fatal(err1, err2)
	}
	defer src.Free()
	defer dst.Free()
	s, err := e.Ctx.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	best := time.Hour
	for range 5 {
		e0, _ := e.Ctx.NewEvent()
		e1, _ := e.Ctx.NewEvent()
		if err := errorsOf(e0.Record(s), cuda.CopyDeviceAsync(dst, 0, src, 0, n, s), e1.Record(s), e1.Synchronize()); err != nil {
			b.Fatal(err)
		}
		t, err := cuda.Elapsed(e0, e1)
		if err != nil {
			b.Fatal(err)
		}
		best = min(best, t)
		e0.Close()
		e1.Close()
	}
	return 2 * n / best.Seconds()
}

// pinnedRate is the rate of a 256 MiB copy from pinned host memory to
// the device (bytes per second), the best of five: the bus's.
func pinnedRate(b *testing.B) float64 {
	e, err := engineOn(0)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 28
	h, err1 := e.Ctx.AllocHost(n)
	d, err2 := e.Ctx.Alloc(n)
	s, err3 := e.Ctx.NewStream()
	if err := errorsOf(err1, err2, err3); err != nil {
		b.Fatal(err)
	}
	defer h.Free()
	defer d.Free()
	defer s.Close()
	best := time.Hour
	for range 5 {
		t0 := time.Now()
		if err := errorsOf(d.CopyFromHostAsync(0, h, 0, n, s), s.Synchronize()); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	return n / best.Seconds()
}

// phaseFloors is what each phase of a device setup must move at least,
// in seconds at the measured rates: the input over the bus; on the
// device, every level's operator read once per pass over it (strength,
// eigen's steps, the prolongator's product, the Galerkin products' two
// reads) and what each writes once.
func phaseFloors(pc *Preconditioner, bus, dev float64, job string) map[string]float64 {
	n, nz := float64(pc.op.rows), float64(pc.op.nnz())
	f := map[string]float64{
		"upload": (8*n + 12*nz) / bus,
		"check":  (8*n + 3*(12*nz+4*n)) / dev, // in_check, two SpMVs
		"input":  (2*12*nz + 16*float64(pc.levels[0].a.nnz())) / dev,
	}
	// A numeric Update sends the values alone, or nothing where they are
	// in device memory, and runs no input pass.
	switch job {
	case "update/gpu", "update-pinned/gpu":
		f["upload"] = 8 * nz / bus
		delete(f, "input")
	case "update-device/gpu":
		delete(f, "upload")
		delete(f, "input")
	}
	steps := float64(pc.opts.EigenSteps)
	for _, l := range pc.levels {
		if l.p == nil {
			continue
		}
		a := float64(12*l.a.nnz() + 4*l.a.rows)
		p := float64(12*l.p.nnz() + 4*l.p.rows)
		f["strength"] += (a + 8*float64(l.a.rows)) / dev
		f["eigen"] += steps * a / dev
		f["prolongator"] += (a + 2*p) / dev
		f["galerkin"] += (2*a + 3*p) / dev
	}
	return f
}

func errorsOf(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// setupBytes is what a setup must move at least: every level's operator
// read once and its prolongator and the next operator written once.
func setupBytes(pc *Preconditioner) float64 {
	s := 0
	for _, l := range pc.levels {
		s += 12*l.a.nnz() + 4*l.a.rows
		if l.p != nil {
			s += 12*l.p.nnz() + 4*l.p.rows
		}
	}
	return float64(s)
}

// BenchmarkGPUSetup times New on the device (ns/op) beside the CPU's,
// setup plus PCG to 1e-8, and a numeric Update with Reuse, from host
// values (update) and from values already in device memory
// (UpdateDevice of a NewDevice hierarchy: update-device) or from host
// values page-locked in place (PinValues: update-pinned); each reports
// its floor (setupBytes at the device copy rate of the same run) and
// the setup's phases in ms, each phase with its own device work where
// MISGRID_SETUP_SYNC=1 (a wait at the end of every phase).
func BenchmarkGPUSetup(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skipf("no usable GPU: %v", err)
	}
	rate, bus := deviceCopyRate(b), pinnedRate(b)
	b.Logf("device copy rate %.0f GB/s, pinned host to device %.1f GB/s", rate/1e9, bus/1e9)
	if os.Getenv("MISGRID_SETUP_SYNC") == "1" {
		e, err := engineOn(0)
		if err != nil {
			b.Fatal(err)
		}
		phaseSync = func() { _ = e.Ctx.Synchronize() }
		defer func() { phaseSync = nil }()
	}
	for _, tp := range setupBenchProblems(b) {
		a := mustCSR(b, tp.pr.A)
		rhs := mulDense(a, randVec(a.rows, 3))
		for _, job := range []string{"setup/cpu", "setup/gpu", "solve/gpu", "update/gpu", "update-pinned/gpu", "update-device/gpu"} {
			b.Run(tp.name+"/"+job, func(b *testing.B) {
				benchSetupJob(b, tp, job, a, rhs, rate, bus)
			})
		}
	}
}

// benchSetupJob runs one job of BenchmarkGPUSetup.
func benchSetupJob(b *testing.B, tp testProblem, job string, a *csr, rhs []float64, rate, bus float64) {
	update := strings.HasPrefix(job, "update")
	o := problemOptions(tp.pr, Options{Device: mis.GPU, Reuse: update, PinValues: job == "update-pinned/gpu"})
	if job == "setup/cpu" {
		o.Device = mis.CPU
	}
	var m DeviceMatrix
	if job == "update-device/gpu" {
		var free func()
		m, free = deviceCopy(b, tp.pr.A, false)
		defer free()
	}
	var pc *Preconditioner
	var res *Result
	var err error
	x := make([]float64, a.rows)
	// One setup before the clock: the first in a process also pins the
	// context's Stager and loads the kernel images, which later setups
	// (a Newton step's) find ready.
	t0 := time.Now()
	if m.Val != nil {
		pc, err = NewDevice(m, o)
	} else {
		pc, err = New(tp.pr.A, o)
	}
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(t0)
	updateOnce := func() error {
		if m.Val != nil {
			return pc.UpdateDevice(m)
		}
		return pc.Update(tp.pr.A)
	}
	// And one Update, as a Newton step's second one finds it: with
	// PinValues, it page-locks the values (first_update_ms).
	var firstUpdate time.Duration
	if update {
		t0 = time.Now()
		if err = updateOnce(); err != nil {
			b.Fatal(err)
		}
		firstUpdate = time.Since(t0)
	}
	b.ResetTimer()
	n0, ns0 := devAllocs.n.Load(), devAllocs.ns.Load()
	for range b.N {
		switch {
		case update:
			err = updateOnce()
		default:
			if pc != nil {
				pc.Close()
			}
			pc, err = New(tp.pr.A, o)
		}
		if err == nil && job == "solve/gpu" {
			clear(x)
			res, err = pc.Solve(rhs, x)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(devAllocs.n.Load()-n0)/float64(b.N), "allocs/op")
	b.ReportMetric(float64(devAllocs.ns.Load()-ns0)/float64(b.N)/1e6, "alloc_ms")
	defer pc.Close()
	if o.Device == mis.GPU && !update && !pc.setupOnDevice() {
		b.Fatalf("the setup ran on the host: %v", pc.setupFallback)
	}
	st := pc.Stats()
	b.ReportMetric(setupBytes(pc)/rate*1e3, "floor_ms")
	b.ReportMetric(st.Setup.Seconds()*1e3, "setup_ms")
	for k, v := range st.Phases {
		b.ReportMetric(v.Seconds()*1e3, k+"_ms")
	}
	if pc.setupOnDevice() || update {
		for k, v := range phaseFloors(pc, bus, rate, job) {
			b.ReportMetric(v*1e3, k+"_floor_ms")
		}
	}
	if res != nil {
		b.ReportMetric(float64(res.Iterations), "its")
		b.ReportMetric(res.Elapsed.Seconds()*1e3, "solve_ms")
	}
	b.ReportMetric(float64(a.rows), "rows")
	b.ReportMetric(first.Seconds()*1e3, "first_setup_ms")
	if update {
		b.ReportMetric(firstUpdate.Seconds()*1e3, "first_update_ms")
	}
}
