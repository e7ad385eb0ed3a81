package gpusparse

import (
	"errors"
	"fmt"
	"math"

	"github.com/misgrid/misgrid/cuda"
)

// Product is C = A·B on the device: its pattern is formed once, its
// values by Numeric whenever those of A or B change (same patterns).
type Product struct {
	a, b, c *Matrix
	init    float64 // what each sum starts from: -0 (first product as is) or +0
	// The numeric pass's plan (sp_plan): kind of every row, and the
	// lists of chunks for a warp (nw of them) and for a block (nb), at
	// lists[0:] and lists[rows:].
	kind, lists *cuda.Buffer
	nw, nb      int
	parts       int  // of every chunk of sp_numeric_blk (blockParts)
	lanes       int  // about B's mean row length (lanesPerRow)
	grouped     bool // A has runs: sp_numeric_g*r
	hashed      bool // A has no runs and B short rows: sp_numeric_h*
	rows        int  // of a warp of sp_numeric_h* (warpRows)
}

// Mul forms C = A·B, pattern and values; each entry sums its products in
// the order of A's row starting from the first, as amg's mulMat does
// (bitwise equal to it). A and B stay in use by Numeric: free the
// Product (which frees C) before them or with them.
func (d *Device) Mul(a, b *Matrix) (*Product, error) {
	return d.mul(a, b, math.Copysign(0, -1))
}

func (d *Device) mul(a, b *Matrix, init float64) (*Product, error) {
	if a.d != d || b.d != d {
		return nil, fmt.Errorf("gpusparse: product of matrices of another Device")
	}
	if a.cols != b.rows {
		return nil, fmt.Errorf("gpusparse: product of a %d×%d and a %d×%d matrix: inner sizes differ", a.rows, a.cols, b.rows, b.cols)
	}
	p := &Product{a: a, b: b, init: init, c: &Matrix{rows: a.rows, cols: b.cols, owned: true, d: d}, lanes: lanesPerRow(b)}
	err := d.run(p.symbolic)
	if err == nil {
		err = p.Numeric()
	}
	if err != nil {
		_ = p.Free()
		return nil, err
	}
	return p, nil
}

// C returns the product (owned by p).
func (p *Product) C() *Matrix { return p.c }

// Free releases C and the plan.
func (p *Product) Free() error {
	err := p.c.Free()
	for _, b := range []**cuda.Buffer{&p.kind, &p.lists} {
		if *b != nil {
			err = errors.Join(err, (*b).Free())
			*b = nil
		}
	}
	return err
}

// symbolic forms C's pattern: the runs of rows of A with one pattern,
// row sizes of the first row of each run (short rows by hashing in
// shared memory, long ones by a bitmap), their scan, the sorted columns
// (copied to the runs' other rows), then the numeric pass's plan.
func (p *Product) symbolic(q *queue) error {
	a, b, c := p.a, p.b, p.c
	what := fmt.Sprintf("%d×%d · %d×%d product", a.rows, a.cols, b.rows, b.cols)
	var err error
	if c.ptr, err = q.alloc(what+": row offsets", int64(c.rows+1)*4); err != nil {
		return err
	}
	rs, err := q.runs(what, a)
	if err != nil {
		return err
	}
	p.grouped = rs.grouped()
	p.hashed = hashedRows(p.lanes, p.grouped)
	words := (b.cols + 31) / 32
	var longs any = uintptr(0)
	nlong := rs.n
	allLong := allLongRows(rs.n, words, q.d.longFew)
	if allLong {
		longs = rs.first
	} else if longs, nlong, err = q.count(what, rs, a, b, c); err != nil {
		return err
	}
	var bits any
	nb, keep := 0, int32(0)
	if nlong > 0 {
		if nb, keep, bits, err = q.longBitmaps(what, nlong, words); err != nil {
			return err
		}
		if err = q.launchGrid("sp_long_rows", nb, longs, int32(nlong), a.ptr, a.col, b.ptr, b.col, bits, int32(words), keep,
			c.ptr.Ptr()+4, uintptr(0), uintptr(0)); err != nil {
			return err
		}
	}
	if rs.grouped() {
		if err = q.launch("sp_expand", c.rows, 256, int32(c.rows), rs.head, rs.first, c.ptr.Ptr()+4); err != nil {
			return err
		}
	}
	if c.nnz, err = q.scan(what, c.ptr, c.rows); err != nil {
		return err
	}
	if err = c.alloc(q, what); err != nil {
		return err
	}
	if !allLong {
		if err = q.launch("sp_fill", rs.n, 8, int32(rs.n), rs.first, a.ptr, a.col, b.ptr, b.col, c.ptr, c.col); err != nil {
			return err
		}
	}
	if nlong > 0 {
		if err = q.launchGrid("sp_long_rows", nb, longs, int32(nlong), a.ptr, a.col, b.ptr, b.col, bits, int32(words), keep,
			uintptr(0), c.ptr, c.col); err != nil {
			return err
		}
	}
	if rs.grouped() {
		if err = q.launch("sp_copy_rows", c.rows, 8, int32(c.rows), rs.head, rs.first, c.ptr, c.col); err != nil {
			return err
		}
	}
	return p.plan(q, what, rs)
}

// count writes the size of every first row of a run of a·b that sp_count
// takes (a window bitmap or a hash table) to c's offsets, and returns the
// list of the others, the long rows, and their number.
func (q *queue) count(what string, rs runs, a, b, c *Matrix) (*cuda.Buffer, int, error) {
	longs, err := q.scratch(what+": list of long rows", int64(c.rows+1)*4)
	if err != nil {
		return nil, 0, err
	}
	nlongAt := int64(c.rows) * 4
	if err = longs.MemsetAsync32(0, q.d.l.Stream); err != nil {
		return nil, 0, err
	}
	if err = q.launch("sp_count", rs.n, 8, int32(rs.n), rs.first, a.ptr, a.col, b.ptr, b.col, c.ptr.Ptr()+4, longs,
		longs.Ptr()+uintptr(nlongAt)); err != nil {
		return nil, 0, err
	}
	nl, err := q.readInt32(longs, nlongAt)
	return longs, int(nl), err
}

// Products with at most longFew runs of rows whose columns need at most
// longWords words of bitmap take every first row as a long one: a block
// per row (sp_long_rows), not a warp (sp_count, sp_fill), so that a
// coarse product's few long rows keep the GPU busy, and their rows are
// not hashed to be found long.
const (
	longFew   = 16384
	longWords = 4096
)

// allLongRows says whether a product of runs first rows and B's columns
// in words words of bitmap takes them all as long rows (few: longFew,
// which tests vary).
func allLongRows(runs, words, few int) bool { return runs <= few && words <= longWords }

// runs are the runs of rows of A with one pattern: head[i+1]-1 is the
// run of row i, first[r] the first row of run r (first[n] = rows). With
// no two rows in a run, head and first are null and n is the rows.
type runs struct {
	head, first any
	n           int
}

func (r runs) grouped() bool { _, ok := r.first.(*cuda.Buffer); return ok }

// runs finds the runs of a's rows. Where every run is one row it
// returns null arrays, so that the kernels take the rows as they are.
func (q *queue) runs(what string, a *Matrix) (runs, error) {
	none := runs{head: uintptr(0), first: uintptr(0), n: a.rows}
	if a.rows < 2 {
		return none, nil
	}
	head, err := q.scratch(what+": runs of rows", int64(a.rows+1)*4)
	if err != nil {
		return none, err
	}
	if err = q.launch("sp_run_starts", a.rows, 8, int32(a.rows), a.ptr, a.col, head.Ptr()+4); err != nil {
		return none, err
	}
	n, err := q.scan(what+" (runs)", head, a.rows)
	if err != nil || n == a.rows {
		return none, err
	}
	first, err := q.scratch(what+": first rows of the runs", int64(n+1)*4)
	if err != nil {
		return none, err
	}
	return runs{head: head, first: first, n: n}, q.launch("sp_run_first", a.rows, 256, int32(a.rows), head, first)
}

// plan cuts the runs into chunks for the numeric pass (sp_plan): the
// list of those for sp_numeric_g*, and of the others for sp_numeric_blk.
func (p *Product) plan(q *queue, what string, rs runs) error {
	c := p.c
	var err error
	if p.kind, err = q.alloc(what+": plan", int64(c.rows)*4); err != nil {
		return err
	}
	if p.lists, err = q.alloc(what+": chunks", int64(2*c.rows+2)*4); err != nil {
		return err
	}
	at := int64(2*c.rows) * 4
	if err = p.lists.MemsetAsync32(0, q.d.l.Stream); err != nil {
		return err
	}
	capacity := chunkCap(p.lanes, p.grouped)
	if p.hashed {
		p.rows = q.d.hashRows
		if p.rows == 0 {
			p.rows = warpRows(p.a, p.b, c, 8*int(q.d.l.Grid("sp_numeric_h2", 1<<30, 1)))
		}
		capacity = hashWide(p.rows)
	}
	wide, klong := wideCols(capacity, rs.n, q.d.fewRuns), warpK(rs.n, q.d.fewRuns)
	if err = q.launch("sp_plan", c.rows, 256, int32(c.rows), rs.head, rs.first, c.ptr, int32(wide), p.a.ptr, int32(klong), p.kind, p.lists,
		p.lists.Ptr()+uintptr(c.rows)*4, p.lists.Ptr()+uintptr(at)); err != nil {
		return err
	}
	if err = q.sync(); err != nil {
		return err
	}
	n := make([]int32, 2)
	err = cuda.CopyToHost(n, p.lists, at)
	p.nw, p.nb = int(n[0]), int(n[1])
	p.parts = blockParts(p.nb, int(q.d.l.Grid("sp_numeric_blk", 1<<30, 1)), q.d.mostParts)
	return err
}

// Numeric recomputes C's values from the current values of A and B,
// whose patterns must be those Mul saw.
func (p *Product) Numeric() error { return p.a.d.run(p.numeric) }

// numeric queues the numeric pass on q.
func (p *Product) numeric(q *queue) error {
	a, b, c := p.a, p.b, p.c
	g, name := p.lanes, fmt.Sprintf("sp_numeric_g%d", p.lanes)
	if p.grouped {
		name += "r"
	}
	if p.hashed {
		g, name = 32/p.rows, fmt.Sprintf("sp_numeric_h%d", p.rows)
	}
	if err := q.launch(name, p.nw, 8*32/g, int32(p.nw), p.lists, p.kind, a.ptr, a.col, a.val, b.ptr, b.col, b.val,
		c.ptr, c.col, c.val, p.init); err != nil {
		return err
	}
	return q.launch("sp_numeric_blk", p.nb*p.parts, 1, p.lists.Ptr()+uintptr(c.rows)*4, int32(p.nb), int32(p.parts), p.kind, a.ptr, a.col, a.val,
		b.ptr, b.col, b.val, c.ptr, c.col, c.val, p.init)
}

// lanesPerRow picks the lanes of the numeric pass per row of C: about
// the mean row length of B, the products that one k of A's row brings.
func lanesPerRow(b *Matrix) int {
	m := float64(b.nnz) / float64(max(b.rows, 1))
	for _, g := range []int{4, 8, 16} {
		if m <= float64(g) {
			return g
		}
	}
	return 32
}

// hashedRows says whether the numeric pass of a product takes sp_numeric_h*,
// a product a lane: when A has no runs and B's rows are short (lanes at
// most 16), where sp_numeric_g* would leave lanes idle on every k.
func hashedRows(lanes int, grouped bool) bool { return !grouped && lanes <= 16 }

// chunkCap is the accumulators of one chunk of sp_numeric_g* with lanes
// lanes: SP_WACC·lanes/32 for sp_numeric_g*r, half for sp_numeric_g*.
func chunkCap(lanes int, grouped bool) int {
	if grouped {
		return warpAcc * lanes / 32
	}
	return warpAcc / 2 * lanes / 32
}

// hashWide is the widest row of a warp of sp_numeric_h* that takes rows
// rows: half its table's slots.
func hashWide(rows int) int { return hashSlots / rows / 2 }

// warpRows picks the rows a warp of sp_numeric_h* takes for c = a·b,
// with resident warps on the GPU at once: two when the rows have few
// products (the mean row lengths of a and b), so that the latency of
// fetching a row is shared, as long as the mean row of c takes at most
// half of what a row's table holds (so that few rows are wider, and go to
// sp_numeric_blk) and the warps still fill the GPU twice.
func warpRows(a, b, c *Matrix, resident int) int {
	mean := func(m *Matrix) float64 { return float64(m.nnz) / float64(max(m.rows, 1)) }
	products, cols := mean(a)*mean(b), mean(c)
	if products <= 256 && 2*cols <= float64(hashWide(2)) && c.rows >= 4*resident {
		return 2
	}
	return 1
}

// Products of A with fewer than fewChunks runs of rows give a block to
// every chunk of rows over blockFrom columns: a warp per chunk would
// leave most of the GPU idle, each warp walking a long row of A alone.
// (bench/gpu, one H200: Pᵀ·(AP) of 27 to 512 runs takes 1.4× to 2.9×
// less time than with a warp a chunk, of 1728 runs about as much;
// products of 13824 runs and more take 1.6× to 2.5× less with a warp a
// chunk.)
const (
	fewChunks = 1 << 10
	blockFrom = 63
)

// wideCols is the widest row that a chunk of a warp takes (sp_plan gives
// wider ones to sp_numeric_blk): all that a chunk's accumulators hold
// (capacity), or blockFrom when A has fewer than few runs.
func wideCols(capacity, runs, few int) int {
	if runs < few {
		return min(capacity, blockFrom)
	}
	return capacity
}

// longK is the longest row of A that a chunk of sp_numeric_g* walks when
// A has few runs: a warp adds a chunk's k's one after the other, so a few
// chunks of long rows (a coarse level's restriction and operator) would
// keep a few warps busy long after the rest of the GPU is done; a block
// of sp_numeric_blk takes up to blockK k's a step.
const longK = 2 * blockK

// warpK is the longest row of A that a chunk of sp_numeric_g* takes
// (sp_plan gives the chunks of longer ones to sp_numeric_blk): longK when
// A has fewer than few runs, else any.
func warpK(runs, few int) int {
	if runs < few {
		return longK
	}
	return maxInt32
}

// maxParts bounds the parts of a chunk of sp_numeric_blk: each part walks
// all the products of its chunk, keeping those of its columns.
const maxParts = 32

// blockParts is the parts that sp_numeric_blk cuts each of nb chunks into
// (a power of two, at most most): enough for twice the blocks the GPU
// holds at once (resident), so that a product of few long chunks (a
// coarse level's) keeps the GPU busy. Not more: every part reads all the
// products of its chunk, so parts add reads and do not shorten the
// longest chunk's walk.
func blockParts(nb, resident, most int) int {
	f := 1
	for 2*f <= most && nb*f < 2*resident {
		f *= 2
	}
	return f
}
