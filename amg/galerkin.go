package amg

import (
	"slices"
	"sync"
)

// galerkinChunks is the number of fine-row chunks in which galerkinStreamed
// forms a·p: the largest intermediate is about 1/galerkinChunks of it.
const galerkinChunks = 16

// galerkinStreamed returns pᵀ·(a·p) without holding a·p or pᵀ. The rows of
// a come in groups of ga sharing a pattern (so do those of p and a·p when
// groupOf(p, ga) = ga, else fine rows are taken one by one), and the
// columns of p in blocks of gc = the coarse block size: a row of p holds
// all or none of a block's columns (blockCols checks it), so the coarse
// rows of a block share their pattern.
//
// The pattern comes first, block by block of coarse rows, from the fine
// groups that p couples to the block (support lists, one entry per fine
// group and coarse block). Then a·p is formed chunk by chunk of fine rows,
// in ascending order, into one reused buffer, and each fine row's product
// is scattered into the coarse rows its row of p reaches, its columns
// located in the block's sorted pattern by one merge per fine group and
// block. Each coarse entry so accumulates p_ki·(a·p)_kj in ascending fine
// row k, with (a·p)_kj formed as mulMat forms it: bitwise the result of
// mulMat(pᵀ, mulMat(a, p)), for any worker count (workers own blocks of
// coarse rows).
//
// With gc = 1 (scalar problems) one fine row reaches few coarse rows and
// a merge per pair would cost more than the products it locates, so the
// scatter runs by rows of pᵀ instead (built here and returned), each
// coarse row's columns located by a position marker.
func (pl pool) galerkinStreamed(a, p *csr, ga, gc int) (ac, r *csr) {
	fg := 1
	if groupOf(p, ga) == ga {
		fg = ga
	}
	var sup *csr
	var cursor []int
	if gc == 1 && fg == 1 {
		r = p.transpose()
		sup, cursor = r, slices.Clone(r.ptr[:r.rows])
	} else {
		sup = supportLists(p, fg, gc)
	}
	ac = pl.galerkinPattern(a, p, sup, fg, gc)
	var ap csr
	scr := make([]*spgemmScratch, pl.workers) // reused by every chunk
	ng := a.rows / ga
	lo := 0
	for c := 1; lo < ng; c++ {
		hi := ng
		if c < galerkinChunks {
			hi = max(lo+1, (searchPtr(a.ptr, lo*ga, a.nnz()*c/galerkinChunks)+ga-1)/ga)
			hi = min(hi, ng)
		}
		// The scatter by rows of pᵀ locates columns by a marker, so
		// the product's rows need no sorting there.
		pl.mulMatRange(a, p, ga, lo, hi, &ap, scr, r == nil)
		if r != nil {
			pl.scatterRows(r, &ap, ac, lo*ga, hi*ga, cursor)
		} else {
			pl.scatterChunk(p, &ap, ac, fg, gc, lo*ga, hi*ga)
		}
		lo = hi
	}
	return ac, r
}

// galerkinWhole returns pᵀ·(a·p) and pᵀ, the way galerkinStreamed does
// but holding a·p whole: with one worker each product is one pass that
// appends its rows, where the streamed one needs a pass for the pattern
// of pᵀ·a·p besides. The sums are mulMat's, so the result is bitwise
// galerkinStreamed's. Setup uses it on problems small enough that it
// leaves their garbage to the collector (gcNonzeros), whose a·p is a few
// MB at most.
func (pl pool) galerkinWhole(a, p *csr, ga, gc int) (ac, r *csr) {
	var ap csr
	pl.mulMatRange(a, p, ga, 0, a.rows/ga, &ap, make([]*spgemmScratch, pl.workers), false)
	r = p.transpose()
	ac = new(csr)
	gr := groupOf(r, gc)
	pl.mulMatRange(r, &ap, gr, 0, r.rows/gr, ac, make([]*spgemmScratch, pl.workers), true)
	// The streamed product adds every term to a zero, mulMat starts
	// from the first term: they differ only where every term is −0,
	// which the zero turns into +0.
	for k := range ac.val {
		ac.val[k] += 0
	}
	return ac, r
}

// blockCols reports whether every row of p holds all or none of the
// columns of each block of g consecutive columns.
func blockCols(p *csr, g int) bool {
	if g <= 1 || p.cols%g != 0 {
		return g == 1
	}
	for i := 0; i < p.rows; i++ {
		cols := p.col[p.ptr[i]:p.ptr[i+1]]
		if len(cols)%g != 0 {
			return false
		}
		for q := 0; q < len(cols); q += g {
			if int(cols[q])%g != 0 || int(cols[q+g-1]) != int(cols[q])+g-1 {
				return false
			}
		}
	}
	return true
}

// supportLists returns, for every block of gc coarse columns, the fine row
// groups (of fg rows) whose rows of p reach it, ascending, as CSR.
func supportLists(p *csr, fg, gc int) *csr {
	nb := p.cols / gc
	s := &csr{rows: nb, cols: p.rows / fg, ptr: make([]int, nb+1)}
	for k := 0; k < p.rows; k += fg {
		for q := p.ptr[k]; q < p.ptr[k+1]; q += gc {
			s.ptr[int(p.col[q])/gc+1]++
		}
	}
	for i := 0; i < nb; i++ {
		s.ptr[i+1] += s.ptr[i]
	}
	s.col = make([]int32, s.ptr[nb])
	pos := slices.Clone(s.ptr[:nb])
	for k := 0; k < p.rows; k += fg {
		for q := p.ptr[k]; q < p.ptr[k+1]; q += gc {
			b := int(p.col[q]) / gc
			s.col[pos[b]] = int32(k / fg)
			pos[b]++
		}
	}
	return s
}

// patternSlab is the size of galerkinPattern's list slabs (256 KiB).
const patternSlab = 1 << 16

// galerkinPattern returns pᵀ·a·p with its pattern and zero values.
func (pl pool) galerkinPattern(a, p, sup *csr, fg, gc int) *csr {
	n := p.cols
	nb := n / gc
	ac := &csr{rows: n, cols: n, ptr: make([]int, n+1)}
	gp := groupOf(p, fg)
	// The fine neighbourhood of a block's support is visited once per
	// group of p's rows (fmark), then the coarse columns once (mark).
	visit := func(s *spgemmScratch, blk int, mk int32) []int32 {
		s.list = s.list[:0]
		if s.fine == nil {
			s.fine = make([]int32, p.rows/gp)
			for i := range s.fine {
				s.fine[i] = -1
			}
		}
		fmark, mark := s.fine, s.mark
		for _, kg := range sup.col[sup.ptr[blk]:sup.ptr[blk+1]] {
			k := int(kg) * fg
			for _, c := range a.col[a.ptr[k]:a.ptr[k+1]] {
				l := int(c)
				if gp > 1 {
					// A division by a variable costs more than the
					// rest of the step: only systems pay it.
					l /= gp
				}
				if fmark[l] == mk {
					continue
				}
				fmark[l] = mk
				l = int(c)
				for _, j := range p.col[p.ptr[l]:p.ptr[l+1]] {
					if mark[j] != mk {
						mark[j] = mk
						s.list = append(s.list, j)
					}
				}
			}
		}
		return s.list
	}
	// One pass: every block's sorted list (one per block, not per row)
	// goes into slabs of fixed size, then into place. Lists appended to
	// one growing buffer would leave garbage of several times their size
	// beside the product's largest arrays.
	rows := make([][]int32, nb)
	pl.eachPart(pl.groupParts(sup, 1), n, 0, func(lo, hi int, s *spgemmScratch) {
		var slab []int32
		for blk := lo; blk < hi; blk++ {
			row := visit(s, blk, int32(blk))
			slices.Sort(row)
			if cap(slab)-len(slab) < len(row) {
				slab = make([]int32, 0, max(patternSlab, len(row)))
			}
			at := len(slab)
			slab = append(slab, row...)
			rows[blk] = slab[at:len(slab):len(slab)]
			for t := 0; t < gc; t++ {
				ac.ptr[blk*gc+t+1] = len(row)
			}
		}
	})
	for i := 0; i < n; i++ {
		ac.ptr[i+1] += ac.ptr[i]
	}
	ac.col = make([]int32, ac.ptr[n])
	ac.val = make([]float64, ac.ptr[n])
	for blk, row := range rows {
		for r := 0; r < gc; r++ {
			copy(ac.col[ac.ptr[blk*gc+r]:], row)
		}
	}
	return ac
}

// mulMatRange sets c to the rows of a·b in row groups [lo, hi) of size g
// (local row numbers from 0), reusing c's arrays and the scratch in scr
// (one per worker; the marks of disjoint ranges never collide). Rows are
// sorted with sorted, in the order accumulate finds the columns without.
func (pl pool) mulMatRange(a, b *csr, g, lo, hi int, c *csr, scr []*spgemmScratch, sorted bool) {
	rows := (hi - lo) * g
	c.rows, c.cols = rows, b.cols
	c.ptr = slices.Grow(c.ptr[:0], rows+1)[:rows+1]
	c.ptr[0] = 0
	bounds := pl.groupRange(a, g, lo, hi)
	scr = scr[:len(bounds)-1]
	if len(scr) == 1 {
		// One worker: append as the rows come, without a symbolic pass
		// to place them (c's arrays are reused from chunk to chunk).
		if scr[0] == nil {
			scr[0] = newScratch(b.cols, g)
		}
		s := scr[0]
		if cap(c.col) == 0 {
			// The rows of the first galerkinChunks-th of a's entries
			// (the first chunk of galerkinStreamed) size the buffer
			// for the whole range, with an eighth to spare: grown by
			// append from nothing, it would leave garbage of several
			// times its size, and counting every row of a long range
			// would cost a third of the product.
			end, stop := lo, a.ptr[lo*g]+a.nnz()/galerkinChunks
			nz := 0
			for ; end < hi && (end == lo || a.ptr[end*g] < stop); end++ {
				nz += s.count(a, b, end, g) * g
			}
			nz = int(float64(nz) * float64(a.ptr[hi*g]-a.ptr[lo*g]) / float64(max(1, a.ptr[end*g]-a.ptr[lo*g])))
			nz += nz / 8
			c.col, c.val = make([]int32, 0, nz), make([]float64, 0, nz)
		}
		c.col, c.val = c.col[:0], c.val[:0]
		for grp := lo; grp < hi; grp++ {
			row := s.accumulate(a, b, grp, g)
			if sorted {
				slices.Sort(row)
			}
			for t := 0; t < g; t++ {
				c.col = append(c.col, row...)
				for _, j := range row {
					c.val = append(c.val, s.acc[int(j)*g+t])
				}
				c.ptr[(grp-lo)*g+t+1] = len(c.col)
			}
		}
		return
	}
	pl.eachPartWith(bounds, scr, b.cols, g, func(l, h int, s *spgemmScratch) {
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
	pl.eachPartWith(bounds, scr, b.cols, g, func(l, h int, s *spgemmScratch) {
		for grp := l; grp < h; grp++ {
			row := s.accumulate(a, b, grp, g)
			if sorted {
				slices.Sort(row)
			}
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

// scatterChunk adds p_ki·(a·p)_k for the fine rows k in [k0, k1), whose
// products ap holds (row k at k−k0), into the coarse rows i of ac that p's
// row k reaches. Worker t owns the coarse blocks of its range, so every
// entry is written by one goroutine, in ascending k.
func (pl pool) scatterChunk(p, ap, ac *csr, fg, gc, k0, k1 int) {
	nb := p.cols / gc
	w := min(pl.workers, nb)
	if w < 1 || ap.nnz()*gc < minParallel {
		w = 1
	}
	var wg sync.WaitGroup
	wg.Add(w)
	for t := 0; t < w; t++ {
		go func(blo, bhi int) {
			defer wg.Done()
			var pos []int
			for k := k0; k < k1; k += fg {
				apc := ap.col[ap.ptr[k-k0]:ap.ptr[k-k0+1]]
				for q := p.ptr[k]; q < p.ptr[k+1]; q += gc {
					blk := int(p.col[q]) / gc
					if blk < blo || blk >= bhi {
						continue
					}
					// Offsets of the product's columns in the block's
					// pattern, which holds them all: one merge.
					i0 := blk * gc
					cols := ac.col[ac.ptr[i0]:ac.ptr[i0+1]]
					pos = pos[:0]
					u := 0
					for _, j := range apc {
						for cols[u] != j {
							u++
						}
						pos = append(pos, u)
					}
					for f := 0; f < fg; f++ {
						kk := k + f
						apv := ap.val[ap.ptr[kk-k0]:ap.ptr[kk-k0+1]]
						pq := p.ptr[kk] + (q - p.ptr[k])
						for r := 0; r < gc; r++ {
							pv := p.val[pq+r]
							out := ac.val[ac.ptr[i0+r]:ac.ptr[i0+r+1]]
							for m, x := range apv {
								out[pos[m]] += float64(pv * x) // no fused multiply-add (see accumulate)
							}
						}
					}
				}
			}
		}(nb*t/w, nb*(t+1)/w)
	}
	wg.Wait()
}

// scatterRows adds r_ik·(a·p)_k for the fine rows k in [k0, k1), whose
// products ap holds (row k at k−k0), into the coarse rows of ac. cursor[i]
// is the first entry of r's row i not yet added; rows of r are sorted, so
// chunks taken in ascending order add every row's terms in r's order.
func (pl pool) scatterRows(r, ap, ac *csr, k0, k1 int, cursor []int) {
	const gr = 1
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
							out[pos[j]] += float64(rv * apv[u])
						}
					}
					cursor[i] = q
				}
			}
		}(bounds[t], bounds[t+1])
	}
	wg.Wait()
}

// prolong adds p·xc to x for level l. One worker scatters from the rows
// of the stored transpose where there is one, into the level's scratch
// l.tmp (free between the smoothings), and adds that to x: pᵀ's rows are
// long, where p's rows of 1–10 entries (scalar problems) end in a
// mispredicted branch each. Otherwise the rows of p are read. Both add
// every x_k's terms to a zero in ascending coarse order, then the sum to
// x_k, so they agree bitwise.
func (pl pool) prolong(l *level, xc, x []float64) {
	r := l.r
	if r == nil || pl.workers > 1 {
		pl.mulVecAdd(l.p, xc, x)
		return
	}
	t := l.tmp[:r.cols]
	scatterTrans(r, xc, t)
	x = x[:len(t)]
	for k, v := range t {
		x[k] += v
	}
}

// restrict sets y = pᵀ·x for level l: by rows of the stored transpose
// when there is one, otherwise scattered from p's rows in row order. Both
// add the terms of every y_i in ascending fine row order with one
// accumulator, so they agree bitwise.
func (pl pool) restrict(l *level, x, y []float64) {
	if l.r != nil {
		pl.mulVec(l.r, x, y)
		return
	}
	scatterTrans(l.p, x, y)
}

// scatterTrans sets y = aᵀ·x by scatter from a's rows in row order: every
// y_j adds its terms to a zero in ascending row order, as dotTo adds a
// row of the transpose.
func scatterTrans(a *csr, x, y []float64) {
	clear(y[:a.cols])
	col, val, ends, base := rowsFrom(a, 0, a.rows)
	xx := x[:len(ends)]
	q := 0
	for k, xk := range xx {
		end := min(ends[k]-base, len(col), len(val))
		for ; q < end; q++ {
			y[col[q]] += val[q] * xk
		}
	}
}
