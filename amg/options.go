package amg

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
// scalar elliptic problems.
type Options struct {
	Theta     float64 // strength threshold: keep |a_ij| > θ·sqrt(|a_ii a_jj|); 0 keeps all couplings
	BlockSize int     // degrees of freedom per node, interleaved; 0 means 1

	// DropTol leaves entries with |a_ij| ≤ DropTol·sqrt(a_ii a_jj) out of
	// the hierarchy (not out of the PCG operator): assembly round-off such
	// as the ~1e-18 face couplings of the Q1 Laplacian, which cost
	// products and widen the strength graph. Such entries change the
	// energy xᵀAx by at most DropTol·(entries per row)·xᵀDx. 0 means
	// 1e-15; a negative value keeps every entry.
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
	Damping      float64 // prolongator smoothing ω·ρ; 0 means 4/3
	EigenSteps   int     // Lanczos steps for ρ(D⁻¹A); 0 means 10

	// MaxCoarse stops coarsening at this many rows. 0 sizes the coarsest
	// level by cost: a dense factor of n rows costs n³/3 operations, so
	// coarsening goes on until that is about the cost of the rest of the
	// setup (n ≈ (300·nnz(A))^⅓, at most 1000).
	MaxCoarse int
	MaxLevels int // 0 means 25

	Smoother   Smoother
	Sweeps     int     // Chebyshev degree, or Jacobi/Gauss–Seidel sweeps; 0 means 2
	ChebyLower float64 // lower end of the Chebyshev interval as a fraction of λ; 0 means 0.1
	ChebyUpper float64 // upper end as a multiple of λ; 0 means 1.1
	Cycle      Cycle

	// Reuse keeps the pattern data of every level (tentative prolongator,
	// the patterns of A·T and A·P) so that Update recomputes only values.
	// Without it a level keeps what the solve needs, and Update builds the
	// hierarchy afresh (the same result, at the cost of a setup).
	Reuse bool

	// Kernel is the exact nullspace of a singular A (constants for a
	// pure-Neumann problem, rigid-body modes for a free-floating body),
	// one vector per entry, one value per row. Solve projects it out of
	// the right-hand side and the iterates. Left empty, the setup finds
	// it when the coarsest operator is singular and its null vectors,
	// interpolated to the finest level, are null vectors of A.
	Kernel [][]float64

	Tol     float64 // PCG relative residual; 0 means 1e-8
	MaxIter int     // PCG iterations; 0 means 500

	Workers int // goroutines; 0 means runtime.GOMAXPROCS(0)

	// Device is where Apply and Solve run (see gpu.go); the zero value
	// is the CPU. GPUIndex is the CUDA device ordinal for GPU and Auto.
	Device   Device
	GPUIndex int
}

// withDefaults fills the zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.BlockSize == 0 {
		o.BlockSize = 1
	}
	if o.Prolongation == AutoProlongation {
		o.Prolongation = Smoothed
		if o.Aggregation == Pairwise {
			o.Prolongation = Tentative
		}
	}
	if o.Damping == 0 {
		o.Damping = 4.0 / 3
	}
	if o.EigenSteps == 0 {
		o.EigenSteps = 10
	}
	if o.MaxLevels == 0 {
		o.MaxLevels = 25
	}
	if o.Sweeps == 0 {
		o.Sweeps = 2
	}
	if o.ChebyLower == 0 {
		o.ChebyLower = 0.1
	}
	if o.ChebyUpper == 0 {
		o.ChebyUpper = 1.1
	}
	if o.DropTol == 0 {
		o.DropTol = 1e-15
	}
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	if o.MaxIter == 0 {
		o.MaxIter = 500
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("amg: option %s = %v: want %s", key, v, want)
	}
	switch {
	case !(o.Theta >= 0 && o.Theta < 1):
		return o, bad("theta", o.Theta, "0 ≤ θ < 1")
	case !(o.DropTol < 0.1):
		return o, bad("drop_tol", o.DropTol, "less than 0.1 (negative: keep all)")
	case o.BlockSize < 1:
		return o, bad("block", o.BlockSize, "a positive block size")
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
	case o.Device < CPU || o.Device > AutoDevice || o.GPUIndex < 0:
		return o, bad("device", o.Device, "cpu, gpu, gpu:N or auto")
	}
	return o, nil
}

// OptionInfo documents one key of the option registry.
type OptionInfo struct {
	Key, Values, Default, Doc string
}

type optionEntry struct {
	OptionInfo
	set func(o *Options, v string) error
}

func enumSetter[E ~int](names []string, field func(*Options) *E) func(*Options, string) error {
	return func(o *Options, v string) error {
		i := slices.Index(names, strings.ToLower(v))
		if i < 0 {
			return fmt.Errorf("unknown value %q (want %s)", v, strings.Join(names, ", "))
		}
		*field(o) = E(i)
		return nil
	}
}

func intSetter(field func(*Options) *int) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*field(o) = n
		return nil
	}
}

func floatSetter(field func(*Options) *float64) func(*Options, string) error {
	return func(o *Options, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%q is not a finite number", v)
		}
		*field(o) = x
		return nil
	}
}

// registry is the one table of option keys, shared by ParseOptions, the
// command line and the C ABI. Values are checked for range in Setup.
var registry = []optionEntry{
	{OptionInfo{"theta", "number in [0,1)", "0", "strength threshold"},
		floatSetter(func(o *Options) *float64 { return &o.Theta })},
	{OptionInfo{"drop_tol", "number < 0.1", "1e-15", "leave entries ≤ drop_tol·sqrt(a_ii a_jj) out of the hierarchy (negative: keep all)"},
		floatSetter(func(o *Options) *float64 { return &o.DropTol })},
	{OptionInfo{"block", "integer", "1", "degrees of freedom per node"},
		intSetter(func(o *Options) *int { return &o.BlockSize })},
	{OptionInfo{"aggregation", "mis2|pairwise", "mis2", "aggregation method"},
		enumSetter([]string{"mis2", "pairwise"}, func(o *Options) *Aggregation { return &o.Aggregation })},
	{OptionInfo{"pairwise_passes", "1..4", "2", "matching passes of pairwise aggregation (default 3 with rigid-body modes)"},
		intSetter(func(o *Options) *int { return &o.PairwisePasses })},
	{OptionInfo{"nullspace", "constant|rbm|vectors", "constant", "near-nullspace (rbm needs coordinates)"},
		enumSetter([]string{"constant", "rbm", "vectors"}, func(o *Options) *Nullspace { return &o.Nullspace })},
	{OptionInfo{"prolongation", "auto|smoothed|tentative", "auto", "smooth the tentative prolongator (auto: for mis2 only)"},
		enumSetter([]string{"auto", "smoothed", "tentative"}, func(o *Options) *Prolongation { return &o.Prolongation })},
	{OptionInfo{"damping", "number in (0,2)", "1.3333", "prolongator smoothing ω·ρ(D⁻¹A)"},
		floatSetter(func(o *Options) *float64 { return &o.Damping })},
	{OptionInfo{"eig_steps", "integer", "10", "Lanczos steps of the eigenvalue estimate"},
		intSetter(func(o *Options) *int { return &o.EigenSteps })},
	{OptionInfo{"max_coarse", "integer", "auto", "rows of the coarsest level, solved by dense pivoted Cholesky (0 or auto: sized by cost)"},
		func(o *Options, v string) error {
			if strings.EqualFold(v, "auto") {
				o.MaxCoarse = 0
				return nil
			}
			return intSetter(func(o *Options) *int { return &o.MaxCoarse })(o, v)
		}},
	{OptionInfo{"reuse", "true|false", "false", "keep pattern data for a numeric re-setup (Update) when values will change"},
		func(o *Options, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			o.Reuse = b
			return nil
		}},
	{OptionInfo{"max_levels", "integer", "25", "most levels"},
		intSetter(func(o *Options) *int { return &o.MaxLevels })},
	{OptionInfo{"smoother", "chebyshev|jacobi|gs", "chebyshev", "smoother (jacobi is l1-Jacobi, gs multicolor Gauss–Seidel)"},
		enumSetter([]string{"chebyshev", "jacobi", "gs"}, func(o *Options) *Smoother { return &o.Smoother })},
	{OptionInfo{"sweeps", "1..20", "2", "Chebyshev degree or smoothing sweeps, before and after"},
		intSetter(func(o *Options) *int { return &o.Sweeps })},
	{OptionInfo{"cheby_lower", "number in (0,1)", "0.1", "Chebyshev interval lower end / λmax"},
		floatSetter(func(o *Options) *float64 { return &o.ChebyLower })},
	{OptionInfo{"cheby_upper", "number ≥ 1", "1.1", "Chebyshev interval upper end / λmax estimate"},
		floatSetter(func(o *Options) *float64 { return &o.ChebyUpper })},
	{OptionInfo{"cycle", "v|w", "v", "multigrid cycle"},
		enumSetter([]string{"v", "w"}, func(o *Options) *Cycle { return &o.Cycle })},
	{OptionInfo{"tol", "number in (0,1)", "1e-8", "PCG relative residual tolerance"},
		floatSetter(func(o *Options) *float64 { return &o.Tol })},
	{OptionInfo{"maxit", "integer", "500", "PCG iteration limit"},
		intSetter(func(o *Options) *int { return &o.MaxIter })},
	{OptionInfo{"workers", "integer", "GOMAXPROCS", "goroutines for setup and solve"},
		intSetter(func(o *Options) *int { return &o.Workers })},
	{OptionInfo{"device", "cpu|gpu|gpu:N|auto", "cpu", "where Apply and Solve run (auto: the GPU when one is usable)"},
		setDevice},
}

// OptionKeys lists the keys that Set and ParseOptions accept.
func OptionKeys() []OptionInfo {
	out := make([]OptionInfo, len(registry))
	for i, e := range registry {
		out[i] = e.OptionInfo
	}
	return out
}

// Set changes the option named key from its text form, as the command
// line and the C ABI pass it. The error names the key and the bad value.
func (o *Options) Set(key, value string) error {
	k := strings.ToLower(strings.TrimSpace(key))
	for _, e := range registry {
		if e.Key == k {
			if err := e.set(o, strings.TrimSpace(value)); err != nil {
				return fmt.Errorf("amg: option %q: %w", key, err)
			}
			return nil
		}
	}
	keys := make([]string, len(registry))
	for i, e := range registry {
		keys[i] = e.Key
	}
	return fmt.Errorf("amg: unknown option %q (known: %s)", key, strings.Join(keys, ", "))
}

// ParseOptions applies "key=value" settings in order to the zero Options,
// and checks the result. Data options (Coords, Vectors) have no text form;
// set those fields directly.
func ParseOptions(kv []string) (Options, error) {
	var o Options
	err := o.Apply(kv)
	return o, err
}

// Apply applies "key=value" settings in order to o.
func (o *Options) Apply(kv []string) error {
	for i, s := range kv {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("amg: option %d %q: want key=value", i, s)
		}
		if err := o.Set(key, value); err != nil {
			return err
		}
	}
	if _, err := o.withDefaults(); err != nil {
		return err
	}
	return nil
}
