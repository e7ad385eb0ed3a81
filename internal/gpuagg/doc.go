// Package gpuagg builds the levels of a coarse-grid hierarchy on the GPU:
// the aggregates of a maximal independent set and the coarse graph whose
// vertices they are, from a graph in device memory, level after level.
//
// # Contract
//
// The results are bitwise those of the host: Coarsen gives the aggregate
// ids and roots of mis.Aggregate (distance 2) or of mis.Hierarchy's
// distance-1 aggregation, and the graph of mis.CoarseGraph with the roots'
// coordinates, classes and Dirichlet flags; a set the host rejects gets
// the host's error text, naming the same vertex (*SetError). Nothing in
// the output depends on the order of the device's atomic operations:
// roots are numbered by a prefix sum, ties go to the lower aggregate id,
// and coarse rows are sets that are sorted before they are written.
//
// # How
//
// Phase one is root-driven: each root (a warp) lowers the phase-one
// aggregate of its neighbours to its index with an atomic minimum, so
// every vertex ends with its smallest adjacent root, which is the only one
// when the set is distance-2 independent; a second pass over the roots'
// rows finds the host's first conflict (the smallest root index and row
// position) when it is not. Phase two is vertex-driven: a vertex without
// an aggregate counts its neighbours' phase-one aggregates. The coarse row
// of an aggregate is gathered by one warp over its members' rows into a
// hash set in shared memory and sorted there; a row of 256 aggregates or
// more goes to a whole block with a set of 4096, and a larger one to a
// fallback that sorts in global memory. Rows are written at an upper
// bound of their offset (the prefix of member degree sums) and compacted
// once their sizes are scanned.
//
// Every length that depends on an earlier kernel (the number of
// aggregates, the coarse edge count) stays in device memory, so a level
// runs as one queue of launches with a single host synchronisation, which
// reads the coarse sizes (the coarse graph's buffers are then allocated
// exactly) and the error words.
//
// The kernels are in agg.cu, compiled ahead of time by
// internal/kernels/build.sh (go generate); each has a host model in the
// tests that follows it step by step and is compared with package mis on
// many graphs without a GPU.
//
// # Figures
//
// One H100 (driver 580), scripts/gpuagg-check.sh, device time beside the
// floor of the bytes a level must move (graph and set read, aggregate ids
// and coarse graph written) at the device copy rate of the same run
// (3.0 TB/s):
//
//	level 0, hex27 160³ (4.1M vertices, 105M entries), MIS-2: 1.9–2.1 ms, floor 0.16 ms
//	  (coarse_rows 0.89 ms, assign 0.47 ms, members 0.10 ms; the rest is the host
//	  synchronisation and the coarse graph's allocations)
//	level 0, random graph, 4.1M vertices, degree 16: 11.8–13.6 ms, floor 0.18 ms
//	  (its coarse graph has 57M entries: 84,610 rows of about 670, which
//	  coarse_block sorts in shared memory: 9.5 ms)
//	all 4 coarsening levels of hex27 160³, boundary priority: 3.0–3.1 ms, floor 0.16 ms
//
// Small levels cost about 0.25 ms each: the launches, one synchronisation
// and the allocations of the outputs.
package gpuagg
