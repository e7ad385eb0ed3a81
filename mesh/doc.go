// Package mesh holds the graph of a finite-element mesh and the ways to
// obtain one from what FEM codes have: sparse matrices (with a strength
// threshold, block-size collapse and Dirichlet rows), element connectivity,
// mesh files (Matrix Market, Gmsh 4.1, ECL .egr) and generators of
// structured meshes. It also classifies boundary vertices as corners, edges
// and faces, which the MIS priorities use to keep the boundary in the
// coarse grid, and it reorders graphs.
//
// Graph is compressed sparse row (CSR) adjacency with int64 offsets and
// int32 vertex ids, sorted, symmetric, and free of self loops.
//
// Readers and builders do not let a size exhaust memory: they estimate
// what a header's counts or a matrix's rows and entries imply before they
// allocate for it, and refuse with a *MemoryError that says how much it
// would need and what limit it passes. The limit is an option's MaxBytes
// where there is one, and otherwise what the process may still take: the
// least of MemAvailable, the cgroup's memory.max headroom and the headroom
// under GOMEMLIMIT (see CheckMemory). Generators take sizes on trust;
// StructuredBytes, Hex27GraphBytes, Grid7GraphBytes and RandomGraphBytes
// estimate what they make, for callers that take sizes from users.
//
// Refine refines simplex meshes uniformly (each tet into 8, each triangle
// into 4), so that a mesh small enough to store or send, such as a Gmsh
// file, becomes a mesh of millions of nodes where it is used.
package mesh
