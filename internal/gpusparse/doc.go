// Package gpusparse holds sparse matrices on the GPU and the products
// that the AMG setup needs there: C = A·B, the transpose, and the
// Galerkin product Pᵀ·A·P, each in a symbolic pass (the pattern, once)
// and a numeric pass (the values, re-run when the values change and the
// patterns do not).
//
// Matrices are CSR with int32 row offsets and columns and float64
// values, the layout of amg's GPU solve; columns are strictly increasing
// in every row. Products return sorted rows.
//
// The products are deterministic and reproduce the host's bitwise: an
// entry c_ij of A·B adds the products a_ik·b_kj over k in the storage
// order of A's row, one at a time, each product and sum rounded on its
// own (no fused multiply-add), the first product taken as it is — the
// order of amg's mulMat, whatever its row grouping. Galerkin forms
// A·P that way, then Pᵀ·(A·P) with Pᵀ's rows in ascending fine row
// order and sums that start at +0, which is the order of amg's streamed
// Galerkin product (galerkinStreamed); with amg's Reuse option the host
// forms it by mulMat instead, which Mul of the transpose and A·P
// reproduces (the two differ only in the sign of a zero sum). No
// floating-point atomics run, so
// every run gives the same bits. (amg rounds each product on its own too,
// with explicit conversions, so that no Go architecture fuses them.)
//
// Consecutive rows of A with one pattern (a run: the dofs of a node in a
// block operator, the rigid-body modes of an aggregate in a restriction)
// give rows of A·B with one pattern, so the symbolic pass forms the
// first row of each run only and copies it to the others, and the
// numeric pass takes up to 8 rows of a run together (a chunk), sharing
// the search for each product's slot; the order of every entry's sum is
// that of its own row all the same.
//
// The symbolic pass takes a warp per first row: a row whose columns span
// at most 8192 gets its sorted pattern from a bitmap of that window in
// shared memory (the rows of mesh operators and their products); a
// wider one hashes its columns in shared memory and ranks them, up to
// RowLimit columns; longer rows take a block each with a bitmap over all
// the columns (in shared memory up to 131072 columns), and so do all the
// rows of a product of few runs (a coarse level's, whose rows are long).
// The numeric pass of a product of A without runs and short rows of B
// (at most 16 entries on average: a Poisson operator times its
// prolongator, the restriction times that) gives a warp one row, or two
// when their products are few and they fill the GPU: a product a lane,
// the rows' entries of A taken 32 k's at a time and their products
// flattened, each product's slot found in a hash table of the row's
// columns in shared memory (one probe, not a search of the pattern),
// and a column that several lanes of a batch hit added lowest lane
// first, so in A's row order. Otherwise the numeric pass gives a chunk 4 to
// 32 lanes (about the mean row length of B) with its accumulators in
// shared memory, up to 256 (one row at a time) or 512 (up to four rows
// of a chunk at a time) for 32 lanes; for chunks of several rows the
// lanes load the first products of four k's of A's row (two rounds of a
// row of B of two k's for 32 lanes) and search their slots at once, then
// add them k after k. A chunk of longer rows, and when A has fewer than
// 1024 runs every chunk of rows over 63 columns or of rows of A over 64
// entries (so that the small coarse products fill the GPU, where a warp
// would walk a long row of A alone), gets a block, or several when the
// chunks are few, each of which owns a part of the columns, in tiles of
// up to 512: it walks A's row in batches of k's, scatters each
// batch's products into a table by slot and k while every thread adds
// the previous batch's products of its slots, k after k, into
// accumulators in registers. The plan
// (which chunk goes where) is formed with the pattern. Scratch is what
// a row needs, plus a few int32 per row and a bitmap of cols/8 bytes per
// long row (of every long row at once where they fit 256 MiB, kept from
// the count to the fill; else of each block at work).
//
// Every function that queues work waits for it before it returns, so
// results may be read from any stream afterwards. Errors are values:
// sizes that do not match, offsets that do not fit int32 (the error says
// so), device memory that runs out (the error names the bytes asked
// for), and malformed matrices handed over as device pointers (Wrap
// checks them on the device).
package gpusparse
