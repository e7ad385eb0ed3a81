// Package amg is a smoothed-aggregation algebraic multigrid preconditioner
// whose coarse grids come from maximal independent sets (package mis).
//
// # Setup
//
// New builds a hierarchy from a symmetric positive definite matrix (or a
// singular semidefinite one, see Singular systems), used in place when its
// rows are sorted, level by level until a level is small enough for a
// dense factor (Options.MaxCoarse, by default sized by cost). A matrix
// whose numbering scatters its products (far columns whose cache lines
// outweigh the entries, as Gmsh numbers tetrahedra) is first renumbered
// by reverse Cuthill–McKee into a copy (Options.Ordering); the hierarchy
// and PCG work in that numbering, Apply, Solve and Kernel translate. The
// renumbering is the host's on every path, so that a device setup builds
// the host's hierarchy: the device counts the far entries of an uploaded
// matrix and hands a scattered one back to the host's renumbering before
// it builds the levels (NewDevice, whose matrix stays where it is, builds
// in the caller's numbering).
//
//  1. Strength graph: nodes (BlockSize interleaved dofs each) joined where
//     the coupling block is not small, ‖A_uv‖ > θ·sqrt(‖A_uu‖‖A_vv‖)
//     (θ = 0.02 with rigid-body modes or at coefficient jumps, 0
//     otherwise, by default).
//     Rows coupled to nothing (eliminated Dirichlet conditions kept as
//     identity rows) are flagged and left out of the aggregates.
//  2. Aggregates: one per vertex of a distance-2 MIS taken with boundary
//     priorities (corner, edge and face vertices first), each root with
//     its neighbours and the vertices two steps away; about 3×3×3 nodes on
//     hexahedral meshes. Or, with Aggregation = Pairwise, two passes of a
//     locally dominant heavy-edge matching for aggregates of about four.
//  3. Tentative prolongator: on each aggregate a Householder QR of the
//     near-nullspace rows, B_a = Q_a·R_a; Q_a fills the aggregate's rows and
//     columns of P, R_a becomes the coarse near-nullspace. So P·B_c = B
//     exactly: constants (Poisson) or rigid-body modes (elasticity) are
//     interpolated without error.
//  4. Prolongator smoothing: P = (I − ω·D⁻¹A)·T with ω = 4/(3ρ), ρ the
//     largest eigenvalue of D⁻¹A from a few Lanczos steps.
//  5. Galerkin coarse operator A_c = Pᵀ·A·P: its pattern first, then A·P
//     chunk by chunk of fine rows scattered into it, so that neither A·P
//     nor Pᵀ is held whole (dense accumulator and marker per goroutine, no
//     maps).
//
// A level keeps what the solve needs: A, P (Pᵀ too when restriction runs
// on several workers), the inverse diagonal and the smoother's
// interval; Options.Reuse keeps the pattern data of a numeric Update as
// well. The coarsest level is solved by a Cholesky factor with diagonal
// pivoting that stops at the numerical rank: a generalized inverse where
// the coarsest operator is singular.
//
// # Solve
//
// Apply runs one V- or W-cycle from a zero guess with Chebyshev (default,
// degree 2 on [λ/10, 1.1λ] of D⁻¹A), l1-Jacobi or multicolor Gauss–Seidel
// smoothing; pre- and post-smoothing are adjoint, so the preconditioner is
// symmetric positive definite and Solve can run conjugate gradients with
// it. Chebyshev keeps the residual up to date as it goes, so a pre-smoothing
// of degree k and the residual for restriction cost k matrix products.
//
// # Reuse
//
// Update takes new values on the same pattern (a Newton step, a new time
// step). With Options.Reuse it recomputes only the numeric part:
// eigenvalue estimates, the smoothed prolongators, the Galerkin products on
// their known patterns, smoother data and the coarse factor; aggregates and
// tentative prolongators are kept. Without it, it builds afresh.
//
// # Singular systems
//
// A singular A whose null space the near-nullspace holds (pure Neumann,
// free-floating bodies) leaves a singular coarsest operator; its null
// vectors, interpolated to the finest level and checked there, are A's
// null space (or Options.Kernel gives it). Solve projects it out of b and
// of every preconditioned residual, and reports an inconsistent b
// (Status Inconsistent, ErrInconsistent) instead of iterating on it.
//
// # Convergence
//
// Solve judges convergence on the true residual b − A·x, recomputed when
// the updated one meets the tolerance; it restarts from it when it falls
// short and reports Stagnated when restarting no longer helps.
//
// # Options
//
// Options has useful zero values; the same settings have a text form,
// "key=value", through Options.Set, Options.Parse and ParseOptions, the one
// registry that the command line (misgrid solve -theta 0.08) and the C ABI
// use. OptionKeys lists the keys and their defaults.
//
// # Determinism
//
// Every parallel loop writes disjoint outputs, sparse products accumulate
// each row in a fixed order, and every reduction is summed over chunks of
// fixed length in chunk order. So setup and solve give bitwise the same
// results for any Options.Workers or GOMAXPROCS.
//
// # Backends
//
// Setup runs on the host, except the distance-2 MIS of the aggregation,
// which runs on the GPU when the solve phase does and the strength graph
// is large (the set is the same either way). The solve phase touches the hierarchy only
// through a handful of kernels (sparse matrix–vector product, residual,
// product-and-add for prolongation, the Chebyshev/Jacobi vector updates,
// fixed-tree dot products and the dense coarse solve). With
// Options.Device set to mis.GPU (key device=gpu), New and Update upload
// every level once and Apply and Solve run entirely on the device, only b
// and x crossing; mis.Auto, the zero value, does so from
// mis.AutoMinVertices rows and falls back to the host when no GPU can be
// used.
// Multicolor Gauss–Seidel is host-only. GPU results agree with the host's
// to rounding and are bitwise repeatable from run to run.
package amg
