package amg

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mis"
)

func TestGPUDeviceOption(t *testing.T) {
	for _, c := range []struct {
		v   string
		dev mis.Device
		bad bool
	}{
		{"cpu", mis.CPU, false}, {"gpu", mis.GPU, false}, {"GPU:2", mis.GPU.On(2), false},
		{"auto", mis.Auto, false}, {"auto:1", mis.Auto.On(1), false},
		{"gpu:-1", 0, true}, {"cpu:1", 0, true}, {"tpu", 0, true},
	} {
		o, err := ParseOptions([]string{"device=" + c.v})
		if (err != nil) != c.bad {
			t.Fatalf("device=%s: err = %v, want error %v", c.v, err, c.bad)
		}
		if !c.bad && o.Device != c.dev {
			t.Errorf("device=%s: got %v, want %v", c.v, o.Device, c.dev)
		}
	}
	for _, d := range []mis.Device{7, -4, mis.CPU.On(1)} {
		if _, err := New(fem.Poisson(2, 8).A, Options{Device: d}); err == nil {
			t.Errorf("Device(%d) accepted", int(d))
		}
	}
}

// Without a usable GPU, device=gpu is an error wrapping mis.ErrNoGPU and
// device=auto solves on the CPU exactly as device=cpu does.
func TestGPUFallback(t *testing.T) {
	pr := fem.Poisson(3, 8)
	if _, err := New(pr.A, Options{Device: mis.GPU, Smoother: GaussSeidel}); err == nil {
		t.Error("device=gpu with Gauss–Seidel accepted")
	}
	if cuda.Available() == nil {
		t.Skip("a GPU is present: the fallback is not reachable")
	}
	if _, err := New(pr.A, Options{Device: mis.GPU}); !errors.Is(err, mis.ErrNoGPU) {
		t.Fatalf("device=gpu without a GPU: err = %v, want mis.ErrNoGPU", err)
	}
	auto, err := New(pr.A, Options{Device: mis.Auto})
	if err != nil {
		t.Fatal(err)
	}
	if auto.Device() != mis.CPU {
		t.Fatalf("auto without a GPU runs on %v", auto.Device())
	}
	cpu, _ := New(pr.A, Options{})
	b := randVec(cpu.Rows(), 5)
	x1, x2 := make([]float64, len(b)), make([]float64, len(b))
	if _, err := auto.Solve(b, x1); err != nil {
		t.Fatal(err)
	}
	if _, err := cpu.Solve(b, x2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x1, x2) {
		t.Error("auto on the CPU differs from device=cpu")
	}
}

func needGPU(t *testing.T) {
	t.Helper()
	if err := cuda.Available(); err != nil {
		t.Skipf("no usable GPU: %v", err)
	}
}

// The GPU solve agrees with the CPU one to rounding: the same iteration
// count ±1, both true residuals below tol, and solutions within
// 2·tol·κ of each other (each is within tol·κ of A⁻¹b in relative
// norm; κ < 1e4 for these small problems). One cycle (Apply), a fixed
// linear map, agrees to 1e-10. Two GPU runs agree bitwise.
func TestGPUSolveMatchesCPU(t *testing.T) {
	needGPU(t)
	const tol = 1e-10
	variants := [][]string{nil, {"cycle=w", "sweeps=3"}, {"smoother=jacobi"}, {"aggregation=pairwise"}}
	for _, tp := range problems() {
		for _, kv := range variants {
			name := tp.name
			for _, s := range kv {
				name += "/" + s
			}
			t.Run(name, func(t *testing.T) {
				o, err := ParseOptions(append([]string{"max_coarse=60", "tol=1e-10"}, kv...))
				if err != nil {
					t.Fatal(err)
				}
				o = problemOptions(tp.pr, o)
				cpu, err := New(tp.pr.A, o)
				if err != nil {
					t.Fatal(err)
				}
				o.Device = mis.GPU
				gpu, err := New(tp.pr.A, o)
				if err != nil {
					t.Fatal(err)
				}
				defer gpu.Close()
				if gpu.Device() != mis.GPU {
					t.Fatal("device=gpu solves on the CPU")
				}
				a := mustCSR(t, tp.pr.A)
				n := a.rows
				r := randVec(n, 9)
				zc, zg := make([]float64, n), make([]float64, n)
				if err := cpu.Apply(r, zc); err != nil {
					t.Fatal(err)
				}
				if err := gpu.Apply(r, zg); err != nil {
					t.Fatal(err)
				}
				if d := relDiff(zg, zc); d > 1e-10 {
					t.Errorf("Apply: GPU and CPU differ by %.3g (relative)", d)
				}
				b := mulDense(a, randVec(n, 3))
				xc, xg, xg2 := make([]float64, n), make([]float64, n), make([]float64, n)
				rc, err := cpu.Solve(b, xc)
				if err != nil {
					t.Fatal(err)
				}
				rg, err := gpu.Solve(b, xg)
				if err != nil {
					t.Fatal(err)
				}
				if !rc.Converged || !rg.Converged {
					t.Fatalf("converged: CPU %v, GPU %v", rc.Converged, rg.Converged)
				}
				if d := rg.Iterations - rc.Iterations; d < -1 || d > 1 {
					t.Errorf("GPU %d iterations, CPU %d", rg.Iterations, rc.Iterations)
				}
				for _, c := range []struct {
					dev string
					x   []float64
				}{{"CPU", xc}, {"GPU", xg}} {
					ax := mulDense(a, c.x)
					for i := range ax {
						ax[i] = b[i] - ax[i]
					}
					if rel := norm(ax) / norm(b); rel > 1.01*tol {
						t.Errorf("%s: true residual %.3g > tol %g", c.dev, rel, tol)
					}
				}
				if d := relDiff(xg, xc); d > 2*tol*1e4 {
					t.Errorf("solutions differ by %.3g (relative)", d)
				}
				rg2, err := gpu.Solve(b, xg2)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(xg, xg2) || !slices.Equal(rg.Residuals, rg2.Residuals) {
					t.Error("two GPU solves differ")
				}
			})
		}
	}
}

// The GPU preconditioner is symmetric: xᵀMy = yᵀMx to rounding.
func TestGPUPreconditionerSymmetric(t *testing.T) {
	needGPU(t)
	pr := fem.Elasticity(6)
	o := problemOptions(pr, Options{MaxCoarse: 60, Device: mis.GPU})
	pc, err := New(pr.A, o)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	n := pc.Rows()
	x, y := randVec(n, 1), randVec(n, 2)
	mx, my := make([]float64, n), make([]float64, n)
	if err := pc.Apply(x, mx); err != nil {
		t.Fatal(err)
	}
	if err := pc.Apply(y, my); err != nil {
		t.Fatal(err)
	}
	s1, s2 := dotv(x, my), dotv(y, mx)
	if math.Abs(s1-s2) > 1e-10*math.Sqrt(dotv(x, mx)*dotv(y, my)) {
		t.Errorf("xᵀMy = %.17g, yᵀMx = %.17g", s1, s2)
	}
}

// After Update the device copy holds the new values: GPU and CPU agree
// on the updated matrix, and the GPU matches a fresh GPU hierarchy.
func TestGPUUpdate(t *testing.T) {
	needGPU(t)
	pr := fem.Poisson(3, 16)
	cpu, err := New(pr.A, Options{MaxCoarse: 60})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := New(pr.A, Options{MaxCoarse: 60, Device: mis.GPU})
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	a2 := *pr.A
	a2.Val = slices.Clone(pr.A.Val)
	for i := range a2.Val {
		a2.Val[i] *= 3
	}
	for _, pc := range []*Preconditioner{cpu, gpu} {
		if err := pc.Update(&a2); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := gpu.Stats().Phases["upload"]; !ok {
		t.Error("Update did not upload")
	}
	n := cpu.Rows()
	r := randVec(n, 4)
	zc, zg := make([]float64, n), make([]float64, n)
	_ = cpu.Apply(r, zc)
	if err := gpu.Apply(r, zg); err != nil {
		t.Fatal(err)
	}
	if d := relDiff(zg, zc); d > 1e-10 {
		t.Errorf("after Update, Apply differs by %.3g (relative)", d)
	}
	// Update only refreshes values on the device; with θ = 0 the host
	// hierarchy is bitwise a fresh one's, so the device copy must be too.
	fresh, err := New(&a2, Options{MaxCoarse: 60, Device: mis.GPU})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	zf := make([]float64, n)
	if err := fresh.Apply(r, zf); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(zf, zg) {
		t.Errorf("after Update, Apply differs from a fresh GPU hierarchy by %.3g", relDiff(zg, zf))
	}
}

func relDiff(x, y []float64) float64 {
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	return norm(d) / norm(y)
}
