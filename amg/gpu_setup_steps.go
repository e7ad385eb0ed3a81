package amg

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/internal/misgpu"
)

// The steps of one level of the device setup, each the host function
// named in its comment.

var none *cuda.Buffer // a null device pointer argument

// strength is strengthGraph on the device: the graph's offsets and
// neighbours (transients of the level) and the Dirichlet flag per node.
func (ds *devSetup) strength(a *dcsr, theta float64, bs int) (*gpuagg.Graph, *cuda.Buffer, error) {
	nodes := a.rows / bs
	dn, err1 := ds.alloc(8 * int64(nodes))
	dir, err2 := ds.alloc(int64(nodes))
	off, err3 := ds.alloc(8 * int64(nodes+1))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, nil, err
	}
	st := strengthPass{dn: dn, dir: dir, theta: theta}
	if bs == 1 {
		ds.launch("su_node_diag1", int64(nodes), int32(nodes), a.ptr, a.col, a.val, dn, dir)
	} else if err := ds.nodeBlocks(a, bs, &st); err != nil {
		return nil, nil, err
	}
	ds.setWord(0, noWord)
	ds.launchStrength(0, nodes, a, &st, off, none, none)
	ds.scan(off, int64(nodes+1))
	w, err := ds.read(ds.words, int64(0), off, int64(nodes))
	if err != nil {
		return nil, nil, err
	}
	if w[0] != noWord {
		return nil, nil, fmt.Errorf("%w: node %d: the pattern is not structurally symmetric", errDeviceSetup, w[0])
	}
	adj, err := ds.alloc(4 * int64(w[1]))
	if err != nil {
		return nil, nil, err
	}
	ds.launchStrength(1, nodes, a, &st, none, off, adj)
	if ds.err != nil {
		return nil, nil, ds.err
	}
	g, err := ds.agg.Wrap(nodes, off, adj)
	return g, dir, err
}

// strengthPass holds what su_strength's two passes share: the node
// diagonals' norms and Dirichlet flags, and for bs > 1 the node blocks
// (offsets, nodes, norms) and the count pass's flag per block.
type strengthPass struct {
	dn, dir                  *cuda.Buffer
	theta                    float64
	noff, ncol, bnorm, flags *cuda.Buffer
}

// nodeBlocks lists the node blocks of a (bs > 1) with their norms, and
// sets the diagonals' norms and the Dirichlet flags (su_nb_count, the
// scan, su_nb_fill).
func (ds *devSetup) nodeBlocks(a *dcsr, bs int, st *strengthPass) error {
	nodes := a.rows / bs
	noff, err := ds.alloc(8 * int64(nodes+1))
	if err != nil {
		return err
	}
	ds.launch("su_nb_count", 32*int64(nodes), int32(nodes), int32(bs), a.ptr, a.col, noff)
	ds.scan(noff, int64(nodes+1))
	w, err := ds.read(noff, int64(nodes))
	if err != nil {
		return err
	}
	ncol, err1 := ds.alloc(4 * int64(w[0]))
	bnorm, err2 := ds.alloc(8 * int64(w[0]))
	flags, err3 := ds.alloc(int64(w[0]))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	st.noff, st.ncol, st.bnorm, st.flags = noff, ncol, bnorm, flags
	ds.launch("su_nb_fill", 32*int64(nodes), int32(nodes), int32(bs), a.ptr, a.col, a.val, noff, ncol, bnorm, st.dn, st.dir)
	return ds.err
}

// classTable is mesh.ClassifyByDegree as a function of the degree, for
// a graph whose degrees span [mind, maxd]: the host's formula, evaluated
// once per degree, so the device's classes are the host's.
func classTable(mind, maxd int) []uint8 {
	t := make([]uint8, maxd+1)
	md := float64(maxd)
	lmax := math.Log((md + 1) / float64(mind+1))
	if !(lmax > 0) {
		return t
	}
	for d := range t {
		l := math.Log((md + 1) / float64(d+1))
		c := math.Round(3 * l / lmax)
		t[d] = uint8(min(max(c, 0), 3))
	}
	return t
}

// mis is the distance-2 MIS of aggregateMIS2 (boundary priority, the
// classes mis.Compute derives from the degrees) by the MIS engine on the
// device graph; it returns one flag byte per node on the device.
func (ds *devSetup) mis(g *gpuagg.Graph) (*cuda.Buffer, error) {
	n := g.N
	ds.setWord(1, noWord)
	ds.setWord(2, 0)
	ds.launch("su_degrees", int64(n), int32(n), g.Offsets, ds.word(1))
	w, err := ds.read(ds.words, int64(1), ds.words, int64(2))
	if err != nil {
		return nil, err
	}
	table := classTable(int(w[0]), int(w[1]))
	tb, err1 := ds.alloc(int64(len(table)))
	cls, err2 := ds.alloc(int64(n))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if err := stage(ds, tb, table); err != nil {
		return nil, err
	}
	ds.launch("su_classes", int64(n), int32(n), g.Offsets, tb, cls)
	fb, err := ds.alloc(int64(n))
	if err != nil {
		return nil, err
	}
	// The engine runs on its own stream: it starts once the graph and
	// the classes are complete, and RunTo returns with the set complete.
	if err := errors.Join(ds.err, ds.g.stream.Synchronize()); err != nil {
		return nil, ds.g.e.Fail(err)
	}
	mg := misgpu.WrapLevel(ds.eng, n, g.M, int64(w[1]), g.Offsets, g.Adj)
	if err := mg.UseClasses(cls); err != nil {
		return nil, errors.Join(err, mg.Close())
	}
	_, _, err = mg.RunTo(2, misgpu.Priority{GraphClass: true}, fb)
	return fb, errors.Join(err, mg.Close())
}

// aggregates are mis.Aggregate's (internal/gpuagg) with fixAggregates'
// repair: Dirichlet nodes leave, aggregates are renumbered densely. The
// merge of aggregates too small for the near-nullspace runs on the host
// when there are any (isolated nodes only, with MIS-2 aggregates).
func (ds *devSetup) aggregates(g *gpuagg.Graph, in, dir *cuda.Buffer, bs, k int) (*cuda.Buffer, int, error) {
	a, coarse, err := ds.co.Coarsen(g, in, 2)
	if err != nil {
		return nil, 0, err
	}
	ds.own(a.Of)
	if err := errors.Join(coarse.Free(), a.Roots.Free()); err != nil {
		return nil, 0, err
	}
	nodes, n0 := g.N, a.N
	size, err1 := ds.alloc(4 * int64(n0))
	flag, err2 := ds.alloc(8 * int64(n0+1))
	if err := errors.Join(err1, err2); err != nil {
		return nil, 0, err
	}
	ds.launch("su_fix_sizes", int64(nodes), int32(nodes), dir, a.Of, size)
	ds.setWord(3, 0)
	ds.launch("su_fix_flags", int64(n0), int32(n0), size, int32((k+bs-1)/bs), flag, ds.word(3))
	ds.scan(flag, int64(n0+1))
	w, err := ds.read(ds.words, int64(3), flag, int64(n0))
	if err != nil {
		return nil, 0, err
	}
	if w[0] > 0 {
		nagg, err := ds.fixOnHost(g, dir, a.Of, n0, bs, k)
		return a.Of, nagg, err
	}
	ds.launch("su_renumber", int64(nodes), int32(nodes), a.Of, flag)
	return a.Of, int(w[1]), ds.err
}

// fixOnHost runs fixAggregates on copies of the graph and aggregates and
// puts the result back.
func (ds *devSetup) fixOnHost(g *gpuagg.Graph, dir, of *cuda.Buffer, nagg, bs, k int) (int, error) {
	hg, err := ds.agg.Download(g)
	if err != nil {
		return 0, err
	}
	d := make([]uint8, g.N)
	hof := make([]int32, g.N)
	if err := errors.Join(get(ds, d, dir), get(ds, hof, of)); err != nil {
		return 0, err
	}
	hg.Dirichlet = make([]bool, g.N)
	for v, x := range d {
		hg.Dirichlet[v] = x != 0
	}
	hof, n := fixAggregates(hg, hof, nagg, bs, k)
	return n, stage(ds, of, hof)
}

// tentative is tentative() on the device: the prolongator's pattern from
// the aggregates, its values and the coarse near-nullspace (kept for the
// next level) by one Householder QR per aggregate over its members in
// increasing order.
func (ds *devSetup) tentative(of *cuda.Buffer, nodes, nagg, bs, k int, b *cuda.Buffer) (*dcsr, *cuda.Buffer, error) {
	n := nodes * bs
	if int64(n)*int64(k) > math.MaxInt32 {
		return nil, nil, fmt.Errorf("%w: %d×%d tentative prolongator exceeds int32 offsets", errDeviceSetup, n, k)
	}
	cnt, err1 := ds.alloc(8 * int64(nagg+1))
	pre, err2 := ds.alloc(8 * int64(nodes+1))
	pos, err3 := ds.alloc(4 * int64(nagg))
	mem, err4 := ds.alloc(4 * int64(nodes))
	w, err5 := ds.alloc(8 * int64(n) * int64(k))
	v, err6 := ds.alloc(8 * int64(n) * int64(k))
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, nil, err
	}
	ds.launch("su_count", int64(nodes), int32(nodes), of, cnt, pre)
	ds.scan(cnt, int64(nagg+1))
	ds.scan(pre, int64(nodes+1))
	ds.launch("su_place", int64(nodes), int32(nodes), of, cnt, pos, mem)
	ds.launch("su_sort_members", 32*int64(nagg), int32(nagg), cnt, mem)
	t := &dcsr{rows: n}
	// The tentative prolongator is the solve's when it is not smoothed.
	mk := ds.alloc
	if ds.pc.opts.Prolongation == Tentative || ds.pc.opts.Reuse {
		mk = ds.keep
	}
	var err error
	ptr, err1 := mk(4 * int64(n+1))
	col, err2 := mk(4 * int64(n) * int64(k))
	val, err3 := mk(8 * int64(n) * int64(k))
	bc, err4 := ds.keep(8 * int64(nagg) * int64(k*k))
	if err = errors.Join(err1, err2, err3, err4); err != nil {
		return nil, nil, err
	}
	t.ptr, t.col, t.val = ptr, col, val
	ds.launch("su_tent_ptr", int64(n+1), int32(nodes), int32(bs), int32(k), of, pre, t.ptr)
	ds.launch("su_tent_qr", 32*int64(nagg), int32(nagg), int32(bs), int32(k), cnt, mem, b, t.ptr, t.col, t.val, bc, w, v)
	r, err := ds.read(pre, int64(nodes))
	if err != nil {
		return nil, nil, err
	}
	t.nnz = int(r[0]) * bs * k
	t.g = lanesFor(t.nnz, n)
	return t, bc, nil
}

// eigen computes the inverse diagonal (kept for the smoother) and
// maxEigDinvA's Lanczos estimate with device products and dots. A
// diagonal entry that is not positive gets numeric's error.
func (ds *devSetup) eigen(a *dcsr, steps int, dinv *cuda.Buffer) (*cuda.Buffer, float64, error) {
	n := a.rows
	var err error
	if dinv == nil {
		if dinv, err = ds.keep(8 * int64(n)); err != nil {
			return nil, 0, err
		}
	}
	var vs [5]*cuda.Buffer
	for i := range vs {
		if vs[i], err = ds.alloc(8 * int64(n)); err != nil {
			return nil, 0, err
		}
	}
	sq, q, qPrev, t, w := vs[0], vs[1], vs[2], vs[3], vs[4]
	ds.setWord(4, noWord)
	ds.launch("su_dinv", int64(n), int32(n), a.ptr, a.col, a.val, dinv, sq, ds.word(4))
	// The scalars stay on the device: sc holds x·x of the start, then
	// α_j and ‖w_j‖² of every step, read once at the end, where the
	// host's loop stops the same way (the device runs the remaining
	// steps on whatever is left, which nothing reads).
	steps = min(steps, n)
	sc, err := ds.alloc(8 * int64(2*steps+2))
	if err != nil {
		return nil, 0, err
	}
	slot := func(i int) *cuda.Buffer { return wordOf(sc, i) }
	// Each step: t = D^-½·q (formed with the last step's division), w =
	// A·t, then w's two updates, each fused with the dot product after it
	// (amg_lz_*).
	ds.launch("su_lz_start", int64(n), int32(n), q)
	ds.dotTo(n, q, q, slot(0))
	ds.amg("amg_lz_next", gpuParts, int32(n), q, t, sq, slot(0))
	for j := range steps {
		if ds.err == nil {
			ds.g.rows(a, rowMV, t, w, nil, nil, nil, nil, nil, nil, 0, 0)
		}
		// β_{j-1} = ‖w_{j-1}‖, 0 before the first step (slot 1).
		ds.amg("amg_lz_w", gpuParts, int32(n), w, qPrev, sq, slot(max(2*j+1, 1)), q, ds.g.part)
		ds.amg("amg_sum", 1, ds.g.part, slot(2*j+2))
		ds.amg("amg_lz_axpy", gpuParts, int32(n), w, q, slot(2*j+2), ds.g.part)
		ds.amg("amg_sum", 1, ds.g.part, slot(2*j+3))
		qPrev, q, w = q, w, qPrev
		ds.amg("amg_lz_next", gpuParts, int32(n), q, t, sq, slot(2*j+3))
	}
	// The scalars and su_dinv's error word, in one wait.
	words, err := ds.readRun(sc, 0, int64(2*steps+2), ds.words, int64(4))
	if err != nil {
		return nil, 0, err
	}
	// A diagonal entry that is not positive voids the steps above.
	if i := words[len(words)-1]; i != noWord {
		return nil, 0, ds.diagError(a, int(i))
	}
	h := make([]float64, 2*steps+2)
	for i := range h {
		h[i] = math.Float64frombits(words[i])
	}
	var alpha, beta []float64
	for j := range steps {
		al, b := h[2*j+2], math.Sqrt(h[2*j+3])
		alpha = append(alpha, al)
		if j == steps-1 || b <= 1e-12*math.Abs(al) {
			break
		}
		beta = append(beta, b)
	}
	return dinv, tridiagMaxEig(alpha, beta), nil
}

// amg queues a kernel of the solver's image (amg.cu) after the setup's
// work.
func (ds *devSetup) amg(name string, grid int64, args ...any) {
	if ds.err == nil {
		ds.g.launch(name, grid, args...)
		ds.err = ds.g.err
	}
}

// dotTo is the solver's deterministic dot product into the device word
// out, after the setup's work.
func (ds *devSetup) dotTo(n int, x, y, out *cuda.Buffer) {
	if ds.err == nil {
		ds.g.dotTo(n, x, y, out)
		ds.err = ds.g.err
	}
}

// diagError is numeric's error for row i, with the entry's value.
func (ds *devSetup) diagError(a *dcsr, i int) error {
	var ptr [2]int32
	if err := get(ds, ptr[:0], a.ptr); err != nil {
		return err
	}
	if err := cuda.CopyToHost(ptr[:], a.ptr, 4*int64(i)); err != nil {
		return err
	}
	m := int(ptr[1] - ptr[0])
	col, val := make([]int32, m), make([]float64, m)
	if m > 0 {
		if err := errors.Join(cuda.CopyToHost(col, a.col, 4*int64(ptr[0])), cuda.CopyToHost(val, a.val, 8*int64(ptr[0]))); err != nil {
			return err
		}
	}
	d := 0.0
	for q, c := range col {
		if int(c) == i {
			d = val[q]
		}
	}
	return fmt.Errorf("diagonal entry %d is %v, want > 0", i, d)
}

// launchStrength queues su_strength's pass (fill 0: counts into cnt;
// 1: neighbours into adj at off), or su_strength1's for one dof per node.
func (ds *devSetup) launchStrength(fill int32, nodes int, a *dcsr, st *strengthPass, cnt, off, adj any) {
	if st.noff == nil {
		ds.launch("su_strength1", int64(nodes), fill, int32(nodes), a.ptr, a.col, a.val, st.theta, st.dn, st.dir, cnt, off, adj, ds.word(0))
		return
	}
	ds.launch("su_strength", 32*int64(nodes), fill, int32(nodes), st.noff, st.ncol, st.bnorm, st.theta, st.dn, st.dir, st.flags,
		cnt, off, adj, ds.word(0))
}

// smoothed is p = t − ω·D⁻¹·(A·t) (numeric, smoothProlongator), on the
// pattern of A·T: the aggregates of each row's neighbours. P is kept for
// the solve; a numeric Update passes it (p) and reruns only the numeric
// pass, with dl's scratch: nnz(A) ints for su_at (the codes of
// su_at_short's rows), then n+1 for su_at_s's list of longer rows.
func (ds *devSetup) smoothed(a *dcsr, dl *devLevel, p *dcsr, omega float64) (*dcsr, error) {
	n := a.rows
	if p == nil {
		scr, err1 := ds.alloc(4 * (int64(a.nnz) + int64(n) + 1))
		cnt, err2 := ds.alloc(8 * int64(n+1))
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if ds.pc.opts.Reuse {
			ds.tmp = slices.DeleteFunc(ds.tmp, func(b *cuda.Buffer) bool { return b == scr })
			ds.own(scr)
		}
		dl.scr = scr
		ds.launchAt(0, a, dl, cnt, &dcsr{}, omega)
		ds.scan(cnt, int64(n+1))
		w, err := ds.read(cnt, int64(n))
		if err != nil {
			return nil, err
		}
		if w[0] > math.MaxInt32 {
			return nil, fmt.Errorf("%w: A·T has %d nonzeros, beyond int32 offsets", errDeviceSetup, w[0])
		}
		p = &dcsr{rows: n, nnz: int(w[0]), g: lanesFor(int(w[0]), n)}
		var err3 error
		p.ptr, err1 = ds.keep(4 * int64(n+1))
		p.col, err2 = ds.keep(4 * int64(p.nnz))
		p.val, err3 = ds.keep(8 * int64(p.nnz))
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, err
		}
		ds.launch("su_to_i32", int64(n+1), int64(n+1), cnt, p.ptr)
	}
	ds.launchAt(1, a, dl, none, p, omega)
	return p, ds.err
}

// launchAt queues pass of su_at (k > 1) or of su_at_s and su_at_l (k = 1),
// a warp per row.
func (ds *devSetup) launchAt(pass int32, a *dcsr, dl *devLevel, cnt *cuda.Buffer, p *dcsr, omega float64) {
	n, t, bs := a.rows, dl.t, int32(dl.bs)
	launch := func(name string, args ...any) { ds.launch(name, 32*int64(n), args...) }
	if dl.k > 1 {
		launch("su_at", pass, int32(n), bs, int32(dl.k), a.ptr, a.col, a.val, dl.of, t.ptr, t.col, t.val, dl.scr, cnt,
			p.ptr, p.col, p.val, omega, dl.dinv)
		return
	}
	list, err := dl.scr.View(4*int64(a.nnz), 4*int64(n+1))
	if err != nil {
		ds.err = err
		return
	}
	launch("su_at_s", pass, int32(n), bs, a.ptr, a.col, a.val, dl.of, t.ptr, t.col, t.val, dl.scr, list, cnt,
		p.ptr, p.col, p.val, omega, dl.dinv)
	launch("su_at_l", pass, bs, a.ptr, a.col, a.val, dl.of, t.ptr, t.col, t.val, dl.scr, list, cnt,
		p.ptr, p.col, p.val, omega, dl.dinv)
}
