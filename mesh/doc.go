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
package mesh
