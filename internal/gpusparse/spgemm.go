package gpusparse

import (
	"fmt"
	"math"
)

// Product is C = A·B on the device: its pattern is formed once, its
// values by Numeric whenever those of A or B change (same patterns).
type Product struct {
	a, b, c *Matrix
	init    float64 // what each sum starts from: -0 (first product as is) or +0
}

// Mul forms C = A·B, pattern and values; each entry sums its products in
// the order of A's row starting from the first, as amg's mulMat does
// (bitwise equal to it). A and B stay in use by Numeric: free the
// Product (which frees C) before them or with them.
func (d *Device) Mul(a, b *Matrix) (*Product, error) {
	return d.mul(a, b, math.Copysign(0, -1))
}

func (d *Device) mul(a, b *Matrix, init float64) (*Product, error) {
	if a.d != d || b.d != d {
		return nil, fmt.Errorf("gpusparse: product of matrices of another Device")
	}
	if a.cols != b.rows {
		return nil, fmt.Errorf("gpusparse: product of a %d×%d and a %d×%d matrix: inner sizes differ", a.rows, a.cols, b.rows, b.cols)
	}
	p := &Product{a: a, b: b, init: init, c: &Matrix{rows: a.rows, cols: b.cols, owned: true, d: d}}
	err := d.run(p.symbolic)
	if err == nil {
		err = p.Numeric()
	}
	if err != nil {
		_ = p.c.Free()
		return nil, err
	}
	return p, nil
}

// C returns the product (owned by p).
func (p *Product) C() *Matrix { return p.c }

// Free releases C.
func (p *Product) Free() error { return p.c.Free() }

// symbolic forms C's pattern: row sizes (short rows by hashing in shared
// memory, long ones by a bitmap), their scan, then the sorted columns.
func (p *Product) symbolic(q *queue) error {
	a, b, c := p.a, p.b, p.c
	what := fmt.Sprintf("%d×%d · %d×%d product", a.rows, a.cols, b.rows, b.cols)
	var err error
	if c.ptr, err = q.alloc(what+": row offsets", int64(c.rows+1)*4); err != nil {
		return err
	}
	longs, err := q.scratch(what+": list of long rows", int64(c.rows+1)*4)
	if err != nil {
		return err
	}
	nlongAt := int64(c.rows) * 4
	if err = longs.MemsetAsync32(0, q.d.l.Stream); err != nil {
		return err
	}
	size := c.ptr.Ptr() + 4
	nlongPtr := longs.Ptr() + uintptr(nlongAt)
	if err = q.launch("sp_count", c.rows, 8, int32(c.rows), a.ptr, a.col, b.ptr, b.col, size, longs, nlongPtr); err != nil {
		return err
	}
	nl, err := q.readInt32(longs, nlongAt)
	if err != nil {
		return err
	}
	nlong := int(nl)
	words := (b.cols + 31) / 32
	var nb int
	var bits any = uintptr(0)
	if nlong > 0 {
		var buf any
		nb, buf, err = q.longBlocks(what, nlong, words)
		if err != nil {
			return err
		}
		bits = buf
		if err = q.launchGrid("sp_long_rows", nb, longs, int32(nlong), a.ptr, a.col, b.ptr, b.col, bits, int32(words),
			size, uintptr(0), uintptr(0)); err != nil {
			return err
		}
	}
	if c.nnz, err = q.scan(what, c.ptr, c.rows); err != nil {
		return err
	}
	if err = c.alloc(q, what); err != nil {
		return err
	}
	if err = q.launch("sp_fill", c.rows, 8, int32(c.rows), a.ptr, a.col, b.ptr, b.col, c.ptr, c.col); err != nil {
		return err
	}
	if nlong > 0 {
		return q.launchGrid("sp_long_rows", nb, longs, int32(nlong), a.ptr, a.col, b.ptr, b.col, bits, int32(words),
			uintptr(0), c.ptr, c.col)
	}
	return nil
}

// Numeric recomputes C's values from the current values of A and B,
// whose patterns must be those Mul saw.
func (p *Product) Numeric() error {
	a, b, c := p.a, p.b, p.c
	g := lanesPerRow(b)
	return a.d.run(func(q *queue) error {
		return q.launch(fmt.Sprintf("sp_numeric_g%d", g), c.rows, 8*32/g, int32(c.rows), a.ptr, a.col, a.val, b.ptr, b.col, b.val, c.ptr, c.col, c.val, p.init)
	})
}

// lanesPerRow picks the lanes of the numeric pass per row of C: about
// the mean row length of B, the products that one k of A's row brings.
func lanesPerRow(b *Matrix) int {
	m := float64(b.nnz) / float64(max(b.rows, 1))
	for _, g := range []int{4, 8, 16} {
		if m <= float64(g) {
			return g
		}
	}
	return 32
}
