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

// modelSymbolic is sp_count, sp_long_rows (sizes), the scan, sp_fill
// (window bitmap, or hash table compacted in slot order then ranks) and
// sp_long_rows (columns).
func modelSymbolic(rng *rand.Rand, a, b *hcsr) *hcsr {
	c := &hcsr{Rows: a.Rows, Cols: b.Cols}
	size := make([]int, a.Rows)
	var longs []int
	for i := 0; i < a.Rows; i++ {
		if words, lo := modelWindow(a, b, i); words <= windowWords {
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
	c.Ptr, _ = modelScan(size)
	c.Col = make([]int32, c.NNZ())
	c.Val = make([]float64, c.NNZ())
	for i := 0; i < a.Rows; i++ {
		cs, n := c.Ptr[i], c.Ptr[i+1]-c.Ptr[i]
		if words, lo := modelWindow(a, b, i); words <= windowWords {
			copy(c.Col[cs:], modelWindowRow(a, b, i, words, lo))
			continue
		}
		if n > RowLimit {
			copy(c.Col[cs:], modelBitsRow(a, b, i))
			continue
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
	return c
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

// modelNumeric is sp_numeric_g*: per k of A's row in order, the lanes add
// their products of B's row k into their slots, in an order drawn from
// rng (the slots are distinct, so it cannot matter), whatever the lanes
// per row.
func modelNumeric(rng *rand.Rand, a, b, c *hcsr, init float64) {
	for i := 0; i < a.Rows; i++ {
		cs, ce := c.Ptr[i], c.Ptr[i+1]
		p := c.Col[cs:ce]
		v := c.Val[cs:ce]
		if len(p) <= RowLimit/4 {
			v = make([]float64, len(p)) // the shared-memory slots (G = 8)
		}
		for x := range v {
			v[x] = init
		}
		for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
			av := a.Val[q]
			k := a.Col[q]
			lanes := rng.Perm(b.Ptr[k+1] - b.Ptr[k])
			for _, l := range lanes {
				r := b.Ptr[k] + l
				x := modelBsearch(p, b.Col[r])
				v[x] = float64(v[x] + float64(av*b.Val[r]))
			}
		}
		copy(c.Val[cs:ce], v)
	}
}

// modelMul is Mul: symbolic then numeric.
func modelMul(rng *rand.Rand, a, b *hcsr, init float64) *hcsr {
	c := modelSymbolic(rng, a, b)
	modelNumeric(rng, a, b, c, init)
	return c
}

// modelTranspose is sp_tr_count, the scan, sp_tr_scatter (rows in an
// order drawn from rng, as the atomics hand out slots), sp_tr_sort,
// sp_tr_mid, sp_tr_long and sp_gather. It returns Aᵀ and the permutation.
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
