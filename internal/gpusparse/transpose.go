package gpusparse

import (
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// Transpose is T = Aᵀ on the device with sorted rows: its pattern and the
// position in A of each of its entries are formed once, its values by
// Numeric (a gather) whenever A's change.
type Transpose struct {
	a, t *Matrix
	perm *cuda.Buffer // entry x of T is entry perm[x] of A
}

// Transpose forms Aᵀ, pattern and values. A stays in use by Numeric.
func (d *Device) Transpose(a *Matrix) (*Transpose, error) {
	if a.d != d {
		return nil, fmt.Errorf("gpusparse: transpose of a matrix of another Device")
	}
	tr := &Transpose{a: a, t: &Matrix{rows: a.cols, cols: a.rows, nnz: a.nnz, owned: true, d: d}}
	err := d.run(tr.symbolic)
	if err == nil {
		err = tr.Numeric()
	}
	if err != nil {
		_ = tr.Free()
		return nil, err
	}
	return tr, nil
}

// T returns the transpose (owned by tr).
func (tr *Transpose) T() *Matrix { return tr.t }

// Free releases the transpose and its permutation.
func (tr *Transpose) Free() error {
	err := tr.t.Free()
	if tr.perm != nil {
		err = errors.Join(err, tr.perm.Free())
		tr.perm = nil
	}
	return err
}

// symbolic counts the entries of each column, scans them, scatters each
// entry's row and position to a free slot of its column, then sorts each
// column by row (ranks in shared memory, by a warp or for rows over
// RowLimit by a block, or a bitmap for rows over midLimit).
func (tr *Transpose) symbolic(q *queue) error {
	a, t := tr.a, tr.t
	what := fmt.Sprintf("transpose of a %d×%d matrix", a.rows, a.cols)
	var err error
	if t.ptr, err = q.alloc(what+": row offsets", int64(t.rows+1)*4); err != nil {
		return err
	}
	s := q.d.l.Stream
	if err = t.ptr.MemsetAsync32(0, s); err != nil {
		return err
	}
	if err = q.launch("sp_tr_count", a.nnz, 256, int32(a.nnz), a.col, t.ptr.Ptr()+4); err != nil {
		return err
	}
	if _, err = q.scan(what, t.ptr, t.rows); err != nil {
		return err
	}
	if err = t.alloc(q, what); err != nil {
		return err
	}
	if tr.perm, err = q.alloc(what+": permutation", int64(t.nnz)*4); err != nil {
		return err
	}
	cursor, err := q.scratch(what+": cursors", int64(t.rows+2)*4)
	if err != nil {
		return err
	}
	if err = cuda.CopyDeviceAsync(cursor, 0, t.ptr, 0, int64(t.rows+1)*4, s); err != nil {
		return err
	}
	if err = q.launch("sp_tr_scatter", a.rows, 256, int32(a.rows), a.ptr, a.col, cursor, t.col, tr.perm); err != nil {
		return err
	}
	// The cursors are spent: they hold the list of long rows now, and
	// at its end the counts of rows over RowLimit and over midLimit.
	nlongAt := int64(t.rows) * 4
	if err = cursor.MemsetAsync32(0, s); err != nil {
		return err
	}
	if err = q.launch("sp_tr_sort", t.rows, 8, int32(t.rows), t.ptr, t.col, tr.perm, cursor, cursor.Ptr()+uintptr(nlongAt)); err != nil {
		return err
	}
	nl, err := q.readInt32(cursor, nlongAt)
	if err != nil || nl == 0 {
		return err
	}
	if err = q.launch("sp_tr_mid", int(nl), 1, cursor, nl, t.ptr, t.col, tr.perm); err != nil {
		return err
	}
	nhuge, err := q.readInt32(cursor, nlongAt+4)
	if err != nil || nhuge == 0 {
		return err
	}
	words := (a.rows + 31) / 32
	nb, bits, err := q.longBlocks(what, int(nhuge), words)
	if err != nil {
		return err
	}
	return q.launchGrid("sp_tr_long", nb, cursor, nl, a.ptr, a.col, t.ptr, t.col, tr.perm, bits, int32(words))
}

// Numeric copies A's current values into the transpose.
func (tr *Transpose) Numeric() error { return tr.a.d.run(tr.numeric) }

// numeric queues the gather of the values on q.
func (tr *Transpose) numeric(q *queue) error {
	return q.launch("sp_gather", tr.t.nnz, 256, int32(tr.t.nnz), tr.perm, tr.a.val, tr.t.val)
}
