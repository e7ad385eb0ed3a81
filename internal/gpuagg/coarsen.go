package gpuagg

import (
	"errors"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// Meta words of a level (agg.cu's M_*), and a sink for scan totals
// nobody reads.
const (
	mN = iota
	mNC
	mErr1
	mErr2
	mNNZC
	mMaxDC
	mNOvf
	mM
	mNOvf2
	mSink
	metaWords
)

// Aggregates are the aggregates of one level on the device: Of holds the
// aggregate of every vertex (int32), Roots the root of every aggregate in
// increasing order, as in mis.Aggregates.
type Aggregates struct {
	N     int
	Of    *cuda.Buffer
	Roots *cuda.Buffer
}

// Free releases the buffers; it is idempotent.
func (a *Aggregates) Free() error {
	if a == nil {
		return nil
	}
	return errors.Join(a.Of.Free(), a.Roots.Free())
}

// DownloadAggregates copies the aggregates to the host, after the work queued on
// the Device's stream.
func (d *Device) DownloadAggregates(a *Aggregates) (of, roots []int32, err error) {
	n := a.Of.Size() / 4
	of, roots = make([]int32, n), make([]int32, a.N)
	err = d.l.Stage(d.stream, func(st *cuda.Stager) error { return errors.Join(get(st, of, a.Of), get(st, roots, a.Roots)) })
	if err != nil {
		return nil, nil, err
	}
	return of, roots, nil
}

// Coarsener holds the working memory of Coarsen, sized for the largest
// level it has seen; it serves every level of a hierarchy.
type Coarsener struct {
	d     *Device
	n     int
	m     int64
	meta  *cuda.Buffer
	part  *cuda.Buffer
	p1    *cuda.Buffer // phase-one aggregate per vertex (uint32, none = ^0)
	roots *cuda.Buffer
	mcnt  *cuda.Buffer // members per aggregate, then counted down by members
	ub    *cuda.Buffer // member degree sum per aggregate (int64)
	mptr  *cuda.Buffer // member offsets (int32, nc+1)
	base  *cuda.Buffer // scratch offsets (int64, nc+1)
	mem   *cuda.Buffer // members, grouped by aggregate
	cnt   *cuda.Buffer // coarse degree per aggregate
	ovf   *cuda.Buffer // aggregates whose row overflowed a warp's shared memory
	ovf2  *cuda.Buffer // and then a block's
	coff  *cuda.Buffer // coarse offsets (int64, nc+1)
	sc    *cuda.Buffer // the sorted coarse rows at base (int32, m)
	// times, when not nil, sums each kernel's device time (benchmarks).
	times map[string]time.Duration
}

// NewCoarsener returns a Coarsener; memory comes with the first level.
func (d *Device) NewCoarsener() *Coarsener { return &Coarsener{d: d, n: -1, m: -1} }

func (c *Coarsener) buffers() []*cuda.Buffer {
	return []*cuda.Buffer{c.meta, c.part, c.p1, c.roots, c.mcnt, c.ub, c.mptr, c.base, c.mem, c.cnt, c.ovf, c.ovf2, c.coff, c.sc}
}

// Close frees the working memory; it is idempotent.
func (c *Coarsener) Close() error {
	err := c.d.stream.Synchronize()
	for _, b := range c.buffers() {
		err = errors.Join(err, b.Free())
	}
	c.n, c.m = -1, -1
	return err
}

// WorkBytes is the working memory Coarsen needs for a level of n vertices
// and m edges, beyond its outputs.
func WorkBytes(n int, m int64) int64 {
	return 8*metaWords + 8*maxBlocks + int64(n)*(4*7) + int64(n+1)*(4+8*3) + 4*m
}

func (c *Coarsener) ensure(n int, m int64) error {
	if n <= c.n && m <= c.m {
		return nil
	}
	// The last level's compact may still read them.
	if err := c.d.stream.Synchronize(); err != nil {
		return err
	}
	for _, b := range c.buffers() {
		b.Free()
	}
	n, m = max(n, c.n), max(m, c.m)
	ctx := c.d.ctx
	var err error
	alloc := func(b **cuda.Buffer, bytes int64) {
		if err == nil {
			*b, err = ctx.Alloc(max(bytes, 8))
		}
	}
	alloc(&c.meta, 8*metaWords)
	alloc(&c.part, 8*maxBlocks)
	for _, b := range []**cuda.Buffer{&c.p1, &c.roots, &c.mcnt, &c.mem, &c.cnt, &c.ovf, &c.ovf2} {
		alloc(b, 4*int64(n))
	}
	alloc(&c.mptr, 4*int64(n+1))
	for _, b := range []**cuda.Buffer{&c.ub, &c.base, &c.coff} {
		alloc(b, 8*int64(n+1))
	}
	alloc(&c.sc, 4*m)
	if err != nil {
		for _, b := range c.buffers() {
			b.Free()
		}
		c.n, c.m = -1, -1
		return fmt.Errorf("gpuagg: working memory for %d vertices and %d edges (%s): %w", n, m, cuda.FormatBytes(WorkBytes(n, m)), err)
	}
	c.n, c.m = n, m
	return nil
}

// step is one kernel launch of a level.
type step struct {
	name string
	grid int
	args []any
}

// Coarsen aggregates g around the set in (one byte per vertex, non-zero
// for members) and builds the coarse graph, exactly as mis.Aggregate
// (dist 2) or the distance-1 aggregation of mis.Hierarchy and
// mis.CoarseGraph do on the host; a set they reject gets the same
// *SetError. It synchronises with the host once, to read the sizes of
// the coarse graph (which its buffers and the next level's MIS need) and
// the error words; the coarse rows are copied into place after that, in
// the Device's stream order.
func (c *Coarsener) Coarsen(g *Graph, in *cuda.Buffer, dist int) (*Aggregates, *Graph, error) {
	switch {
	case dist != 1 && dist != 2:
		return nil, nil, fmt.Errorf("gpuagg: distance %d, want 1 or 2", dist)
	case g == nil || in == nil:
		return nil, nil, errors.New("gpuagg: Coarsen: nil graph or set")
	case in.Size() < int64(g.N):
		return nil, nil, fmt.Errorf("mis: aggregate: set has %d flags for %d vertices", in.Size(), g.N)
	}
	if err := c.ensure(g.N, g.M); err != nil {
		return nil, nil, err
	}
	d, n := c.d, g.N
	of, err := d.ctx.Alloc(4 * int64(n))
	if err != nil {
		return nil, nil, fmt.Errorf("gpuagg: aggregate ids of %d vertices: %w", n, err)
	}
	meta := c.meta
	if err := c.run(c.steps(g, in, dist, of)); err != nil {
		of.Free()
		return nil, nil, err
	}
	w := cuda.HostSlice[uint64](d.host)
	if err := setError(w[mErr1], w[mErr2], dist, deviceLookup{c, g, in}); err != nil {
		of.Free()
		return nil, nil, err
	}
	nc, nnz := int(w[mNC]), int64(w[mNNZC])
	coarse, err := d.allocGraph(nc, nnz, g.Class != nil, g.Dirichlet != nil, g.Dim*btoi(g.Coords != nil))
	if err != nil {
		of.Free()
		return nil, nil, err
	}
	coarse.MaxDegree = int(w[mMaxDC])
	roots, err := d.ctx.Alloc(4 * int64(nc))
	if err == nil {
		err = c.run([]step{{"compact", d.grid(32 * int64(nc)), []any{meta, c.base, c.sc, c.cnt, c.coff, coarse.Adj, c.roots,
			g.Class, coarse.Class, g.Dirichlet, coarse.Dirichlet, g.Coords, coarse.Coords, int32(coarse.Dim)}}})
	}
	if err == nil {
		err = errors.Join(cuda.CopyDeviceAsync(roots, 0, c.roots, 0, 4*int64(nc), d.stream),
			cuda.CopyDeviceAsync(coarse.Offsets, 0, c.coff, 0, 8*int64(nc+1), d.stream))
	}
	if err != nil {
		of.Free()
		roots.Free()
		coarse.Free()
		return nil, nil, err
	}
	return &Aggregates{N: nc, Of: of, Roots: roots}, coarse, nil
}

// steps lists the launches of a level up to the coarse offsets.
func (c *Coarsener) steps(g *Graph, in *cuda.Buffer, dist int, of *cuda.Buffer) []step {
	d, meta, part := c.d, c.meta, c.part
	word := func(i int) uintptr { return meta.Ptr() + 8*uintptr(i) }
	nb := scanBlocks(int64(g.N))
	warps, verts := d.grid(32*int64(g.N)), d.grid(int64(g.N))
	top := func(total int) step { return step{"scan_top", 1, []any{part, int32(nb), word(total)}} }
	s := []step{
		{"level_init", 1, []any{meta, uint64(g.N), uint64(g.M)}},
		{"rank_reduce", nb, []any{in, meta, part}},
		top(mNC),
		{"rank_down", nb, []any{in, meta, part, c.p1, c.roots, c.mcnt, c.ub}},
		{"claim", warps, []any{g.Offsets, g.Adj, in, meta, c.roots, c.p1}},
	}
	if dist == 2 {
		s = append(s, step{"conflicts", warps, []any{g.Offsets, g.Adj, meta, c.roots, c.p1}})
	}
	return append(s,
		step{"assign", verts, []any{g.Offsets, g.Adj, meta, c.p1, int32(dist), of, c.mcnt, c.ub}},
		step{"agg_reduce32", nb, []any{c.mcnt, meta, part}}, top(mSink),
		step{"agg_down32to32", nb, []any{c.mcnt, meta, part, c.mptr}},
		step{"agg_reduce64", nb, []any{c.ub, meta, part}}, top(mSink),
		step{"agg_down64", nb, []any{c.ub, meta, part, c.base}},
		step{"members", verts, []any{meta, of, c.mptr, c.mcnt, c.mem}},
		step{"coarse_rows", warps, []any{g.Offsets, g.Adj, meta, of, c.mptr, c.mem, c.base, c.sc, c.cnt, c.ovf}},
		step{"coarse_block", 4 * d.sms, []any{g.Offsets, g.Adj, meta, of, c.mptr, c.mem, c.base, c.sc, c.cnt, c.ovf, c.ovf2}},
		step{"coarse_overflow", 2 * d.sms, []any{g.Offsets, g.Adj, meta, of, c.mptr, c.mem, c.base, c.sc, c.cnt, c.ovf2}},
		step{"agg_reduce32", nb, []any{c.cnt, meta, part}}, top(mNNZC),
		step{"agg_down32to64", nb, []any{c.cnt, meta, part, c.coff}},
	)
}

// run queues the steps and, unless the last is compact, reads the meta
// words back and waits for them.
func (c *Coarsener) run(steps []step) error {
	d := c.d
	var evs []*cuda.Event
	if c.times != nil {
		evs = append(evs, c.event())
		defer func() { c.addTimes(steps, evs) }()
	}
	for _, s := range steps {
		if err := d.launch(s.name, s.grid, s.args...); err != nil {
			return err
		}
		if c.times != nil {
			evs = append(evs, c.event())
		}
	}
	if steps[len(steps)-1].name == "compact" {
		return nil
	}
	if err := c.meta.CopyToHostAsync(d.host, 0, 0, 8*metaWords, d.stream); err != nil {
		return err
	}
	return d.stream.Synchronize()
}

// event records a timing event on the stream (benchmarks only).
func (c *Coarsener) event() *cuda.Event {
	e, err := c.d.ctx.NewEvent()
	if err == nil {
		err = e.Record(c.d.stream)
	}
	if err != nil {
		panic(err) // only benchmarks set times
	}
	return e
}

func (c *Coarsener) addTimes(steps []step, evs []*cuda.Event) {
	evs[len(evs)-1].Synchronize()
	for i := range len(evs) - 1 {
		if t, err := cuda.Elapsed(evs[i], evs[i+1]); err == nil {
			c.times[steps[i].name] += t
		}
	}
	for _, e := range evs {
		e.Close()
	}
}

// deviceLookup reads the words an error message needs, after the level's
// kernels have completed.
type deviceLookup struct {
	c  *Coarsener
	g  *Graph
	in *cuda.Buffer
}

func (l deviceLookup) root(a int32) (int32, error) {
	var r [1]int32
	err := cuda.CopyToHost(r[:], l.c.roots, 4*int64(a))
	return r[0], err
}

func (l deviceLookup) neighbour(v int32, pos int64) (int32, error) {
	var o [1]int64
	if err := cuda.CopyToHost(o[:], l.g.Offsets, 8*int64(v)); err != nil {
		return 0, err
	}
	var u [1]int32
	err := cuda.CopyToHost(u[:], l.g.Adj, 4*(o[0]+pos))
	return u[0], err
}

func (l deviceLookup) member(v int32) (bool, error) {
	var b [1]uint8
	err := cuda.CopyToHost(b[:], l.in, int64(v))
	return b[0] != 0, err
}

func (l deviceLookup) phaseOne(v int32) (int32, error) {
	var p [1]int32
	err := cuda.CopyToHost(p[:], l.c.p1, 4*int64(v))
	return p[0], err
}
