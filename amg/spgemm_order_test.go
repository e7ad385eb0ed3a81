package amg

import (
	"testing"

	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
)

// The host products sum every entry in the order of sparsetest's
// reference, which internal/gpusparse's GPU tests hold the device
// products to bit for bit: so the device's A·P and Pᵀ·A·P equal mulMat's
// and galerkinStreamed's, whatever the row grouping and worker count.
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
					ac, _ := pl.galerkinStreamed(a, b, ga, gc)
					if err := sparsetest.SameBits(out(ac), sparsetest.Galerkin(c.A, c.B)); err != nil {
						t.Errorf("%s, %d workers, groups of %d and %d: galerkinStreamed: %v", c.Name, w, ga, gc, err)
					}
				}
			}
		}
	}
}
