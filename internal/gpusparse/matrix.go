package gpusparse

import (
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// Matrix is a CSR matrix on the device: Rows+1 int32 offsets, NNZ int32
// columns (strictly increasing in each row) and NNZ float64 values.
type Matrix struct {
	rows, cols, nnz int
	ptr, col, val   *cuda.Buffer
	owned           bool
	d               *Device
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int { return m.rows }

// Cols returns the number of columns.
func (m *Matrix) Cols() int { return m.cols }

// NNZ returns the number of stored entries.
func (m *Matrix) NNZ() int { return m.nnz }

// Ptr returns the row offsets (Rows+1 int32).
func (m *Matrix) Ptr() *cuda.Buffer { return m.ptr }

// Col returns the column indices (NNZ int32).
func (m *Matrix) Col() *cuda.Buffer { return m.col }

// Val returns the values (NNZ float64).
func (m *Matrix) Val() *cuda.Buffer { return m.val }

// checkHost validates a host CSR the way sp_check validates a device one.
func checkHost(rows, cols int, ptr []int, col []int32, val []float64) (int, error) {
	if rows < 0 || cols < 0 || rows > maxInt32 || cols > maxInt32 {
		return 0, fmt.Errorf("gpusparse: a %d×%d matrix: sizes must be in [0, 2^31-1]", rows, cols)
	}
	if len(ptr) != rows+1 {
		return 0, fmt.Errorf("gpusparse: %d row offsets for %d rows, want %d", len(ptr), rows, rows+1)
	}
	nnz := ptr[rows]
	if ptr[0] != 0 {
		return 0, fmt.Errorf("gpusparse: row offsets start at %d, want 0", ptr[0])
	}
	if nnz > maxInt32 {
		return 0, fmt.Errorf("gpusparse: %d nonzeros: offsets over 2^31-1 do not fit the kernels' int32", nnz)
	}
	if len(col) < nnz || len(val) < nnz {
		return 0, fmt.Errorf("gpusparse: %d nonzeros but %d columns and %d values", nnz, len(col), len(val))
	}
	for i := 0; i < rows; i++ {
		s, e := ptr[i], ptr[i+1]
		if e < s || e > nnz {
			return 0, fmt.Errorf("gpusparse: row %d: offsets %d..%d out of order or past %d", i, s, e, nnz)
		}
		for q := s; q < e; q++ {
			if c := col[q]; c < 0 || int(c) >= cols || (q > s && c <= col[q-1]) {
				return 0, fmt.Errorf("gpusparse: row %d, entry %d: column %d out of [0, %d) or not above the previous one", i, q, c, cols)
			}
		}
	}
	return nnz, nil
}

// Upload copies a host CSR (amg's layout: int offsets) to the device.
// col and val may be longer than ptr[rows]; the rest is ignored.
func (d *Device) Upload(rows, cols int, ptr []int, col []int32, val []float64) (*Matrix, error) {
	nnz, err := checkHost(rows, cols, ptr, col, val)
	if err != nil {
		return nil, err
	}
	p32 := make([]int32, rows+1)
	for i, x := range ptr {
		p32[i] = int32(x)
	}
	m := &Matrix{rows: rows, cols: cols, nnz: nnz, owned: true, d: d}
	q := &queue{d: d}
	if err = m.alloc(q, "upload"); err == nil {
		err = errors.Join(copyIn(m.ptr, p32), copyIn(m.col, col[:nnz]), copyIn(m.val, val[:nnz]))
	}
	if err != nil {
		_ = m.Free()
		return nil, err
	}
	return m, nil
}

// copyIn copies src to the start of dst, complete on return
// (cuda.CopyToDevice waits for the transfer), so kernels queued next read
// it.
func copyIn[T cuda.Word](dst *cuda.Buffer, src []T) error {
	if len(src) == 0 {
		return nil
	}
	return cuda.CopyToDevice(dst, 0, src)
}

// alloc gives m its arrays for its sizes.
func (m *Matrix) alloc(q *queue, what string) error {
	var err error
	if m.ptr == nil {
		if m.ptr, err = q.alloc(what+": row offsets", int64(m.rows+1)*4); err != nil {
			return err
		}
	}
	if m.col, err = q.alloc(what+": columns", int64(m.nnz)*4); err != nil {
		return err
	}
	m.val, err = q.alloc(what+": values", int64(m.nnz)*8)
	return err
}

// Wrap makes a Matrix of device arrays that the caller owns and keeps
// alive (used in place: Free leaves them alone). They must be in d's
// context and hold rows+1 offsets and nnz columns and values; the
// offsets and columns are checked on the device (the error names the
// first bad row).
func (d *Device) Wrap(rows, cols, nnz int, ptr, col, val *cuda.Buffer) (*Matrix, error) {
	m, err := d.WrapUnchecked(rows, cols, nnz, ptr, col, val)
	if err == nil {
		err = m.Check()
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// WrapUnchecked is Wrap without the device check of the offsets and
// columns, for arrays whose maker vouches for them: the products of this
// package, or a kernel that writes sorted rows in range. It checks only
// the sizes and the buffers. A pattern that breaks the rules is read out
// of bounds: where the arrays come from a caller, Wrap.
func (d *Device) WrapUnchecked(rows, cols, nnz int, ptr, col, val *cuda.Buffer) (*Matrix, error) {
	if rows < 0 || cols < 0 || nnz < 0 || rows > maxInt32 || cols > maxInt32 || nnz > maxInt32 {
		return nil, fmt.Errorf("gpusparse: wrap: %d×%d with %d nonzeros: sizes must be in [0, 2^31-1]", rows, cols, nnz)
	}
	for _, b := range []struct {
		name string
		buf  *cuda.Buffer
		want int64
	}{{"row offsets", ptr, int64(rows+1) * 4}, {"columns", col, int64(nnz) * 4}, {"values", val, int64(nnz) * 8}} {
		if b.buf == nil || b.buf.Size() < b.want {
			return nil, fmt.Errorf("gpusparse: wrap: the %s buffer holds fewer than the %d bytes needed", b.name, b.want)
		}
		if b.buf.Context() != d.l.Ctx {
			return nil, fmt.Errorf("gpusparse: wrap: the %s buffer is in another context", b.name)
		}
	}
	return &Matrix{rows: rows, cols: cols, nnz: nnz, ptr: ptr, col: col, val: val, d: d}, nil
}

// Check validates m on the device: offsets from 0 to NNZ that never
// decrease, columns in [0, Cols) strictly increasing in each row.
func (m *Matrix) Check() error {
	if m.rows == 0 {
		return nil
	}
	var bad int32
	err := m.d.run(func(q *queue) error {
		b, err := q.scratch("check", 4)
		if err != nil {
			return err
		}
		if err = copyIn(b, []int32{int32(m.rows)}); err != nil {
			return err
		}
		if err = q.launch("sp_check", m.rows, 8, int32(m.rows), int32(m.cols), int32(m.nnz), m.ptr, m.col, b); err != nil {
			return err
		}
		bad, err = q.readInt32(b, 0)
		return err
	})
	if err != nil {
		return err
	}
	if int(bad) < m.rows {
		return fmt.Errorf("gpusparse: row %d of the %d×%d matrix (%d nonzeros): offsets out of order or a column out of [0, %d) or not above the previous one", bad, m.rows, m.cols, m.nnz, m.cols)
	}
	return nil
}

// Download copies m to the host in amg's layout.
func (m *Matrix) Download() (ptr []int, col []int32, val []float64, err error) {
	p32 := make([]int32, m.rows+1)
	col = make([]int32, m.nnz)
	val = make([]float64, m.nnz)
	if err = m.d.l.Stream.Synchronize(); err != nil {
		return nil, nil, nil, err
	}
	if err = cuda.CopyToHost(p32, m.ptr, 0); err == nil && m.nnz > 0 {
		err = errors.Join(cuda.CopyToHost(col, m.col, 0), cuda.CopyToHost(val, m.val, 0))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	ptr = make([]int, m.rows+1)
	for i, x := range p32 {
		ptr[i] = int(x)
	}
	return ptr, col, val, nil
}

// SetValues copies new values (NNZ of them) into m.
func (m *Matrix) SetValues(val []float64) error {
	if len(val) != m.nnz {
		return fmt.Errorf("gpusparse: %d values for a matrix of %d nonzeros", len(val), m.nnz)
	}
	return copyIn(m.val, val)
}

// Free releases the arrays m allocated (none for a wrapped matrix).
func (m *Matrix) Free() error {
	if m == nil || !m.owned {
		return nil
	}
	var err error
	for _, b := range []**cuda.Buffer{&m.ptr, &m.col, &m.val} {
		if *b != nil {
			err = errors.Join(err, (*b).Free())
			*b = nil
		}
	}
	return err
}
