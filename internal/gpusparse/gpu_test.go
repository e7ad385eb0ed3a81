package gpusparse

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
)

// device opens GPU 0 or skips the test.
func device(tb testing.TB) *Device {
	tb.Helper()
	d, err := Open(0)
	if errors.Is(err, cuda.ErrUnavailable) {
		tb.Skipf("no GPU: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func upload(tb testing.TB, d *Device, a *hcsr) *Matrix {
	tb.Helper()
	m, err := d.Upload(a.Rows, a.Cols, a.Ptr, a.Col, a.Val)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = m.Free() })
	return m
}

func download(tb testing.TB, m *Matrix) *hcsr {
	tb.Helper()
	ptr, col, val, err := m.Download()
	if err != nil {
		tb.Fatal(err)
	}
	return &hcsr{Rows: m.Rows(), Cols: m.Cols(), Ptr: ptr, Col: col, Val: val}
}

// Every product, transpose and Galerkin product of the corpus equals the
// reference bit for bit, the numeric pass re-run and a second symbolic
// pass give the same bits, and so does a numeric re-setup after the
// values change; whether short rows and long rows of A of products with
// few runs (every product, or none) take a block per chunk or a warp,
// whether a block takes a chunk whole or in parts, whether few rows all
// go to sp_long_rows, whether it keeps each row's bitmap between its
// passes, and whether a warp of sp_numeric_h* takes one row or two.
func TestGPUCorpus(t *testing.T) {
	for _, c := range []struct {
		few, parts, long int
		keep             int64
		rows             int
	}{{fewChunks, maxParts, longFew, bitmapBudget, 0}, {math.MaxInt32, 1, 0, bitmapBudget, 1}, {0, 3, longFew, 0, 2}, {0, maxParts, 0, 0, 1},
		{fewChunks, maxParts, longFew, bitmapBudget, 2}} {
		d := device(t)
		d.fewRuns, d.mostParts, d.longFew, d.keepBits, d.hashRows = c.few, c.parts, c.long, c.keep, c.rows
		corpusOn(t, d)
	}
}

func corpusOn(t *testing.T, d *Device) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range sparsetest.Corpus(testing.Short()) {
		a, b := upload(t, d, c.A), upload(t, d, c.B)
		for rep := 0; rep < 2; rep++ {
			p, err := d.Mul(a, b)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			want := sparsetest.Mul(c.A, c.B, false)
			if err := sparsetest.SameBits(download(t, p.C()), want); err != nil {
				t.Errorf("%s: product (run %d): %v", c.Name, rep, err)
			}
			if err := p.Numeric(); err != nil {
				t.Fatal(err)
			}
			if err := sparsetest.SameBits(download(t, p.C()), want); err != nil {
				t.Errorf("%s: product, numeric again: %v", c.Name, err)
			}
			_ = p.Free()
			tr, err := d.Transpose(b)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if err := sparsetest.SameBits(download(t, tr.T()), sparsetest.Transpose(c.B)); err != nil {
				t.Errorf("%s: transpose (run %d): %v", c.Name, rep, err)
			}
			_ = tr.Free()
		}
		if !c.Sq {
			continue
		}
		g, err := d.Galerkin(a, b)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err := sparsetest.SameBits(download(t, g.Coarse()), sparsetest.Galerkin(c.A, c.B)); err != nil {
			t.Errorf("%s: Galerkin: %v", c.Name, err)
		}
		// Numeric re-setup: new values on the same patterns.
		na, nb := *c.A, *c.B
		na.Val, nb.Val = scaled(rng, c.A.Val), scaled(rng, c.B.Val)
		if err := errors.Join(a.SetValues(na.Val[:na.NNZ()]), b.SetValues(nb.Val[:nb.NNZ()]), g.Numeric()); err != nil {
			t.Fatal(err)
		}
		if err := sparsetest.SameBits(download(t, g.Coarse()), sparsetest.Galerkin(&na, &nb)); err != nil {
			t.Errorf("%s: Galerkin after new values: %v", c.Name, err)
		}
		if err := sparsetest.SameBits(download(t, g.R()), sparsetest.Transpose(&nb)); err != nil {
			t.Errorf("%s: restriction after new values: %v", c.Name, err)
		}
		_ = g.Free()
	}
}

func scaled(rng *rand.Rand, v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * (0.5 + rng.Float64())
	}
	return out
}

// Bad sizes and malformed device matrices are errors, and the context
// stays usable after them.
func TestGPUErrors(t *testing.T) {
	d := device(t)
	rng := rand.New(rand.NewPCG(5, 6))
	a := upload(t, d, sparsetest.Random(rng, 10, 7, 3, 0))
	if _, err := d.Mul(a, a); err == nil || !strings.Contains(err.Error(), "inner sizes") {
		t.Errorf("10×7 · 10×7: %v", err)
	}
	if _, err := d.Galerkin(a, a); err == nil || !strings.Contains(err.Error(), "square") {
		t.Errorf("Galerkin of a non-square operator: %v", err)
	}
	// A column out of range, handed over as device pointers.
	bad := sparsetest.Random(rng, 50, 20, 4, 0)
	bad.Col[bad.Ptr[34]-1] = 25 // fine for 30 columns
	raw := &Matrix{rows: 50, cols: 30, nnz: bad.NNZ(), owned: true, d: d}
	var err error
	if raw.ptr, raw.col, raw.val, err = rawBuffers(d, bad); err != nil {
		t.Fatal(err)
	}
	defer raw.Free()
	if _, err := d.Wrap(50, 20, bad.NNZ(), raw.ptr, raw.col, raw.val); err == nil || !strings.Contains(err.Error(), "row 33 ") {
		t.Errorf("column past the end in row 33: %v", err)
	}
	if _, err := d.Wrap(50, 20, bad.NNZ()+1, raw.ptr, raw.col, raw.val); err == nil {
		t.Error("wrapped with more nonzeros than the buffers hold")
	}
	// WrapUnchecked takes the maker's word for the pattern, not for the
	// sizes.
	if _, err := d.WrapUnchecked(50, 20, bad.NNZ()+1, raw.ptr, raw.col, raw.val); err == nil {
		t.Error("wrapped unchecked with more nonzeros than the buffers hold")
	}
	if u, err := d.WrapUnchecked(50, 20, bad.NNZ(), raw.ptr, raw.col, raw.val); err != nil || u.Check() == nil {
		t.Errorf("WrapUnchecked of the column past the end: %v, then its Check passed", err)
	}
	m, err := d.Wrap(50, 30, bad.NNZ(), raw.ptr, raw.col, raw.val)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Free(); err != nil || raw.ptr == nil {
		t.Errorf("Free of a wrapped matrix: %v", err)
	}
	// Device memory that runs out says how much was asked for.
	q := &queue{d: d}
	if _, err := q.alloc("test array", 1<<50); !errors.Is(err, cuda.ErrorOutOfMemory) || !strings.Contains(err.Error(), "1125899906842624 bytes") || !strings.Contains(err.Error(), "test array") {
		t.Errorf("allocating 1 PiB: %v", err)
	}
	// Still usable.
	p, err := d.Mul(a, upload(t, d, sparsetest.Random(rng, 7, 9, 3, 0)))
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Free()
}

// rawBuffers copies a to device buffers as they are, unchecked.
func rawBuffers(d *Device, a *hcsr) (ptr, col, val *cuda.Buffer, err error) {
	q := &queue{d: d}
	p32 := make([]int32, len(a.Ptr))
	for i, x := range a.Ptr {
		p32[i] = int32(x)
	}
	if ptr, err = q.alloc("ptr", int64(len(p32))*4); err != nil {
		return
	}
	if col, err = q.alloc("col", int64(a.NNZ())*4); err != nil {
		return
	}
	if val, err = q.alloc("val", int64(a.NNZ())*8); err != nil {
		return
	}
	err = errors.Join(copyIn(ptr, p32), copyIn(col, a.Col), copyIn(val, a.Val), d.l.Ctx.Synchronize())
	return
}

// Host-side checks of Upload, without a GPU.
func TestUploadChecks(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		rows, cols int
		ptr        []int
		col        []int32
		want       string
	}{
		{2, 3, []int{0, 1}, []int32{0}, "row offsets for 2 rows"},
		{1, 3, []int{1, 1}, []int32{0}, "start at 1"},
		{3, 3, []int{0, 2, 1, 3}, []int32{0, 1, 2}, "row 1: offsets 2..1"},
		{1, 3, []int{0, 2}, []int32{1, 1}, "row 0, entry 1: column 1"},
		{1, 3, []int{0, 1}, []int32{3}, "column 3 out of [0, 3)"},
		{1, 3, []int{0, 1 << 31}, []int32{0}, "offsets over 2^31-1"},
		{-1, 3, []int{0}, nil, "sizes must be"},
	} {
		_, err := checkHost(c.rows, c.cols, c.ptr, c.col, []float64{nan, nan, nan})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.ptr, c.col, err, c.want)
		}
	}
}
