package amg

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/mesh"
)

// The input of the device setup (input.cu). New with a device setup
// uploads the caller's CSR as it is (pinned, staged copies) and checks
// it there: offsets, column range, order and repeats, NaN/Inf, positive
// diagonal, then symmetry by two SpMVs. What the device flags, or rows
// out of order, go to the host's fromMesh, which names the entry (or
// sorts the rows) as without a device. Small entries are dropped on the
// device (count, scan, place, with each kept entry's position for the
// numeric Update's gather). The host keeps the caller's arrays as the
// PCG operator (no copy); the hierarchy's matrices stay on the device,
// and the host holds only their row offsets (mirrors) until something
// on the host needs the rest: the coarse solver, Close, a singular
// coarse operator's kernel, l1-Jacobi.

var inputKernels = []string{"in_check64", "in_check32", "in_drop_count", "in_drop_block", "in_drop_place",
	"in_gather", "in_hash_vec", "in_theta", "in_far", "in_fill32", "in_first_edge", "in_alone_count", "in_alone_place",
	"in_start", "in_claim", "in_won_count", "in_won_place", "in_unmark", "in_reverse", "in_perm_len", "in_permute"}

// Words of in_check's bad[] (IN_BAD_*).
const (
	badPtr = iota
	badEntry
	badOrder
	badDiag
)

// errHostInput hands a matrix that the device's checks flagged (or whose
// rows are out of order) to the host's, which report or sort it.
var errHostInput = fmt.Errorf("%w: the input needs the host's checks", errDeviceSetup)

// inputError is an error of the matrix found on the device, returned as
// the host would return it.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }

// newOnDevice is New through the device's input checks. It reports
// false where the device setup cannot or need not run, or where the
// device flagged the input: New then runs on the host from the start.
func newOnDevice(a *mesh.CSR[float64], o *Options) (*Preconditioner, bool, error) {
	if !inputFits(a, o) {
		return nil, false, nil
	}
	t0 := time.Now()
	pc := &Preconditioner{opts: *o, pool: newPool(o.Workers)}
	pc.stats.Phases = map[string]time.Duration{}
	pc.op = callerCSR(a)
	n := pc.op.rows
	pc.phase("input", t0)
	// The device forms the near-nullspace vectors it can (b nil).
	var b []float64
	k, ok := deviceModes(&pc.opts, n, o.BlockSize)
	if !ok {
		var err error
		if b, k, err = pc.modes(n); err != nil {
			return nil, false, nil
		}
	}
	done, err := pc.setupFromInput(b, k)
	switch {
	case !done:
		o.scattered = errors.Is(pc.setupFallback, errRenumber)
		return nil, false, nil
	case err == nil:
		err = pc.findKernel()
	}
	if err != nil {
		_ = pc.release()
		return nil, true, err
	}
	return pc, true, nil
}

// callerCSR is a, used in place with no checks: the device's (int is
// int64 where inputFits holds, so the caller's offsets serve as they are).
func callerCSR(a *mesh.CSR[float64]) *csr {
	n, nz := a.Rows, int(a.RowPtr[a.Rows])
	ptr := unsafe.Slice((*int)(unsafe.Pointer(unsafe.SliceData(a.RowPtr))), n+1)
	return &csr{rows: n, cols: n, ptr: ptr, col: a.Col[:nz:nz], val: a.Val[:nz:nz]}
}

// inputFits makes fromMesh's checks that cost nothing, and those of the
// device setup's sizes; a matrix failing any goes to the host.
func inputFits(a *mesh.CSR[float64], o *Options) bool {
	if shapeError(a) != nil || strconv.IntSize != 64 || a.Rows%o.BlockSize != 0 || !o.Device.WantsGPU(a.Rows) {
		return false
	}
	nz := a.RowPtr[a.Rows]
	return nz >= 0 && nz <= math.MaxInt32 && lengthError(a, nz) == nil
}

// setupFromInput builds the hierarchy of pc.op on the device from its
// upload, with the near-nullspace b (nil: formed on the device). It reports false, with pc.setupFallback saying why, where the
// host is to build it, and true with the input's error where the device
// found one that the host reports the same way.
func (pc *Preconditioner) setupFromInput(b []float64, k int) (bool, error) {
	pc.setupFallback = nil
	if !pc.wantDeviceSetup(k) || pc.op.nnz() > math.MaxInt32 || strconv.IntSize != 64 {
		return false, nil
	}
	// The device renumbers as the host does (order), or hands the matrix
	// back to the host's renumber, which then calls buildOnDevice: both
	// build the same hierarchy.
	if o := &pc.opts; o.scattered || o.Ordering == RCMOrdering && !deviceOrders(o) {
		pc.setupFallback = errRenumber
		return false, nil
	}
	pc.fine, pc.perm = pc.op, nil
	t0 := time.Now()
	ds, err := openDevSetup(pc)
	pc.phase("open", t0)
	if err != nil {
		pc.setupFallback = err
		return false, nil
	}
	pc.keep = nil
	a0, da, err := ds.input()
	var ie inputError
	if errors.As(err, &ie) {
		_ = ds.close()
		_ = ds.g.free()
		return true, ie.err
	}
	if err == nil {
		// θ from the caller's matrix, counted by the device's check.
		if pc.autoScalarTheta() {
			t0 = time.Now()
			var w []uint64
			if w, err = ds.read(ds.words, int64(5), ds.words, int64(6)); err == nil {
				pc.opts.Theta = thetaFromCounts(int(w[0]), int(w[1]))
			}
			pc.phase("theta", t0)
		}
	}
	if err == nil && pc.perm != nil {
		// The device renumbers only one dof per node, whose constant
		// vector the permutation leaves as it is.
		if b == nil && pc.opts.Nullspace != Constant {
			b, k, err = pc.modes(pc.op.rows)
		}
		if b != nil {
			b = pc.perm.rows(b, k)
		}
	}
	if err == nil {
		err = ds.build(a0, da, b, k)
	}
	return pc.endDeviceSetup(ds, err), nil
}

// input uploads pc.op and checks it (in_check64), checks its symmetry,
// and drops its small entries: the finest level on the host (a mirror
// when entries were dropped) and on the device.
func (ds *devSetup) input() (*csr, *dcsr, error) {
	pc := ds.pc
	op := pc.op
	n, nz := op.rows, op.nnz()
	t0 := time.Now()
	d := &dcsr{rows: n, nnz: nz, g: lanesFor(nz, n)}
	p64, err1 := ds.alloc(8 * int64(n+1))
	var err2, err3, err4, err5 error
	d.ptr, err3 = ds.keep(4 * int64(n+1))
	d.col, err4 = ds.keep(4 * int64(nz))
	d.val, err5 = ds.keep(8 * int64(nz))
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, nil, err
	}
	// int is int64 here (strconv.IntSize): the offsets go up as they are.
	ptr64 := unsafe.Slice((*int64)(unsafe.Pointer(&op.ptr[0])), n+1)
	if err := errors.Join(stage(ds, p64, ptr64), stage(ds, d.col, op.col), stage(ds, d.val, op.val)); err != nil {
		return nil, nil, err
	}
	pc.phase("upload", t0)
	return ds.checkInput(d, p64, "in_check64", true)
}

// checkInput checks the matrix d, whose offsets are ptr as the kernel
// (in_check64 or in_check32) reads them (d.ptr gets them as int32 if it
// is another buffer), checks its symmetry, renumbers it where
// Options.Ordering asks (with reorder; order) and drops its small
// entries.
func (ds *devSetup) checkInput(d *dcsr, ptr *cuda.Buffer, kernel string, reorder bool) (*csr, *dcsr, error) {
	pc := ds.pc
	t0 := time.Now()
	diag, err := ds.alloc(8 * int64(d.rows))
	if err != nil {
		return nil, nil, err
	}
	if err := ds.check(kernel, d.rows, d.nnz, ptr, d, diag); err != nil {
		return nil, nil, err
	}
	if ptr != d.ptr {
		ds.launch("su_to_i32", int64(d.rows+1), int64(d.rows+1), ptr, d.ptr)
	}
	if err := ds.symmetric(d); err != nil {
		return nil, nil, err
	}
	pc.phase("check", t0)
	if pc.autoScalarTheta() {
		// resolveTheta's counts, read with the drop's sizes.
		t0 = time.Now()
		ds.setWord(5, 0)
		ds.setWord(6, 0)
		cnt, err := ds.words.View(8*5, 16)
		if err != nil {
			return nil, nil, err
		}
		ds.launchIn("in_theta", int64(d.rows), int32(d.rows), b2i32(d.rows <= thetaFull), d.ptr, d.col, d.val, diag, cnt)
		pc.phase("theta", t0)
	}
	if reorder {
		var err error
		if d, diag, err = ds.order(d, diag); err != nil {
			return nil, nil, err
		}
	}
	t0 = time.Now()
	a0, da, err := ds.drop(d, diag)
	pc.phase("input", t0)
	if err == nil && da != d {
		ds.g.op = d
	}
	return a0, da, err
}

// check runs in_check64 or in_check32 on d with offsets ptr; any flag
// is errHostInput.
func (ds *devSetup) check(kernel string, n, nz int, ptr *cuda.Buffer, d *dcsr, diag *cuda.Buffer) error {
	ds.queueCheck(kernel, n, nz, ptr, d, diag)
	w, err := ds.read(ds.checkWords()...)
	if err != nil {
		return err
	}
	return flagged(w)
}

// queueCheck queues in_check64 or in_check32 on d with offsets ptr,
// its flags in the words checkWords names.
func (ds *devSetup) queueCheck(kernel string, n, nz int, ptr *cuda.Buffer, d *dcsr, diag *cuda.Buffer) {
	for i := range 4 {
		ds.setWord(i, noWord)
	}
	ds.launchIn(kernel, 32*int64(n), int32(n), int64(nz), ptr, d.col, d.val, diag, ds.words)
}

// checkWords are in_check's four flag words, as read's (buffer, index)
// pairs.
func (ds *devSetup) checkWords() []any {
	return []any{ds.words, int64(0), ds.words, int64(1), ds.words, int64(2), ds.words, int64(3)}
}

// flagged is errHostInput where any of in_check's flag words w is set.
func flagged(w []uint64) error {
	for _, x := range w {
		if x != noWord {
			return errHostInput
		}
	}
	return nil
}

// symmetric is checkSymmetric by two SpMVs on the device, with the same
// test vectors.
func (ds *devSetup) symmetric(d *dcsr) error {
	sc, err := ds.queueSymmetric(d)
	if err != nil {
		return err
	}
	w, err := ds.readRun(sc, 0, 6)
	if err != nil {
		return err
	}
	return symmetricVerdict(w)
}

// checkValues is check (in_check32) and symmetric in one wait, for the
// values of a host Update on the device's own copy of a pattern that
// passed at setup: the products cannot fault on its indices, whatever
// its values. (UpdateDevice's pattern is the caller's memory, which
// may have changed: its indices are checked before any product.)
func (ds *devSetup) checkValues(d *dcsr, diag *cuda.Buffer) error {
	ds.queueCheck("in_check32", d.rows, d.nnz, d.ptr, d, diag)
	sc, err := ds.queueSymmetric(d)
	if err != nil {
		return err
	}
	w, err := ds.readRun(sc, 0, 6, ds.checkWords()...)
	if err != nil {
		return err
	}
	if err := flagged(w[6:]); err != nil {
		return err
	}
	return symmetricVerdict(w[:6])
}

// queueSymmetric queues symmetric's products and its six dot products,
// which go into the words of the buffer it returns: xᵀ(Ay), yᵀ(Ax), xᵀx,
// (Ay)ᵀ(Ay), yᵀy, (Ax)ᵀ(Ax).
func (ds *devSetup) queueSymmetric(d *dcsr) (*cuda.Buffer, error) {
	n := d.rows
	var v [4]*cuda.Buffer
	for i := range v {
		var err error
		if v[i], err = ds.alloc(8 * int64(n)); err != nil {
			return nil, err
		}
	}
	x, y, ax, ay := v[0], v[1], v[2], v[3]
	ds.launchIn("in_hash_vec", int64(n), int32(n), uint32(1), x)
	ds.launchIn("in_hash_vec", int64(n), int32(n), uint32(2), y)
	if ds.err == nil {
		ds.g.rows(d, rowMV, x, ax, nil, nil, nil, nil, nil, nil, 0, 0)
		ds.g.rows(d, rowMV, y, ay, nil, nil, nil, nil, nil, nil, 0, 0)
	}
	sc, err := ds.alloc(8 * 6)
	if err != nil {
		return nil, err
	}
	for i, p := range [][2]*cuda.Buffer{{x, ay}, {y, ax}, {x, x}, {ay, ay}, {y, y}, {ax, ax}} {
		ds.dotTo(n, p[0], p[1], wordOf(sc, i))
	}
	return sc, ds.err
}

// symmetricVerdict judges queueSymmetric's six dots, read as words.
func symmetricVerdict(w []uint64) error {
	var s [6]float64
	for i := range s {
		s[i] = math.Float64frombits(w[i])
	}
	if err := asymmetric(s[0], s[1], math.Sqrt(s[2]*s[3])+math.Sqrt(s[4]*s[5])); err != nil {
		return inputError{err}
	}
	return nil
}

// drop is dropSmall on the device. The kept entries' positions stay on
// the device with Options.Reuse (ds.dkeep) for the numeric Update.
func (ds *devSetup) drop(d *dcsr, diag *cuda.Buffer) (*csr, *dcsr, error) {
	pc := ds.pc
	o := &pc.opts
	if o.DropTol <= 0 {
		return pc.fine, d, nil
	}
	n, nz, t2 := d.rows, d.nnz, o.DropTol*o.DropTol
	cnt, err := ds.alloc(8 * int64(n+1))
	if err != nil {
		return nil, nil, err
	}
	ds.launchIn("in_drop_count", 32*int64(n), int32(n), d.ptr, d.col, d.val, diag, t2, cnt)
	ds.scan(cnt, int64(n+1))
	w, err := ds.read(cnt, int64(n))
	if err != nil {
		return nil, nil, err
	}
	kept := int(w[0])
	if dropped := nz - kept; dropped == 0 || dropped < nz/minDrop {
		return pc.fine, d, nil
	}
	if bs := o.BlockSize; bs > 1 && bs <= maxGroup {
		ds.setWord(0, noWord)
		ds.setWord(1, noWord)
		ds.launchIn("in_drop_block", 32*int64(n/bs), int32(n/bs), int32(bs), d.ptr, d.col, d.val, diag, t2, ds.words)
		f, err := ds.read(ds.words, int64(0), ds.words, int64(1))
		if err != nil {
			return nil, nil, err
		}
		if f[0] == noWord && f[1] != noWord {
			return pc.fine, d, nil // see dropSmall
		}
	}
	da := &dcsr{rows: n, nnz: kept, g: lanesFor(kept, n)}
	var err1, err2, err3, err4 error
	da.ptr, err1 = ds.keep(4 * int64(n+1))
	da.col, err2 = ds.keep(4 * int64(kept))
	da.val, err3 = ds.keep(8 * int64(kept))
	keep := ds.dkeep
	if o.Reuse {
		keep, err4 = ds.keep(4 * int64(kept))
	} else {
		keep, err4 = ds.alloc(4 * int64(kept))
	}
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, nil, err
	}
	if o.Reuse {
		ds.dkeep = keep
	}
	ds.launchIn("in_drop_place", 32*int64(n), int32(n), d.ptr, d.col, d.val, diag, t2, cnt, da.col, da.val, keep)
	ds.launch("su_to_i32", int64(n+1), int64(n+1), cnt, da.ptr)
	a0, err := ds.mirror(da, n)
	return a0, da, err
}

// launchIn queues an input kernel over items threads.
func (ds *devSetup) launchIn(name string, items int64, args ...any) {
	ds.launchOn(ds.in, name, items, args...)
}

// checkOnDevice is Update's check of a for a hierarchy the device set up
// with Options.Reuse: a with the operator's exact layout goes up into the
// device's operator and is checked there (values, diagonal, symmetry).
// It returns nil, nil where the host is to check (another layout, a
// hierarchy on the host); on an error the device keeps the old values.
func (pc *Preconditioner) checkOnDevice(a *mesh.CSR[float64]) (*csr, error) {
	ds, g := pc.reuse, pc.dev
	if g != nil && g.inPlace {
		return nil, errors.New("amg: Update: the matrix is the caller's device memory (NewDevice): use UpdateDevice")
	}
	if ds == nil || g == nil || g.op == nil || pc.perm != nil && ds.dsrc == nil {
		// Renumbered by the host: the values go through its copy.
		return nil, nil
	}
	n, nz := pc.op.rows, pc.op.nnz()
	if a == nil || len(a.Val) != nz || nz == 0 || g.idle() != nil {
		return nil, nil
	}
	t0 := time.Now()
	ds.err = nil
	if err := ds.putValues(g.op.val, a.Val, true); err != nil {
		return nil, err
	}
	pc.phase("upload", t0)
	// The host compares the pattern while the values go up (a copy from
	// page-locked values does not wait); another layout gets the old
	// values back and the host's checks.
	t0 = time.Now()
	m := pc.sameArrays(a)
	pc.phase("pattern", t0)
	if m == nil {
		return nil, ds.putValues(g.op.val, pc.op.val[:nz], false)
	}
	t0 = time.Now()
	defer pc.phase("check", t0)
	diag, err := ds.alloc(8 * int64(n))
	if err == nil {
		err = ds.checkValues(g.op, diag)
		if errors.Is(err, errHostInput) {
			if err = m.checkValues(); err == nil {
				err = errors.New("amg: Update: the device's checks failed where the host's pass")
			}
		}
	}
	err = errors.Join(err, ds.freeLevel())
	if err != nil {
		var ie inputError
		if errors.As(err, &ie) {
			err = ie.err
		}
		_ = g.idle()
		ds.err = nil
		return nil, errors.Join(err, ds.putValues(g.op.val, pc.op.val[:pc.op.nnz()], false))
	}
	ds.staged = true
	return m, nil
}

// putValues copies the caller's values v into dst, the device's
// operator: as they are, or through dsrc where the device renumbered
// the matrix. pin copies from v page-locked in place where
// Options.PinValues asks for it.
func (ds *devSetup) putValues(dst *cuda.Buffer, v []float64, pin bool) error {
	to := dst
	if ds.dsrc != nil {
		var err error
		if to, err = ds.alloc(8 * int64(len(v))); err != nil {
			return err
		}
	}
	var err error
	if hb := ds.pinnedValues(v, pin); hb != nil {
		err = to.CopyFromHostAsync(0, hb, 0, 8*int64(len(v)), ds.g.stream)
	} else {
		err = stage(ds, to, v)
	}
	if err != nil || ds.dsrc == nil {
		return err
	}
	ds.launchIn("in_gather", int64(len(v)), int64(len(v)), ds.dsrc, to, dst)
	return ds.err
}

// pinnedValues is v page-locked (Options.PinValues), registered now
// where the last registration was of another array, or nil: the option
// off, or a registration that failed, which leaves the copy to staging.
func (ds *devSetup) pinnedValues(v []float64, pin bool) *cuda.HostBuffer {
	if !pin || !ds.pc.opts.PinValues || len(v) == 0 {
		return nil
	}
	if hb := ds.pinned; hb != nil {
		if b := hb.Bytes(); len(b) == 8*len(v) && unsafe.Pointer(&b[0]) == unsafe.Pointer(&v[0]) {
			return hb
		}
		// No copy from it is queued: every Update waits for its work.
		_ = hb.Free()
		ds.pinned = nil
	}
	hb, err := cuda.RegisterHost(ds.g.e.Ctx, v)
	if err != nil {
		return nil
	}
	ds.pinned = hb
	return hb
}

// stage copies src to the start of dst through the context's Stager, in
// the setup's stream order: after the work queued on it (which may still
// write dst, or zero it) and before the kernels queued next, which read
// it. src may change once stage returns.
func stage[T cuda.Word](ds *devSetup, dst *cuda.Buffer, src []T) error {
	return gpu.StageTo(ds.s, ds.g.stream, dst, 0, src)
}

// b2i32 is 1 for true.
func b2i32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
