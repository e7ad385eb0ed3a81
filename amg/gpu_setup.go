package amg

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/internal/gpusparse"
	"github.com/misgrid/misgrid/internal/kernels"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mis"
)

// The setup on the device. With Options.Device gpu (or auto from
// mis.AutoMinVertices rows) New uploads the caller's CSR as it is
// (pinned, staged copies) and checks it there (gpu_input.go, input.cu),
// drops its small entries there, and builds every level on the GPU, in
// the host's steps and with the host's results: strength graph
// (setup.cu), distance-2 MIS with boundary priority (the MIS engine),
// aggregates (internal/gpuagg) and their repair, tentative prolongator by
// a Householder QR per aggregate, inverse diagonal and Lanczos estimate,
// A·T and the smoothed prolongator, and the Galerkin product with the
// restriction (internal/gpusparse). The device's matrices become the
// solve's levels as they are. The host holds mirrors of them (sizes
// only) and downloads what its part needs (the coarsest operator and the
// level above it, for the coarse factor) or what Close leaves it; the
// PCG operator on the host is the caller's arrays. With
// Options.Reuse the Galerkin products keep their patterns, and a numeric
// Update reruns the numeric steps on the device after checking the new
// values there (checkOnDevice). NewDevice (gpu_device.go) takes a matrix
// that is already in device memory.
//
// Its figures (BenchmarkGPUSetup, phase by phase beside its floor) are
// in docs/amg.md.
//
// Where the device path cannot follow the host (a pattern that is not
// structurally symmetric, more than 8 dofs per node or near-nullspace
// vectors, pairwise aggregation, Gauss–Seidel) or fails, the whole setup
// runs on the host instead; Stats.Phases then has no "mis" entry from
// the device and setupFallback says why. Rows out of order, or input the
// device's checks flag, go through the host's fromMesh first (its
// errors, its sort).

var setupKernels = []string{"su_nb_count", "su_nb_fill", "su_strength", "su_node_diag1", "su_strength1", "su_scan_up", "su_scan_top", "su_scan_down",
	"su_to_i32", "su_fill64", "su_degrees", "su_classes", "su_fix_sizes", "su_fix_flags", "su_renumber",
	"su_count", "su_place", "su_sort_members", "su_tent_ptr", "su_tent_qr", "su_dinv", "su_lz_start", "su_modes",
	"su_at", "su_at_s", "su_at_l"}

const (
	scanBlocks = 1024 // SU_SCAN_BLOCKS
	maxDevBS   = 8    // SU_MAX_BS
	maxDevK    = 8    // SU_MAX_K
	noWord     = ^uint64(0)
)

// errDeviceSetup marks conditions under which the device setup hands the
// level to the host (see the package comment above).
var errDeviceSetup = errors.New("amg: device setup")

// devSetup is the state of one setup on the device.
type devSetup struct {
	pc    *Preconditioner
	g     *gpuSolver // the solver being built; its stream runs everything
	s     *gpu.Loader
	in    *gpu.Loader // the input checks (gpu_input.go)
	eng   *gpu.Loader // the MIS engine
	agg   *gpuagg.Device
	co    *gpuagg.Coarsener
	sp    *gpusparse.Device
	part  *cuda.Buffer     // scan parts
	words *cuda.Buffer     // error and size words read back
	hw    *cuda.HostBuffer // their host copy
	tmp   []*cuda.Buffer   // transients of the level being built
	err   error            // first launch error
	lv    []devLevel       // with Options.Reuse, what a numeric Update starts from
	dkeep *cuda.Buffer     // with Options.Reuse and dropped entries, each kept entry's position in the input
	// dsrc: with Options.Reuse on a matrix the device renumbered, each
	// entry's position in the caller's (Update maps values through it)
	dsrc *cuda.Buffer
	// staged: a numeric Update's values are on the device already
	// (checkOnDevice).
	staged bool
	// pinned: with Options.PinValues, the values array of the last
	// Update, page-locked in place (gpu_input.go: pinnedValues)
	pinned *cuda.HostBuffer
}

// wantDeviceSetup says whether New builds on the device.
func (pc *Preconditioner) wantDeviceSetup(k int) bool {
	o := &pc.opts
	return o.Device.WantsGPU(pc.Rows()) && o.Aggregation == MIS2 && o.Smoother != GaussSeidel &&
		o.BlockSize <= maxDevBS && k <= maxDevK
}

// buildOnDevice is build on the device. It reports false, with the host
// left to build, where the device cannot (pc.setupFallback says why);
// errors of the input are the host's, which the host build returns.
func (pc *Preconditioner) buildOnDevice(a *csr, b []float64, k int) bool {
	pc.setupFallback = nil
	if !pc.wantDeviceSetup(k) {
		return false
	}
	t0 := time.Now()
	ds, err := openDevSetup(pc)
	pc.phase("open", t0)
	if err == nil {
		err = ds.build(a, nil, b, k)
	}
	return pc.endDeviceSetup(ds, err)
}

// hostPart is the host's share of a device setup: the host copies its
// part reads, the smoothers and coarse factor, and a singular coarsest
// level's kernel.
func (pc *Preconditioner) hostPart(g *gpuSolver) error {
	t0 := time.Now()
	if err := pc.hostNeeds(g); err != nil {
		return err
	}
	pc.phase("download", t0)
	if err := pc.finish(); err != nil {
		return err
	}
	t0 = time.Now()
	defer pc.phase("download", t0)
	return pc.singularNeeds(g)
}

// endDeviceSetup completes a device setup that ran with the result err:
// the host's part (smoothers, coarse factor) and the solver, or, where
// anything failed, the state for the host to build instead.
func (pc *Preconditioner) endDeviceSetup(ds *devSetup, err error) bool {
	if err == nil {
		err = pc.hostPart(ds.g)
	}
	if ds != nil {
		t0 := time.Now()
		if err == nil && pc.opts.Reuse {
			pc.reuse, err = ds, ds.freeLevel()
		} else {
			err = errors.Join(err, ds.close())
		}
		pc.phase("close", t0)
	}
	if err != nil {
		pc.setupFallback = err
		if ds != nil && ds.g != nil && pc.dev != ds.g {
			_ = ds.g.free()
		}
		pc.built, pc.reuse = nil, nil
		pc.levels, pc.coarse, pc.dev = nil, nil, nil
		return false
	}
	return true
}

func openDevSetup(pc *Preconditioner) (ds *devSetup, err error) {
	e, err := engineOn(pc.opts.Device.Index())
	if err != nil {
		return nil, err
	}
	ds = &devSetup{pc: pc, g: &gpuSolver{e: e, cycle: pc.opts.Cycle}}
	defer func() {
		if err != nil {
			_ = ds.close()
			_ = ds.g.free()
			ds = nil
		}
	}()
	ctx := e.Ctx
	if ds.g.stream, err = ctx.NewStream(); err != nil {
		return ds, err
	}
	if ds.s, err = gpu.For(ctx, kernels.Setup, setupKernels); err != nil {
		return ds, err
	}
	if ds.in, err = gpu.For(ctx, kernels.Input, inputKernels); err != nil {
		return ds, err
	}
	if ds.eng, err = misgpu.OpenContext(ctx); err != nil {
		return ds, err
	}
	if ds.agg, err = gpuagg.Open(ctx, ds.g.stream); err != nil {
		return ds, err
	}
	if ds.sp, err = gpusparse.For(ctx); err != nil {
		return ds, err
	}
	ds.co = ds.agg.NewCoarsener()
	if ds.part, err = ds.g.alloc(scanBlocks); err != nil {
		return ds, err
	}
	if ds.words, err = ds.g.alloc(8); err != nil {
		return ds, err
	}
	if ds.hw, err = ctx.AllocHost(8 * hostWords); err != nil {
		return ds, err
	}
	// The solve's scalars.
	if ds.g.part, err = ds.g.alloc(gpuParts); err != nil {
		return ds, err
	}
	if ds.g.scal, err = ds.g.alloc(1); err != nil {
		return ds, err
	}
	ds.g.host, err = ctx.AllocHost(8)
	return ds, err
}

// close frees what the setup alone used (not the solver it built).
func (ds *devSetup) close() error {
	var err error
	if ds.g != nil && ds.g.stream != nil {
		err = ds.g.stream.Synchronize()
	}
	err = errors.Join(err, ds.freeLevel())
	if ds.co != nil {
		err = errors.Join(err, ds.co.Close())
	}
	if ds.agg != nil {
		err = errors.Join(err, ds.agg.Close())
	}
	if ds.hw != nil {
		err = errors.Join(err, ds.hw.Free())
	}
	return errors.Join(err, ds.pinned.Free())
}

// build mirrors Preconditioner.build level by level, from a on the host
// or, where given, da on the device (then its host copy a may be a
// mirror).
func (ds *devSetup) build(a *csr, da *dcsr, b []float64, k int) error {
	pc := ds.pc
	o := &pc.opts
	bs := o.BlockSize
	stop := coarseRows(o, a.nnz())
	t0 := time.Now()
	var err error
	if da == nil {
		if da, err = ds.upMatrix(a); err != nil {
			return err
		}
		if a != pc.fine {
			// The PCG operator, with the entries the hierarchy dropped.
			if ds.g.op, err = ds.upMatrix(pc.fine); err != nil {
				return err
			}
		}
	}
	pc.phase("upload", t0)
	db, err := ds.nearNullspace(b, a.rows, k)
	if err != nil {
		return err
	}
	for lvl := 0; ; lvl++ {
		l := &level{a: a, bs: bs}
		pc.levels = append(pc.levels, l)
		ds.g.levels = append(ds.g.levels, gpuLevel{a: da})
		if a.rows <= stop || lvl == o.MaxLevels-1 {
			break
		}
		next, dnext, dbc, err := ds.level(lvl, l, da, db, k)
		if err != nil {
			return fmt.Errorf("amg: level %d: %w", lvl, err)
		}
		if next == nil {
			break // coarsening stalled
		}
		if da = dnext; da == nil {
			t0 = time.Now()
			if da, err = ds.upMatrix(next); err != nil {
				return err
			}
			pc.phase("upload", t0)
		}
		a, db, bs = next, dbc, k
	}
	pc.built = ds.g
	return nil
}

// level builds the prolongator of level l on the device and returns the
// coarse operator (on the host, and on the device unless the host formed
// it) with the coarse near-nullspace (device), or nil when coarsening
// stalled.
func (ds *devSetup) level(lvl int, l *level, da *dcsr, db *cuda.Buffer, k int) (*csr, *dcsr, *cuda.Buffer, error) {
	pc := ds.pc
	defer func() {
		// freeLevel waits for the level's queued work, which the host
		// timed phases below do not see.
		t0 := time.Now()
		_ = ds.freeLevel()
		pc.phase("wait", t0)
	}()
	o := &pc.opts
	bs := l.bs
	t0 := time.Now()
	sg, dir, err := ds.strength(da, o.Theta, bs)
	if err != nil {
		return nil, nil, nil, err
	}
	pc.phase("strength", t0)
	t0 = time.Now()
	in, err := ds.mis(sg)
	if err != nil {
		return nil, nil, nil, err
	}
	pc.phase("mis", t0)
	t0 = time.Now()
	of, nagg, err := ds.aggregates(sg, in, dir, bs, k)
	if err != nil {
		return nil, nil, nil, err
	}
	pc.phase("aggregate", t0)
	if nagg == 0 || nagg*k >= l.a.rows*9/10 {
		return nil, nil, nil, nil
	}
	l.nagg = nagg
	t0 = time.Now()
	t, bc, err := ds.tentative(of, da.rows/bs, nagg, bs, k, db)
	if err != nil {
		return nil, nil, nil, err
	}
	pc.phase("tentative", t0)
	dl := devLevel{of: of, t: t, bs: bs, k: k}
	if err := ds.numeric(l, da, &dl, &ds.g.levels[len(ds.g.levels)-1]); err != nil {
		return nil, nil, nil, err
	}
	t0 = time.Now()
	ac, dac, err := ds.galerkin(l, da, &dl)
	pc.phase("galerkin", t0)
	if err == nil && o.Reuse {
		ds.lv = append(ds.lv, dl)
		l.of = make([]int32, da.rows/bs)
		err = get(ds, l.of, of)
	}
	return ac, dac, bc, err
}

// numeric is Preconditioner.numeric on the device: the inverse diagonal,
// the eigenvalue estimate, the smoothed prolongator (kept for the solve),
// the host's copy of D⁻¹ and the mirror of P. A numeric Update runs it
// again on the level's buffers.
func (ds *devSetup) numeric(l *level, da *dcsr, dl *devLevel, gl *gpuLevel) error {
	pc := ds.pc
	o := &pc.opts
	t0 := time.Now()
	dinv, lmax, err := ds.eigen(da, o.EigenSteps, dl.dinv)
	if err != nil {
		return err
	}
	l.lmax, dl.dinv = lmax, dinv
	pc.phase("eigen", t0)
	t0 = time.Now()
	p := dl.t
	if o.Prolongation != Tentative {
		if p, err = ds.smoothed(da, dl, gl.p, o.Damping/lmax); err != nil {
			return err
		}
	}
	gl.p = p
	if gl.dinv == nil {
		gl.dinv = dinv
	}
	if l.p == nil {
		if l.p, err = ds.mirror(p, l.nagg*dl.k); err != nil {
			return err
		}
	}
	ds.mirrorDinv(l, dinv)
	pc.phase("prolongator", t0)
	return nil
}

// launch queues a setup kernel over items threads, with no more blocks
// than fit on the device at once (a grid-stride loop takes the rest): a
// kernel whose registers or shared memory leave room for fewer blocks
// than a multiprocessor's eight would otherwise run its last blocks as
// a second, thinner wave.
func (ds *devSetup) launch(name string, items int64, args ...any) {
	ds.launchOn(ds.s, name, items, args...)
}

// launchOn is launch with the kernels of loader l.
func (ds *devSetup) launchOn(l *gpu.Loader, name string, items int64, args ...any) {
	if ds.err == nil {
		ds.err = l.Launch(ds.g.stream, name, l.Grid(name, items, gpuThreads), args...)
	}
}

// scan turns x[0..n) (int64) into its inclusive prefix sums.
func (ds *devSetup) scan(x *cuda.Buffer, n int64) {
	blocks := min(scanBlocks, max(1, (n+gpuThreads-1)/gpuThreads))
	if ds.err != nil {
		return
	}
	s := ds.g.stream
	ds.err = errors.Join(
		ds.s.Launch(s, "su_scan_up", uint32(blocks), n, x, ds.part),
		ds.s.Launch(s, "su_scan_top", 1, int32(blocks), ds.part),
		ds.s.Launch(s, "su_scan_down", uint32(blocks), n, x, ds.part))
}

// nearNullspace copies b, the fine level's near-nullspace (n×k), into
// memory of the solver, or forms it there where b is nil: the constant
// vectors or the rigid-body modes of Options.Coords, as nearNullspace
// does, with no array of n×k on the host.
func (ds *devSetup) nearNullspace(b []float64, n, k int) (*cuda.Buffer, error) {
	pc := ds.pc
	t0 := time.Now()
	defer pc.phase("nullspace", t0)
	if b != nil {
		return ds.keepVector(b)
	}
	o := &pc.opts
	db, err := ds.keep(8 * int64(n) * int64(k))
	if err != nil {
		return nil, err
	}
	if o.Nullspace == Constant {
		ds.launch("su_modes", int64(n), int32(n), int32(o.BlockSize), int32(k), none, 0.0, 0.0, 0.0, db)
		return db, ds.err
	}
	c, err := centroid(o.Coords, o.Dim)
	if err != nil {
		return nil, err
	}
	dc, err := ds.alloc(8 * int64(len(o.Coords)))
	if err == nil {
		err = stage(ds, dc, o.Coords)
	}
	if err != nil {
		return nil, err
	}
	ds.launch("su_modes", int64(n), int32(n), int32(o.BlockSize), int32(k), dc, c[0], c[1], c[2], db)
	return db, ds.err
}

// upMatrix copies a host matrix into solver memory through the stager.
func (ds *devSetup) upMatrix(a *csr) (*dcsr, error) { return ds.g.matrix(a, ds.keep) }

// keepVector copies v into memory of the solver (freed with it).
func (ds *devSetup) keepVector(v []float64) (*cuda.Buffer, error) {
	b, err := ds.keep(8 * int64(len(v)))
	if err == nil {
		err = stage(ds, b, v)
	}
	return b, err
}

// setupOnDevice reports whether the last New or Update built the
// hierarchy on the device (tests).
func (pc *Preconditioner) setupOnDevice() bool {
	_, ok := pc.stats.Phases["mis"]
	return ok && pc.setupFallback == nil && pc.dev != nil && pc.opts.Device != mis.CPU
}

// galerkin forms the coarse operator and the restriction of level l on
// the device (internal/gpusparse, bitwise the host's galerkinStreamed),
// keeps both for the solve and returns the coarse operator's mirror.
// With Options.Reuse the product and its intermediate A·P stay for the
// numeric Update (dl.gal).
func (ds *devSetup) galerkin(l *level, da *dcsr, dl *devLevel) (*csr, *dcsr, error) {
	k := dl.k
	gl := &ds.g.levels[len(ds.g.levels)-1]
	if err := ds.sp.After(ds.g.stream); err != nil {
		return nil, nil, err
	}
	// Both patterns are the setup's own: the level's operator was checked
	// on upload (in_check) or is a product of gpusparse, and su_at and
	// su_tent write sorted rows of aggregates' columns.
	a, err := ds.sp.WrapUnchecked(da.rows, da.rows, da.nnz, da.ptr, da.col, da.val)
	if err != nil {
		return nil, nil, err
	}
	p, err := ds.sp.WrapUnchecked(gl.p.rows, l.nagg*k, gl.p.nnz, gl.p.ptr, gl.p.col, gl.p.val)
	if err != nil {
		return nil, nil, err
	}
	g, err := ds.sp.Galerkin(a, p)
	if err != nil {
		return nil, nil, err
	}
	c, r := g.Coarse(), g.R()
	// The solver owns the coarse operator and the restriction from now;
	// A·P stays only for a numeric Update.
	ds.g.owners = append(ds.g.owners, g)
	if ds.pc.opts.Reuse {
		dl.gal = g
	} else if err := g.AP().Free(); err != nil {
		return nil, nil, err
	}
	gl.r = solverMatrix(r)
	dc := solverMatrix(c)
	ac, err := ds.mirror(dc, c.Cols())
	return ac, dc, err
}

// solverMatrix is m, a product of gpusparse, as the solve kernels read it
// (its buffers, not a copy).
func solverMatrix(m *gpusparse.Matrix) *dcsr {
	return &dcsr{rows: m.Rows(), nnz: m.NNZ(), ptr: m.Ptr(), col: m.Col(), val: m.Val(), g: lanesFor(m.NNZ(), m.Rows())}
}

// offsets32 returns a's row offsets as the int32 the kernels read.
func offsets32(a *csr) ([]int32, error) {
	if nz := a.nnz(); nz > math.MaxInt32 {
		return nil, fmt.Errorf("%d nonzeros exceed the GPU kernels' int32 offsets", nz)
	}
	ptr := make([]int32, a.rows+1)
	for i, p := range a.ptr[:a.rows+1] {
		ptr[i] = int32(p)
	}
	return ptr, nil
}
