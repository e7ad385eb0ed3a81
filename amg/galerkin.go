package amg

import (
	"slices"
	"sync"
)

// galerkinChunks is the number of fine-row chunks in which galerkinStreamed
// forms a·p: the largest intermediate is about 1/galerkinChunks of it.
const galerkinChunks = 16

// galerkinStreamed returns r·(a·p) without holding a·p whole. The pattern
// of the product comes first, row group by row group of r, from the
// patterns of r, a and p (rows of one group of a, p or r share their
// pattern, so each is visited once per group). Then a·p is formed chunk by
// chunk of fine rows, in ascending order, into one reused buffer, and
// every chunk's rows are scattered into the coarse rows that r couples
// them to. Each coarse entry so accumulates r_ik·(a·p)_kj over k in r's
// row order, with (a·p)_kj formed as mulMat forms it: the result is
// bitwise the one mulMat(r, mulMat(a, p)) gives, for any worker count.
func (pl pool) galerkinStreamed(a, p, r *csr, ga, gr int) *csr {
	gp := groupOf(p, ga)
	ac := pl.galerkinPattern(a, p, r, ga, gp, gr)
	cursor := slices.Clone(r.ptr[:r.rows])
	var ap csr
	ng := a.rows / ga
	lo := 0
	for c := 1; lo < ng; c++ {
		hi := ng
		if c < galerkinChunks {
			hi = max(lo+1, (searchPtr(a.ptr, lo*ga, a.nnz()*c/galerkinChunks)+ga-1)/ga)
			hi = min(hi, ng)
		}
		pl.mulMatRange(a, p, ga, lo, hi, &ap)
		pl.scatterChunk(r, &ap, ac, gr, lo*ga, hi*ga, cursor)
		lo = hi
	}
	return ac
}

// galerkinPattern returns r·a·p with its pattern and zero values.
func (pl pool) galerkinPattern(a, p, r *csr, ga, gp, gr int) *csr {
	n := r.rows
	ac := &csr{rows: n, cols: p.cols, ptr: make([]int, n+1)}
	bounds := pl.groupParts(r, gr)
	// visit calls fn on every coarse column of group grp, unsorted, once.
	visit := func(s *spgemmScratch, grp int, mk int32) []int32 {
		s.list = s.list[:0]
		i0 := grp * gr
		prevK := -1
		for q := r.ptr[i0]; q < r.ptr[i0+1]; q++ {
			k := int(r.col[q])
			if k/ga == prevK {
				continue
			}
			prevK = k / ga
			prevL := -1
			for t := a.ptr[k]; t < a.ptr[k+1]; t++ {
				l := int(a.col[t])
				if l/gp == prevL {
					continue
				}
				prevL = l / gp
				for _, j := range p.col[p.ptr[l]:p.ptr[l+1]] {
					if s.mark[j] != mk {
						s.mark[j] = mk
						s.list = append(s.list, j)
					}
				}
			}
		}
		return s.list
	}
	pl.eachPart(bounds, p.cols, 0, func(lo, hi int, s *spgemmScratch) {
		for grp := lo; grp < hi; grp++ {
			cnt := len(visit(s, grp, int32(-2-grp)))
			for t := 0; t < gr; t++ {
				ac.ptr[grp*gr+t+1] = cnt
			}
		}
	})
	for i := 0; i < n; i++ {
		ac.ptr[i+1] += ac.ptr[i]
	}
	ac.col = make([]int32, ac.ptr[n])
	ac.val = make([]float64, ac.ptr[n])
	pl.eachPart(bounds, p.cols, 0, func(lo, hi int, s *spgemmScratch) {
		for grp := lo; grp < hi; grp++ {
			row := visit(s, grp, int32(grp))
			slices.Sort(row)
			for t := 0; t < gr; t++ {
				copy(ac.col[ac.ptr[grp*gr+t]:], row)
			}
		}
	})
	return ac
}

// mulMatRange sets c to the rows of a·b in row groups [lo, hi) of size g
// (local row numbers from 0), reusing c's arrays.
func (pl pool) mulMatRange(a, b *csr, g, lo, hi int, c *csr) {
	rows := (hi - lo) * g
	c.rows, c.cols = rows, b.cols
	c.ptr = slices.Grow(c.ptr[:0], rows+1)[:rows+1]
	c.ptr[0] = 0
	bounds := pl.groupRange(a, g, lo, hi)
	pl.eachPart(bounds, b.cols, g, func(l, h int, s *spgemmScratch) {
		for grp := l; grp < h; grp++ {
			cnt := s.count(a, b, grp, g)
			for t := 0; t < g; t++ {
				c.ptr[(grp-lo)*g+t+1] = cnt
			}
		}
	})
	for i := 0; i < rows; i++ {
		c.ptr[i+1] += c.ptr[i]
	}
	nz := c.ptr[rows]
	c.col = slices.Grow(c.col[:0], nz)[:nz]
	c.val = slices.Grow(c.val[:0], nz)[:nz]
	pl.eachPart(bounds, b.cols, g, func(l, h int, s *spgemmScratch) {
		for grp := l; grp < h; grp++ {
			row := s.accumulate(a, b, grp, g)
			slices.Sort(row)
			for t := 0; t < g; t++ {
				q := c.ptr[(grp-lo)*g+t]
				copy(c.col[q:], row)
				vals := c.val[q : q+len(row)]
				for u, j := range row {
					vals[u] = s.acc[int(j)*g+t]
				}
			}
		}
	})
}

// scatterChunk adds r_ik·(a·p)_k for the fine rows k in [k0, k1), whose
// products ap holds (row k at k−k0), into the coarse rows of ac. cursor[i]
// is the first entry of r's row i not yet added; rows of r are sorted, so
// chunks taken in ascending order add every row's terms in r's order.
func (pl pool) scatterChunk(r, ap, ac *csr, gr, k0, k1 int, cursor []int) {
	bounds := pl.groupParts(r, gr)
	w := len(bounds) - 1
	var wg sync.WaitGroup
	wg.Add(w)
	for t := 0; t < w; t++ {
		go func(lo, hi int) {
			defer wg.Done()
			var pos []int32 // column → offset in the coarse group's rows
			for grp := lo; grp < hi; grp++ {
				i0 := grp * gr
				if cursor[i0] == r.ptr[i0+1] || int(r.col[cursor[i0]]) >= k1 {
					continue
				}
				if pos == nil {
					pos = make([]int32, ac.cols)
				}
				base := ac.ptr[i0]
				cols := ac.col[base:ac.ptr[i0+1]]
				for u, j := range cols {
					pos[j] = int32(u)
				}
				for i := i0; i < i0+gr; i++ {
					q := cursor[i]
					out := ac.val[ac.ptr[i]:ac.ptr[i+1]]
					for ; q < r.ptr[i+1] && int(r.col[q]) < k1; q++ {
						rv := r.val[q]
						k := int(r.col[q]) - k0
						apc, apv := ap.col[ap.ptr[k]:ap.ptr[k+1]], ap.val[ap.ptr[k]:ap.ptr[k+1]]
						apv = apv[:len(apc)]
						for u, j := range apc {
							out[pos[j]] += rv * apv[u]
						}
					}
					cursor[i] = q
				}
			}
		}(bounds[t], bounds[t+1])
	}
	wg.Wait()
}

// restrict sets y = pᵀ·x for level l: by rows of the stored transpose
// when there is one, otherwise scattered from p's rows in row order. Both
// add the terms of every y_i in ascending fine row order with one
// accumulator, so they agree bitwise.
func (pl pool) restrict(l *level, x, y []float64) {
	if l.r != nil {
		pl.forRows(l.r, func(lo, hi int) {
			r := l.r
			for i := lo; i < hi; i++ {
				s := 0.0
				vals := r.val[r.ptr[i]:r.ptr[i+1]]
				for q, k := range r.col[r.ptr[i]:r.ptr[i+1]] {
					s += vals[q] * x[k]
				}
				y[i] = s
			}
		})
		return
	}
	p := l.p
	clear(y[:p.cols])
	for k := 0; k < p.rows; k++ {
		xk := x[k]
		vals := p.val[p.ptr[k]:p.ptr[k+1]]
		for q, i := range p.col[p.ptr[k]:p.ptr[k+1]] {
			y[i] += vals[q] * xk
		}
	}
}
