package amg

import (
	"slices"
	"sync"
)

// maxGroup bounds the row groups of the products (the largest block size
// whose rows are handled together).
const maxGroup = 8

// groupOf returns g when the rows of a come in consecutive groups of g
// that share one column pattern (the rows of one node of a block
// matrix), and 1 otherwise. Products whose left factor is grouped load each
// entry of the right factor once per group instead of once per row.
func groupOf(a *csr, g int) int {
	if g <= 1 || g > maxGroup || a.rows%g != 0 {
		return 1
	}
	for i0 := 0; i0 < a.rows; i0 += g {
		p0 := a.col[a.ptr[i0]:a.ptr[i0+1]]
		for r := 1; r < g; r++ {
			if !slices.Equal(p0, a.col[a.ptr[i0+r]:a.ptr[i0+r+1]]) {
				return 1
			}
		}
	}
	return g
}

// spgemmScratch is one goroutine's dense accumulator and marker over the
// columns of the right factor: no maps, no per-row allocation.
type spgemmScratch struct {
	mark []int32
	acc  []float64
	list []int32
	fine []int32 // marker over fine row groups (galerkinPattern)
	// unitOf is the last right factor seen, unit whether each of its
	// rows holds at most one entry (a scalar tentative prolongator):
	// such rows are read without a slice and a loop of one.
	unitOf *csr
	unit   bool
}

// unitRows reports whether b's rows hold at most one entry each, caching
// the answer for b.
func (s *spgemmScratch) unitRows(b *csr) bool {
	if s.unitOf != b {
		s.unitOf, s.unit = b, true
		for i := 0; i < b.rows && s.unit; i++ {
			s.unit = b.ptr[i+1]-b.ptr[i] <= 1
		}
	}
	return s.unit
}

func newScratch(cols, g int) *spgemmScratch {
	s := &spgemmScratch{mark: make([]int32, cols), acc: make([]float64, cols*g)}
	for i := range s.mark {
		s.mark[i] = -1
	}
	return s
}

// mulMat returns c = a·b with sorted rows; the rows of a come in groups of
// g sharing a pattern (see groupOf; g = 1 always works). It runs in two
// passes, symbolic (row sizes) then numeric, so c is allocated once at its
// exact size and nothing of the product's size is held besides it.
//
// Every entry c_ij accumulates a_ik·b_kj in a fixed order, over k in a's
// row order and then b's, whatever the grouping and the worker count. So
// c is the same for any worker count, and mulMatNumeric on c's pattern
// reproduces it bitwise.
func (p pool) mulMat(a, b *csr, g int) *csr {
	n := a.rows
	c := &csr{rows: n, cols: b.cols, ptr: make([]int, n+1)}
	bounds := p.groupParts(a, g)
	p.eachPart(bounds, b.cols, g, func(lo, hi int, s *spgemmScratch) {
		for grp := lo; grp < hi; grp++ {
			cnt := s.count(a, b, grp, g)
			for r := 0; r < g; r++ {
				c.ptr[grp*g+r+1] = cnt
			}
		}
	})
	for i := 0; i < n; i++ {
		c.ptr[i+1] += c.ptr[i]
	}
	c.col = make([]int32, c.ptr[n])
	c.val = make([]float64, c.ptr[n])
	p.eachPart(bounds, b.cols, g, func(lo, hi int, s *spgemmScratch) {
		for grp := lo; grp < hi; grp++ {
			row := s.accumulate(a, b, grp, g)
			slices.Sort(row)
			for r := 0; r < g; r++ {
				q := c.ptr[grp*g+r]
				copy(c.col[q:], row)
				vals := c.val[q : q+len(row)]
				for t, j := range row {
					vals[t] = s.acc[int(j)*g+r]
				}
			}
		}
	})
	return c
}

// groupParts splits the row groups of a into one range per worker with
// about the same number of entries; bounds[t] is the first group of part t.
func (p pool) groupParts(a *csr, g int) []int { return p.groupRange(a, g, 0, a.rows/g) }

// groupRange splits the row groups [lo, hi) of a the same way.
func (p pool) groupRange(a *csr, g, lo, hi int) []int {
	first, nz := a.ptr[lo*g], a.ptr[hi*g]-a.ptr[lo*g]
	w := min(p.workers, hi-lo)
	if w < 1 || nz+(hi-lo)*g < minParallel {
		w = 1
	}
	bounds := make([]int, w+1)
	bounds[0] = lo
	for t := 1; t < w; t++ {
		b := (searchPtr(a.ptr, bounds[t-1]*g, first+nz*t/w) + g - 1) / g
		bounds[t] = min(max(b, bounds[t-1]), hi)
	}
	bounds[w] = hi
	return bounds
}

// eachPart runs fn on every part of bounds, one goroutine and scratch each.
func (p pool) eachPart(bounds []int, cols, g int, fn func(lo, hi int, s *spgemmScratch)) {
	p.eachPartWith(bounds, make([]*spgemmScratch, len(bounds)-1), cols, g, fn)
}

// eachPartWith is eachPart with the scratch of part t kept in scr[t] and
// reused from there (allocated when nil), so that repeated products do not
// leave garbage behind. Marks must differ between the uses of a scratch.
func (p pool) eachPartWith(bounds []int, scr []*spgemmScratch, cols, g int, fn func(lo, hi int, s *spgemmScratch)) {
	w := len(bounds) - 1
	for t := range w {
		if scr[t] == nil {
			scr[t] = newScratch(cols, g)
		}
	}
	if w == 1 {
		fn(bounds[0], bounds[1], scr[0])
		return
	}
	var wg sync.WaitGroup
	wg.Add(w)
	for t := 0; t < w; t++ {
		go func(lo, hi int, s *spgemmScratch) {
			defer wg.Done()
			fn(lo, hi, s)
		}(bounds[t], bounds[t+1], scr[t])
	}
	wg.Wait()
}

// count returns the number of columns in the rows of group grp of a·b.
// Its marks (−2−grp) never equal those of accumulate (grp).
func (s *spgemmScratch) count(a, b *csr, grp, g int) int {
	mk := int32(-2 - grp)
	i0 := grp * g
	cnt := 0
	if g == 1 && s.unitRows(b) {
		mark := s.mark
		for _, r := range a.col[a.ptr[i0]:a.ptr[i0+1]] {
			if q := b.ptr[r]; q < b.ptr[r+1] {
				if j := b.col[q]; mark[j] != mk {
					mark[j] = mk
					cnt++
				}
			}
		}
		return cnt
	}
	for k := a.ptr[i0]; k < a.ptr[i0+1]; k++ {
		r := a.col[k]
		for _, j := range b.col[b.ptr[r]:b.ptr[r+1]] {
			if s.mark[j] != mk {
				s.mark[j] = mk
				cnt++
			}
		}
	}
	return cnt
}

// accumulate forms the rows of group grp of a·b in s.acc (column j of row
// r at j·g+r) and returns their common column list, unsorted. The marker
// holds the last group that touched a column. The conversions round each
// product, so no architecture fuses it into a multiply-add: the sums are
// the same everywhere and equal internal/gpusparse's.
func (s *spgemmScratch) accumulate(a, b *csr, grp, g int) []int32 {
	s.list = s.list[:0]
	i0 := grp * g
	mk := int32(grp)
	lo, hi := a.ptr[i0], a.ptr[i0+1]
	if g == 1 && s.unitRows(b) {
		acc, mark := s.acc, s.mark
		ac, av := a.col[lo:hi], a.val[lo:hi]
		av = av[:len(ac)]
		for k, r := range ac {
			q := b.ptr[r]
			if q == b.ptr[r+1] {
				continue
			}
			j, x := b.col[q], av[k]*b.val[q]
			if mark[j] != mk {
				mark[j] = mk
				acc[j] = x
				s.list = append(s.list, j)
			} else {
				acc[j] += float64(x)
			}
		}
		return s.list
	}
	if g == 1 {
		acc := s.acc
		for k := lo; k < hi; k++ {
			r, av := a.col[k], a.val[k]
			bs, be := b.ptr[r], b.ptr[r+1]
			bc, bv := b.col[bs:be], b.val[bs:be]
			bv = bv[:len(bc)]
			for q, j := range bc {
				if s.mark[j] != mk {
					s.mark[j] = mk
					acc[j] = av * bv[q]
					s.list = append(s.list, j)
				} else {
					acc[j] += float64(av * bv[q])
				}
			}
		}
		return s.list
	}
	var av [maxGroup]float64
	for k := lo; k < hi; k++ {
		off := k - lo
		for r := 0; r < g; r++ {
			av[r] = a.val[a.ptr[i0+r]+off]
		}
		c := a.col[k]
		bs, be := b.ptr[c], b.ptr[c+1]
		bc, bv := b.col[bs:be], b.val[bs:be]
		bv = bv[:len(bc)]
		for q, j := range bc {
			x := bv[q]
			base := int(j) * g
			ac := s.acc[base : base+g : base+g]
			if s.mark[j] != mk {
				s.mark[j] = mk
				s.list = append(s.list, j)
				for r := range ac {
					ac[r] = av[r] * x
				}
			} else {
				for r := range ac {
					ac[r] += float64(av[r] * x)
				}
			}
		}
	}
	return s.list
}

// mulMatNumeric refills c.val with a·b on c's existing pattern, which must
// be the one mulMat returned for matrices with the patterns of a and b;
// g is the grouping mulMat used.
func (p pool) mulMatNumeric(a, b, c *csr, g int) {
	var mu sync.Mutex
	var free []*spgemmScratch
	p.forRange(a.rows/g, a.nnz(), func(lo, hi int) {
		mu.Lock()
		var s *spgemmScratch
		if k := len(free); k > 0 {
			s, free = free[k-1], free[:k-1]
		} else {
			s = newScratch(b.cols, g)
		}
		mu.Unlock()
		for grp := lo; grp < hi; grp++ {
			s.accumulate(a, b, grp, g)
			for r := 0; r < g; r++ {
				i := grp*g + r
				for k := c.ptr[i]; k < c.ptr[i+1]; k++ {
					c.val[k] = s.acc[int(c.col[k])*g+r]
				}
			}
		}
		mu.Lock()
		free = append(free, s)
		mu.Unlock()
	})
}
