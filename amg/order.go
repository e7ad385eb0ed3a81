package amg

import (
	"fmt"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// Ordering selects the numbering that the hierarchy is built and cycled
// in. A product with a matrix streams its entries and gathers x at their
// columns; when the columns of a row lie far from it, every entry costs a
// cache line of x, more than the entry itself (12 bytes). Mesh generators
// such as Gmsh number nodes in an order that does that: the P1 tetrahedra
// of the harness have half their entries more than 16,384 rows from the
// diagonal, and a V-cycle on them cost 1.3× GAMG's until renumbered.
type Ordering int

const (
	// AutoOrdering renumbers by RCM when the numbering given scatters the
	// matrix (see scattered): the far gathers of a product would move more
	// bytes than its entries. It costs a copy of the matrix (the
	// renumbered one), so systems with blocks of 3, whose entries share
	// their cache lines, keep their numbering.
	AutoOrdering Ordering = iota
	// NaturalOrdering keeps the numbering given.
	NaturalOrdering
	// RCMOrdering renumbers the nodes by reverse Cuthill–McKee on the
	// matrix graph (mesh.RCM): bands of about one mesh front, so that a
	// row's neighbours share its cache lines.
	RCMOrdering
)

func (k Ordering) String() string {
	switch k {
	case AutoOrdering:
		return "auto"
	case NaturalOrdering:
		return "natural"
	case RCMOrdering:
		return "rcm"
	}
	return fmt.Sprintf("Ordering(%d)", int(k))
}

// orderWindow is the distance (rows) within which the gathers of a
// product stay in cache: 2·16384 values of x are 256 KiB, half of a
// small L2, with the rows of the matrix streaming past.
const orderWindow = 1 << 14

// scattered reports whether a gathers badly: whether the entries more
// than orderWindow rows from their row would, at a cache line (64 bytes)
// per node block each, shared by the bs rows of a node, move more bytes
// than the entries themselves (12 bytes each). Scalar matrices renumber
// from a fifth of their entries far; blocks of 2 from three quarters;
// blocks of 3 never. One pass over the column ids.
func scattered(p pool, a *csr, bs int) bool {
	if a.rows <= orderWindow {
		return false
	}
	far := p.sumChunks(a.rows, func(lo, hi int) float64 {
		f := 0
		for i := lo; i < hi; i++ {
			for _, j := range a.col[a.ptr[i]:a.ptr[i+1]] {
				if d := int(j) - i; d > orderWindow || d < -orderWindow {
					f++
				}
			}
		}
		return float64(f)
	})
	return farScatters(uint64(far), a.nnz(), bs)
}

// farScatters is scattered's rule on far entries of nnz.
func farScatters(far uint64, nnz, bs int) bool {
	return float64(far)*64 > 12*float64(bs*bs)*float64(nnz)
}

// permutation is a renumbering of the dofs: the hierarchy works in the
// new numbering, Apply and Solve translate at their boundary.
type permutation struct {
	inv []int32 // the caller's dof at every dof of the hierarchy
	// src is the position in the caller's matrix of every entry of the
	// renumbered one, kept for Update with Options.Reuse (nil without).
	src []int32
}

// ordering returns the renumbering of a that o asks for, nil for none.
func ordering(p pool, a *csr, o *Options) (*permutation, error) {
	switch o.Ordering {
	case NaturalOrdering:
		return nil, nil
	case AutoOrdering:
		if !o.scattered && !scattered(p, a, o.BlockSize) {
			return nil, nil
		}
	}
	bs := o.BlockSize
	var g *mesh.Graph
	if bs == 1 {
		// The matrix pattern is the graph: its diagonal adds one to
		// every degree, which changes no comparison of RCM.
		g = &mesh.Graph{Offsets: offsets64(a.ptr), Adj: a.col}
	} else {
		var err error
		if g, err = strengthGraph(p, a, 0, bs); err != nil {
			return nil, err
		}
	}
	order := cuthillMcKee(p, g)
	inv := make([]int32, a.rows)
	for i, v := range order {
		for r := range bs {
			inv[i*bs+r] = v*int32(bs) + int32(r)
		}
	}
	return &permutation{inv: inv}, nil
}

// gather sets out[i] = v[inv[i]]: a vector of the caller's into the
// hierarchy's numbering.
func (q *permutation) gather(p pool, v, out []float64) {
	p.forRange(len(q.inv), len(q.inv), func(lo, hi int) {
		inv, o := q.inv[lo:hi], out[lo:hi]
		o = o[:len(inv)]
		for i, k := range inv {
			o[i] = v[k]
		}
	})
}

// scatter sets out[inv[i]] = v[i]: back into the caller's numbering.
func (q *permutation) scatter(p pool, v, out []float64) {
	p.forRange(len(q.inv), len(q.inv), func(lo, hi int) {
		inv, vv := q.inv[lo:hi], v[lo:hi]
		vv = vv[:len(inv)]
		for i, k := range inv {
			out[k] = vv[i]
		}
	})
}

// rows returns the n×k row-major array b with its rows renumbered.
func (q *permutation) rows(b []float64, k int) []float64 {
	out := make([]float64, len(b))
	for i, old := range q.inv {
		copy(out[i*k:(i+1)*k], b[int(old)*k:int(old+1)*k])
	}
	return out
}

// matrix returns P·a·Pᵀ in the hierarchy's numbering, rows sorted, and
// with src the position in a of each entry (q.src).
func (q *permutation) matrix(p pool, a *csr, src bool) *csr {
	n := a.rows
	perm := make([]int32, n) // perm[old] = new
	for i, old := range q.inv {
		perm[old] = int32(i)
	}
	c := &csr{rows: n, cols: n, ptr: make([]int, n+1), col: make([]int32, a.nnz()), val: make([]float64, a.nnz())}
	for i, old := range q.inv {
		c.ptr[i+1] = c.ptr[i] + a.ptr[old+1] - a.ptr[old]
	}
	if src {
		q.src = make([]int32, a.nnz())
	}
	// Rows are read in the caller's order, streaming, and written to
	// their new places: a gather of rows in the new order would wait on
	// a cache miss per row of a scattered matrix.
	p.forRange(n, a.nnz(), func(lo, hi int) {
		var keys []uint64
		for old := lo; old < hi; old++ {
			k0, k1, d := a.ptr[old], a.ptr[old+1], c.ptr[perm[old]]
			// Sort the row by new column, its offset in the old row
			// riding in the low bits.
			keys = keys[:0]
			for k, j := range a.col[k0:k1] {
				keys = append(keys, uint64(perm[j])<<32|uint64(k))
			}
			sortKeys(keys)
			vals := a.val[k0:k1]
			cc, cv := c.col[d:d+len(keys)], c.val[d:d+len(keys)]
			for t, key := range keys {
				cc[t], cv[t] = int32(key>>32), vals[uint32(key)]
			}
			if q.src != nil {
				for t, key := range keys {
					q.src[d+t] = int32(k0 + int(uint32(key)))
				}
			}
		}
	})
	return c
}

// sortKeys sorts a row's keys: insertion sort for the short rows of mesh
// matrices, the library sort beyond.
func sortKeys(keys []uint64) {
	if len(keys) > 48 {
		slices.Sort(keys)
		return
	}
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i - 1
		for j >= 0 && keys[j] > k {
			keys[j+1] = keys[j]
			j--
		}
		keys[j+1] = k
	}
}

// values copies the values of a, which has the caller's pattern, into
// the renumbered c through src.
func (q *permutation) values(p pool, a, c *csr) {
	p.forRange(len(q.src), len(q.src), func(lo, hi int) {
		src, v := q.src[lo:hi], c.val[lo:hi]
		v = v[:len(src)]
		for t, k := range src {
			v[t] = a.val[k]
		}
	})
}

// renumber sets pc.perm to the renumbering the options ask for and
// pc.fine to pc.op in it.
func (pc *Preconditioner) renumber() error {
	pc.fine, pc.perm = pc.op, nil
	q, err := ordering(pc.pool, pc.op, &pc.opts)
	if err != nil || q == nil {
		return err
	}
	pc.fine, pc.perm = q.matrix(pc.pool, pc.op, pc.opts.Reuse), q
	return nil
}
