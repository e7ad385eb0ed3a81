package amg

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mis"
)

// DeviceMatrix is a square CSR matrix in GPU memory that the caller
// allocated (the CUDA runtime, a FEM code's assembly, PETSc's
// aijcusparse): Rows+1 row offsets, int32 (as aijcusparse and cuSPARSE
// keep them) or int64 (Offsets64), starting at 0; RowPtr[Rows] int32
// column ids, sorted without repeats in every row; as many float64
// values. The buffers must belong to the primary context of one device
// (the runtime API's), and are wrapped, not copied (cuda.Context.
// WrapDevicePtr).
type DeviceMatrix struct {
	Rows      int
	RowPtr    *cuda.Buffer
	Offsets64 bool
	Col, Val  *cuda.Buffer
}

// NewDevice builds the hierarchy of a matrix on the device, used in
// place: the PCG operator is the caller's arrays (and the finest level
// too, unless entries below Options.DropTol are left out of it, or the
// offsets are int64: then the hierarchy holds a copy). The buffers must
// stay allocated and unchanged until Close or the next UpdateDevice;
// Close copies the matrix to the host, where the Preconditioner keeps
// working. The caller's writes must be complete (the context
// synchronized, or its stream done) before the call; NewDevice returns
// with its own work done.
//
// The checks are New's, on the device, with New's errors, except that
// rows out of order are refused rather than sorted. Options.Device picks
// nothing here (the matrix's device runs the setup, as mis.GPU); the
// device setup's limits apply (smoothed aggregation by MIS-2, up to 8
// dofs per node and near-nullspace vectors, no Gauss–Seidel), and where
// the device cannot build the hierarchy NewDevice returns the error.
// The hierarchy is built in the caller's numbering, as New builds it with
// Options.Ordering natural: the auto ordering keeps it, and rcm is
// refused.
func NewDevice(a DeviceMatrix, opts Options) (*Preconditioner, error) {
	start := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Ordering == RCMOrdering {
		return nil, errors.New("amg: NewDevice builds in the caller's numbering: Options.Ordering rcm needs New")
	}
	n, nz, err := deviceShape(a)
	if err != nil {
		return nil, err
	}
	if n%o.BlockSize != 0 {
		return nil, fmt.Errorf("amg: %d rows are not a multiple of the block size %d", n, o.BlockSize)
	}
	o.Device = mis.GPU.On(a.Val.Context().Device().Ordinal())
	o.autoTheta = false // the matrix is not on the host to choose from: θ = 0
	pc := &Preconditioner{opts: o, pool: newPool(o.Workers)}
	pc.stats.Phases = map[string]time.Duration{}
	pc.op = &csr{rows: n, cols: n, nz: nz}
	pc.fine = pc.op
	if err := pc.setupDevice(a); err != nil {
		_ = pc.release()
		return nil, err
	}
	pc.stats.Setup = time.Since(start)
	return pc, nil
}

// deviceShape checks a's buffers against its size and reads its entry
// count, RowPtr[Rows].
func deviceShape(a DeviceMatrix) (n, nz int, err error) {
	n = a.Rows
	if n <= 0 || n > math.MaxInt32 {
		return 0, 0, fmt.Errorf("amg: %d rows, want 1 to %d", n, math.MaxInt32)
	}
	if a.RowPtr == nil || a.Col == nil || a.Val == nil {
		return 0, 0, errors.New("amg: DeviceMatrix: nil buffer")
	}
	raw := a.Val.Context().Raw()
	if a.RowPtr.Context().Raw() != raw || a.Col.Context().Raw() != raw {
		return 0, 0, errors.New("amg: DeviceMatrix: the buffers belong to different contexts")
	}
	w := int64(4)
	if a.Offsets64 {
		w = 8
	}
	if a.RowPtr.Size() < w*int64(n+1) {
		return 0, 0, fmt.Errorf("amg: RowPtr holds %d bytes, %d rows need %d", a.RowPtr.Size(), n, w*int64(n+1))
	}
	ends, err := deviceOffsets(a, 0, n)
	if err != nil {
		return 0, 0, err
	}
	if ends[0] != 0 {
		return 0, 0, fmt.Errorf("amg: RowPtr[0] = %d, want 0", ends[0])
	}
	if e := ends[1]; e < 0 || e > math.MaxInt32 || a.Col.Size() < 4*e || a.Val.Size() < 8*e {
		return 0, 0, fmt.Errorf("amg: RowPtr[%d] = %d entries, but Col holds %d bytes and Val %d (4 and 8 per entry, at most %d entries)",
			n, e, a.Col.Size(), a.Val.Size(), math.MaxInt32)
	}
	return n, int(ends[1]), nil
}

// deviceOffsets reads RowPtr[i] and RowPtr[j].
func deviceOffsets(a DeviceMatrix, i, j int) ([2]int64, error) {
	var r [2]int64
	for q, k := range []int{i, j} {
		if a.Offsets64 {
			var x [1]int64
			if err := cuda.CopyToHost(x[:], a.RowPtr, 8*int64(k)); err != nil {
				return r, err
			}
			r[q] = x[0]
		} else {
			var x [1]int32
			if err := cuda.CopyToHost(x[:], a.RowPtr, 4*int64(k)); err != nil {
				return r, err
			}
			r[q] = int64(x[0])
		}
	}
	return r, nil
}

// setupDevice builds the hierarchy of a on the device (NewDevice).
func (pc *Preconditioner) setupDevice(a DeviceMatrix) error {
	o := &pc.opts
	n, nz := a.Rows, pc.op.nz
	b, k, err := pc.modes(n)
	if err != nil {
		return err
	}
	if !pc.wantDeviceSetup(k) {
		return errors.New("amg: NewDevice: the options ask for what the device setup does not do (aggregation=mis2, smoother chebyshev or jacobi, up to 8 dofs per node and near-nullspace vectors)")
	}
	pc.setupFallback = nil
	t0 := time.Now()
	ds, err := openDevSetup(pc)
	pc.phase("open", t0)
	if err != nil {
		return err
	}
	ctx := ds.g.e.Ctx
	if ctx.Raw() != a.Val.Context().Raw() {
		_ = errors.Join(ds.close(), ds.g.free())
		return fmt.Errorf("amg: NewDevice: the matrix must be in the primary context of GPU %d", o.Device.Index())
	}
	// The caller's buffers, wrapped again as buffers of the setup's
	// context object (the same CUDA context), which the device layers
	// compare.
	for _, p := range []**cuda.Buffer{&a.RowPtr, &a.Col, &a.Val} {
		if *p, err = ctx.WrapDevicePtr((*p).Ptr(), (*p).Size()); err != nil {
			_ = errors.Join(ds.close(), ds.g.free())
			return err
		}
	}
	d := &dcsr{rows: n, nnz: nz, col: a.Col, val: a.Val, g: lanesFor(nz, n), ptr: a.RowPtr}
	kernel := "in_check32"
	if a.Offsets64 {
		kernel = "in_check64"
		if d.ptr, err = ds.keep(4 * int64(n+1)); err != nil {
			_ = errors.Join(ds.close(), ds.g.free())
			return err
		}
	}
	a0, da, err := ds.checkInput(d, a.RowPtr, kernel, false)
	if errors.Is(err, errHostInput) {
		err = ds.inputError(a)
	}
	var ie inputError
	if errors.As(err, &ie) {
		_ = errors.Join(ds.close(), ds.g.free())
		return ie.err
	}
	pc.mirrorOp(ds.g, d)
	if err == nil {
		err = ds.build(a0, da, b, k)
	}
	if !pc.endDeviceSetup(ds, err) {
		return pc.setupFallback
	}
	return pc.findKernel()
}

// mirrorOp makes the host's operator a mirror of d, the caller's.
func (pc *Preconditioner) mirrorOp(g *gpuSolver, d *dcsr) {
	pc.op.ptr, pc.op.col, pc.op.val = nil, nil, nil
	g.mirrors = append(g.mirrors, mirror{h: pc.op, d: d})
	g.inPlace = true
}

// inputError reads what in_check flagged in a and returns New's error for
// it (an inputError).
func (ds *devSetup) inputError(a DeviceMatrix) error {
	w, err := ds.read(ds.words, int64(badPtr), ds.words, int64(badEntry), ds.words, int64(badOrder), ds.words, int64(badDiag))
	if err != nil {
		return err
	}
	n := a.Rows
	switch {
	case w[badPtr] != noWord:
		i := int(w[badPtr])
		r, err := deviceOffsets(a, i, i+1)
		if err != nil {
			return err
		}
		return inputError{errRowPtr(i, r[0], r[1])}
	case w[badEntry] != noWord:
		k := int64(w[badEntry])
		i, err := deviceRowOf(a, k)
		if err != nil {
			return err
		}
		var c [1]int32
		var v [1]float64
		if err := errors.Join(cuda.CopyToHost(c[:], a.Col, 4*k), cuda.CopyToHost(v[:], a.Val, 8*k)); err != nil {
			return err
		}
		return inputError{entryError(i, k, c[0], v[0], n)}
	case w[badOrder] != noWord:
		return inputError{fmt.Errorf("amg: row %d: columns out of order or repeated (a matrix on the device must have sorted rows without repeats)", w[badOrder])}
	case w[badDiag] != noWord:
		i := int(w[badDiag])
		d, err := ds.diagOf(a, i)
		if err != nil {
			return err
		}
		return inputError{errDiagonal(i, d)}
	}
	return errors.New("amg: the device's input check flagged nothing")
}

// deviceRowOf returns the row of entry k (offsets that do not decrease).
func deviceRowOf(a DeviceMatrix, k int64) (int, error) {
	var err error
	i := sort.Search(a.Rows, func(i int) bool {
		r, e := deviceOffsets(a, i+1, i+1)
		err = errors.Join(err, e)
		return r[0] > k
	})
	return i, err
}

// diagOf returns a_ii (0 where row i has none).
func (ds *devSetup) diagOf(a DeviceMatrix, i int) (float64, error) {
	r, err := deviceOffsets(a, i, i+1)
	if err != nil || r[1] <= r[0] {
		return 0, err
	}
	col := make([]int32, r[1]-r[0])
	val := make([]float64, r[1]-r[0])
	if err := errors.Join(cuda.CopyToHost(col, a.Col, 4*r[0]), cuda.CopyToHost(val, a.Val, 8*r[0])); err != nil {
		return 0, err
	}
	for q, c := range col {
		if int(c) == i {
			return val[q], nil
		}
	}
	return 0, nil
}

// UpdateDevice is Update for a Preconditioner from NewDevice: new values
// on the pattern given there (the same RowPtr and Col buffers) at a.Val.
// Values rewritten in the buffer the hierarchy reads (NewDevice's, or the
// last UpdateDevice's) get, with Options.Reuse, the numeric re-setup on
// the device (Update's); values in another buffer, or no Reuse, a new
// setup, which replaces the hierarchy once it succeeded. On an error the
// hierarchy is left as it was (its operator is the caller's array as it
// now is).
func (pc *Preconditioner) UpdateDevice(a DeviceMatrix) error {
	start := time.Now()
	g := pc.dev
	if g == nil || g.op == nil || !g.inPlace {
		return errors.New("amg: UpdateDevice: the Preconditioner has no device copy (NewDevice, and not closed)")
	}
	op := g.op
	if a.Rows != op.rows || a.Val == nil || a.Val.Size() < 8*int64(op.nnz) || a.Col == nil ||
		a.Col.Ptr() != op.col.Ptr() || a.RowPtr == nil || !a.Offsets64 && a.RowPtr.Ptr() != op.ptr.Ptr() {
		return errors.New("amg: UpdateDevice: the matrix is not on the pattern given to NewDevice (the same RowPtr and Col buffers, as many values)")
	}
	if !pc.opts.Reuse || pc.reuse == nil || a.Val.Ptr() != op.val.Ptr() {
		q, err := NewDevice(a, pc.opts)
		if err != nil {
			return err
		}
		old := *pc
		*pc = *q
		if pc.reuse != nil {
			pc.reuse.pc = pc
		}
		_ = old.release()
		pc.stats.Setup = time.Since(start)
		return nil
	}
	for k := range pc.stats.Phases {
		delete(pc.stats.Phases, k)
	}
	ds := pc.reuse
	t0 := time.Now()
	err := g.idle()
	diag, err2 := ds.alloc(8 * int64(op.rows))
	if err = errors.Join(err, err2); err == nil {
		err = ds.check("in_check32", op.rows, op.nnz, op.ptr, op, diag)
		if errors.Is(err, errHostInput) {
			err = ds.inputError(DeviceMatrix{Rows: op.rows, RowPtr: op.ptr, Col: op.col, Val: op.val})
		}
	}
	if err == nil {
		err = ds.symmetric(op)
	}
	err = errors.Join(err, ds.freeLevel())
	pc.phase("check", t0)
	if err != nil {
		ds.err = nil
		var ie inputError
		if errors.As(err, &ie) {
			err = ie.err
		}
		return err
	}
	ds.staged = true
	if _, err := pc.updateOnDevice(); err != nil {
		return err
	}
	pc.stats.Setup = time.Since(start)
	return nil
}
