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
}

func newScratch(cols, g int) *spgemmScratch {
	s := &spgemmScratch{mark: make([]int32, cols), acc: make([]float64, cols*g)}
	for i := range s.mark {
		s.mark[i] = -1
	}
	return s
}

// mulMat returns c = a·b with sorted rows; the rows of a come in groups of
// g sharing a pattern (see groupOf; g = 1 always works).
//
// Every entry c_ij accumulates a_ik·b_kj in a fixed order, over k in a's
// row order and then b's, whatever the grouping and the worker count. So
// c is the same for any worker count, and mulMatNumeric on c's pattern
// reproduces it bitwise.
func (p pool) mulMat(a, b *csr, g int) *csr {
	n := a.rows
	ng := n / g
	w := p.workers
	if w > ng {
		w = ng
	}
	if w < 1 || a.nnz()+n < minParallel {
		w = 1
	}
	type part struct {
		lo, hi int // groups
		cnt    []int
		col    []int32
		val    []float64
	}
	parts := make([]part, w)
	lo := 0
	for t := range parts {
		hi := ng
		if t < w-1 {
			hi = (searchPtr(a.ptr, lo*g, a.nnz()*(t+1)/w) + g - 1) / g
			hi = max(hi, lo)
		}
		parts[t].lo, parts[t].hi = lo, hi
		lo = hi
	}
	var wg sync.WaitGroup
	wg.Add(w)
	for t := range parts {
		go func(pt *part) {
			defer wg.Done()
			s := newScratch(b.cols, g)
			pt.cnt = make([]int, pt.hi-pt.lo)
			// The products here (A·T, A·P, R·AP) have about as many
			// entries as their left factor; append grows the rest.
			est := 0
			if pt.hi > pt.lo {
				est = a.ptr[pt.hi*g] - a.ptr[pt.lo*g]
			}
			pt.col = make([]int32, 0, est+16)
			pt.val = make([]float64, 0, est+16)
			for grp := pt.lo; grp < pt.hi; grp++ {
				row := s.accumulate(a, b, grp, g)
				slices.Sort(row)
				for r := 0; r < g; r++ {
					pt.col = append(pt.col, row...)
					for _, j := range row {
						pt.val = append(pt.val, s.acc[int(j)*g+r])
					}
				}
				pt.cnt[grp-pt.lo] = len(row)
			}
		}(&parts[t])
	}
	wg.Wait()
	c := &csr{rows: n, cols: b.cols, ptr: make([]int, n+1)}
	for t := range parts {
		pt := &parts[t]
		for grp := pt.lo; grp < pt.hi; grp++ {
			for r := 0; r < g; r++ {
				i := grp*g + r
				c.ptr[i+1] = c.ptr[i] + pt.cnt[grp-pt.lo]
			}
		}
	}
	if w == 1 {
		c.col, c.val = slices.Clip(parts[0].col), slices.Clip(parts[0].val)
		return c
	}
	c.col = make([]int32, c.ptr[n])
	c.val = make([]float64, c.ptr[n])
	p.forRange(w, c.ptr[n], func(tlo, thi int) {
		for t := tlo; t < thi; t++ {
			pt := &parts[t]
			copy(c.col[c.ptr[pt.lo*g]:], pt.col)
			copy(c.val[c.ptr[pt.lo*g]:], pt.val)
		}
	})
	return c
}

// accumulate forms the rows of group grp of a·b in s.acc (column j of row
// r at j·g+r) and returns their common column list, unsorted. The marker
// holds the last group that touched a column.
func (s *spgemmScratch) accumulate(a, b *csr, grp, g int) []int32 {
	s.list = s.list[:0]
	i0 := grp * g
	mk := int32(grp)
	lo, hi := a.ptr[i0], a.ptr[i0+1]
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
					acc[j] += av * bv[q]
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
					ac[r] += av[r] * x
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
