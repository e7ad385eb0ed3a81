package amg

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// modelAT is su_at, both passes, rows in a random order: each row's
// entries sorted by (aggregate, position), each aggregate's segment
// summed in row order for its k columns, then smoothed as
// smoothProlongator does; with shortRows, the rows where k is 1 that
// su_at sums from codes (up to 32 entries, or SU_AT_RUNS of one dof a
// node) go through them (modelATShort*).
func modelAT(a, t *csr, of []int32, bs, k int, dinv []float64, omega float64, rng *rand.Rand, shortRows bool) *csr {
	n := a.rows
	type key struct{ g, q int32 }
	row := func(i int) []key {
		var keys []key
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			if g := of[int(a.col[q])/bs]; g >= 0 {
				keys = append(keys, key{g, int32(q)})
			}
		}
		slices.SortFunc(keys, func(x, y key) int { return cmp.Or(cmp.Compare(x.g, y.g), cmp.Compare(x.q, y.q)) })
		return keys
	}
	distinct := func(keys []key) int {
		u := 0
		for s := range keys {
			if s == 0 || keys[s-1].g != keys[s].g {
				u++
			}
		}
		return u
	}
	short := func(i int) bool {
		m := a.ptr[i+1] - a.ptr[i]
		return shortRows && k == 1 && (m <= 32 || bs == 1 && m <= suAtRuns)
	}
	scr := make([]int32, a.nnz())
	cnt := make([]int64, n+1)
	for _, i := range rng.Perm(n) {
		if short(i) {
			cnt[i+1] = int64(modelATShort0(a, of, bs, i, scr))
			continue
		}
		cnt[i+1] = int64(distinct(row(i)) * k)
	}
	modelScan(cnt)
	c := &csr{rows: n, cols: t.cols, ptr: make([]int, n+1)}
	for i, x := range cnt {
		c.ptr[i] = int(x)
	}
	c.col, c.val = make([]int32, c.ptr[n]), make([]float64, c.ptr[n])
	for _, i := range rng.Perm(n) {
		if short(i) {
			modelATShort1(a, t, of, bs, i, scr, dinv[i], omega, c)
			continue
		}
		keys, o := row(i), c.ptr[i]
		sc := -omega * dinv[i]
		tk, te := t.ptr[i], t.ptr[i+1]
		for s := 0; s < len(keys); {
			e := s
			y := make([]float64, k)
			for ; e < len(keys) && keys[e].g == keys[s].g; e++ {
				q := keys[e].q
				for j := range y {
					y[j] += float64(a.val[q] * t.val[t.ptr[a.col[q]]+j])
				}
			}
			for j := range y {
				col := keys[s].g*int32(k) + int32(j)
				v := float64(sc * y[j])
				if tk+j < te && t.col[tk+j] == col {
					v += t.val[tk+j]
				}
				c.col[o+j], c.val[o+j] = col, v
			}
			o += k
			s = e
		}
	}
	return c
}

// suAtRuns is SU_AT_RUNS.
const suAtRuns = 256

// modelATShort0 is su_at's pass 0 on a row it codes (su_at_short, or
// su_at_l's sorted rows): each entry's code in s (its position in the
// row's (aggregate, entry) order and, at the aggregate's first entry,
// the aggregate's rank << 8 and its entries << 16; −1 for an
// unaggregated node); it returns the row's aggregates.
func modelATShort0(a *csr, of []int32, bs, i int, s []int32) int {
	lo, hi := a.ptr[i], a.ptr[i+1]
	g := make([]int32, hi-lo)
	for q := range g {
		g[q] = of[int(a.col[lo+q])/bs]
	}
	heads := 0
	for q, gq := range g {
		s[lo+q] = -1
		if gq < 0 {
			continue
		}
		// The entries of q's aggregate, those before q, the aggregated
		// entries of smaller aggregates and those aggregates.
		size, before, below, at := 0, 0, 0, 0
		for r, gr := range g {
			switch {
			case gr == gq:
				size++
				if r < q {
					before++
				}
			case gr >= 0 && gr < gq:
				below++
				if !slices.Contains(g[:r], gr) {
					at++
				}
			}
		}
		code := int32(below + before)
		if before == 0 {
			code |= int32(at)<<8 | int32(size)<<16
			heads++
		}
		s[lo+q] = code
	}
	return heads
}

// modelATShort1 is su_at's pass 1 on row i of c from the codes s:
// each product staged at its position, each aggregate's run summed from
// its first entry's lane, smoothed into the column its rank gives.
func modelATShort1(a, t *csr, of []int32, bs, i int, s []int32, dinv, omega float64, c *csr) {
	var sv [suAtRuns]float64
	lo, hi := a.ptr[i], a.ptr[i+1]
	for q := lo; q < hi; q++ {
		if e := s[q]; e >= 0 {
			sv[e&0xff] = float64(a.val[q] * t.val[t.ptr[a.col[q]]])
		}
	}
	sc := -omega * dinv
	tk, te := t.ptr[i], t.ptr[i+1]
	for q := lo; q < hi; q++ {
		e := s[q]
		size := int(e >> 16)
		if size <= 0 {
			continue
		}
		y := 0.0
		for _, x := range sv[e&0xff : int(e&0xff)+size] {
			y += x
		}
		g := of[int(a.col[q])/bs]
		v := float64(sc * y)
		if tk < te && t.col[tk] == g {
			v += t.val[tk]
		}
		at := c.ptr[i] + int(e>>8&0xff)
		c.col[at], c.val[at] = g, v
	}
}

type modelCase struct {
	name   string
	a      *csr
	o      Options
	theta  float64
	levels int // levels compared (0: two)
}
