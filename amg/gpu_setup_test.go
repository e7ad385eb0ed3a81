package amg

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// frobDiff returns ‖a − b‖_F / ‖b‖_F, whatever the two patterns.
func frobDiff(a, b *csr) float64 {
	if a.rows != b.rows || a.cols != b.cols {
		return math.Inf(1)
	}
	var d, nb float64
	row := map[int32]float64{}
	for i := 0; i < a.rows; i++ {
		clear(row)
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			row[a.col[k]] += a.val[k]
		}
		for k := b.ptr[i]; k < b.ptr[i+1]; k++ {
			row[b.col[k]] -= b.val[k]
			nb += b.val[k] * b.val[k]
		}
		for _, x := range row {
			d += x * x
		}
	}
	return math.Sqrt(d / nb)
}

type setupVariant struct {
	name string
	kv   []string
}

func setupVariants() []setupVariant {
	return []setupVariant{
		{"default", nil},
		{"theta", []string{"theta=0.04"}},
		{"reuse", []string{"reuse=true"}},
		{"tentative", []string{"prolongation=tentative"}},
		{"jacobi", []string{"smoother=jacobi", "theta=0.02"}},
	}
}

// The device setup builds the host's hierarchy: the same levels and
// aggregates, every operator within 1e-12 (relative Frobenius), the same
// eigenvalue estimates to 1e-10, and PCG iterations ±1.
func TestGPUSetupMatchesHost(t *testing.T) {
	needGPU(t)
	for _, tp := range problems() {
		for _, v := range setupVariants() {
			t.Run(tp.name+"/"+v.name, func(t *testing.T) {
				o, err := ParseOptions(append([]string{"max_coarse=60"}, v.kv...))
				if err != nil {
					t.Fatal(err)
				}
				cpu, gpu := hostAndDevice(t, tp.pr.A, problemOptions(tp.pr, o))
				defer gpu.Close()
				compareLevels(t, cpu, gpu)
				sameSolves(t, cpu, gpu, mulDense(mustCSR(t, tp.pr.A), randVec(cpu.Rows(), 3)))
			})
		}
	}
}

// Rows longer than the setup kernels stage in shared memory take their
// other paths and give the host's levels all the same.
func TestGPUSetupLongRows(t *testing.T) {
	needGPU(t)
	for _, c := range longRowCases() {
		t.Run(c.name, func(t *testing.T) {
			cpu, gpu := hostAndDevice(t, c.a, c.o)
			defer gpu.Close()
			compareLevels(t, cpu, gpu)
		})
	}
}

// P1 problems on the Gmsh part (rows of varying length, irregular
// aggregates): the device's levels are the host's, as on the grids.
func TestGPUSetupPartMatchesHost(t *testing.T) {
	needGPU(t)
	for _, name := range []string{"tetpart0", "tetelast0"} {
		t.Run(name, func(t *testing.T) {
			pr, err := benchProblem(name)
			if err != nil {
				t.Fatal(err)
			}
			cpu, gpu := hostAndDevice(t, pr.A, problemOptions(pr, Options{}))
			defer gpu.Close()
			compareLevels(t, cpu, gpu)
			sameSolves(t, cpu, gpu, mulDense(mustCSR(t, pr.A), randVec(cpu.Rows(), 3)))
		})
	}
}

// A scattered numbering is renumbered on the device as the host
// renumbers it (the device counts the far entries, searches and
// permutes): the levels are the host's, before and after a numeric
// Update (with Options.Reuse the device maps the new values itself), the
// solve translates, and Close leaves the hierarchy whole on the host.
// Natural ordering keeps the caller's numbering.
func TestGPUSetupScattered(t *testing.T) {
	needGPU(t)
	pr := fem.Poisson(3, 40)
	a := relabel(pr.A, shuffled(pr.A.Rows, 1), 1)
	b := mulDense(mustCSR(t, a), randVec(a.Rows, 3))
	for _, c := range []struct {
		ord    Ordering
		reuse  bool
		device bool // renumbered on the device
	}{{AutoOrdering, false, true}, {NaturalOrdering, false, false}, {RCMOrdering, false, true}, {AutoOrdering, true, true}} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			cpu, gpu := hostAndDevice(t, a, Options{MaxCoarse: 60, Ordering: c.ord, Reuse: c.reuse})
			defer gpu.Close()
			_, devOrder := gpu.stats.Phases["order"]
			devOrder = devOrder && gpu.fine.val == nil
			if (gpu.perm == nil) != (c.ord == NaturalOrdering) || (cpu.perm == nil) != (gpu.perm == nil) || devOrder != c.device {
				t.Errorf("renumbered %v (on the device %v), on the host %v", gpu.perm != nil, devOrder, cpu.perm != nil)
			}
			compareLevels(t, cpu, gpu)
			sameSolves(t, cpu, gpu, b)
			// A numeric update (with Reuse, the device maps the values
			// through each entry's source).
			a2 := cloneCSR(a, func(m *mesh.CSR[float64]) {
				for i := range m.Rows {
					for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
						if m.Val[k] *= 2; int(m.Col[k]) == i {
							m.Val[k] += 0.5
						}
					}
				}
			})
			if err1, err2 := cpu.Update(a2), gpu.Update(a2); err1 != nil || err2 != nil {
				t.Fatalf("Update: %v, host %v", err2, err1)
			}
			compareLevels(t, cpu, gpu)
			if err := gpu.Close(); err != nil {
				t.Fatal(err)
			}
			sameSolves(t, cpu, gpu, b) // after Close, on the host
		})
	}
}

// With several dofs per node the host renumbers (its graph of nodes) and
// the device builds from the host's copy: the host's levels, before and
// after a numeric Update.
func TestGPUSetupHostRenumbers(t *testing.T) {
	needGPU(t)
	pr := fem.Elasticity(12)
	cpu, gpu := hostAndDevice(t, pr.A, problemOptions(pr, Options{MaxCoarse: 60, Ordering: RCMOrdering, Reuse: true}))
	defer gpu.Close()
	if gpu.perm == nil || gpu.fine.val == nil {
		t.Fatal("not renumbered by the host")
	}
	compareLevels(t, cpu, gpu)
	a2 := cloneCSR(pr.A, func(m *mesh.CSR[float64]) {
		for k := range m.Val {
			m.Val[k] *= 3
		}
	})
	if err1, err2 := cpu.Update(a2), gpu.Update(a2); err1 != nil || err2 != nil {
		t.Fatalf("Update: %v, host %v", err2, err1)
	}
	compareLevels(t, cpu, gpu)
}

// The device's renumbering on small matrices (the sanitizers' case): a
// shuffled grid, and a graph Laplacian whose hubs win more vertices, and
// have longer rows, than a warp stages.
func TestGPUSetupRenumber(t *testing.T) {
	needGPU(t)
	grid := fem.Poisson(2, 40).A
	cases := map[string]*mesh.CSR[float64]{
		"grid-shuffled": relabel(grid, shuffled(grid.Rows, 5), 1),
		"hubs":          laplacian(hubGraph()),
	}
	if testing.Short() { // racecheck: a few levels of the staged paths
		grid = fem.Poisson(2, 16).A
		cases = map[string]*mesh.CSR[float64]{"grid-shuffled": relabel(grid, shuffled(grid.Rows, 5), 1)}
	}
	for name, a := range cases {
		cpu, gpu := hostAndDevice(t, a, Options{MaxCoarse: 20, Ordering: RCMOrdering})
		defer gpu.Close()
		if gpu.perm == nil || gpu.fine.val != nil {
			t.Errorf("%s: not renumbered on the device", name)
		}
		compareLevels(t, cpu, gpu)
	}
}

// laplacian is the graph Laplacian of g plus the identity.
func laplacian(g *mesh.Graph) *mesh.CSR[float64] {
	a := withDiagonal(g)
	for i := range a.rows {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			a.val[k] = -1
			if int(a.col[k]) == i {
				a.val[k] = float64(a.ptr[i+1] - a.ptr[i])
			}
		}
	}
	return a.toMesh()
}

// sameSolves solves for b from zero with the host's and the device's
// preconditioners: the device's converges, in the host's iterations ±1.
func sameSolves(t *testing.T, cpu, gpu *Preconditioner, b []float64) {
	t.Helper()
	n := len(b)
	rc, err1 := cpu.Solve(b, make([]float64, n))
	rg, err2 := gpu.Solve(b, make([]float64, n))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if d := rg.Iterations - rc.Iterations; d < -1 || d > 1 || !rg.Converged {
		t.Errorf("GPU %d iterations (converged %v), CPU %d", rg.Iterations, rg.Converged, rc.Iterations)
	}
}

// hostAndDevice sets a up with o on the host and on the device, which
// must build it.
func hostAndDevice(t *testing.T, a *mesh.CSR[float64], o Options) (cpu, gpu *Preconditioner) {
	t.Helper()
	o.Device = mis.CPU
	cpu, err := New(a, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Device = mis.GPU
	if gpu, err = New(a, o); err != nil {
		t.Fatal(err)
	}
	if !gpu.setupOnDevice() {
		t.Fatalf("the setup ran on the host: %v", gpu.setupFallback)
	}
	return cpu, gpu
}

func compareLevels(t *testing.T, cpu, gpu *Preconditioner) {
	t.Helper()
	fillMirrors(t, cpu)
	fillMirrors(t, gpu)
	if len(cpu.levels) != len(gpu.levels) {
		t.Errorf("%d levels, host %d", len(gpu.levels), len(cpu.levels))
	}
	for i, lc := range cpu.levels[:min(len(cpu.levels), len(gpu.levels))] {
		lg := gpu.levels[i]
		if d := frobDiff(lg.a, lc.a); d > 1e-12 {
			t.Errorf("level %d: A differs by %.3g", i, d)
		}
		if lc.p == nil {
			continue
		}
		if lg.nagg != lc.nagg {
			t.Fatalf("level %d: %d aggregates, host %d", i, lg.nagg, lc.nagg)
		}
		if lc.of != nil && !slices.Equal(lg.of, lc.of) {
			t.Errorf("level %d: aggregates differ", i)
		}
		if d := frobDiff(lg.p, lc.p); d > 1e-12 {
			t.Errorf("level %d: P differs by %.3g", i, d)
		}
		if d := math.Abs(lg.lmax-lc.lmax) / lc.lmax; d > 1e-10 {
			t.Errorf("level %d: λmax %v, host %v", i, lg.lmax, lc.lmax)
		}
		if d := relDiff(lg.dinv, lc.dinv); d > 1e-15 {
			t.Errorf("level %d: D⁻¹ differs by %.3g", i, d)
		}
	}
}

// Two device setups give bitwise the same hierarchy.
func TestGPUSetupDeterministic(t *testing.T) {
	needGPU(t)
	for _, tp := range problems() {
		o := problemOptions(tp.pr, Options{MaxCoarse: 60, Device: mis.GPU, Theta: 0.02})
		var pcs [2]*Preconditioner
		for i := range pcs {
			pc, err := New(tp.pr.A, o)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			if !pc.setupOnDevice() {
				t.Fatalf("%s: the setup ran on the host: %v", tp.name, pc.setupFallback)
			}
			pcs[i] = pc
		}
		fillMirrors(t, pcs[0])
		fillMirrors(t, pcs[1])
		for i, l := range pcs[0].levels {
			m := pcs[1].levels[i]
			if !slices.Equal(l.a.val, m.a.val) || l.lmax != m.lmax ||
				(l.p != nil && (!slices.Equal(l.p.col, m.p.col) || !slices.Equal(l.p.val, m.p.val))) {
				t.Errorf("%s: level %d differs between two device setups", tp.name, i)
			}
		}
	}
}

// The device counts the auto θ's couplings (in_theta) and chooses the
// host's θ: the systems' on a coefficient jump, 0 without one, counted
// whole and sampled.
func TestGPUSetupTheta(t *testing.T) {
	needGPU(t)
	for _, tc := range []struct {
		a    *mesh.CSR[float64]
		want float64
	}{
		{jumpPoisson(64, 8, 1e6), DefaultSystemTheta},
		{jumpPoisson(200, 10, 1e6), DefaultSystemTheta},
		{jumpPoisson(200, 10, 1), 0},
	} {
		pc, err := New(tc.a, Options{Device: mis.GPU})
		if err != nil {
			t.Fatal(err)
		}
		if !pc.setupOnDevice() {
			t.Fatalf("the setup ran on the host: %v", pc.setupFallback)
		}
		if pc.opts.Theta != tc.want {
			t.Errorf("%d rows: θ %v on the device, want %v", tc.a.Rows, pc.opts.Theta, tc.want)
		}
		pc.Close()
	}
}

// Bad input gets the host's errors on the device path, and the device
// stays usable afterwards.
func TestGPUSetupBadInput(t *testing.T) {
	needGPU(t)
	good := fem.Poisson(2, 6).A
	clone := func(f func(a *mesh.CSR[float64])) *mesh.CSR[float64] {
		a := *good
		a.RowPtr = slices.Clone(good.RowPtr)
		a.Col = slices.Clone(good.Col)
		a.Val = slices.Clone(good.Val)
		f(&a)
		return &a
	}
	for _, c := range []struct {
		name string
		a    *mesh.CSR[float64]
	}{
		{"non-square", clone(func(a *mesh.CSR[float64]) { a.Cols++ })},
		{"zero diagonal", clone(func(a *mesh.CSR[float64]) {
			for k := a.RowPtr[7]; k < a.RowPtr[8]; k++ {
				if a.Col[k] == 7 {
					a.Val[k] = 0
				}
			}
		})},
		{"NaN", clone(func(a *mesh.CSR[float64]) { a.Val[10] = math.NaN() })},
		{"Inf", clone(func(a *mesh.CSR[float64]) { a.Val[12] = math.Inf(-1) })},
		{"column out of range", clone(func(a *mesh.CSR[float64]) { a.Col[5] = 99 })},
		{"negative column", clone(func(a *mesh.CSR[float64]) { a.Col[5] = -3 })},
		{"offsets decrease", clone(func(a *mesh.CSR[float64]) { a.RowPtr[4] = a.RowPtr[6] })},
		{"not symmetric", clone(func(a *mesh.CSR[float64]) { a.Val[a.RowPtr[3]] *= 1.5 })},
	} {
		_, errc := New(c.a, Options{})
		_, errg := New(c.a, Options{Device: mis.GPU})
		if c.name == "not symmetric" && errc != nil && errg != nil {
			// The sums differ in their last digits (device reductions).
			errc, errg = errors.New(errc.Error()[:30]), errors.New(errg.Error()[:30])
		}
		if errc == nil || errg == nil || errc.Error() != errg.Error() {
			t.Errorf("%s: device error %v, host error %v", c.name, errg, errc)
		}
	}
	pc, err := New(fem.Poisson(3, 10).A, Options{Device: mis.GPU})
	if err != nil {
		t.Fatalf("after bad input: %v", err)
	}
	defer pc.Close()
	if !pc.setupOnDevice() {
		t.Fatalf("after bad input the setup ran on the host: %v", pc.setupFallback)
	}
}

// A matrix whose pattern is not structurally symmetric (an explicit zero
// without its mirror) is set up on the host, with the host's result.
func TestGPUSetupAsymmetricPattern(t *testing.T) {
	needGPU(t)
	pr := fem.Poisson(2, 12)
	a := *pr.A
	// Row 0 gains an explicit zero at column n−1; its mirror is absent.
	n := a.Rows
	a.Col = slices.Insert(slices.Clone(a.Col), int(a.RowPtr[1]), int32(n-1))
	a.Val = slices.Insert(slices.Clone(a.Val), int(a.RowPtr[1]), 0)
	a.RowPtr = slices.Clone(a.RowPtr)
	for i := 1; i <= n; i++ {
		a.RowPtr[i]++
	}
	cpu, err := New(&a, Options{MaxCoarse: 20})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := New(&a, Options{MaxCoarse: 20, Device: mis.GPU})
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	if gpu.setupFallback == nil || !strings.Contains(gpu.setupFallback.Error(), "structurally symmetric") {
		t.Errorf("fallback reason %v", gpu.setupFallback)
	}
	compareLevels(t, cpu, gpu)
}

// fillMirrors downloads the host copies that a device setup leaves on
// the device.
func fillMirrors(t *testing.T, pc *Preconditioner) {
	t.Helper()
	if pc.dev != nil {
		if err := pc.dev.fillAll(); err != nil {
			t.Fatal(err)
		}
	}
}

// Rows out of order are sorted on the host, then set up on the device.
func TestGPUSetupUnsorted(t *testing.T) {
	needGPU(t)
	pr := fem.Poisson(3, 10)
	a := cloneCSR(pr.A, func(a *mesh.CSR[float64]) {
		for i := 0; i < a.Rows; i += 3 {
			lo, hi := a.RowPtr[i], a.RowPtr[i+1]
			slices.Reverse(a.Col[lo:hi])
			slices.Reverse(a.Val[lo:hi])
		}
	})
	cpu, gpu := hostAndDevice(t, a, Options{MaxCoarse: 40})
	defer gpu.Close()
	compareLevels(t, cpu, gpu)
}

// After Close the hierarchy a device setup built works on the host: the
// same cycle to rounding, after New and after a numeric Update.
func TestGPUSetupClose(t *testing.T) {
	needGPU(t)
	for _, reuse := range []bool{false, true} {
		pr := fem.Elasticity(6)
		o := problemOptions(pr, Options{Device: mis.GPU, Reuse: reuse})
		pc, err := New(pr.A, o)
		if err != nil {
			t.Fatal(err)
		}
		if !pc.setupOnDevice() {
			t.Fatalf("the setup ran on the host: %v", pc.setupFallback)
		}
		if reuse {
			if err := pc.Update(pr.A); err != nil {
				t.Fatal(err)
			}
		}
		n := pc.Rows()
		r := randVec(n, 7)
		zg, zc := make([]float64, n), make([]float64, n)
		if err := errors.Join(pc.Apply(r, zg), pc.Close(), pc.Apply(r, zc)); err != nil {
			t.Fatal(err)
		}
		if pc.Device() != mis.CPU {
			t.Fatal("Close left the device")
		}
		if d := relDiff(zc, zg); d > 1e-10 {
			t.Errorf("reuse %v: after Close, Apply differs by %.3g", reuse, d)
		}
	}
}
