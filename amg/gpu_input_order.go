package amg

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// The renumbering of the device setup's input: Options.Ordering as the
// host applies it (renumber), so that both build the same hierarchy. The
// device runs the host's reverse Cuthill–McKee a level at a time
// (input_order.cuh, the same level-synchronous search as
// order_search.go) and permutes the uploaded matrix in place of the
// host's copy; the host keeps the permutation, to translate Apply's and
// Solve's vectors, and a mirror of the renumbered matrix.

// Bounds of the device's renumbering; a matrix past one is the host's,
// which gives the same order. maxSearches bounds the components (of more
// than one vertex) searched one after another, maxLevels the levels of a
// search (each costs a read: a mesh that is a long chain of few vertices
// a level searches faster on the host), and maxOrderRow the rows, whose
// vertices one lane sorts past IN_ORDER_CAP (a dense constraint row).
const (
	maxSearches = 64
	maxLevels   = 4096
	maxOrderRow = 1024
)

// errRenumber hands the setup of a matrix that Options.Ordering
// renumbers to the host's renumber.
var errRenumber = fmt.Errorf("%w: the matrix is renumbered on the host (Options.Ordering)", errDeviceSetup)

// order returns d (with its diagonal diag) in the numbering that
// Options.Ordering gives it: d itself, or renumbered on the device for
// one dof per node (pc.perm and pc.fine, a mirror, set), or errRenumber
// for the host to renumber.
func (ds *devSetup) order(d *dcsr, diag *cuda.Buffer) (*dcsr, *cuda.Buffer, error) {
	pc := ds.pc
	o := &pc.opts
	switch o.Ordering {
	case NaturalOrdering:
		return d, diag, nil
	case AutoOrdering:
		far, err := ds.scattered(d)
		if err != nil || !far {
			return d, diag, err
		}
	}
	if !deviceOrders(o) || longestRow(pc.pool, pc.op) > maxOrderRow {
		return nil, nil, errRenumber
	}
	t0 := time.Now()
	d2, diag2, inv, err := ds.renumber(d, diag)
	if err != nil {
		return nil, nil, err
	}
	ds.release(d.ptr, d.col, d.val) // the caller's numbering is done with
	pc.perm = &permutation{inv: inv}
	pc.fine, err = ds.mirror(d2, d2.rows)
	pc.phase("order", t0)
	return d2, diag2, err
}

// deviceOrders reports whether the device renumbers a matrix itself:
// one dof per node, where the graph is the pattern (the host's graph of
// nodes is the strength graph at θ = 0).
func deviceOrders(o *Options) bool {
	return o.BlockSize == 1
}

// scattered is scattered(pc.op) counted on the device, on d, the
// caller's matrix as uploaded.
func (ds *devSetup) scattered(d *dcsr) (bool, error) {
	if d.rows <= orderWindow {
		return false, nil
	}
	ds.setWord(7, 0)
	ds.launchIn("in_far", 32*int64(d.rows), int32(d.rows), int32(orderWindow), d.ptr, d.col, ds.word(7))
	w, err := ds.read(ds.words, int64(7))
	if err != nil {
		return false, err
	}
	return farScatters(w[0], d.nnz, ds.pc.opts.BlockSize), nil
}

// renumber returns P·d·Pᵀ (rows sorted), its diagonal and P's inverse
// (the old row of every new one) on the host, P the reverse
// Cuthill–McKee order of d's pattern (cuthillMcKee).
func (ds *devSetup) renumber(d *dcsr, diag *cuda.Buffer) (*dcsr, *cuda.Buffer, []int32, error) {
	n := int64(d.rows)
	var bufs [5]*cuda.Buffer
	var errs [5]error
	for i := range 4 {
		bufs[i], errs[i] = ds.alloc(4 * n)
	}
	bufs[4], errs[4] = ds.alloc(8 * (n + 1))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, nil, nil, err
	}
	own, probe, order, queue, cnt := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]
	ds.launchIn("in_fill32", n, int32(n), own, int32(unowned))
	ds.launchIn("in_fill32", n, int32(n), probe, int32(unowned))
	if err := ds.searchAll(d, own, probe, order, queue, cnt); err != nil {
		return nil, nil, nil, err
	}
	inv, perm := queue, probe // free again
	ds.launchIn("in_reverse", n, int32(n), order, inv, perm)
	ds.launchIn("in_perm_len", n, int32(n), inv, d.ptr, cnt)
	ds.scan(cnt, n+1)
	d2 := &dcsr{rows: d.rows, nnz: d.nnz, g: d.g}
	d2.ptr, errs[0] = ds.keep(4 * (n + 1))
	d2.col, errs[1] = ds.keep(4 * int64(d.nnz))
	d2.val, errs[2] = ds.keep(8 * int64(d.nnz))
	diag2, err := ds.alloc(8 * n)
	if ds.pc.opts.Reuse {
		ds.dsrc, errs[3] = ds.keep(4 * int64(d.nnz))
	}
	if err := errors.Join(errs[0], errs[1], errs[2], errs[3], err); err != nil {
		return nil, nil, nil, err
	}
	ds.launchIn("in_permute", 32*n, int32(n), inv, perm, d.ptr, d.col, d.val, cnt, d2.col, d2.val, ds.dsrc)
	ds.launch("su_to_i32", n+1, n+1, cnt, d2.ptr)
	ds.launchIn("in_gather", n, n, inv, diag, diag2)
	h := make([]int32, n)
	if err := get(ds, h, inv); err != nil {
		return nil, nil, nil, err
	}
	return d2, diag2, h, nil
}

// searchAll is cuthillMcKee's loop over the components of d's pattern:
// the vertices before the next one with an edge that no search placed go
// alone, in id order; that one's component is probed and searched.
func (ds *devSetup) searchAll(d *dcsr, own, probe, order, queue, cnt *cuda.Buffer) error {
	n := d.rows
	placed, from := 0, 0
	for searches := 0; ; searches++ {
		ds.setWord(7, noWord)
		ds.launchIn("in_first_edge", int64(n-from), int32(n), int32(from), d.ptr, d.col, own, ds.word(7))
		w, err := ds.read(ds.words, int64(7))
		if err != nil {
			return err
		}
		to := n
		if w[0] != noWord {
			to = int(w[0])
		}
		if to > from {
			ds.launchIn("in_alone_count", int64(to-from), int32(from), int32(to), own, cnt)
			ds.scan(cnt, int64(to-from+1))
			ds.launchIn("in_alone_place", int64(to-from), int32(from), int32(to), int32(placed), own, cnt, order)
			c, err := ds.read(cnt, int64(to-from))
			if err != nil {
				return err
			}
			placed += int(c[0])
		}
		if w[0] == noWord {
			break
		}
		if searches == maxSearches {
			return errRenumber
		}
		ds.launchIn("in_start", 1, int32(0), int32(to), queue, int32(0), queue, probe)
		end, err := ds.levels(d, probe, own, queue, cnt, 0, 1, false)
		if err != nil {
			return err
		}
		ds.launchIn("in_unmark", int64(end), int32(end), queue, probe)
		ds.launchIn("in_start", 1, int32(placed), int32(-1), queue, int32(end-1), order, own)
		if placed, err = ds.levels(d, own, nil, order, cnt, placed, placed+1, true); err != nil {
			return err
		}
		from = to + 1
	}
	if placed != n {
		return fmt.Errorf("amg: the device's renumbering placed %d of %d rows", placed, n)
	}
	return nil
}

// levels runs a search from q[lo:hi] level by level (the vertices
// neither own nor placed, if not nil, has placed; by (degree, id) when
// sorted) and returns where q ends.
func (ds *devSetup) levels(d *dcsr, own, placed, q, cnt *cuda.Buffer, lo, hi int, sorted bool) (int, error) {
	for l := 0; lo < hi; l++ {
		if l == maxLevels {
			return 0, errRenumber
		}
		m := int64(hi - lo)
		ds.launchIn("in_claim", 32*m, int32(lo), int32(m), q, d.ptr, d.col, own, placed)
		ds.launchIn("in_won_count", 32*m, int32(lo), int32(m), q, d.ptr, d.col, own, cnt)
		ds.scan(cnt, m+1)
		ds.launchIn("in_won_place", 32*m, int32(lo), int32(m), int32(hi), b2i32(sorted), q, d.ptr, d.col, own, cnt)
		w, err := ds.read(cnt, m)
		if err != nil {
			return 0, err
		}
		lo, hi = hi, hi+int(w[0])
	}
	return hi, nil
}

// longestRow returns the most entries of a row of a (a host matrix).
func longestRow(p pool, a *csr) int {
	var m atomic.Int64
	p.forRange(a.rows, a.rows, func(lo, hi int) {
		l := 0
		for i := lo; i < hi; i++ {
			l = max(l, a.ptr[i+1]-a.ptr[i])
		}
		for o := m.Load(); int64(l) > o && !m.CompareAndSwap(o, int64(l)); o = m.Load() {
		}
	})
	return int(m.Load())
}
