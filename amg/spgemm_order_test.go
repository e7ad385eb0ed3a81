package amg

import (
	"testing"

	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
)

// The host products sum every entry in the order of sparsetest's
// reference, which internal/gpusparse's GPU tests hold the device
// products to bit for bit: so the device's A·P and Pᵀ·A·P equal mulMat's
// and galerkinStreamed's (and galerkinWhole's), whatever the row grouping and worker count.
func TestHostProductsMatchDeviceOrder(t *testing.T) {
	in := func(m *sparsetest.CSR) *csr {
		return &csr{rows: m.Rows, cols: m.Cols, ptr: m.Ptr, col: m.Col, val: m.Val}
	}
	out := func(m *csr) *sparsetest.CSR {
		return &sparsetest.CSR{Rows: m.rows, Cols: m.cols, Ptr: m.ptr, Col: m.col, Val: m.val}
	}
	for _, w := range []int{1, 3} {
		pl := newPool(w)
		for _, c := range sparsetest.Corpus(testing.Short()) {
			a, b := in(c.A), in(c.B)
			for _, g := range []int{1, 3} {
				ga := groupOf(a, g)
				if err := sparsetest.SameBits(out(pl.mulMat(a, b, ga)), sparsetest.Mul(c.A, c.B, false)); err != nil {
					t.Errorf("%s, %d workers, groups of %d: mulMat: %v", c.Name, w, ga, err)
				}
				for _, gc := range []int{1, 3} {
					if !c.Sq || !blockCols(b, gc) {
						continue
					}
					want := sparsetest.Galerkin(c.A, c.B)
					ac, _ := pl.galerkinStreamed(a, b, ga, gc)
					if err := sparsetest.SameBits(out(ac), want); err != nil {
						t.Errorf("%s, %d workers, groups of %d and %d: galerkinStreamed: %v", c.Name, w, ga, gc, err)
					}
					ac, _ = pl.galerkinWhole(a, b, ga, gc)
					if err := sparsetest.SameBits(out(ac), want); err != nil {
						t.Errorf("%s, %d workers, groups of %d and %d: galerkinWhole: %v", c.Name, w, ga, gc, err)
					}
				}
			}
		}
	}
}

// A right factor of at most one entry a row (a scalar tentative
// prolongator, Dirichlet rows empty) takes mulMat's unit-row path: it must
// sum in the same order as the general one.
func TestMulMatUnitRows(t *testing.T) {
	pa := sparsetest.Poisson(12)
	tb := &sparsetest.CSR{Rows: pa.Rows, Cols: pa.Rows/5 + 1, Ptr: make([]int, pa.Rows+1)}
	for i := 0; i < pa.Rows; i++ {
		if i%7 != 3 {
			tb.Col = append(tb.Col, int32(i/5))
			tb.Val = append(tb.Val, 1+float64(i%3)/7)
		}
		tb.Ptr[i+1] = len(tb.Col)
	}
	a := &csr{rows: pa.Rows, cols: pa.Cols, ptr: pa.Ptr, col: pa.Col, val: pa.Val}
	b := &csr{rows: tb.Rows, cols: tb.Cols, ptr: tb.Ptr, col: tb.Col, val: tb.Val}
	for _, w := range []int{1, 3} {
		c := newPool(w).mulMat(a, b, 1)
		got := &sparsetest.CSR{Rows: c.rows, Cols: c.cols, Ptr: c.ptr, Col: c.col, Val: c.val}
		if err := sparsetest.SameBits(got, sparsetest.Mul(pa, tb, false)); err != nil {
			t.Errorf("%d workers: %v", w, err)
		}
	}
}
