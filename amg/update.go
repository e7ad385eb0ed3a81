package amg

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/mesh"
)

// Update replaces the matrix values, as Newton and time-stepping loops
// need. a must have the pattern of the matrix given to New, and is used in
// place as New uses it. With Options.Reuse it keeps the pattern-only part
// of the setup, the aggregates and the tentative prolongators, and
// recomputes the eigenvalue estimates, the smoothed prolongators, the
// Galerkin products (numerically, on the patterns already found), the
// smoothers and the coarse factor. Without it, it builds the hierarchy
// afresh. Either way the result is the hierarchy New would build from a
// when the aggregates do not depend on the values (θ = 0, the default
// for scalar problems).
func (pc *Preconditioner) Update(a *mesh.CSR[float64]) error {
	start := time.Now()
	for k := range pc.stats.Phases {
		delete(pc.stats.Phases, k)
	}
	m, err := pc.checkOnDevice(a)
	if m == nil && err == nil {
		t0 := time.Now()
		if m, err = pc.sameLayout(a); err != nil {
			return err
		}
		pc.phase("check", t0)
		err = pc.checkSymmetric(m)
	}
	if err != nil {
		return err
	}
	if !pc.opts.Reuse || pc.levels == nil {
		// A hierarchy that Close dropped is set up afresh, on the device
		// where the options say so.
		pc.op = m
		if pc.dev != nil {
			_ = pc.release()
		}
		pc.levels, pc.coarse, pc.kernel, pc.userKernel = nil, nil, nil, nil
		if err := pc.setup(false); err != nil {
			return err
		}
		pc.stats.Setup = time.Since(start)
		return nil
	}
	fine0 := pc.levels[0].a == pc.fine
	pc.op = m
	switch {
	case pc.perm == nil:
		pc.fine = m
	case pc.perm.src != nil:
		pc.perm.values(pc.pool, m, pc.fine)
	case pc.reuse != nil && pc.reuse.staged:
		// The device renumbered the matrix and mapped the new values
		// (checkOnDevice): the host's mirror fills again when read.
		pc.fine.val = nil
	default:
		if err := pc.rebuild(); err != nil {
			return err
		}
		pc.stats.Setup = time.Since(start)
		return nil
	}
	if fine0 {
		pc.levels[0].a = pc.fine
	}
	if pc.keep != nil {
		// The hierarchy keeps the pattern it was built on.
		fine := pc.levels[0].a
		for q, k := range pc.keep {
			fine.val[q] = pc.fine.val[k]
		}
	}
	if done, err := pc.updateOnDevice(); done {
		if err != nil {
			return err
		}
		pc.stats.Setup = time.Since(start)
		return nil
	}
	for i, l := range pc.levels[:len(pc.levels)-1] {
		if err := pc.numeric(l); err != nil {
			return fmt.Errorf("amg: level %d: %w", i, err)
		}
		pc.galerkin(l, pc.levels[i+1].a)
	}
	if err := pc.finish(); err != nil {
		return err
	}
	if err := pc.findKernel(); err != nil {
		return err
	}
	pc.stats.Setup = time.Since(start)
	return nil
}

// sameLayout returns a's values on the operator's pattern, checked. When a
// has the operator's exact layout (sorted rows, as FEM codes reassemble
// into the same arrays) its values are used in place, read only;
// otherwise a is normalized and its pattern compared.
func (pc *Preconditioner) sameLayout(a *mesh.CSR[float64]) (*csr, error) {
	if m := pc.sameArrays(a); m != nil {
		if err := m.checkValues(); err != nil {
			return nil, err
		}
		return m, nil
	}
	m, err := fromMesh(pc.pool, a)
	if err != nil {
		return nil, err
	}
	if !samePattern(pc.op, m) {
		return nil, errors.New("amg: Update: the matrix pattern differs from the one given to New; build a new Preconditioner")
	}
	return m, nil
}

func samePattern(a, b *csr) bool {
	if a.rows != b.rows || a.cols != b.cols || a.nnz() != b.nnz() {
		return false
	}
	for i, p := range a.ptr {
		if b.ptr[i] != p {
			return false
		}
	}
	for k, c := range a.col {
		if b.col[k] != c {
			return false
		}
	}
	return true
}

// sameArrays returns a's values on the operator's pattern when a has its
// exact layout, else nil. Columns in the operator's own array (the
// caller reassembled into it) need no comparison.
func (pc *Preconditioner) sameArrays(a *mesh.CSR[float64]) *csr {
	op := pc.op
	nz := op.nnz()
	if a == nil || a.Rows != op.rows || a.Cols != op.cols || len(a.RowPtr) != op.rows+1 ||
		len(a.Col) != nz || len(a.Val) != nz || nz == 0 {
		return nil
	}
	var differ atomic.Bool
	pc.pool.forRange(len(a.RowPtr), len(a.RowPtr), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if a.RowPtr[i] != int64(op.ptr[i]) {
				differ.Store(true)
				return
			}
		}
	})
	if &a.Col[0] != &op.col[0] {
		pc.pool.forRange(nz, nz, func(lo, hi int) {
			for k := lo; k < hi && !differ.Load(); k++ {
				if a.Col[k] != op.col[k] {
					differ.Store(true)
				}
			}
		})
	}
	if differ.Load() {
		return nil
	}
	return &csr{rows: op.rows, cols: op.cols, ptr: op.ptr, col: op.col, val: a.Val[:nz:nz]}
}
