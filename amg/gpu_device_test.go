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

// deviceCopy puts a into device memory of GPU 0's primary context, with
// int32 or int64 offsets; free releases it.
func deviceCopy(t testing.TB, a *mesh.CSR[float64], offsets64 bool) (m DeviceMatrix, free func()) {
	t.Helper()
	e, err := engineOn(0)
	if err != nil {
		t.Fatal(err)
	}
	nz := len(a.Col)
	var bufs []*cuda.Buffer
	alloc := func(bytes int) *cuda.Buffer {
		b, err := e.Ctx.Alloc(int64(max(bytes, 8)))
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
		return b
	}
	m = DeviceMatrix{Rows: a.Rows, Offsets64: offsets64, Col: alloc(4 * nz), Val: alloc(8 * nz)}
	var err1 error
	if offsets64 {
		m.RowPtr = alloc(8 * (a.Rows + 1))
		err1 = cuda.CopyToDevice(m.RowPtr, 0, a.RowPtr)
	} else {
		m.RowPtr = alloc(4 * (a.Rows + 1))
		p := make([]int32, len(a.RowPtr))
		for i, x := range a.RowPtr {
			p[i] = int32(x)
		}
		err1 = cuda.CopyToDevice(m.RowPtr, 0, p)
	}
	if err := errors.Join(err1, cuda.CopyToDevice(m.Col, 0, a.Col), cuda.CopyToDevice(m.Val, 0, a.Val)); err != nil {
		t.Fatal(err)
	}
	return m, func() {
		for _, b := range bufs {
			b.Free()
		}
	}
}

// NewDevice builds New's hierarchy from the caller's device memory, used
// in place and left unchanged; UpdateDevice follows Update.
func TestGPUNewDevice(t *testing.T) {
	needGPU(t)
	for _, tp := range problems() {
		for _, off64 := range []bool{false, true} {
			o := problemOptions(tp.pr, Options{MaxCoarse: 60, Reuse: true, Device: mis.GPU})
			m, free := deviceCopy(t, tp.pr.A, off64)
			defer free()
			gpu, err := NewDevice(m, o)
			if err != nil {
				t.Fatalf("%s: %v", tp.name, err)
			}
			defer gpu.Close()
			if !gpu.setupOnDevice() || gpu.dev.op.col.Ptr() != m.Col.Ptr() {
				t.Fatalf("%s: not set up in place on the device", tp.name)
			}
			ref, err := New(tp.pr.A, o)
			if err != nil {
				t.Fatal(err)
			}
			compareLevels(t, ref, gpu)
			ref.Close()
			// D·A·D, rewritten into the values buffer (the numeric
			// re-setup), then D·D·A·D·D in a second buffer (a new setup).
			scaled := func(a *mesh.CSR[float64]) *mesh.CSR[float64] {
				a2 := *a
				a2.Val = slices.Clone(a2.Val)
				for i := 0; i < a2.Rows; i++ {
					for k := a2.RowPtr[i]; k < a2.RowPtr[i+1]; k++ {
						a2.Val[k] *= (1 + 0.3*math.Cos(float64(i))) * (1 + 0.3*math.Cos(float64(a2.Col[k])))
					}
				}
				return &a2
			}
			a1 := scaled(tp.pr.A)
			if err := cuda.CopyToDevice(m.Val, 0, a1.Val); err != nil {
				t.Fatal(err)
			}
			if err := gpu.UpdateDevice(m); err != nil {
				t.Fatalf("%s: UpdateDevice in place: %v", tp.name, err)
			}
			if _, ok := gpu.Stats().Phases["mis"]; ok {
				t.Errorf("%s: UpdateDevice in place set up anew", tp.name)
			}
			o.Device = mis.CPU
			fresh1, err := New(a1, o)
			if err != nil {
				t.Fatal(err)
			}
			compareLevels(t, fresh1, gpu)
			o.Device = mis.GPU
			a2 := *scaled(a1)
			m2, free2 := deviceCopy(t, &a2, off64)
			defer free2()
			m2.RowPtr, m2.Col = m.RowPtr, m.Col
			if err := gpu.UpdateDevice(m2); err != nil {
				t.Fatalf("%s: UpdateDevice: %v", tp.name, err)
			}
			if err := gpu.Update(&a2); err == nil || !strings.Contains(err.Error(), "UpdateDevice") {
				t.Errorf("%s: Update of an in-place device matrix: %v", tp.name, err)
			}
			o.Device = mis.CPU
			fresh, err := New(&a2, o)
			if err != nil {
				t.Fatal(err)
			}
			compareLevels(t, fresh, gpu)
			n := gpu.Rows()
			b := randVec(n, 8)
			xc, xg := make([]float64, n), make([]float64, n)
			rc, err1 := fresh.Solve(b, xc)
			rg, err2 := gpu.Solve(b, xg)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if d := rg.Iterations - rc.Iterations; d < -1 || d > 1 {
				t.Errorf("%s: %d iterations, host %d", tp.name, rg.Iterations, rc.Iterations)
			}
			val := make([]float64, len(a2.Val))
			if err := cuda.CopyToHost(val, m2.Val, 0); err != nil || !slices.Equal(val, a2.Val) {
				t.Errorf("%s: the caller's values changed (%v)", tp.name, err)
			}
			// Close brings the matrix to the host, which keeps solving.
			if err := gpu.Close(); err != nil {
				t.Fatal(err)
			}
			xh := make([]float64, n)
			rh, err := gpu.Solve(b, xh)
			if err != nil || rh.Iterations < rc.Iterations-1 || rh.Iterations > rc.Iterations+1 {
				t.Errorf("%s: after Close: %v, %v iterations, host %d", tp.name, err, rh, rc.Iterations)
			}
		}
	}
}

// NewDevice's errors are New's, for the entry New names (rows out of
// order excepted: New sorts them, NewDevice refuses them).
func TestGPUNewDeviceBadInput(t *testing.T) {
	needGPU(t)
	good := fem.Poisson(2, 6).A
	diag := func(a *mesh.CSR[float64], i int) int64 {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			if int(a.Col[k]) == i {
				return k
			}
		}
		return -1
	}
	for _, c := range []struct {
		name string
		f    func(a *mesh.CSR[float64])
	}{
		{"zero diagonal", func(a *mesh.CSR[float64]) { a.Val[diag(a, 7)] = 0 }},
		{"NaN", func(a *mesh.CSR[float64]) { a.Val[10] = math.NaN() }},
		{"Inf", func(a *mesh.CSR[float64]) { a.Val[12] = math.Inf(-1) }},
		{"column out of range", func(a *mesh.CSR[float64]) { a.Col[5] = 99 }},
		{"negative column", func(a *mesh.CSR[float64]) { a.Col[5] = -3 }},
		{"offsets decrease", func(a *mesh.CSR[float64]) { a.RowPtr[4] = a.RowPtr[6] }},
		{"not symmetric", func(a *mesh.CSR[float64]) { a.Val[a.RowPtr[3]] *= 1.5 }},
		{"unsorted", func(a *mesh.CSR[float64]) {
			k := a.RowPtr[9]
			a.Col[k], a.Col[k+1] = a.Col[k+1], a.Col[k]
			a.Val[k], a.Val[k+1] = a.Val[k+1], a.Val[k]
		}},
	} {
		for _, off64 := range []bool{false, true} {
			a := cloneCSR(good, c.f)
			m, free := deviceCopy(t, a, off64)
			_, errg := NewDevice(m, Options{})
			free()
			_, errc := New(a, Options{})
			switch {
			case c.name == "unsorted":
				if errc != nil || errg == nil || !strings.Contains(errg.Error(), "row 9: columns out of order") {
					t.Errorf("%s: device error %v, host error %v", c.name, errg, errc)
				}
			case errc == nil || errg == nil || c.name != "not symmetric" && errc.Error() != errg.Error() ||
				!strings.HasPrefix(errg.Error(), errc.Error()[:20]):
				t.Errorf("%s (int64 offsets %v): device error %v, host error %v", c.name, off64, errg, errc)
			}
		}
	}
}
