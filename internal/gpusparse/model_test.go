package gpusparse

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
)

// Host models of the kernels of sparse.cu, step for step: the same
// hashing, limits, scans, ranks, bitmaps and order of floating-point
// operations. Where the device's order is free (lanes racing for hash
// slots, atomics handing out transpose slots) the models pick one from
// rng, so the tests cover orders other than the obvious one.

const warp = 32

func modelSlot(c int32) int { return int((uint32(c) * 2654435761) >> 23) }

// modelHashRow is sp_hash_row: lane l takes the entries q ≡ l of A's row
// (mod 32) in order, the lanes interleaved in an order drawn from rng.
// It returns the table and the count, or -1 once the count passes
// RowLimit.
func modelHashRow(rng *rand.Rand, a, b *hcsr, i int) ([]int32, int) {
	t := make([]int32, hashCap)
	for s := range t {
		t[s] = -1
	}
	type cursor struct{ q, r int }
	var lanes []cursor
	for l := 0; l < warp && a.Ptr[i]+l < a.Ptr[i+1]; l++ {
		lanes = append(lanes, cursor{q: a.Ptr[i] + l, r: b.Ptr[a.Col[a.Ptr[i]+l]]})
	}
	cnt := 0
	for len(lanes) > 0 {
		x := rng.IntN(len(lanes))
		c := &lanes[x]
		k := a.Col[c.q]
		if c.r == b.Ptr[k+1] { // next entry of this lane
			c.q += warp
			if c.q >= a.Ptr[i+1] {
				lanes = slices.Delete(lanes, x, x+1)
			} else {
				c.r = b.Ptr[a.Col[c.q]]
			}
			continue
		}
		col := b.Col[c.r]
		c.r++
		s := modelSlot(col)
		for t[s] != -1 && t[s] != col {
			s = (s + 1) & (hashCap - 1)
		}
		if t[s] == -1 {
			t[s] = col
			if cnt++; cnt > RowLimit {
				return t, -1
			}
		}
	}
	return t, cnt
}

// modelBitsRow is sp_long_rows' bitmap for row i and its emission.
func modelBitsRow(a, b *hcsr, i int) []int32 {
	bm := make([]uint32, (b.Cols+31)/32)
	for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
		k := a.Col[q]
		for r := b.Ptr[k]; r < b.Ptr[k+1]; r++ {
			bm[b.Col[r]>>5] |= 1 << (b.Col[r] & 31)
		}
	}
	return modelEmit(bm)
}

// modelEmit is sp_emit_bits: set bits ascending, each thread's word at
// its offset in the block's scan of popcounts.
func modelEmit(bm []uint32) []int32 {
	var out []int32
	for w0 := 0; w0 < len(bm); w0 += 256 {
		tile := bm[w0:min(w0+256, len(bm))]
		at := len(out)
		for _, b := range tile {
			at += bits.OnesCount32(b)
		}
		out = slices.Grow(out, at-len(out))
		for x, b := range tile {
			for b != 0 {
				z := bits.TrailingZeros32(b)
				out = append(out, int32((w0+x)*32+z))
				b &= b - 1
			}
		}
	}
	return out
}

// modelScan is sp_scan_blocks, sp_scan_parts and sp_scan_apply.
func modelScan(size []int) ([]int, int64) {
	n := len(size)
	tiles := (n + scanTile - 1) / scanTile
	part := make([]int64, tiles)
	for b := range part {
		for x := b * scanTile; x < min(n, (b+1)*scanTile); x++ {
			part[b] += int64(size[x])
		}
	}
	var total int64
	for b := range part {
		part[b], total = total, total+part[b]
	}
	ptr := make([]int, n+1)
	for b := 0; b < tiles; b++ {
		at := part[b]
		for x := b * scanTile; x < min(n, (b+1)*scanTile); x++ {
			at += int64(size[x])
			ptr[x+1] = int(int32(at))
		}
	}
	return ptr, total
}

// modelWindow is sp_window: the words of row i's column-window bitmap
// and its first column.
func modelWindow(a, b *hcsr, i int) (words int, lo int32) {
	lo, hi := int32(math.MaxInt32), int32(-1)
	for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
		k := a.Col[q]
		if bs, be := b.Ptr[k], b.Ptr[k+1]; bs < be {
			lo, hi = min(lo, b.Col[bs]), max(hi, b.Col[be-1])
		}
	}
	if hi < 0 {
		return 0, lo
	}
	return int((hi-lo)>>5) + 1, lo
}

// modelWindowRow is sp_bits_row and sp_fill's emission: the set bits of
// the window bitmap in order.
func modelWindowRow(a, b *hcsr, i, words int, lo int32) []int32 {
	bm := make([]uint32, words)
	for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
		k := a.Col[q]
		for r := b.Ptr[k]; r < b.Ptr[k+1]; r++ {
			c := b.Col[r] - lo
			bm[c>>5] |= 1 << (c & 31)
		}
	}
	var out []int32
	for w, x := range bm {
		for x != 0 {
			out = append(out, lo+int32(w*32+bits.TrailingZeros32(x)))
			x &= x - 1
		}
	}
	return out
}

// modelRuns is sp_run_starts, the scan and sp_run_first: the first row
// of every run of rows of a with one pattern, and rows at the end; nil
// when every run is one row (the kernels then take the rows as they are).
func modelRuns(a *hcsr) []int {
	var first []int
	for i := 0; i < a.Rows; i++ {
		if i == 0 || !slices.Equal(a.Col[a.Ptr[i-1]:a.Ptr[i]], a.Col[a.Ptr[i]:a.Ptr[i+1]]) {
			first = append(first, i)
		}
	}
	if a.Rows < 2 || len(first) == a.Rows {
		return nil
	}
	return append(first, a.Rows)
}

// modelSymbolic is sp_count, sp_long_rows (sizes), sp_expand, the scan,
// sp_fill (window bitmap, or hash table compacted in slot order then
// ranks), sp_long_rows (columns) and sp_copy_rows, on the first rows of
// the runs of a; or, when the product takes them all as long rows (with
// the threshold of few runs drawn from rng), sp_long_rows alone.
func modelSymbolic(rng *rand.Rand, a, b *hcsr) *hcsr {
	c := &hcsr{Rows: a.Rows, Cols: b.Cols}
	first := modelRuns(a)
	sel := first
	if sel == nil {
		sel = make([]int, a.Rows)
		for i := range sel {
			sel[i] = i
		}
	} else {
		sel = sel[:len(sel)-1]
	}
	size := make([]int, a.Rows)
	var longs []int
	allLong := allLongRows(len(sel), (b.Cols+31)/32, []int{0, longFew}[rng.IntN(2)])
	for _, i := range sel {
		if allLong {
			longs = append(longs, i)
		} else if words, lo := modelWindow(a, b, i); words <= windowWords {
			size[i] = len(modelWindowRow(a, b, i, words, lo))
		} else if _, n := modelHashRow(rng, a, b, i); n >= 0 {
			size[i] = n
		} else {
			longs = append(longs, i)
		}
	}
	rng.Shuffle(len(longs), func(x, y int) { longs[x], longs[y] = longs[y], longs[x] })
	for _, i := range longs {
		size[i] = len(modelBitsRow(a, b, i))
	}
	for r := 0; r+1 < len(first); r++ {
		for i := first[r] + 1; i < first[r+1]; i++ {
			size[i] = size[first[r]]
		}
	}
	c.Ptr, _ = modelScan(size)
	c.Col = make([]int32, c.NNZ())
	c.Val = make([]float64, c.NNZ())
	for _, i := range sel {
		modelFillRow(rng, a, b, c, i, allLong)
	}
	for r := 0; r+1 < len(first); r++ {
		s := first[r]
		for i := s + 1; i < first[r+1]; i++ {
			copy(c.Col[c.Ptr[i]:c.Ptr[i+1]], c.Col[c.Ptr[s]:c.Ptr[s+1]])
		}
	}
	return c
}

// modelFillRow is sp_fill and sp_long_rows (columns) for row i; all
// rows are long ones when the product takes them all so.
func modelFillRow(rng *rand.Rand, a, b, c *hcsr, i int, allLong bool) {
	cs, n := c.Ptr[i], c.Ptr[i+1]-c.Ptr[i]
	if allLong {
		copy(c.Col[cs:], modelBitsRow(a, b, i))
		return
	}
	if words, lo := modelWindow(a, b, i); words <= windowWords {
		copy(c.Col[cs:], modelWindowRow(a, b, i, words, lo))
		return
	}
	if n > RowLimit {
		copy(c.Col[cs:], modelBitsRow(a, b, i))
		return
	}
	t, _ := modelHashRow(rng, a, b, i)
	m := 0
	for _, x := range t { // the ballot compaction keeps slot order
		if x != -1 {
			t[m] = x
			m++
		}
	}
	for x := 0; x < n; x++ {
		rank := 0
		for y := 0; y < n; y++ {
			if t[y] < t[x] {
				rank++
			}
		}
		c.Col[cs+rank] = t[x]
	}
}

// modelPlan is sp_plan: the kind of every row (g for the first row of a
// chunk of g rows for sp_numeric_g*, -g for one for sp_numeric_blk, 0
// for the others) and the list of the latter, in an order drawn from rng
// (the list of the former is the rows of positive kind, whose order is
// free as well).
func modelPlan(rng *rand.Rand, a, c *hcsr, wide, klong int) (kind []int, blk []int) {
	first := modelRuns(a)
	if first == nil {
		first = make([]int, a.Rows+1)
		for i := range first {
			first[i] = i
		}
	}
	kind = make([]int, a.Rows)
	for r := 0; r+1 < len(first); r++ {
		for i := first[r]; i < first[r+1]; i += chunkRows {
			g := min(chunkRows, first[r+1]-i)
			if kind[i] = g; c.Ptr[i+1]-c.Ptr[i] > wide || a.Ptr[i+1]-a.Ptr[i] > klong {
				kind[i] = -g
				blk = append(blk, i)
			}
		}
	}
	rng.Shuffle(len(blk), func(x, y int) { blk[x], blk[y] = blk[y], blk[x] })
	return kind, blk
}

// modelWide is the host's choice of wideCols and warpK for a product of
// a, with lanes, the rows of a warp of sp_numeric_h* and the threshold of
// few runs drawn from rng; it returns the rows a chunk of sp_numeric_g*
// takes at once, and the rows of a warp of sp_numeric_h* (0 when the
// warps take sp_numeric_g*).
func modelWide(rng *rand.Rand, a *hcsr) (wide, klong, rows, capacity, hrows int) {
	lanes := []int{4, 8, 16, 32}[rng.IntN(4)]
	runs := len(modelRuns(a)) - 1
	grouped, rows := runs > 0, 1
	if !grouped {
		runs = a.Rows
	} else {
		rows = 4 // SP_WROWS
	}
	few := []int{0, fewChunks, math.MaxInt}[rng.IntN(3)]
	capacity = chunkCap(lanes, grouped)
	if hashedRows(lanes, grouped) {
		hrows = 1 + rng.IntN(2)
		capacity = hashWide(hrows)
	}
	return wideCols(capacity, runs, few), warpK(runs, few), rows, capacity, hrows
}

func modelBsearch(p []int32, c int32) int {
	lo, hi := 0, len(p)-1
	for lo < hi {
		mid := (lo + hi) >> 1
		if p[mid] < c {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// modelNumeric is sp_numeric_g* or sp_numeric_h*, and sp_numeric_blk,
// on the chunks of modelPlan, with a number of parts of the block's
// chunks drawn from rng. A chunk of sp_numeric_g* goes in passes over as
// many rows as it takes at once and its accumulators hold: per k of A's
// row in order, the products of B's row k in an order drawn from rng
// (the slots are distinct, so it cannot matter).
func modelNumeric(rng *rand.Rand, a, b, c *hcsr, init float64) {
	wide, klong, rows, capacity, hrows := modelWide(rng, a)
	kind, blk := modelPlan(rng, a, c, wide, klong)
	if hrows > 0 {
		modelHashWarps(rng, a, b, c, kind, hrows, init)
	}
	for i, g := range kind {
		if g <= 0 || hrows > 0 {
			continue
		}
		cs, n := c.Ptr[i], c.Ptr[i+1]-c.Ptr[i]
		p := c.Col[cs : cs+n]
		as, alen := a.Ptr[i], a.Ptr[i+1]-a.Ptr[i]
		gp := min(g, rows, capacity/max(n, 1))
		for t0 := 0; t0 < g; t0 += gp {
			gt := min(gp, g-t0)
			v := make([]float64, gt*n)
			for x := range v {
				v[x] = init
			}
			for o := 0; o < alen; o++ {
				k := a.Col[as+o]
				for _, l := range rng.Perm(b.Ptr[k+1] - b.Ptr[k]) {
					r := b.Ptr[k] + l
					x := modelBsearch(p, b.Col[r])
					for t := 0; t < gt; t++ {
						av := a.Val[as+(t0+t)*alen+o]
						v[t*n+x] = float64(v[t*n+x] + float64(av*b.Val[r]))
					}
				}
			}
			copy(c.Val[cs+t0*n:], v)
		}
	}
	parts := []int{1, 2, 3, maxParts}[rng.IntN(4)]
	for _, i := range blk {
		for f := 0; f < parts; f++ {
			modelBlockPart(rng, a, b, c, i, -kind[i], f, parts, init)
		}
	}
}

// modelBlockPart is sp_numeric_blk on part f of parts of the chunk of g
// rows at row i: its columns in tiles of at most SP_BT, each walking A's
// row in batches of nk k's (sp_blk_tile). The products of a batch go to
// the table and the hit words in an order drawn from rng; then every
// slot, in an order drawn from rng, adds the batch's products of the k's
// of its hit word, lowest bit first.
func modelBlockPart(rng *rand.Rand, a, b, c *hcsr, i, g, f, parts int, init float64) {
	cs, n := c.Ptr[i], c.Ptr[i+1]-c.Ptr[i]
	as, alen := a.Ptr[i], a.Ptr[i+1]-a.Ptr[i]
	xa := n * f / parts
	w := n*(f+1)/parts - xa
	tiles := (w + blockTile - 1) / blockTile
	for u := 0; u < tiles; u++ {
		x0, x1 := xa+w*u/tiles, xa+w*(u+1)/tiles
		nt := x1 - x0
		pat := c.Col[cs+x0 : cs+x1]
		lo, hi := pat[0], pat[nt-1]
		nk := min(blockK, blockTab/nt)
		acc := make([]float64, g*nt)
		for x := range acc {
			acc[x] = init
		}
		tab := make([]float64, nk*nt)
		hit := make([]uint32, nt)
		for o0 := 0; o0 < alen; o0 += nk {
			for _, j := range rng.Perm(min(nk, alen-o0)) {
				k := a.Col[as+o0+j]
				for _, l := range rng.Perm(b.Ptr[k+1] - b.Ptr[k]) {
					r := b.Ptr[k] + l
					if col := b.Col[r]; col >= lo && col <= hi {
						x := modelBsearch(pat, col)
						tab[j*nt+x] = b.Val[r]
						hit[x] |= 1 << j
					}
				}
			}
			for _, x := range rng.Perm(nt) {
				for m := hit[x]; m != 0; m &= m - 1 {
					j := bits.TrailingZeros32(m)
					for t := 0; t < g; t++ {
						av := a.Val[as+t*alen+o0+j]
						acc[t*nt+x] = float64(acc[t*nt+x] + float64(av*tab[j*nt+x]))
					}
				}
				hit[x] = 0
			}
		}
		for t := 0; t < g; t++ {
			copy(c.Val[cs+t*n+x0:cs+t*n+x1], acc[t*nt:(t+1)*nt])
		}
	}
}

// modelMul is Mul: symbolic then numeric.
func modelMul(rng *rand.Rand, a, b *hcsr, init float64) *hcsr {
	c := modelSymbolic(rng, a, b)
	modelNumeric(rng, a, b, c, init)
	return c
}

// modelTranspose is sp_tr_count, the scan, sp_tr_scatter (rows in an
// order drawn from rng, as the atomics hand out slots), sp_tr_sort
// (ranks), sp_tr_mid (modelBitonic), sp_tr_long and sp_gather. It
// returns Aᵀ and the permutation.
func modelTranspose(rng *rand.Rand, a *hcsr) (*hcsr, []int32) {
	cnt := make([]int, a.Cols)
	for _, j := range a.Col[:a.NNZ()] {
		cnt[j]++
	}
	t := &hcsr{Rows: a.Cols, Cols: a.Rows}
	t.Ptr, _ = modelScan(cnt)
	t.Col = make([]int32, a.NNZ())
	t.Val = make([]float64, a.NNZ())
	perm := make([]int32, a.NNZ())
	cursor := slices.Clone(t.Ptr)
	for _, i := range rng.Perm(a.Rows) {
		for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
			at := cursor[a.Col[q]]
			cursor[a.Col[q]]++
			t.Col[at], perm[at] = int32(i), int32(q)
		}
	}
	for j := 0; j < t.Rows; j++ {
		ts, te := t.Ptr[j], t.Ptr[j+1]
		key, pos := slices.Clone(t.Col[ts:te]), slices.Clone(perm[ts:te])
		if te-ts > midLimit {
			bm := make([]uint32, (a.Rows+31)/32)
			for _, i := range key {
				bm[i>>5] |= 1 << (i & 31)
			}
			copy(t.Col[ts:], modelEmit(bm))
			for x := ts; x < te; x++ {
				i := t.Col[x]
				perm[x] = int32(a.Ptr[i] + modelBsearch(a.Col[a.Ptr[i]:a.Ptr[i+1]], int32(j)))
			}
			continue
		}
		if te-ts > RowLimit {
			for x, kv := range modelBitonic(key, pos) {
				t.Col[ts+x], perm[ts+x] = int32(kv>>32), int32(uint32(kv))
			}
			continue
		}
		for x := range key {
			rank := 0
			for y := range key {
				if key[y] < key[x] {
					rank++
				}
			}
			t.Col[ts+rank], perm[ts+rank] = key[x], pos[x]
		}
	}
	for x := range t.Val {
		t.Val[x] = a.Val[perm[x]]
	}
	return t, perm
}

// modelBitonic is sp_tr_mid's sort: the (key, position) pairs packed in
// int64, padded to a power of two with the largest int64, through the
// stages of a bitonic network (pair x of a stage compares lo and lo+d).
func modelBitonic(key, pos []int32) []int64 {
	n := len(key)
	m := 1 << bits.Len(uint(n-1))
	kv := make([]int64, m)
	for x := range kv {
		kv[x] = math.MaxInt64
		if x < n {
			kv[x] = int64(key[x])<<32 | int64(uint32(pos[x]))
		}
	}
	for k := 2; k <= m; k <<= 1 {
		for d := k >> 1; d > 0; d >>= 1 {
			for x := 0; x < m/2; x++ {
				lo := 2*x - x&(d-1)
				hi := lo + d
				if a, b := kv[lo], kv[hi]; (a > b) == (lo&k == 0) {
					kv[lo], kv[hi] = b, a
				}
			}
		}
	}
	return kv[:n]
}

// modelGalerkin is Galerkin.
func modelGalerkin(rng *rand.Rand, a, p *hcsr) *hcsr {
	ap := modelMul(rng, a, p, math.Copysign(0, -1))
	r, _ := modelTranspose(rng, p)
	return modelMul(rng, r, ap, 0)
}

// The models give the reference's bits for every matrix of the corpus
// and every order the device may take.
func TestModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range sparsetest.Corpus(testing.Short()) {
		for rep := 0; rep < 2; rep++ {
			if err := sparsetest.SameBits(modelMul(rng, c.A, c.B, math.Copysign(0, -1)), sparsetest.Mul(c.A, c.B, false)); err != nil {
				t.Errorf("%s: product: %v", c.Name, err)
			}
			if err := sparsetest.SameBits(modelMul(rng, c.A, c.B, 0), sparsetest.Mul(c.A, c.B, true)); err != nil {
				t.Errorf("%s: product from +0: %v", c.Name, err)
			}
			tr, _ := modelTranspose(rng, c.B)
			if err := sparsetest.SameBits(tr, sparsetest.Transpose(c.B)); err != nil {
				t.Errorf("%s: transpose: %v", c.Name, err)
			}
			if c.Sq {
				if err := sparsetest.SameBits(modelGalerkin(rng, c.A, c.B), sparsetest.Galerkin(c.A, c.B)); err != nil {
					t.Errorf("%s: Galerkin: %v", c.Name, err)
				}
			}
		}
	}
}

// The kernels' shortcut must not change the result: starting from -0 is
// taking the first product as it is, for every value, ±0 included, and
// starting from +0 differs from it in the sign of zero sums only.
func TestSignedZeroStart(t *testing.T) {
	negz := math.Copysign(0, -1)
	for _, x := range []float64{0, negz, 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -5e-324} {
		if got := negz + x; math.Float64bits(got) != math.Float64bits(x) {
			t.Errorf("-0 + %v = %v (%#x)", x, got, math.Float64bits(got))
		}
	}
	if got := 0 + negz; math.Signbit(got) {
		t.Errorf("+0 + -0 = -0: a Galerkin sum of -0 products would keep its sign")
	}
}

// Rows of RowLimit columns stay in shared memory, longer ones do not,
// whatever order the lanes insert in; narrow rows take the window.
func TestLongRowRouting(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	a, b := sparsetest.LimitRows(rng), sparsetest.Spread(600, 40)
	if words, _ := modelWindow(a, sparsetest.Spread(600, 1), 2); words > windowWords {
		t.Errorf("a row over 600 columns needs %d words", words)
	}
	for rep := 0; rep < 5; rep++ {
		for i, want := range []int{RowLimit - 1, RowLimit, -1} {
			if _, n := modelHashRow(rng, a, b, i); n != want {
				t.Errorf("row %d: count %d, want %d", i, n, want)
			}
			if words, _ := modelWindow(a, b, i); words <= windowWords {
				t.Errorf("row %d: a window of %d words, want more than %d", i, words, windowWords)
			}
		}
	}
}

// The plan cuts every run into chunks of at most chunkRows rows from its
// start, gives sp_numeric_g* exactly the chunks whose accumulators fit,
// and the corpus reaches every path: chunks of a warp, of a block in one
// pass or several, rows past a block's accumulators and pattern, runs
// longer than a chunk, and the restriction's runs of rigid-body modes.
func TestPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	seen := map[string]bool{}
	for _, cs := range sparsetest.Corpus(true) {
		c := sparsetest.Mul(cs.A, cs.B, false)
		first := modelRuns(cs.A)
		if first == nil {
			first = []int{0}
			for i := 1; i <= cs.A.Rows; i++ {
				first = append(first, i)
			}
		}
		for range 8 {
			wide, klong, _, capacity, _ := modelWide(rng, cs.A)
			if wide > capacity {
				t.Fatalf("%s: rows of %d columns for chunks of %d accumulators", cs.Name, wide, capacity)
			}
			kind, blk := modelPlan(rng, cs.A, c, wide, klong)
			if len(slices.Compact(slices.Sorted(slices.Values(blk)))) != len(blk) {
				t.Errorf("%s: a chunk listed twice", cs.Name)
			}
			for r := 0; r+1 < len(first); r++ {
				s, e := first[r], first[r+1]
				seen["run over a chunk"] = seen["run over a chunk"] || e-s > chunkRows
				for i := s; i < e; i++ {
					g, n, alen := kind[i], c.Ptr[i+1]-c.Ptr[i], cs.A.Ptr[i+1]-cs.A.Ptr[i]
					if (i-s)%chunkRows != 0 {
						if g != 0 {
							t.Fatalf("%s: row %d inside a chunk has kind %d", cs.Name, i, g)
						}
						continue
					}
					if want := min(chunkRows, e-i); g != want && g != -want {
						t.Fatalf("%s: chunk at row %d of run %d..%d has %d rows", cs.Name, i, s, e, g)
					}
					if (n <= wide && alen <= klong) != (g > 0) || (g < 0) != slices.Contains(blk, i) {
						t.Fatalf("%s: chunk at row %d (%d columns, %d for a warp; %d k's, %d for a warp): kind %d", cs.Name, i, n, wide, alen, klong, g)
					}
					seen["block for a long row of A"] = seen["block for a long row of A"] || (g < 0 && n <= wide)
					if g < 0 {
						seen["block"] = true
						nk := min(blockK, blockTab/min(n, blockTile))
						seen["block in tiles"] = seen["block in tiles"] || n > blockTile
						seen["block, two slots a thread"] = seen["block, two slots a thread"] || n%blockTile > 256
						seen["block, several batches"] = seen["block, several batches"] || cs.A.Ptr[i+1]-cs.A.Ptr[i] > nk
						seen["block, a k over a round of its group"] = seen["block, a k over a round of its group"] || longestB(cs.A, cs.B, i) > 4*(256/nk)
					} else {
						seen["warp"] = true
						seen["warp, several rows"] = seen["warp, several rows"] || g > 1
						seen["warp, several rounds of prefetch"] = seen["warp, several rounds of prefetch"] || alen > 4 // SP_PF
					}
				}
			}
		}
		if cs.Name == "block prolongator" {
			r := modelRuns(sparsetest.Transpose(cs.B))
			for x := 0; x+1 < len(r); x++ {
				if r[x+1]-r[x] != 6 {
					t.Errorf("restriction of the block prolongator: run %d..%d, want 6 rows", r[x], r[x+1])
					break
				}
			}
			seen["restriction in runs"] = r != nil
		}
	}
	for _, want := range []string{"run over a chunk", "block", "block in tiles", "block, two slots a thread", "block, several batches",
		"block, a k over a round of its group", "warp", "warp, several rows", "warp, several rounds of prefetch", "block for a long row of A",
		"restriction in runs"} {
		if !seen[want] {
			t.Errorf("no case reaches %q", want)
		}
	}
}

// longestB is the longest row of b that row i of a reaches.
func longestB(a, b *hcsr, i int) int {
	m := 0
	for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
		m = max(m, b.Ptr[a.Col[q]+1]-b.Ptr[a.Col[q]])
	}
	return m
}

// The choice of a block for the chunks of short rows depends on the
// number of runs only, and never gives a warp more than it holds.
func TestWideCols(t *testing.T) {
	for _, capacity := range []int{chunkCap(32, false), chunkCap(32, true), hashWide(1), hashWide(2)} {
		if got := wideCols(capacity, fewChunks, fewChunks); got != capacity {
			t.Errorf("capacity %d, many runs: rows up to %d columns for a warp", capacity, got)
		}
		if got := wideCols(capacity, fewChunks-1, fewChunks); got != min(capacity, blockFrom) {
			t.Errorf("capacity %d, few runs: rows up to %d columns for a warp, want %d", capacity, got, min(capacity, blockFrom))
		}
	}
	if chunkCap(32, true) != warpAcc || chunkCap(32, false) != warpAcc/2 || hashWide(1) != hashSlots/2 || hashWide(2) != hashSlots/4 {
		t.Errorf("chunk capacities %d, %d, %d, %d", chunkCap(32, true), chunkCap(32, false), hashWide(1), hashWide(2))
	}
}

// Chunks of long rows of A go to a block when A has few runs, and to a
// warp otherwise, whatever their length.
func TestWarpK(t *testing.T) {
	if got := warpK(fewChunks-1, fewChunks); got != longK || longK < blockK {
		t.Errorf("few runs: rows of A up to %d entries for a warp, want %d (at least a batch of a block, %d)", got, longK, blockK)
	}
	if got := warpK(fewChunks, fewChunks); got < maxInt32 {
		t.Errorf("many runs: rows of A up to %d entries for a warp, want all", got)
	}
}

// A product of many chunks takes one block a chunk; one of few chunks
// cuts them into parts, a power of two, until they are twice the blocks
// the GPU holds, or the most allowed.
func TestBlockParts(t *testing.T) {
	for _, c := range []struct{ nb, resident, most, want int }{
		{7850, 396, maxParts, 1}, {792, 396, maxParts, 1}, {791, 396, maxParts, 2}, {320, 396, maxParts, 4},
		{18, 396, maxParts, 32}, {18, 396, 1, 1}, {18, 396, 5, 4}, {0, 396, maxParts, 32},
	} {
		if got := blockParts(c.nb, c.resident, c.most); got != c.want {
			t.Errorf("%d chunks, %d blocks at once, at most %d: %d parts, want %d", c.nb, c.resident, c.most, got, c.want)
		}
	}
}

// The corpus's transposes reach every sort: a warp's ranks, sp_tr_mid's
// network and sp_tr_long's bitmap; and the network sorts what it is
// given, padding and all.
func TestTransposeRouting(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range sparsetest.Corpus(true) {
		for _, m := range []*hcsr{c.A, c.B} {
			tr := sparsetest.Transpose(m)
			for j := 0; j < tr.Rows; j++ {
				switch n := tr.Ptr[j+1] - tr.Ptr[j]; {
				case n > midLimit:
					seen["bitmap"] = true
				case n > RowLimit:
					seen["network"] = true
				default:
					seen["ranks"] = true
				}
			}
		}
	}
	for _, want := range []string{"ranks", "network", "bitmap"} {
		if !seen[want] {
			t.Errorf("no transpose row reaches the %s", want)
		}
	}
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 2, 257, 1024, 1500, midLimit} {
		key, pos := make([]int32, n), make([]int32, n)
		for x, v := range rng.Perm(1 << 20)[:n] {
			key[x], pos[x] = int32(v), int32(rng.IntN(1<<31))
		}
		kv := modelBitonic(key, pos)
		for x := range kv {
			if x > 0 && kv[x-1]>>32 >= kv[x]>>32 {
				t.Fatalf("%d keys: out of order at %d", n, x)
			}
			if y := slices.Index(key, int32(kv[x]>>32)); y < 0 || pos[y] != int32(uint32(kv[x])) {
				t.Fatalf("%d keys: entry %d lost its position", n, x)
			}
		}
	}
}

// A product of few runs takes them all as long rows unless B's columns
// need too long a bitmap; with many runs, sp_count takes them. The corpus
// has long rows past the bitmap that sp_long_rows holds in shared memory.
func TestAllLongRows(t *testing.T) {
	for _, c := range []struct {
		runs, words, few int
		want             bool
	}{{7850, 1472, longFew, true}, {longFew, longWords, longFew, true}, {longFew + 1, 10, longFew, false},
		{10, longWords + 1, longFew, false}, {10, 10, 0, false}, {0, 0, 0, true}} {
		if got := allLongRows(c.runs, c.words, c.few); got != c.want {
			t.Errorf("%d runs, %d words, few %d: all long %v", c.runs, c.words, c.few, got)
		}
	}
	wide := false
	for _, c := range sparsetest.Corpus(true) {
		wide = wide || (c.B.Cols+31)/32 > 4096 // SP_LBW: sp_long_rows' bitmap in global memory
	}
	if !wide {
		t.Error("no product has long rows over more columns than a block's bitmap in shared memory")
	}
}
