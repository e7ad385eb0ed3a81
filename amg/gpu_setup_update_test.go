package amg

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Update with Reuse refreshes the device setup's hierarchy: the same
// result as the host's Update.
func TestGPUSetupUpdate(t *testing.T) {
	needGPU(t)
	for _, tp := range problems() {
		o := problemOptions(tp.pr, Options{MaxCoarse: 60, Reuse: true})
		cpu, gpu := hostAndDevice(t, tp.pr.A, o)
		defer gpu.Close()
		o.Device = mis.GPU
		// D·A·D keeps A symmetric positive definite.
		a2 := *tp.pr.A
		a2.Val = slices.Clone(tp.pr.A.Val)
		bs := max(1, o.BlockSize)
		d := func(i int) float64 { return 1 + 0.5*math.Sin(float64(i/bs)) }
		for i := 0; i < a2.Rows; i++ {
			for k := a2.RowPtr[i]; k < a2.RowPtr[i+1]; k++ {
				a2.Val[k] *= d(i) * d(int(a2.Col[k]))
			}
		}
		for _, pc := range []*Preconditioner{cpu, gpu} {
			if err := pc.Update(&a2); err != nil {
				t.Fatalf("%s: %v", tp.name, err)
			}
		}
		if _, ok := gpu.Stats().Phases["eigen"]; !ok || gpu.reuse == nil {
			t.Errorf("%s: Update did not run on the device", tp.name)
		}
		compareLevels(t, cpu, gpu)
		fresh, err := New(&a2, o)
		if err != nil {
			t.Fatal(err)
		}
		compareLevels(t, fresh, gpu)
		fresh.Close()
		n := cpu.Rows()
		r := randVec(n, 4)
		zc, zg := make([]float64, n), make([]float64, n)
		if err := errors.Join(cpu.Apply(r, zc), gpu.Apply(r, zg)); err != nil {
			t.Fatal(err)
		}
		if d := relDiff(zg, zc); d > 1e-10 {
			t.Errorf("%s: after Update, Apply differs by %.3g", tp.name, d)
		}
		// Without the device copy, Update sets up afresh.
		if err := errors.Join(gpu.Close(), gpu.Update(tp.pr.A)); err != nil {
			t.Fatalf("%s: Update after Close: %v", tp.name, err)
		}
		if !gpu.setupOnDevice() {
			t.Errorf("%s: Update after Close ran on the host: %v", tp.name, gpu.setupFallback)
		}
	}
}

// With PinValues, Update copies from the caller's array page-locked in
// place: values re-assembled in the same array reuse the registration,
// another array replaces it, and every Update equals the host's.
func TestGPUSetupUpdatePinned(t *testing.T) {
	needGPU(t)
	tp := problems()[0]
	o := problemOptions(tp.pr, Options{MaxCoarse: 60, Reuse: true, PinValues: true})
	cpu, gpu := hostAndDevice(t, tp.pr.A, o)
	defer gpu.Close()
	a2 := *tp.pr.A
	a2.Val = slices.Clone(tp.pr.A.Val)
	var first *cuda.HostBuffer
	for step, scale := range []float64{1.5, 0.25} {
		for k := range a2.Val {
			a2.Val[k] *= scale
		}
		for _, pc := range []*Preconditioner{cpu, gpu} {
			if err := pc.Update(&a2); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if gpu.reuse == nil || gpu.reuse.pinned == nil {
			t.Fatalf("step %d: the values were not page-locked", step)
		}
		if step == 0 {
			first = gpu.reuse.pinned
		} else if gpu.reuse.pinned != first {
			t.Errorf("step %d: the same array was registered again", step)
		}
		compareLevels(t, cpu, gpu)
	}
	a3 := a2
	a3.Val = slices.Clone(a2.Val)
	if err := errors.Join(cpu.Update(&a3), gpu.Update(&a3)); err != nil {
		t.Fatal(err)
	}
	if gpu.reuse.pinned == first || first.Bytes() != nil {
		t.Error("another array did not replace the registration")
	}
	compareLevels(t, cpu, gpu)
	last := gpu.reuse.pinned
	if err := gpu.Close(); err != nil || last.Bytes() != nil {
		t.Errorf("Close left the values page-locked (err %v)", err)
	}
}

// A numeric Update with bad values gets the host's error from the
// device's checks and leaves the hierarchy as it was.
func TestGPUSetupUpdateBadValues(t *testing.T) {
	needGPU(t)
	pr := fem.Poisson(3, 12)
	o := Options{MaxCoarse: 40, Reuse: true}
	cpu, gpu := hostAndDevice(t, pr.A, o)
	defer gpu.Close()
	n := gpu.Rows()
	r := randVec(n, 6)
	z0, z1 := make([]float64, n), make([]float64, n)
	if err := gpu.Apply(r, z0); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(a *mesh.CSR[float64]){
		func(a *mesh.CSR[float64]) { a.Val[17] = math.NaN() },
		func(a *mesh.CSR[float64]) { a.Val[a.RowPtr[5]] = math.Inf(1) },
		func(a *mesh.CSR[float64]) {
			for k := a.RowPtr[8]; k < a.RowPtr[9]; k++ {
				if a.Col[k] == 8 {
					a.Val[k] = -2
				}
			}
		},
	} {
		// Same arrays as New's but for the values, as FEM codes
		// reassemble.
		a := *pr.A
		a.Val = slices.Clone(pr.A.Val)
		f(&a)
		errc, errg := cpu.Update(&a), gpu.Update(&a)
		if errc == nil || errg == nil || errc.Error() != errg.Error() {
			t.Errorf("device error %v, host error %v", errg, errc)
		}
		if err := gpu.Apply(r, z1); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(z0, z1) {
			t.Error("a refused Update changed the hierarchy")
		}
	}
}

// An Update whose matrix has as many entries on another pattern is the
// host's error, and the device, which took the values before the host
// compared the patterns, has its old ones back: solves match the host's
// untouched hierarchy, and a later Update on the right pattern works.
func TestGPUSetupUpdateOtherPattern(t *testing.T) {
	needGPU(t)
	tp := problems()[1]
	o := problemOptions(tp.pr, Options{MaxCoarse: 60, Reuse: true})
	cpu, gpu := hostAndDevice(t, tp.pr.A, o)
	defer gpu.Close()
	a3 := *tp.pr.A
	a3.Col, a3.Val = slices.Clone(a3.Col), slices.Clone(a3.Val)
	for k := range a3.Val {
		a3.Val[k] *= 7 // values the device must not keep
	}
	// Row 0's last column moves one further: the same count, sorted.
	last := a3.RowPtr[1] - 1
	if a3.Col[last]+1 >= int32(a3.Rows) {
		t.Fatalf("%s: row 0 ends in the last column", tp.name)
	}
	a3.Col[last]++
	if err := gpu.Update(&a3); err == nil || !strings.Contains(err.Error(), "pattern differs") {
		t.Fatalf("%s: Update on another pattern: %v", tp.name, err)
	}
	b := mulDense(mustCSR(t, tp.pr.A), randVec(tp.pr.A.Rows, 5))
	xc, xg := make([]float64, len(b)), make([]float64, len(b))
	rc, err1 := cpu.Solve(b, xc)
	rg, err2 := gpu.Solve(b, xg)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if d := relDiff(xg, xc); d > 1e-8 || rg.Iterations > rc.Iterations+1 || rg.Iterations < rc.Iterations-1 {
		t.Errorf("%s: after the refused Update, solutions differ by %.3g (%d its, host %d)", tp.name, d, rg.Iterations, rc.Iterations)
	}
	a2 := *tp.pr.A
	a2.Val = slices.Clone(a2.Val)
	for k := range a2.Val {
		a2.Val[k] *= 2
	}
	if err := errors.Join(cpu.Update(&a2), gpu.Update(&a2)); err != nil {
		t.Fatal(err)
	}
	compareLevels(t, cpu, gpu)
}
