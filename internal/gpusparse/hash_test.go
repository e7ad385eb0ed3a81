package gpusparse

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
	"github.com/misgrid/misgrid/internal/kernels/kernelsrc"
)

// modelHashWarps is the warps of sp_numeric_h* (hrows rows a warp) on the
// rows of positive kind, in order.
func modelHashWarps(rng *rand.Rand, a, b, c *hcsr, kind []int, hrows int, init float64) {
	var warp []int
	for i, g := range kind {
		if g > 0 {
			warp = append(warp, i)
		}
	}
	for l := 0; l < len(warp); l += hrows {
		modelHashNumeric(rng, a, b, c, warp[l:min(l+hrows, len(warp))], init)
	}
}

// modelHashNumeric is a warp of sp_numeric_h* on rows: their entries of
// A one row after the other, 32 k's at a time, their products flattened
// (k after k, each row of B in order) and taken 32 at a time, one a
// lane; the products of a batch go to their entries in rounds, by their
// rank among the batch's products of the same entry, the lanes of a
// round in an order drawn from rng.
func modelHashNumeric(rng *rand.Rand, a, b, c *hcsr, rows []int, init float64) {
	const width = 32
	type product struct {
		at   int // entry of C
		a, b float64
	}
	type entry struct{ at, q int }
	var ks []entry
	for _, i := range rows {
		for x := c.Ptr[i]; x < c.Ptr[i+1]; x++ {
			c.Val[x] = init
		}
		for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
			ks = append(ks, entry{i, q})
		}
	}
	for q0 := 0; q0 < len(ks); q0 += width {
		var prods []product
		for _, e := range ks[q0:min(q0+width, len(ks))] {
			k, cs := a.Col[e.q], c.Ptr[e.at]
			for r := b.Ptr[k]; r < b.Ptr[k+1]; r++ {
				prods = append(prods, product{cs + modelBsearch(c.Col[cs:c.Ptr[e.at+1]], b.Col[r]), a.Val[e.q], b.Val[r]})
			}
		}
		for b0 := 0; b0 < len(prods); b0 += width {
			batch := prods[b0:min(b0+width, len(prods))]
			rank := make([]int, len(batch))
			for u := range batch {
				for v := range u {
					if batch[v].at == batch[u].at {
						rank[u]++
					}
				}
			}
			for r := 0; slices.Contains(rank, r); r++ {
				for _, u := range rng.Perm(len(batch)) {
					if pr := batch[u]; rank[u] == r {
						c.Val[pr.at] = float64(c.Val[pr.at] + float64(pr.a*pr.b))
					}
				}
			}
		}
	}
}

// TestKernelConstants checks the constants the host shares with
// sparse.cu against its #defines.
func TestKernelConstants(t *testing.T) {
	def, err := kernelsrc.Defines("../kernels")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range kernelsrc.Mismatches(def, map[string]int64{"SP_HCAP": int64(hashCap), "SP_LIMIT": int64(RowLimit), "SP_MID": int64(midLimit), "SP_BW": int64(windowWords), "SP_THREADS": int64(scanTile / 4),
		"SP_GMAX": int64(chunkRows), "SP_WACC": int64(warpAcc), "SP_BT": int64(blockTile), "SP_BTAB": int64(blockTab), "SP_BK": int64(blockK), "SP_HT": int64(hashSlots)}) {
		t.Error(m)
	}
}

// warpRows takes two rows a warp only for rows of few products and
// columns that fill the GPU twice over.
func TestWarpRows(t *testing.T) {
	m := func(rows, nnz int) *Matrix { return &Matrix{rows: rows, nnz: nnz} }
	const resident = 6336
	for _, c := range []struct {
		what    string
		a, b, c *Matrix
		want    int
	}{
		{"Poisson's A·P", m(1030301, 27270901), m(1030301, 4657463), m(1030301, 12649337), 2},
		{"Pᵀ·(AP)", m(39304, 4657463), m(1030301, 12649337), m(39304, 1000000), 1},
		{"a coarse A·P", m(1728, 39304), m(1728, 5832), m(1728, 20000), 1},
		{"wide rows of C", m(1030301, 27270901), m(1030301, 4657463), m(1030301, 40*1030301), 1},
	} {
		if got := warpRows(c.a, c.b, c.c, resident); got != c.want {
			t.Errorf("%s: %d rows a warp, want %d", c.what, got, c.want)
		}
	}
}

// The corpus reaches every path of sp_numeric_h*: rows of A over a chunk
// of 32 k's, rows of B over a batch of 32 products and empty ones,
// entries with products of several k's, and rows wider than a warp's
// table (which go to sp_numeric_blk).
func TestHashRouting(t *testing.T) {
	seen := map[string]bool{}
	for _, cs := range sparsetest.Corpus(true) {
		a, b := cs.A, cs.B
		if modelRuns(a) != nil || !hashedRows(lanesPerRow(&Matrix{rows: b.Rows, nnz: b.NNZ()}), false) {
			continue
		}
		c := sparsetest.Mul(a, b, false)
		seen["hashed"] = true
		for i := 0; i < a.Rows; i++ {
			seen["a row of A over 32 k's"] = seen["a row of A over 32 k's"] || a.Ptr[i+1]-a.Ptr[i] > 32
			seen["a row wider than a table"] = seen["a row wider than a table"] || c.Ptr[i+1]-c.Ptr[i] > hashWide(1)
			hits := map[int32]int{}
			for q := a.Ptr[i]; q < a.Ptr[i+1]; q++ {
				k := a.Col[q]
				seen["an empty row of B"] = seen["an empty row of B"] || b.Ptr[k+1] == b.Ptr[k]
				seen["a row of B over a batch"] = seen["a row of B over a batch"] || b.Ptr[k+1]-b.Ptr[k] > 32
				for r := b.Ptr[k]; r < b.Ptr[k+1]; r++ {
					hits[b.Col[r]]++
					seen["an entry of several k's"] = seen["an entry of several k's"] || hits[b.Col[r]] > 1
				}
			}
		}
	}
	for _, want := range []string{"hashed", "a row of A over 32 k's", "a row wider than a table", "an empty row of B", "a row of B over a batch",
		"an entry of several k's"} {
		if !seen[want] {
			t.Errorf("no product of sp_numeric_h* reaches %q", want)
		}
	}
}
