package amg

import (
	"fmt"
	"math"
	"runtime"
	"strconv"

	"github.com/misgrid/misgrid/internal/option"
	"github.com/misgrid/misgrid/mis"
)

// Aggregation selects how fine vertices are grouped into coarse ones.
type Aggregation int

const (
	// MIS2 grows one aggregate around every vertex of a distance-2
	// maximal independent set of the strength graph, with boundary
	// vertices first (about 3×3×3 nodes on hexahedral meshes).
	MIS2 Aggregation = iota
	// Pairwise matches every vertex with its heaviest unmatched strong
	// neighbour (locally dominant matching), PairwisePasses times, so that
	// aggregates hold about 2^PairwisePasses vertices, as AmgX and AGMG do.
	Pairwise
)

// Smoother selects the relaxation on every level but the coarsest.
type Smoother int

const (
	// Chebyshev is a Chebyshev polynomial in D⁻¹A of degree Sweeps on
	// [ChebyLower·λ, ChebyUpper·λ], λ the estimated largest eigenvalue.
	Chebyshev Smoother = iota
	// L1Jacobi is Jacobi with the l1 row norms added to the diagonal,
	// convergent without a damping parameter.
	L1Jacobi
	// GaussSeidel is multicolor Gauss–Seidel on an MIS coloring of the
	// matrix graph, forward before and backward after the coarse
	// correction, so that the cycle stays symmetric.
	GaussSeidel
)

// Cycle selects the recursion of the multigrid cycle.
type Cycle int

const (
	VCycle Cycle = iota // one coarse visit per level
	WCycle              // two coarse visits per level
)

// Prolongation selects whether the tentative prolongator is smoothed.
type Prolongation int

const (
	// AutoProlongation smooths MIS-2 aggregates and keeps pairwise ones
	// plain, as AmgX and AGMG do: smoothing small aggregates widens the
	// coarse stencils faster than it helps convergence.
	AutoProlongation Prolongation = iota
	// Smoothed applies one damped Jacobi step, ω = Damping/ρ(D⁻¹A):
	// smoothed aggregation.
	Smoothed
	// Tentative keeps the piecewise near-nullspace interpolation: plain
	// aggregation, cheaper coarse operators and more iterations.
	Tentative
)

// Options controls setup and solve. The zero value is smoothed aggregation
// on MIS-2 aggregates with constants as near-nullspace, Chebyshev degree 2
// and V-cycles, PCG to a relative residual of 1e-8: the right choice for
// scalar elliptic problems. A zero field means the default named beside
// it; OptionKeys lists every field with a text form and its default.
type Options struct {
	// Theta is the strength threshold: node couplings with
	// ‖A_ij‖ ≤ θ·sqrt(‖A_ii‖‖A_jj‖) are left out of the graph that
	// aggregation coarsens. 0 means auto: DefaultSystemTheta when the
	// near-nullspace has more vectors than unknowns per node (rigid-body
	// modes) and for scalar matrices whose couplings show a coefficient
	// jump (New counts the couplings weaker than 10⁻³·sqrt(|a_ii a_jj|):
	// more than 1.5% of them), and otherwise every coupling; a negative
	// value keeps every coupling.
	Theta     float64
	BlockSize int // degrees of freedom per node, interleaved; 0 means 1

	// DropTol leaves entries with |a_ij| ≤ DropTol·sqrt(a_ii a_jj) out of
	// the hierarchy (not out of the PCG operator): assembly round-off such
	// as the ~1e-18 face couplings of the Q1 Laplacian, which cost
	// products and widen the strength graph. Such entries change the
	// energy xᵀAx by at most DropTol·(entries per row)·xᵀDx. 0 means
	// DefaultDropTol; a negative value keeps every entry.
	DropTol float64

	Aggregation Aggregation
	// PairwisePasses is the number of matching passes of Pairwise; 0 means
	// 2 (aggregates of about four nodes), or 3 when the near-nullspace has
	// more vectors than unknowns per node (rigid-body modes), which keeps
	// the coarse level about four times smaller.
	PairwisePasses int

	Nullspace Nullspace
	Dim       int         // RigidBody: spatial dimension of Coords
	Coords    []float64   // RigidBody: Dim coordinates per node
	Vectors   [][]float64 // Vectors: near-nullspace vectors, one value per row

	Prolongation Prolongation
	Damping      float64 // prolongator smoothing ω·ρ; 0 means DefaultDamping
	EigenSteps   int     // Lanczos steps for ρ(D⁻¹A); 0 means DefaultEigenSteps

	// MaxCoarse stops coarsening at this many rows. 0 sizes the coarsest
	// level by cost: a dense factor of n rows costs n³/3 operations, so
	// coarsening goes on until that is about the cost of the rest of the
	// setup (n ≈ (300·nnz(A))^⅓, at most DefaultMaxCoarse).
	MaxCoarse int
	MaxLevels int // 0 means DefaultMaxLevels

	Smoother   Smoother
	Sweeps     int     // Chebyshev degree, or Jacobi/Gauss–Seidel sweeps; 0 means DefaultSweeps
	ChebyLower float64 // lower end of the Chebyshev interval as a fraction of λ; 0 means DefaultChebyLower
	ChebyUpper float64 // upper end as a multiple of λ; 0 means DefaultChebyUpper
	Cycle      Cycle

	// Reuse keeps the pattern data of every level (tentative prolongator,
	// the patterns of A·T and A·P) so that Update recomputes only values.
	// Without it a level keeps what the solve needs, and Update builds the
	// hierarchy afresh (the same result, at the cost of a setup).
	Reuse bool

	// PinValues, with Reuse and a hierarchy on the device, page-locks the
	// values array that Update is given (cuMemHostRegister, as AmgX's
	// AMGX_pin_memory) and copies it from there at the bus's speed,
	// instead of packing it through pinned staging memory. The first
	// Update pays the registration, more than the packing it replaces
	// (Q1 Poisson 101³ on an H200 host: 17.5 ms against 12.1 for that
	// Update); later ones with the same array (values re-assembled in
	// place) save the packing (9.2 ms). The array stays page-locked until Close or until
	// Update gets another; where it cannot be registered, Update stages
	// as without the option.
	PinValues bool

	// Kernel is the exact nullspace of a singular A (constants for a
	// pure-Neumann problem, rigid-body modes for a free-floating body),
	// one vector per entry, one value per row. Solve projects it out of
	// the right-hand side and the iterates. Left empty, the setup finds
	// it when the coarsest operator is singular and its null vectors,
	// interpolated to the finest level, are null vectors of A.
	Kernel [][]float64

	Tol     float64 // PCG relative residual; 0 means DefaultTol
	MaxIter int     // PCG iterations; 0 means DefaultMaxIter

	Workers int // goroutines; 0 means runtime.GOMAXPROCS(0)

	// Ordering is the numbering the hierarchy is built and cycled in; the
	// zero value renumbers a matrix whose numbering scatters its products
	// (see AutoOrdering) and keeps others as given.
	Ordering Ordering

	// Device is where Apply and Solve run, and the aggregation MIS (see
	// gpu.go): the zero value is mis.Auto, the GPU from
	// mis.AutoMinVertices rows when one is usable.
	Device mis.Device

	// autoTheta marks a scalar auto Theta, which the setup resolves
	// from the matrix (theta.go).
	autoTheta bool
	// scattered marks a matrix whose numbering the device found to
	// scatter its products: AutoOrdering renumbers it with no second
	// upload to count again.
	scattered bool
}

// The values that zero fields of Options take.
const (
	DefaultDropTol = 1e-15
	// DefaultSystemTheta is Theta's auto value for systems with rigid-body
	// modes: the weak couplings it drops below the finest level keep the
	// coarsening from running ahead of the modes, a larger coarsest level
	// that costs setup about what it saves in iterations (P1 elasticity
	// on the harness's tetrahedra: 13 iterations instead of 18; scalar
	// problems gain iterations on tetrahedra and lose them on triangles,
	// at no gain in time, so they keep every coupling).
	DefaultSystemTheta = 0.02
	DefaultDamping     = 4.0 / 3
	DefaultEigenSteps  = 10
	DefaultMaxCoarse   = 256
	DefaultMaxLevels   = 25
	DefaultSweeps      = 2
	DefaultChebyLower  = 0.1
	DefaultChebyUpper  = 1.1
	DefaultTol         = 1e-8
	DefaultMaxIter     = 500
)

// fill replaces the zero fields that have a fixed default.
func (o Options) fill() Options {
	orDefault(&o.BlockSize, 1)
	orDefault(&o.DropTol, DefaultDropTol)
	orDefault(&o.Damping, DefaultDamping)
	orDefault(&o.EigenSteps, DefaultEigenSteps)
	orDefault(&o.MaxLevels, DefaultMaxLevels)
	orDefault(&o.Sweeps, DefaultSweeps)
	orDefault(&o.ChebyLower, DefaultChebyLower)
	orDefault(&o.ChebyUpper, DefaultChebyUpper)
	orDefault(&o.Tol, DefaultTol)
	orDefault(&o.MaxIter, DefaultMaxIter)
	return o
}

func orDefault[T int | float64](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

// withDefaults fills the zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	o = o.fill()
	switch {
	case o.Theta < 0:
		o.Theta = 0 // every coupling
	case o.Theta == 0 && wideNullspace(&o):
		o.Theta = DefaultSystemTheta
	case o.Theta == 0:
		o.autoTheta = true
	}
	if o.Prolongation == AutoProlongation {
		o.Prolongation = Smoothed
		if o.Aggregation == Pairwise {
			o.Prolongation = Tentative
		}
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("amg: option %s = %v: want %s", key, v, want)
	}
	switch {
	case !(o.Theta < 1):
		return o, bad("theta", o.Theta, "θ < 1 (0: auto, negative: keep all)")
	case !(o.DropTol < 0.1):
		return o, bad("drop_tol", o.DropTol, "less than 0.1 (negative: keep all)")
	case o.BlockSize < 1:
		return o, bad("block_size", o.BlockSize, "a positive block size")
	case o.Aggregation < MIS2 || o.Aggregation > Pairwise:
		return o, bad("aggregation", int(o.Aggregation), "mis2 or pairwise")
	case o.PairwisePasses < 0 || o.PairwisePasses > 4:
		return o, bad("pairwise_passes", o.PairwisePasses, "1 to 4")
	case o.Nullspace < Constant || o.Nullspace > Vectors:
		return o, bad("nullspace", int(o.Nullspace), "constant, rbm or vectors")
	case o.Prolongation < AutoProlongation || o.Prolongation > Tentative:
		return o, bad("prolongation", int(o.Prolongation), "auto, smoothed or tentative")
	case !(o.Damping > 0 && o.Damping < 2):
		return o, bad("damping", o.Damping, "0 < ω·ρ < 2")
	case o.EigenSteps < 1 || o.EigenSteps > 100:
		return o, bad("eig_steps", o.EigenSteps, "1 to 100")
	case o.MaxCoarse < 0:
		return o, bad("max_coarse", o.MaxCoarse, "at least 1 (0: sized by cost)")
	case o.MaxLevels < 1:
		return o, bad("max_levels", o.MaxLevels, "at least 1")
	case o.Smoother < Chebyshev || o.Smoother > GaussSeidel:
		return o, bad("smoother", int(o.Smoother), "chebyshev, jacobi or gs")
	case o.Sweeps < 1 || o.Sweeps > 20:
		return o, bad("sweeps", o.Sweeps, "1 to 20")
	case !(o.ChebyLower > 0 && o.ChebyLower < 1):
		return o, bad("cheby_lower", o.ChebyLower, "0 < fraction < 1")
	case !(o.ChebyUpper >= 1 && o.ChebyUpper <= 10):
		return o, bad("cheby_upper", o.ChebyUpper, "1 ≤ factor ≤ 10")
	case o.Cycle < VCycle || o.Cycle > WCycle:
		return o, bad("cycle", int(o.Cycle), "v or w")
	case !(o.Tol > 0 && o.Tol < 1):
		return o, bad("tol", o.Tol, "0 < tol < 1")
	case o.MaxIter < 1:
		return o, bad("maxit", o.MaxIter, "at least 1")
	case o.Ordering < AutoOrdering || o.Ordering > RCMOrdering:
		return o, bad("ordering", int(o.Ordering), "auto, natural or rcm")
	case !validDevice(o.Device):
		return o, bad("device", o.Device, "cpu, gpu, gpu:N, auto or auto:N")
	}
	return o, nil
}

// OptionInfo documents one key of the option registry.
type OptionInfo = option.Info

// registry is the one table of option keys, shared by Set, ParseOptions,
// the command line and the C ABI. A value is refused at once when the
// options it leaves fail the checks of Setup.
var registry = &option.Registry[Options]{
	Pkg: "amg",
	Keys: []option.Key[Options]{
		thetaKey(),
		option.Float("drop_tol", "leave entries ≤ drop_tol·sqrt(a_ii a_jj) out of the hierarchy (negative: keep all)", "number < 0.1",
			nil, func(o *Options) *float64 { return &o.DropTol }),
		option.Int("block_size", "degrees of freedom per node, interleaved", 1, math.MaxInt32,
			func(o *Options) *int { return &o.BlockSize }),
		option.Enum("aggregation", "aggregation method", []string{"mis2", "pairwise"},
			func(o *Options) *Aggregation { return &o.Aggregation }),
		option.Int("pairwise_passes", "matching passes of pairwise aggregation (0: 2, or 3 with rigid-body modes)", 0, 4,
			func(o *Options) *int { return &o.PairwisePasses }),
		option.Enum("nullspace", "near-nullspace (rbm needs coordinates)", []string{"constant", "rbm", "vectors"},
			func(o *Options) *Nullspace { return &o.Nullspace }),
		option.Enum("prolongation", "smooth the tentative prolongator (auto: for mis2 only)", []string{"auto", "smoothed", "tentative"},
			func(o *Options) *Prolongation { return &o.Prolongation }),
		option.Float("damping", "prolongator smoothing ω·ρ(D⁻¹A)", "number in (0,2)",
			nil, func(o *Options) *float64 { return &o.Damping }),
		option.Int("eig_steps", "Lanczos steps of the eigenvalue estimate", 1, 100,
			func(o *Options) *int { return &o.EigenSteps }),
		maxCoarseKey(),
		option.Int("max_levels", "most levels of the hierarchy", 1, math.MaxInt32,
			func(o *Options) *int { return &o.MaxLevels }),
		option.Enum("smoother", "smoother (jacobi is l1-Jacobi, gs multicolor Gauss–Seidel)", []string{"chebyshev", "jacobi", "gs"},
			func(o *Options) *Smoother { return &o.Smoother }),
		option.Int("sweeps", "Chebyshev degree or smoothing sweeps, before and after", 1, 20,
			func(o *Options) *int { return &o.Sweeps }),
		option.Float("cheby_lower", "Chebyshev interval lower end / λmax", "number in (0,1)",
			nil, func(o *Options) *float64 { return &o.ChebyLower }),
		option.Float("cheby_upper", "Chebyshev interval upper end / λmax estimate", "number in [1,10]",
			nil, func(o *Options) *float64 { return &o.ChebyUpper }),
		option.Enum("cycle", "multigrid cycle", []string{"v", "w"},
			func(o *Options) *Cycle { return &o.Cycle }),
		option.Float("tol", "PCG relative residual tolerance", "number in (0,1)",
			nil, func(o *Options) *float64 { return &o.Tol }),
		option.Int("maxit", "PCG iteration limit", 1, math.MaxInt32,
			func(o *Options) *int { return &o.MaxIter }),
		option.Bool("reuse", "keep pattern data for a numeric re-setup (Update) when values will change",
			func(o *Options) *bool { return &o.Reuse }),
		option.Bool("pin_values", "with reuse on the device, page-lock Update's values array for copies at the bus's speed",
			func(o *Options) *bool { return &o.PinValues }),
		option.Int("threads", "goroutines for setup and solve (0: GOMAXPROCS)", 0, math.MaxInt32,
			func(o *Options) *int { return &o.Workers }),
		option.Enum("ordering", "numbering of the hierarchy (auto: rcm when the given one scatters the products)", []string{"auto", "natural", "rcm"},
			func(o *Options) *Ordering { return &o.Ordering }),
		{Info: option.Info{Key: "device", Values: "auto|cpu|gpu|gpu:N|auto:N", Doc: "where Apply and Solve run (auto: the GPU when one is usable and the matrix large enough)"},
			Set: setDevice, Get: getDevice},
	},
	Renamed: map[string]string{"block": "block_size", "workers": "threads"},
	Check: func(o *Options) error {
		_, err := o.withDefaults()
		return err
	},
}

func init() { registry.SetDefaults(Options{}.fill()) }

// wideNullspace reports whether the near-nullspace has more vectors than
// unknowns per node: rigid-body modes, or as many caller's vectors.
func wideNullspace(o *Options) bool {
	switch o.Nullspace {
	case RigidBody:
		return true
	case Vectors:
		return len(o.Vectors) > o.BlockSize
	}
	return false
}

// thetaKey is theta: auto (the zero Theta), or a threshold in [0,1),
// where 0 keeps every coupling (a negative Theta).
func thetaKey() option.Key[Options] {
	k := option.Float("theta", "strength threshold: keep a_ij when |a_ij| > θ·sqrt(|a_ii a_jj|) (auto: 0.02 with rigid-body modes or where weak couplings mark a coefficient jump, else 0)", "number in [0,1)",
		nil, func(o *Options) *float64 { return &o.Theta })
	set := k.Set
	k.Set = func(o *Options, v string) error {
		t := *o
		if err := set(&t, v); err != nil {
			return err
		}
		if t.Theta < 0 {
			return fmt.Errorf("want auto or a number in [0,1)")
		}
		if t.Theta == 0 {
			t.Theta = -1
		}
		*o = t
		return nil
	}
	k.Get = func(o *Options) string { return strconv.FormatFloat(max(o.Theta, 0), 'g', -1, 64) }
	return withAuto(k, func(o *Options) *float64 { return &o.Theta })
}

// maxCoarseKey is max_coarse: a row count, or auto (0) for the size
// that the cost of a dense factor sets.
func maxCoarseKey() option.Key[Options] {
	return withAuto(option.Int("max_coarse", "rows of the coarsest level, solved by a dense pivoted Cholesky (auto: sized by cost)", 1, math.MaxInt32,
		func(o *Options) *int { return &o.MaxCoarse }), func(o *Options) *int { return &o.MaxCoarse })
}

// withAuto lets k take auto, the zero value of its field, besides its
// own values.
func withAuto[T int | float64](k option.Key[Options], field func(*Options) *T) option.Key[Options] {
	k.Values = "auto or " + k.Values
	set, get := k.Set, k.Get
	k.Set = func(o *Options, v string) error {
		if option.Normalize(v) == "auto" {
			*field(o) = 0
			return nil
		}
		return set(o, v)
	}
	k.Get = func(o *Options) string {
		if *field(o) == 0 {
			return "auto"
		}
		return get(o)
	}
	return k
}

// getDevice is the text form of Device that setDevice reads.
func getDevice(o *Options) string { return o.Device.String() }

// OptionKeys lists the keys that Set and ParseOptions accept, with their
// defaults.
func OptionKeys() []OptionInfo { return registry.Infos() }

// Set changes the option named key from its text form, as the command
// line and the C ABI pass it. A bad value, or one out of its range, is
// refused with an error that names the key, and o is left as it was.
func (o *Options) Set(key, value string) error { return registry.Set(o, key, value) }

// Parse applies "key=value" settings to o in order, stopping at the first
// error.
func (o *Options) Parse(kv ...string) error { return registry.Parse(o, kv) }

// ParseOptions applies "key=value" settings in order to the zero Options.
// Data options (Coords, Vectors) have no text form; set those fields
// directly.
func ParseOptions(kv []string) (Options, error) {
	var o Options
	err := o.Parse(kv...)
	return o, err
}

// KeyValues returns o as "key=value" settings, one per key of OptionKeys
// and in its order, zero fields shown as the defaults they mean: the
// options in force, which Parse reads back (data fields apart).
func (o *Options) KeyValues() []string {
	f := o.fill()
	return registry.Strings(&f)
}
