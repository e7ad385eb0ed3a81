package amg

import (
	"errors"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/kernels"
	"github.com/misgrid/misgrid/mis"
)

// The GPU backend of the solve phase. The setup builds the levels on the
// device where it can (gpu_setup.go), and they serve the solve as they
// are; a setup on the host is uploaded once at its end (New, Update): A,
// P and R = Pᵀ in CSR with int32 offsets, the smoother's inverse
// diagonal (plain or l1) and the Chebyshev interval, and the explicit
// inverse of the coarsest operator.
// Apply and Solve then run on device vectors with only scalars coming
// back (one per dot product). Multicolor Gauss–Seidel has no GPU kernels:
// its sweeps stay on the host.

// setDevice parses a device as mis.ParseDevice does: cpu, gpu, gpu:N,
// auto or auto:N.
func setDevice(o *Options, v string) error {
	d, err := mis.ParseDevice(v)
	if err != nil {
		return err
	}
	o.Device = d
	return nil
}

// validDevice says whether d is a value mis.ParseDevice gives.
func validDevice(d mis.Device) bool {
	p, err := mis.ParseDevice(d.String())
	return err == nil && p == d
}

// Device reports where Apply and Solve run now: mis.CPU, or mis.GPU on
// the device index they use.
func (pc *Preconditioner) Device() mis.Device {
	if pc.dev != nil {
		return mis.GPU.On(pc.opts.Device.Index())
	}
	return mis.CPU
}

// Close releases the device copy of the hierarchy (a no-op on the CPU);
// the Preconditioner keeps working on the host afterwards. Where the host
// holds the matrix, Close only frees, and the first Apply or Solve after
// it sets the hierarchy up again on the host (Update sets it up afresh,
// on the device where the options say so): a setup closed after its
// solve, as in a Newton loop, never waits for its hierarchy to come to
// the host. A hierarchy of a caller's device matrix (NewDevice) comes to
// the host in Close. Device memory of a Preconditioner dropped without
// Close is freed by the garbage collector eventually.
func (pc *Preconditioner) Close() error {
	if g := pc.dev; g != nil && len(g.mirrors) > 0 && pc.op.ptr != nil && pc.op.val != nil {
		// The null space stays: Kernel reads it after Close too.
		pc.levels, pc.coarse = nil, nil
		return pc.release()
	}
	if err := pc.hostCopies(); err != nil {
		return err
	}
	return pc.release()
}

// release frees the device copy, host copies incomplete or not (the
// hierarchy is then set up again).
func (pc *Preconditioner) release() error {
	if pc.dev == nil {
		return nil
	}
	var err error
	if pc.reuse != nil {
		err, pc.reuse = pc.reuse.close(), nil
	}
	err = errors.Join(err, pc.dev.free())
	pc.dev = nil
	return err
}

var gpuKernels = []string{"amg_rows_g1", "amg_rows_g4", "amg_rows_g8", "amg_rows_g16", "amg_rows_g32",
	"amg_vec", "amg_dot", "amg_cg", "amg_sum", "amg_dense_mv", "amg_lz_w", "amg_lz_axpy", "amg_lz_next"}

// engineOn returns the AMG kernels in the primary context of device
// ordinal, loaded on first use. Errors wrap cuda.ErrUnavailable
// (mis.ErrNoGPU).
func engineOn(ordinal int) (*gpu.Loader, error) {
	l, err := gpu.Open(ordinal, kernels.AMG, gpuKernels)
	if err != nil {
		return nil, fmt.Errorf("amg: %w", err)
	}
	return l, nil
}

// dcsr is a matrix on the device. g is the number of lanes per row of
// the row kernels, from the mean row length.
type dcsr struct {
	rows, nnz     int
	ptr, col, val *cuda.Buffer
	g             int
}

// gpuLevel is one level on the device with its work vectors.
type gpuLevel struct {
	a, p, r          *dcsr
	dinv             *cuda.Buffer
	lo, hi           float64
	kind             Smoother
	sweeps           int
	x, b, res, t, t2 *cuda.Buffer
}

// gpuSolver is the device copy of a hierarchy.
type gpuSolver struct {
	e      *gpu.Loader
	stream *cuda.Stream
	cycle  Cycle
	op     *dcsr // the PCG operator (levels[0].a unless entries were dropped)
	levels []gpuLevel
	cinv   *cuda.Buffer // inverse of the coarsest operator, row-major
	nc     int
	// PCG vectors, dot-product parts and the scalar that comes back.
	vb, vx, vr, vz, vd, vq *cuda.Buffer
	part, scal             *cuda.Buffer
	host                   *cuda.HostBuffer
	bufs                   []*cuda.Buffer
	owners                 []interface{ Free() error } // objects freed with the solver (the device setup's products)
	mirrors                []mirror                    // host copies of the device setup's matrices (gpu_input.go)
	inPlace                bool                        // the PCG operator is the caller's memory (NewDevice)
	err                    error                       // first launch error of a run
}

// attachDevice uploads the hierarchy after New or Update when the options
// ask for the GPU: mis.GPU always, mis.Auto from mis.AutoMinVertices rows.
// With Auto any failure leaves the solve on the CPU.
func (pc *Preconditioner) attachDevice() error {
	if pc.dev != nil {
		// Update: same patterns, so only the values travel.
		t0 := time.Now()
		err := pc.refreshDevice()
		pc.phase("upload", t0)
		if err == nil {
			return nil
		}
		_ = pc.dev.free()
		pc.dev = nil
		if pc.opts.Device.Kind() == mis.GPU {
			return err
		}
		// Auto: try a fresh upload below.
	}
	o := &pc.opts
	if !o.Device.WantsGPU(pc.Rows()) {
		return nil
	}
	if o.Smoother == GaussSeidel {
		if o.Device.Kind() == mis.GPU {
			return errors.New("amg: device=gpu: multicolor Gauss–Seidel runs on the CPU only; use smoother=chebyshev or jacobi")
		}
		return nil
	}
	t0 := time.Now()
	defer pc.phase("upload", t0)
	e, err := engineOn(o.Device.Index())
	if err == nil {
		pc.dev, err = pc.upload(e)
	}
	if err != nil && o.Device.Kind() == mis.Auto {
		return nil
	}
	return err
}

// upload copies the hierarchy to the device.
func (pc *Preconditioner) upload(e *gpu.Loader) (g *gpuSolver, err error) {
	g = &gpuSolver{e: e, cycle: pc.opts.Cycle}
	if pc.built != nil {
		// The device setup's levels (gpu_setup.go): what it left nil
		// goes up from the host.
		g, pc.built = pc.built, nil
	}
	defer func() {
		if err != nil {
			_ = g.free()
			g = nil
		}
	}()
	if g.stream == nil {
		if g.stream, err = e.Ctx.NewStream(); err != nil {
			return nil, err
		}
	}
	last := len(pc.levels) - 1
	if len(g.levels) != len(pc.levels) {
		g.levels = make([]gpuLevel, len(pc.levels))
	}
	for i, l := range pc.levels {
		gl := &g.levels[i]
		if gl.a == nil {
			gl.a, err = g.matrix(l.a, g.keep)
		}
		if err != nil {
			return nil, fmt.Errorf("amg: level %d: %w", i, err)
		}
		if i > 0 {
			if gl.x, err = g.alloc(l.a.rows); err != nil {
				return nil, err
			}
			if gl.b, err = g.alloc(l.a.rows); err != nil {
				return nil, err
			}
		}
		if i == last {
			break
		}
		if gl.p == nil {
			if gl.p, err = g.matrix(l.p, g.keep); err != nil {
				return nil, fmt.Errorf("amg: level %d: prolongator: %w", i, err)
			}
		}
		if gl.r == nil {
			r := l.r
			if r == nil {
				r = l.p.transpose() // the host restricts from P's rows
			}
			if gl.r, err = g.matrix(r, g.keep); err != nil {
				return nil, fmt.Errorf("amg: level %d: restriction: %w", i, err)
			}
		}
		if gl.dinv == nil || l.sm.kind != Chebyshev {
			if gl.dinv, err = g.vector(l.sm.dinv); err != nil {
				return nil, err
			}
		}
		gl.kind, gl.sweeps, gl.lo, gl.hi = l.sm.kind, l.sm.sweeps, l.sm.lo, l.sm.hi
		for _, v := range []**cuda.Buffer{&gl.res, &gl.t, &gl.t2} {
			if *v, err = g.alloc(l.a.rows); err != nil {
				return nil, err
			}
		}
	}
	if g.op == nil {
		g.op = g.levels[0].a
		if pc.levels[0].a != pc.fine {
			if g.op, err = g.matrix(pc.fine, g.keep); err != nil {
				return nil, err
			}
		}
	}
	if err = g.coarse(pc.pool, pc.coarse); err != nil {
		return nil, err
	}
	n := pc.op.rows
	for _, v := range []**cuda.Buffer{&g.vb, &g.vx, &g.vr, &g.vz, &g.vd, &g.vq} {
		if *v, err = g.alloc(n); err != nil {
			return nil, err
		}
	}
	if g.part != nil {
		return g, nil
	}
	if g.part, err = g.alloc(gpuParts); err != nil {
		return nil, err
	}
	if g.scal, err = g.alloc(1); err != nil {
		return nil, err
	}
	if g.host, err = e.Ctx.AllocHost(8); err != nil {
		return nil, err
	}
	return g, nil
}

// refresh copies new values into the device copy after Update, which
// keeps every pattern. The copies queue on g.stream behind the work that
// may still read the old values.
func (g *gpuSolver) refresh(pc *Preconditioner) error {
	put := func(d *dcsr, a *csr) error {
		if d.rows != a.rows || d.nnz != a.nnz() {
			return fmt.Errorf("amg: device copy: pattern changed (%d×%d nonzeros, want %d×%d)", a.rows, a.nnz(), d.rows, d.nnz)
		}
		return stageTo(g, d.val, a.val[:a.nnz()])
	}
	last := len(pc.levels) - 1
	for i, l := range pc.levels {
		gl := &g.levels[i]
		if err := put(gl.a, l.a); err != nil {
			return err
		}
		if i == last {
			break
		}
		if err := put(gl.p, l.p); err != nil {
			return err
		}
		if err := put(gl.r, l.r); err != nil {
			return err
		}
		if err := stageTo(g, gl.dinv, l.sm.dinv); err != nil {
			return err
		}
		gl.lo, gl.hi = l.sm.lo, l.sm.hi
	}
	if pc.levels[0].a != pc.fine {
		if err := put(g.op, pc.fine); err != nil {
			return err
		}
	}
	m, err := coarseInverse(pc.pool, pc.coarse)
	if err != nil {
		return err
	}
	return stageTo(g, g.cinv, m)
}

// gpuParts is AMG_PARTS of amg.cu: the blocks of a dot product.
const gpuParts = 512

func (g *gpuSolver) alloc(n int) (*cuda.Buffer, error) {
	b, err := g.e.Ctx.Alloc(int64(max(n, 1)) * 8)
	if err != nil {
		return nil, err
	}
	g.bufs = append(g.bufs, b)
	return b, nil
}

// keep allocates device memory that the solver frees with it.
func (g *gpuSolver) keep(bytes int64) (*cuda.Buffer, error) {
	b, err := g.e.Ctx.Alloc(max(bytes, 8))
	if err == nil {
		g.bufs = append(g.bufs, b)
	}
	return b, err
}

// stageTo copies src to the start of dst through the context's Stager,
// in g.stream's order (the work queued next reads the copy), at the
// bus's speed rather than the several times slower pageable copy's;
// src may change once stageTo returns.
func stageTo[T cuda.Word](g *gpuSolver, dst *cuda.Buffer, src []T) error {
	return gpu.StageTo(g.e, g.stream, dst, 0, src)
}

// stageFrom copies the start of src into dst through the context's
// Stager once the work queued on g.stream is done, at the bus's speed.
func stageFrom[T cuda.Word](g *gpuSolver, dst []T, src *cuda.Buffer) error {
	return gpu.StageFrom(g.e, g.stream, dst, src, 0)
}

func (g *gpuSolver) vector(v []float64) (*cuda.Buffer, error) {
	b, err := g.keep(8 * int64(len(v)))
	if err == nil {
		err = stageTo(g, b, v)
	}
	return b, err
}

// matrix copies a into memory from keep, with int32 offsets, in
// g.stream's order: the upload after a host setup and the device setup's
// host matrices take this one path.
func (g *gpuSolver) matrix(a *csr, keep func(bytes int64) (*cuda.Buffer, error)) (*dcsr, error) {
	ptr, err := offsets32(a)
	if err != nil {
		return nil, err
	}
	nz := a.nnz()
	d := &dcsr{rows: a.rows, nnz: nz, g: lanesFor(nz, a.rows)}
	for _, x := range []struct {
		b     **cuda.Buffer
		bytes int64
	}{{&d.ptr, 4 * int64(a.rows+1)}, {&d.col, 4 * int64(nz)}, {&d.val, 8 * int64(nz)}} {
		if *x.b, err = keep(x.bytes); err != nil {
			return nil, err
		}
	}
	err = g.e.Stage(g.stream, func(st *cuda.Stager) error {
		return errors.Join(cuda.StageToDevice(st, d.ptr, 0, ptr),
			cuda.StageToDevice(st, d.col, 0, a.col[:nz]), cuda.StageToDevice(st, d.val, 0, a.val[:nz]))
	})
	return d, err
}

// lanesFor picks the lanes per row: enough that a row takes a few steps,
// few enough that short rows do not leave lanes idle.
func lanesFor(nnz, rows int) int {
	m := float64(nnz) / float64(max(rows, 1))
	switch {
	case m <= 3:
		return 1
	case m <= 12:
		return 4
	case m <= 40:
		return 8
	case m <= 100:
		return 16
	}
	return 32
}

// coarse uploads the explicit inverse of the coarsest operator: a dense
// product per cycle on the device instead of a round trip to the host.
// The coarsest level is small and well conditioned relative to the fine
// one, so the inverse costs nothing measurable in accuracy.
func (g *gpuSolver) coarse(p pool, c *coarseSolver) error {
	m, err := coarseInverse(p, c)
	if err != nil {
		return err
	}
	g.nc = c.n
	g.cinv, err = g.vector(m)
	return err
}

// coarseInverse returns the (generalized) inverse of the coarsest
// operator, row-major.
func coarseInverse(p pool, c *coarseSolver) ([]float64, error) {
	return c.inverse(p), nil
}

func (g *gpuSolver) free() error {
	var first error
	for _, o := range g.owners {
		if err := o.Free(); err != nil && first == nil {
			first = err
		}
	}
	g.owners = nil
	for _, b := range g.bufs {
		if err := b.Free(); err != nil && first == nil {
			first = err
		}
	}
	g.bufs = nil
	if g.host != nil {
		if err := g.host.Free(); err != nil && first == nil {
			first = err
		}
	}
	if g.stream != nil {
		if err := g.stream.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
