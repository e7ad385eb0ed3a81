package amg

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Preconditioner is a smoothed-aggregation AMG hierarchy: one cycle of it
// approximates A⁻¹. It is symmetric positive definite for an SPD matrix,
// so it serves as a PCG preconditioner. A Preconditioner is not safe for
// concurrent use: Apply and Solve use its work vectors.
type Preconditioner struct {
	// op is the matrix as given: the caller's arrays when its rows are
	// sorted without repeats, a normalized copy otherwise. fine is op in
	// the hierarchy's numbering (op itself unless perm renumbers it), the
	// operator of PCG. The finest level holds fine too, less the entries
	// below Options.DropTol, whose positions in fine are keep (nil when
	// none were dropped or Options.Reuse is off).
	op, fine *csr
	perm     *permutation
	keep     []int32
	opts     Options
	pool     pool
	levels   []*level // nil once Close dropped the device's: reopen sets them up on the host
	coarse   *coarseSolver
	// kernel is an orthonormal basis of A's null space (Options.Kernel,
	// or found by the setup) in the hierarchy's numbering, userKernel the
	// same in the caller's; nil for a nonsingular A.
	kernel, userKernel [][]float64
	stats              Stats
	dev                *gpuSolver // the hierarchy on a GPU (gpu.go), nil on the CPU
	// Apply's vectors in the hierarchy's numbering (with perm only).
	hr, hz []float64
	// built is the hierarchy the device setup left for attachDevice,
	// setupFallback why the last setup ran on the host instead of the
	// device it was asked for (gpu_setup.go).
	built         *gpuSolver
	reuse         *devSetup // with Options.Reuse, for a numeric Update on the device
	setupFallback error
}

// level is one grid of the hierarchy: what the solve needs (a, p, r and the
// smoother's data), and with Options.Reuse the pattern-only data that a
// numeric Update starts from (aggregates, tentative prolongator, the
// patterns of a·t and a·p).
type level struct {
	a  *csr
	bs int // dofs per node on this level
	// Row grouping of a and of r in the sparse products (see groupOf).
	ga, gr int

	// Towards the next coarser level (nil on the coarsest).
	nagg int
	p, r *csr // prolongator and its transpose
	// Kept with Options.Reuse only.
	of []int32 // aggregate of every node, −1 for none
	t  *csr    // tentative prolongator
	at *csr    // a·t, the pattern of the smoothed prolongator
	ap *csr    // a·p

	dinv []float64 // 1/a_ii
	lmax float64   // estimated largest eigenvalue of D⁻¹A
	sm   smootherData

	// Work vectors of this level: x and b are the coarse unknowns and
	// right-hand side (unused on the finest), r the residual, t scratch.
	x, b, res, tmp, tmp2 []float64
}

// Stats describes a hierarchy and the time its setup took.
type Stats struct {
	Levels []LevelStats
	// OperatorComplexity is Σ nnz(A_l) / nnz(A_0); GridComplexity the same
	// for rows.
	OperatorComplexity, GridComplexity float64
	Setup                              time.Duration // whole New or Update
	Phases                             map[string]time.Duration
}

// LevelStats describes one level.
type LevelStats struct {
	Rows, Nonzeros int
	BlockSize      int     // dofs per node
	Aggregates     int     // aggregates formed towards the next level (0 on the coarsest)
	Lambda         float64 // estimated λmax(D⁻¹A) (0 on the coarsest)
	Dropped        int     // entries below Options.DropTol left out (finest level)
}

// New builds the hierarchy of a, which must be symmetric positive
// semidefinite: positive definite, or singular with a null space that
// Options.Kernel gives or that the near-nullspace holds (see Solve).
//
// When the rows of a are sorted without repeated columns (as FEM
// assembly into a fixed pattern leaves them), its Col and Val arrays are
// used in place, not copied: they must not change until the next Update
// or until the Preconditioner is no longer used. Otherwise a is copied.
func New(a *mesh.CSR[float64], opts Options) (*Preconditioner, error) {
	start := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if pc, done, err := newOnDevice(a, &o); done {
		if err != nil {
			return nil, err
		}
		pc.stats.Setup = time.Since(start)
		return pc, nil
	}
	t0 := time.Now()
	var m *csr
	if o.scattered {
		// The device checked a (values, order, symmetry) before it
		// handed it back to be renumbered.
		m = callerCSR(a)
	} else if m, err = fromMesh(newPool(o.Workers), a); err != nil {
		return nil, err
	}
	if m.rows%o.BlockSize != 0 {
		return nil, fmt.Errorf("amg: %d rows are not a multiple of the block size %d", m.rows, o.BlockSize)
	}
	pc := &Preconditioner{opts: o, pool: newPool(o.Workers), op: m}
	pc.stats.Phases = map[string]time.Duration{}
	pc.phase("input", t0)
	if err := pc.setup(!o.scattered); err != nil {
		return nil, err
	}
	pc.stats.Setup = time.Since(start)
	return pc, nil
}

// setup builds the hierarchy of pc.op from scratch, checking first with
// check that it is symmetric (in the hierarchy's numbering, where the
// products are faster).
func (pc *Preconditioner) setup(check bool) error {
	o := &pc.opts
	b, k, err := pc.modes(pc.op.rows)
	if err != nil {
		return err
	}
	if done, err := pc.setupFromInput(b, k); done {
		if err != nil {
			return err
		}
		return pc.findKernel()
	}
	pc.resolveTheta()
	t0 := time.Now()
	if err := pc.renumber(); err != nil {
		return err
	}
	if pc.perm != nil {
		b = pc.perm.rows(b, k)
	}
	pc.phase("order", t0)
	if check {
		if err := pc.checkSymmetric(pc.fine); err != nil {
			return err
		}
	}
	t0 = time.Now()
	a0, keep := pc.fine.dropSmall(pc.pool, o.DropTol, o.BlockSize)
	pc.keep = nil
	if o.Reuse {
		pc.keep = keep
	}
	pc.phase("input", t0)
	if pc.buildOnDevice(a0, b, k) {
		return pc.findKernel()
	}
	if err := pc.build(a0, b, k); err != nil {
		return err
	}
	return pc.findKernel()
}

// coarseRows returns the size below which the hierarchy stops: MaxCoarse,
// or where the dense factor, n³/3 operations, costs about as much as the
// rest of the setup (~100 operations per entry of the finest matrix:
// n = (300·nnz)^⅓), at least 10 and at most DefaultMaxCoarse. Stopping
// earlier lets the dense factor dominate small problems. The bound is the
// device setup's: a level there costs about a millisecond whatever its
// size, while a coarsest level of 1000 rows costs the host 67 ms of dense
// factor and 65 ms more of explicit inverse for the device; host and
// device stop at the same size so that they build the same hierarchy.
func coarseRows(o *Options, nnz int) int {
	if o.MaxCoarse > 0 {
		return o.MaxCoarse
	}
	return min(DefaultMaxCoarse, max(10, int(math.Cbrt(300*float64(nnz)))))
}

func (pc *Preconditioner) phase(name string, t0 time.Time) {
	if phaseSync != nil {
		phaseSync()
	}
	pc.stats.Phases[name] += time.Since(t0)
}

// phaseSync, where set, runs before a phase's time is read. The
// benchmarks set it to a device synchronisation (MISGRID_SETUP_SYNC=1),
// so that each phase is charged its own device work instead of the
// next wait's; it slows the setup by the waits it adds.
var phaseSync func()

// checkSymmetric compares xᵀAy with yᵀAx for two fixed pseudo-random
// vectors: two products instead of a transpose, and an unsymmetric matrix
// passes only by a measure-zero accident.
func (pc *Preconditioner) checkSymmetric(a *csr) error {
	t0 := time.Now()
	defer pc.phase("check", t0)
	n := a.rows
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(mis.Hash32(int32(i), 1))/(1<<32) - 0.5
		y[i] = float64(mis.Hash32(int32(i), 2))/(1<<32) - 0.5
	}
	ax, ay := make([]float64, n), make([]float64, n)
	pc.pool.mulVec(a, x, ax)
	pc.pool.mulVec(a, y, ay)
	s1, s2 := pc.pool.dot(x, ay), pc.pool.dot(y, ax)
	scale := math.Sqrt(pc.pool.dot(x, x)*pc.pool.dot(ay, ay)) + math.Sqrt(pc.pool.dot(y, y)*pc.pool.dot(ax, ax))
	return asymmetric(s1, s2, scale)
}

// asymmetric is checkSymmetric's verdict on s1 = xᵀAy and s2 = yᵀAx.
// Cauchy–Schwarz bounds both by scale = ‖x‖‖Ay‖ + ‖y‖‖Ax‖; for random
// vectors rounding stays many orders below 1e-10 of that.
func asymmetric(s1, s2, scale float64) error {
	if math.Abs(s1-s2) > 1e-10*scale {
		return fmt.Errorf("amg: matrix is not symmetric (xᵀAy = %.17g, yᵀAx = %.17g for test vectors)", s1, s2)
	}
	return nil
}

// build constructs the levels below a. b is the n×k near-nullspace.
func (pc *Preconditioner) build(a *csr, b []float64, k int) error {
	o := &pc.opts
	p := pc.pool
	bs := o.BlockSize
	stop := coarseRows(o, a.nnz())
	for lvl := 0; ; lvl++ {
		l := &level{a: a, bs: bs}
		pc.levels = append(pc.levels, l)
		if a.rows <= stop || lvl == o.MaxLevels-1 {
			break
		}
		t0 := time.Now()
		g, err := strengthGraph(p, a, o.Theta, bs)
		if err != nil {
			return fmt.Errorf("amg: level %d: %w", lvl, err)
		}
		pc.phase("strength", t0)
		t0 = time.Now()
		var of []int32
		var nagg int
		switch o.Aggregation {
		case MIS2:
			of, nagg, err = aggregateMIS2(g, o.Workers, o.Device)
			if err != nil {
				return fmt.Errorf("amg: level %d: %w", lvl, err)
			}
		case Pairwise:
			passes := o.PairwisePasses
			if passes == 0 {
				passes = 2
				if k > bs {
					passes = 3
				}
			}
			of, nagg = aggregatePairwise(p, a, g, bs, passes)
		}
		of, nagg = fixAggregates(g, of, nagg, bs, k)
		pc.phase("aggregate", t0)
		if g = nil; a.nnz() >= gcNonzeros {
			runtime.GC() // the strength graph and the MIS (see below)
		}
		if nagg == 0 || nagg*k >= a.rows*9/10 {
			// Coarsening stalled: stop here and solve this level directly.
			break
		}
		l.of, l.nagg = of, nagg
		t0 = time.Now()
		var bc []float64
		l.t, bc = tentative(of, nagg, bs, b, k)
		pc.phase("tentative", t0)
		if err := pc.numeric(l); err != nil {
			return fmt.Errorf("amg: level %d: %w", lvl, err)
		}
		if !o.Reuse {
			l.of, l.t = nil, nil
		}
		if a.nnz() >= gcNonzeros {
			// The level's transients (strength graph, tentative
			// prolongator, eigenvalue vectors, product scratch) go back
			// to the heap before the Galerkin product allocates: the
			// resident peak of a large setup is its live data plus the
			// garbage of one level, not of several. The arrays hold no
			// pointers, so the collection costs about nothing.
			runtime.GC()
		}
		a, b, bs = pc.galerkin(l, nil), bc, k
	}
	if wideNullspace(o) {
		pc.collect(pc.levels[0].a) // before the coarse factor and the cycle's vectors
	}
	return pc.finish()
}

// numeric computes the value-dependent data of a level that has
// aggregates: diagonal, eigenvalue estimate, smoothed prolongator and
// its transpose, and the smoother. Pattern arrays are reused when present.
func (pc *Preconditioner) numeric(l *level) error {
	o := &pc.opts
	p := pc.pool
	a := l.a
	t0 := time.Now()
	d := a.diag()
	if l.dinv == nil {
		l.dinv = make([]float64, a.rows)
	}
	for i, x := range d {
		if !(x > 0) {
			return fmt.Errorf("diagonal entry %d is %v, want > 0", i, x)
		}
		l.dinv[i] = 1 / x
	}
	l.lmax = p.maxEigDinvA(a, l.dinv, o.EigenSteps)
	pc.phase("eigen", t0)
	t0 = time.Now()
	if o.Prolongation != Tentative {
		// The near-nullspace and the eigenvalue vectors are garbage
		// now, beside the strength graph's.
		pc.collect(a)
	}
	switch {
	case o.Prolongation == Tentative:
		l.p = l.t
	case !o.Reuse:
		// a·t is smoothed in place into p: no copy of the product.
		l.ga = groupOf(a, l.bs)
		at := p.mulMat(a, l.t, l.ga)
		smoothProlongator(p, l.t, at, l.dinv, o.Damping/l.lmax, at)
		l.p = at
	default:
		if l.at == nil {
			l.ga = groupOf(a, l.bs)
			l.at = p.mulMat(a, l.t, l.ga)
			l.p = &csr{rows: l.at.rows, cols: l.at.cols, ptr: l.at.ptr, col: l.at.col, val: make([]float64, l.at.nnz())}
		} else {
			p.mulMatNumeric(a, l.t, l.at, l.ga)
		}
		smoothProlongator(p, l.t, l.at, l.dinv, o.Damping/l.lmax, l.p)
	}
	if o.Reuse {
		l.r = l.p.transpose() // the numeric Galerkin product runs on it
	}
	pc.phase("prolongator", t0)
	return nil
}

// smoothProlongator sets p = t − ω·D⁻¹·(a·t) on the pattern of at, which
// holds that of t because a has a nonzero diagonal. p may be at.
func smoothProlongator(pl pool, t, at *csr, dinv []float64, omega float64, p *csr) {
	pl.forRange(at.rows, at.nnz(), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s := -omega * dinv[i]
			tk, te := t.ptr[i], t.ptr[i+1]
			for k := at.ptr[i]; k < at.ptr[i+1]; k++ {
				v := s * at.val[k]
				if tk < te && t.col[tk] == at.col[k] {
					v += t.val[tk]
					tk++
				}
				p.val[k] = v
			}
		}
	})
}

// galerkin returns the coarse operator r·a·p of level l, reusing the
// pattern of the previous one (ac) when given.
func (pc *Preconditioner) galerkin(l *level, ac *csr) *csr {
	t0 := time.Now()
	defer pc.phase("galerkin", t0)
	p := pc.pool
	if ac == nil {
		if l.ga == 0 {
			l.ga = groupOf(l.a, l.bs)
		}
		if !pc.opts.Reuse {
			gc := l.p.cols / max(1, l.nagg)
			if !blockCols(l.p, gc) {
				gc = 1
			}
			var ac, r *csr
			if pc.levels[0].a.nnz() < gcNonzeros {
				// A problem this small leaves its setup's garbage
				// to the collector, and a·p is a few MB: held whole,
				// it saves the streamed product's pattern pass. On
				// larger ones, coarse levels included, the resident
				// peak counts: a·p held there would add to it.
				ac, r = p.galerkinWhole(l.a, l.p, l.ga, gc)
				if gc > 1 && p.workers == 1 {
					r = nil
				}
			} else {
				ac, r = p.galerkinStreamed(l.a, l.p, l.ga, gc)
				if r == nil && p.workers > 1 {
					r = l.p.transpose()
				}
			}
			// Restriction by rows of Pᵀ: in parallel, and on one
			// worker too where the product built it (scalar problems):
			// their P has rows of 1–10 entries, and the scatter from
			// them misses a branch at each row's end (P1 tetrahedra,
			// 36k rows: 0.27 ms against 0.11 ms by Pᵀ's rows).
			// Otherwise one worker scatters from P's rows, and the GPU
			// copy transposes on upload.
			l.r = r
			return ac
		}
		l.gr = groupOf(l.r, l.r.rows/max(1, l.nagg))
		l.ap = p.mulMat(l.a, l.p, l.ga)
		return p.mulMat(l.r, l.ap, l.gr)
	}
	p.mulMatNumeric(l.a, l.p, l.ap, l.ga)
	p.mulMatNumeric(l.r, l.ap, ac, l.gr)
	return ac
}

// collect collects the garbage of a setup on a (if large) before a large
// allocation. With a wide near-nullspace it also returns the free pages
// to the system: the prolongator and the Galerkin product are then
// several times larger than any piece of that garbage, which held node
// graphs and vectors, so they could not reuse it and the resident peak
// would be their size plus all of it. Scalar problems reuse the pieces,
// and returning them would only cost page faults.
func (pc *Preconditioner) collect(a *csr) {
	switch {
	case a.nnz() < gcNonzeros:
	case wideNullspace(&pc.opts):
		debug.FreeOSMemory()
	default:
		runtime.GC()
	}
}

// finish sets up the smoothers, the coarse solver and stats; the host
// cycle allocates its vectors on its first run (workVectors).
func (pc *Preconditioner) finish() error {
	t0 := time.Now()
	last := len(pc.levels) - 1
	for i, l := range pc.levels {
		if i == last {
			break
		}
		if err := pc.setupSmoother(l); err != nil {
			return fmt.Errorf("amg: level %d: %w", i, err)
		}
	}
	pc.phase("smoother", t0)
	t0 = time.Now()
	cl := pc.levels[last]
	if cl.a.rows > maxDense {
		return fmt.Errorf("amg: coarsening stalled at level %d with %d rows, too many for the dense coarse solver (%d): raise theta, max_levels or check the near-nullspace", last, cl.a.rows, maxDense)
	}
	var ref []float64
	if last > 0 {
		l := pc.levels[last-1]
		ref = coarseRef(pc.pool, l.a, l.p, cl.a)
	}
	cs, err := newCoarseSolver(cl.a, ref)
	if err != nil {
		return err
	}
	pc.coarse = cs
	pc.phase("coarse", t0)
	pc.fillStats()
	return pc.attachDevice()
}

// gcNonzeros is the level size (entries) from which setup collects its
// garbage between levels.
const gcNonzeros = 1 << 20

// maxDense bounds the coarsest level: its Cholesky factor costs n³/3.
const maxDense = 6000

func (pc *Preconditioner) setupSmoother(l *level) error {
	o := &pc.opts
	s := &l.sm
	s.kind, s.sweeps = o.Smoother, o.Sweeps
	switch o.Smoother {
	case Chebyshev:
		s.dinv = l.dinv
		s.hi = o.ChebyUpper * l.lmax
		s.lo = o.ChebyLower * l.lmax
	case L1Jacobi:
		s.dinv = l1Inverse(pc.pool, l.a)
	case GaussSeidel:
		s.dinv = l.dinv
		if s.colors == nil {
			g, err := strengthGraph(pc.pool, l.a, 0, 1)
			if err != nil {
				return err
			}
			// Any coloring serves Gauss–Seidel; hash keys need no classes.
			c, err := mis.Color(g, mis.Options{Workers: o.Workers, Priority: mis.Priority{Kind: mis.Hash}})
			if err != nil {
				return err
			}
			s.colors = c.Classes()
		}
	}
	return nil
}

func (pc *Preconditioner) fillStats() {
	st := &pc.stats
	st.Levels = st.Levels[:0]
	var rows, nnz int
	for _, l := range pc.levels {
		st.Levels = append(st.Levels, LevelStats{Rows: l.a.rows, Nonzeros: l.a.nnz(), BlockSize: l.bs, Aggregates: l.nagg, Lambda: l.lmax})
		if len(st.Levels) == 1 {
			st.Levels[0].Nonzeros = pc.op.nnz()
			st.Levels[0].Dropped = pc.op.nnz() - l.a.nnz()
		}
		rows += l.a.rows
		nnz += l.a.nnz()
	}
	// Complexities count the finest level as the matrix given.
	nnz += pc.op.nnz() - pc.levels[0].a.nnz()
	st.OperatorComplexity = float64(nnz) / float64(pc.op.nnz())
	st.GridComplexity = float64(rows) / float64(pc.levels[0].a.rows)
}

// Stats returns the hierarchy's description and setup times.
func (pc *Preconditioner) Stats() Stats { return pc.stats }

// Rows returns the size of the matrix.
func (pc *Preconditioner) Rows() int { return pc.op.rows }
