package gpusparse

import (
	"errors"
	"fmt"
	"math"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/kernels"
)

// Kernel constants of sparse.cu.
const (
	hashCap = 512 // SP_HCAP
	// RowLimit is the longest row of a product or transpose that the
	// kernels keep in shared memory (SP_LIMIT); longer rows are
	// correct, through global memory, and slower.
	RowLimit = 256
	midLimit = 2048 // SP_MID: the longest row of a transpose sorted by a block
	// windowWords is SP_BW: rows of a product whose columns span at most
	// 32·windowWords take their pattern from a bitmap of that window.
	windowWords = 256
	scanTile    = 1024 // SP_THREADS*4
	chunkRows   = 8    // SP_GMAX: most rows of one pattern the numeric pass takes together
	warpAcc     = 512  // SP_WACC: accumulators of a warp of sp_numeric_g*r (half in sp_numeric_g*)
	blockTile   = 512  // SP_BT: columns of a tile of sp_numeric_blk
	blockTab    = 2048 // SP_BTAB: the products' table of a batch of sp_numeric_blk
	blockK      = 32   // SP_BK: most k's of A's row in a batch of sp_numeric_blk
	hashSlots   = 256  // SP_HT: slots of the tables of a warp of sp_numeric_h*
)

var kernelNames = []string{"sp_count", "sp_fill", "sp_long_rows", "sp_numeric_g32", "sp_numeric_g4r", "sp_numeric_g8r",
	"sp_numeric_g16r", "sp_numeric_g32r", "sp_numeric_blk", "sp_numeric_h1", "sp_numeric_h2",
	"sp_run_starts", "sp_run_first", "sp_expand", "sp_copy_rows", "sp_plan", "sp_scan_blocks", "sp_scan_parts",
	"sp_scan_apply", "sp_tr_count", "sp_tr_scatter", "sp_tr_sort", "sp_tr_mid", "sp_tr_long", "sp_gather", "sp_check"}

// maxInt32 bounds rows, columns and nonzeros of a device matrix.
const maxInt32 = math.MaxInt32

// Device is the sparse kernels loaded in one CUDA context. Its methods
// may be called from several goroutines: the work of each call is queued
// and waited for under the loader's lock.
type Device struct {
	l *gpu.Loader
	// fewRuns is the number of runs of rows below which products take
	// a block per chunk of all but short rows (fewChunks; tests vary it).
	fewRuns int
	// mostParts bounds the parts of a chunk of sp_numeric_blk (maxParts;
	// tests vary it).
	mostParts int
	// longFew is the most runs of rows of a product that all go to
	// sp_long_rows (longFew; tests vary it).
	longFew int
	// keepBits bounds the bitmaps of long rows kept from one pass of
	// sp_long_rows to the next (bitmapBudget; tests vary it).
	keepBits int64
	// hashRows is the rows a warp of sp_numeric_h* takes (1 or 2), or 0
	// for the host's choice (warpRows; tests vary it).
	hashRows int
}

// Open returns the kernels in the primary context of device ordinal.
// Errors wrap cuda.ErrUnavailable when there is no usable GPU.
func Open(ordinal int) (*Device, error) {
	l, err := gpu.Open(ordinal, kernels.Sparse, kernelNames)
	if err != nil {
		return nil, fmt.Errorf("gpusparse: %w", err)
	}
	return &Device{l: l, fewRuns: fewChunks, mostParts: maxParts, longFew: longFew, keepBits: bitmapBudget}, nil
}

// For returns the kernels in a caller's context (which stays the
// caller's).
func For(ctx *cuda.Context) (*Device, error) {
	l, err := gpu.For(ctx, kernels.Sparse, kernelNames)
	if err != nil {
		return nil, fmt.Errorf("gpusparse: %w", err)
	}
	return &Device{l: l, fewRuns: fewChunks, mostParts: maxParts, longFew: longFew, keepBits: bitmapBudget}, nil
}

// Context returns the context the matrices of d live in.
func (d *Device) Context() *cuda.Context { return d.l.Ctx }

// After makes the work that d queues from now on wait for the work
// queued on s so far (an event between the streams: the host does not
// wait), for a caller whose stream made the operands.
func (d *Device) After(s *cuda.Stream) error {
	if err := d.l.Usable(); err != nil {
		return err
	}
	ev, err := d.l.Ctx.NewEvent()
	if err != nil {
		return err
	}
	d.l.Mu.Lock()
	defer d.l.Mu.Unlock()
	// An event closed before the device reaches it is released once it
	// completes.
	return d.l.Fail(errors.Join(ev.Record(s), d.l.Stream.WaitEvent(ev), ev.Close()))
}

// run queues fn under the loader's lock and waits for the stream. A
// sticky failure is recorded in the loader so that the next Open starts
// afresh.
func (d *Device) run(fn func(q *queue) error) error {
	if err := d.l.Usable(); err != nil {
		return err
	}
	d.l.Mu.Lock()
	defer d.l.Mu.Unlock()
	q := &queue{d: d}
	err := fn(q)
	err = errors.Join(err, q.sync())
	for _, b := range q.temp {
		err = errors.Join(err, b.Free())
	}
	return d.l.Fail(err)
}

// queue is one call's work on the loader's stream and its scratch.
type queue struct {
	d    *Device
	temp []*cuda.Buffer
}

func (q *queue) sync() error { return q.d.l.Stream.Synchronize() }

// launch queues kernel name over n items, perBlock to a block.
func (q *queue) launch(name string, n, perBlock int, args ...any) error {
	if n <= 0 {
		return nil
	}
	return q.d.l.Launch(nil, name, q.d.l.Grid(name, int64(n), int64(perBlock)), args...)
}

// launchGrid queues kernel name on exactly grid blocks.
func (q *queue) launchGrid(name string, grid int, args ...any) error {
	return q.d.l.Launch(nil, name, uint32(grid), args...)
}

// alloc returns bytes of device memory that the caller keeps; what
// names the array in the error.
func (q *queue) alloc(what string, bytes int64) (*cuda.Buffer, error) {
	b, err := q.d.l.Ctx.Alloc(max(bytes, 0))
	if err != nil {
		return nil, fmt.Errorf("gpusparse: %s: %w", what, err)
	}
	return b, nil
}

// scratch is alloc for a buffer freed when the call ends.
func (q *queue) scratch(what string, bytes int64) (*cuda.Buffer, error) {
	b, err := q.alloc(what, bytes)
	if err == nil {
		q.temp = append(q.temp, b)
	}
	return b, err
}

// readInt32 waits for the stream and returns the int32 at b's offset off.
func (q *queue) readInt32(b *cuda.Buffer, off int64) (int32, error) {
	if err := q.sync(); err != nil {
		return 0, err
	}
	v := make([]int32, 1)
	err := cuda.CopyToHost(v, b, off)
	return v[0], err
}

// scan turns the sizes at ptr[1:n+1] into offsets (ptr[0] = 0) and
// returns their total, refusing totals past int32.
func (q *queue) scan(what string, ptr *cuda.Buffer, n int) (int, error) {
	tiles := (n + scanTile - 1) / scanTile
	part, err := q.scratch(what+": scan", int64(tiles+1)*8)
	if err != nil {
		return 0, err
	}
	total := part.Ptr() + uintptr(tiles)*8
	size := ptr.Ptr() + 4
	if n == 0 {
		return 0, ptr.MemsetAsync32(0, q.d.l.Stream)
	}
	if err := q.launch("sp_scan_blocks", tiles, 1, int32(n), size, part); err != nil {
		return 0, err
	}
	if err := q.launchGrid("sp_scan_parts", 1, int32(tiles), part, total); err != nil {
		return 0, err
	}
	if err := q.launch("sp_scan_apply", tiles, 1, int32(n), size, part, ptr); err != nil {
		return 0, err
	}
	if err := q.sync(); err != nil {
		return 0, err
	}
	t := make([]int64, 1)
	if err := cuda.CopyToHost(t, part, int64(tiles)*8); err != nil {
		return 0, err
	}
	if t[0] > maxInt32 {
		return 0, fmt.Errorf("gpusparse: %s has %d nonzeros: offsets over 2^31-1 do not fit the kernels' int32", what, t[0])
	}
	return int(t[0]), nil
}

// bitmapBudget bounds the bitmaps of the blocks that handle long rows at
// once (each has one over the columns).
const bitmapBudget = 256 << 20

// longBitmaps returns the number of blocks that handle nlong long rows at
// once and their bitmaps of words words: one a row (keep: built once,
// read by both passes of sp_long_rows) where they fit the budget
// (bitmapBudget), else one a block.
func (q *queue) longBitmaps(what string, nlong, words int) (int, int32, *cuda.Buffer, error) {
	grid := int64(q.d.l.Grid("sp_long_rows", int64(nlong), 1))
	if int64(nlong)*int64(words)*4 <= q.d.keepBits {
		bits, err := q.scratch(what+": bitmaps of the long rows", int64(nlong)*int64(words)*4)
		return int(grid), 1, bits, err
	}
	nb, bits, err := q.longBlocks(what, nlong, words)
	return nb, 0, bits, err
}

// longBlocks returns the number of blocks that handle nlong long rows at
// once, each with a bitmap of words words, and allocates their bitmaps.
func (q *queue) longBlocks(what string, nlong, words int) (int, *cuda.Buffer, error) {
	nb := min(int64(nlong), int64(q.d.l.Grid("sp_long_rows", int64(nlong), 1)), max(1, bitmapBudget/(4*int64(words))))
	bits, err := q.scratch(what+": bitmaps of the long rows", nb*int64(words)*4)
	return int(nb), bits, err
}
