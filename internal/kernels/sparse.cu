// Sparse matrix kernels of package internal/gpusparse: the two passes of
// a deterministic SpGEMM (symbolic, numeric), a deterministic transpose,
// a scan of row sizes into int32 offsets and a CSR check. Every kernel
// runs in blocks of SP_THREADS threads with grid-stride loops, so any
// grid size is correct. The host models of these kernels are in
// internal/gpusparse/model_test.go; keep the two in step. The numeric
// pass is in sparse_numeric.cuh.
//
// Determinism: no floating-point atomics. An entry of C = A·B adds the
// products a_ik·b_kj over k in the storage order of A's row, one product
// at a time with round-to-nearest multiply and add (no FMA), starting
// from a given value (-0.0 reproduces "first product assigned", +0.0 a
// sum that starts at zero). Integer atomics only build sets and counts,
// whose results do not depend on the order.

#define SP_THREADS 256
#define SP_WARPS (SP_THREADS / 32)
#define SP_HCAP 512  // hash slots per warp in the symbolic pass
#define SP_LIMIT 256 // longest row kept in shared memory (distinct columns)
#define SP_MID 2048  // longest row of a transpose sorted by a block in shared memory
#define SP_BW 256    // words of a row's column-window bitmap (8192 columns; <= SP_HCAP)
#define SP_LBW 4096  // words of the bitmap of a long row that sp_long_rows keeps in shared memory
#define SP_GMAX 8    // most rows of one pattern that the numeric pass takes together (a chunk)
#define SP_WACC 512  // accumulators (doubles) per warp in sp_numeric_g*r (half in sp_numeric_g*)
#define SP_WROWS 4   // rows of a chunk that sp_numeric_g*r takes at once
#define SP_PF 4      // k's of A's row whose first products a lane of sp_numeric_g*r loads at once
#define SP_BT 512     // columns of a tile of sp_numeric_blk (accumulators of two slots a thread)
#define SP_BTAB 2048  // products' table of a batch of sp_numeric_blk (doubles, two of them)
#define SP_BK 32      // k's of A's row in a batch of sp_numeric_blk, at most (bits of a hit word)
#define SP_HT 256     // slots of a warp's table column → accumulator in sp_numeric_h* (rows of up to SP_HT/2 columns)
#define SP_EMPTY (-1)
#define SP_FULL 0xffffffffu

__device__ __forceinline__ int sp_slot(int c) { return (int)(((unsigned)c * 2654435761u) >> 23); } // 9 bits: SP_HCAP

// sp_insert adds c to the warp's table t; returns 1 when it was new.
__device__ __forceinline__ int sp_insert(int *t, int c) {
	int s = sp_slot(c);
	for (;;) {
		int old = atomicCAS(t + s, SP_EMPTY, c);
		if (old == SP_EMPTY) return 1;
		if (old == c) return 0;
		s = (s + 1) & (SP_HCAP - 1);
	}
}

// sp_hash_row inserts the columns of row i of A·B into t, one k of A's row
// per lane, and returns the number of distinct columns, or -1 when it
// exceeds SP_LIMIT. cnt is the warp's shared counter. A lane stops at the
// first column it inserts past SP_LIMIT, so at most SP_LIMIT+32 columns
// are ever inserted and the table never fills; no lane stops before the
// count passes SP_LIMIT, so a count at or under it is exact.
__device__ int sp_hash_row(int *t, int *cnt, int i, const int *aptr, const int *acol, const int *bptr, const int *bcol) {
	int lane = threadIdx.x & 31;
	for (int s = lane; s < SP_HCAP; s += 32) t[s] = SP_EMPTY;
	if (lane == 0) *cnt = 0;
	__syncwarp();
	int ae = aptr[i + 1];
	bool stop = false;
	for (int q = aptr[i] + lane; q < ae && !stop; q += 32) {
		int k = acol[q];
		int be = bptr[k + 1];
		for (int r = bptr[k]; r < be; r++)
			if (sp_insert(t, bcol[r]) && atomicAdd(cnt, 1) >= SP_LIMIT) {
				stop = true;
				break;
			}
	}
	__syncwarp();
	int n = *cnt;
	__syncwarp();
	return n > SP_LIMIT ? -1 : n;
}

struct sp_warp_scratch {
	int table[SP_WARPS][SP_HCAP];
	int cnt[SP_WARPS];
};

// sp_window returns the number of 32-bit words that a bitmap of the
// columns of row i of A·B needs, from the smallest column to the largest
// (0 for an empty row), and the smallest in *lo. Rows of B are sorted, so
// their first and last entries bound them.
__device__ int sp_window(int i, const int *aptr, const int *acol, const int *bptr, const int *bcol, int *lo) {
	int lane = threadIdx.x & 31, l = 0x7fffffff, h = -1;
	for (int q = aptr[i] + lane; q < aptr[i + 1]; q += 32) {
		int k = acol[q], bs = bptr[k], be = bptr[k + 1];
		if (bs < be) l = min(l, bcol[bs]), h = max(h, bcol[be - 1]);
	}
	l = __reduce_min_sync(SP_FULL, l);
	h = __reduce_max_sync(SP_FULL, h);
	*lo = l;
	return h < 0 ? 0 : ((h - l) >> 5) + 1;
}

// sp_bits_row sets the bits of the columns of row i of A·B in the warp's
// window bitmap bm (words words from column lo), one k of A's row per
// lane, and returns their number.
__device__ int sp_bits_row(unsigned *bm, int words, int lo, int i, const int *aptr, const int *acol, const int *bptr, const int *bcol) {
	int lane = threadIdx.x & 31;
	for (int x = lane; x < words; x += 32) bm[x] = 0u;
	__syncwarp();
	for (int q = aptr[i] + lane; q < aptr[i + 1]; q += 32) {
		int k = acol[q], be = bptr[k + 1];
		for (int r = bptr[k]; r < be; r++) {
			int c = bcol[r] - lo;
			atomicOr(bm + (c >> 5), 1u << (c & 31));
		}
	}
	__syncwarp();
	unsigned n = 0;
	for (int x = lane; x < words; x += 32) n += __popc(bm[x]);
	return (int)__reduce_add_sync(SP_FULL, n);
}

// sp_count writes the size of every row i = sel[u] (u < nsel; sel null:
// i = u) of A·B to size[i] when its columns fit a window bitmap or number
// at most SP_LIMIT (hashed); the others are listed in longs (*nlong of
// them, in any order) and get their size from sp_long_rows.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_count(int nsel, const int *sel, const int *aptr, const int *acol, const int *bptr, const int *bcol, int *size, int *longs, int *nlong) {
	__shared__ sp_warp_scratch sh;
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int u = blockIdx.x * SP_WARPS + w; u < nsel; u += gridDim.x * SP_WARPS) {
		int i = sel ? sel[u] : u;
		int lo, words = sp_window(i, aptr, acol, bptr, bcol, &lo), n;
		if (words <= SP_BW) n = sp_bits_row((unsigned *)sh.table[w], words, lo, i, aptr, acol, bptr, bcol);
		else n = sp_hash_row(sh.table[w], &sh.cnt[w], i, aptr, acol, bptr, bcol);
		if (lane == 0) {
			if (n >= 0) size[i] = n;
			else longs[atomicAdd(nlong, 1)] = i;
		}
		__syncwarp();
	}
}

// sp_fill writes the sorted columns of the rows i = sel[u] of A·B that
// sp_count did not list at ccol[cptr[i]:]: from the window bitmap in
// order, or from the hash table compacted in place, each column at its
// rank.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_fill(int nsel, const int *sel, const int *aptr, const int *acol, const int *bptr, const int *bcol, const int *cptr, int *ccol) {
	__shared__ sp_warp_scratch sh;
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int *t = sh.table[w];
	for (int u = blockIdx.x * SP_WARPS + w; u < nsel; u += gridDim.x * SP_WARPS) {
		int i = sel ? sel[u] : u;
		int cs = cptr[i], n = cptr[i + 1] - cs;
		int lo, words = sp_window(i, aptr, acol, bptr, bcol, &lo);
		if (words <= SP_BW) {
			unsigned *bm = (unsigned *)t;
			sp_bits_row(bm, words, lo, i, aptr, acol, bptr, bcol);
			int done = 0;
			for (int w0 = 0; w0 < words; w0 += 32) {
				unsigned b = w0 + lane < words ? bm[w0 + lane] : 0u;
				int c = __popc(b), x = c;
#pragma unroll
				for (int d = 1; d < 32; d <<= 1) {
					int y = __shfl_up_sync(SP_FULL, x, d);
					if (lane >= d) x += y;
				}
				int at = done + x - c;
				while (b) {
					ccol[cs + at++] = lo + (w0 + lane) * 32 + __ffs(b) - 1;
					b &= b - 1;
				}
				done += __shfl_sync(SP_FULL, x, 31);
			}
			__syncwarp();
			continue;
		}
		if (n > SP_LIMIT) continue;
		sp_hash_row(t, &sh.cnt[w], i, aptr, acol, bptr, bcol);
		int m = 0;
		for (int s = 0; s < SP_HCAP; s += 32) {
			int c = t[s + lane];
			unsigned full = __ballot_sync(SP_FULL, c != SP_EMPTY);
			__syncwarp();
			if (c != SP_EMPTY) t[m + __popc(full & ((1u << lane) - 1))] = c;
			m += __popc(full);
			__syncwarp();
		}
		for (int x = lane; x < n; x += 32) {
			int c = t[x], rank = 0;
			for (int y = 0; y < n; y++) rank += t[y] < c;
			ccol[cs + rank] = c;
		}
		__syncwarp();
	}
}

// sp_block_scan returns the exclusive prefix sum of v over the block and
// the block's total in *total.
__device__ int sp_block_scan(int v, int *total) {
	__shared__ int part[SP_WARPS];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	int x = v;
#pragma unroll
	for (int d = 1; d < 32; d <<= 1) {
		int y = __shfl_up_sync(SP_FULL, x, d);
		if (lane >= d) x += y;
	}
	__syncthreads();
	if (lane == 31) part[w] = x;
	__syncthreads();
	int base = 0, all = 0;
	for (int u = 0; u < SP_WARPS; u++) {
		if (u < w) base += part[u];
		all += part[u];
	}
	*total = all;
	return base + x - v;
}

// sp_emit_bits writes the positions of the set bits of bits[0:words]
// ascending to out (if not null) and returns their number (every thread
// gets it). Called by the whole block.
__device__ int sp_emit_bits(const unsigned *bits, int words, int *out) {
	int done = 0;
	for (int w0 = 0; w0 < words; w0 += SP_THREADS) {
		int wi = w0 + threadIdx.x;
		unsigned b = wi < words ? bits[wi] : 0u;
		int total;
		int at = sp_block_scan(__popc(b), &total);
		if (out)
			while (b) {
				int z = __ffs(b) - 1;
				out[done + at++] = wi * 32 + z;
				b &= b - 1;
			}
		done += total;
	}
	return done;
}

// sp_long_rows handles the rows of A·B listed in longs (null: rows
// 0..nlong-1), one block per row with a bitmap over the columns of B
// (words words): in shared memory when it fits SP_LBW words, else the
// block's in bits. With keep, each row has its own in bits as well, which
// the pass without cptr fills and the pass with it reads. Without cptr
// it writes each row's size to size[i]; with it, the sorted columns to
// ccol[cptr[i]:].
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_long_rows(const int *longs, int nlong, const int *aptr, const int *acol, const int *bptr, const int *bcol, unsigned *bits, int words,
             int keep, int *size, const int *cptr, int *ccol) {
	__shared__ unsigned sbm[SP_LBW];
	bool sh = words <= SP_LBW;
	for (int l = blockIdx.x; l < nlong; l += gridDim.x) {
		int i = longs ? longs[l] : l;
		unsigned *gbm = bits + (size_t)(keep ? l : blockIdx.x) * words, *bm = sh ? sbm : gbm;
		if (keep && cptr) bm = gbm;
		else {
			for (int x = threadIdx.x; x < words; x += SP_THREADS) bm[x] = 0u;
			__syncthreads();
			int ae = aptr[i + 1];
			for (int q = aptr[i] + (threadIdx.x >> 5); q < ae; q += SP_WARPS) {
				int k = acol[q];
				for (int r = bptr[k] + (threadIdx.x & 31); r < bptr[k + 1]; r += 32) {
					int c = bcol[r];
					atomicOr(bm + (c >> 5), 1u << (c & 31));
				}
			}
			__syncthreads();
			if (keep && sh)
				for (int x = threadIdx.x; x < words; x += SP_THREADS) gbm[x] = sbm[x];
		}
		int n = sp_emit_bits(bm, words, cptr ? ccol + cptr[i] : nullptr);
		if (!cptr && threadIdx.x == 0) size[i] = n;
		__syncthreads();
	}
}

// Runs: consecutive rows of A with one pattern give rows of A·B with one
// pattern, so the symbolic pass forms the first row of each run only
// and copies it, and the numeric pass takes up to SP_GMAX rows of a run
// together (a chunk), sharing each column's search (the 3 or 6 dofs of
// a node or an aggregate in block operators).

// sp_run_starts sets start[i] to 1 when row i of A starts a run (row 0,
// or a pattern other than row i-1's), else 0; a warp per row.
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_run_starts(int rows, const int *aptr, const int *acol, int *start) {
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int i = blockIdx.x * SP_WARPS + w; i < rows; i += gridDim.x * SP_WARPS) {
		bool same = false;
		if (i > 0) {
			int ps = aptr[i - 1], s = aptr[i], e = aptr[i + 1];
			same = e - s == s - ps;
			for (int x = lane; same && x - lane < e - s; x += 32) same = __all_sync(SP_FULL, x >= e - s || acol[s + x] == acol[ps + x]);
		}
		if (lane == 0) start[i] = same ? 0 : 1;
	}
}

// sp_run_first writes the first row of every run to first[run] (run
// numbers from the scan of the starts: row i is in run head[i+1]-1) and
// first[runs] = rows.
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_run_first(int rows, const int *head, int *first) {
	for (int i = blockIdx.x * SP_THREADS + threadIdx.x; i < rows; i += gridDim.x * SP_THREADS) {
		if (head[i + 1] != head[i]) first[head[i]] = i;
		if (i == rows - 1) first[head[rows]] = rows;
	}
}

// sp_expand gives every row its run's size (size[first] was counted).
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_expand(int rows, const int *head, const int *first, int *size) {
	for (int i = blockIdx.x * SP_THREADS + threadIdx.x; i < rows; i += gridDim.x * SP_THREADS) {
		int s = first[head[i + 1] - 1];
		if (s != i) size[i] = size[s];
	}
}

// sp_copy_rows copies the columns of the first row of each run to the
// run's other rows; a warp per row.
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_copy_rows(int rows, const int *head, const int *first, const int *cptr, int *ccol) {
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int i = blockIdx.x * SP_WARPS + w; i < rows; i += gridDim.x * SP_WARPS) {
		int s = first[head[i + 1] - 1];
		if (s == i) continue;
		int from = cptr[s], to = cptr[i], n = cptr[i + 1] - to;
		for (int x = lane; x < n; x += 32) ccol[to + x] = ccol[from + x];
	}
}

// sp_append adds v to list (*n entries, in any order) where pred holds:
// one atomic per warp. Called by whole warps.
__device__ __forceinline__ void sp_append(int *list, int *n, bool pred, int v) {
	unsigned b = __ballot_sync(SP_FULL, pred);
	int lane = threadIdx.x & 31, base = 0;
	if (b && lane == 0) base = atomicAdd(n, __popc(b));
	base = __shfl_sync(SP_FULL, base, 0);
	if (pred) list[base + __popc(b & ((1u << lane) - 1))] = v;
}

// sp_plan cuts every run (head null: every row alone) into chunks of
// SP_GMAX rows from its start and sets kind[i] for the chunk's first row
// i: g, its rows, when its rows have at most wide columns (the host's
// choice, at most what a chunk of sp_numeric_g* holds) and its row of A
// at most klong entries, and i goes to wlist for sp_numeric_g*; else -g,
// and i goes to blist for sp_numeric_blk (n[0] and n[1] entries, in any
// order). Other rows get 0.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_plan(int rows, const int *head, const int *first, const int *cptr, int wide, const int *aptr, int klong, int *kind, int *wlist, int *blist,
        int *n) {
	int lane = threadIdx.x & 31;
	for (int i0 = blockIdx.x * SP_THREADS + (threadIdx.x & ~31); i0 < rows; i0 += gridDim.x * SP_THREADS) {
		int i = i0 + lane, k = 0;
		if (i < rows) {
			int s = i, e = i + 1;
			if (head) {
				int run = head[i + 1] - 1;
				s = first[run], e = first[run + 1];
			}
			if ((i - s) % SP_GMAX == 0) {
				int g = min(SP_GMAX, e - i);
				k = cptr[i + 1] - cptr[i] <= wide && aptr[i + 1] - aptr[i] <= klong ? g : -g;
			}
			kind[i] = k;
		}
		sp_append(wlist, n, k > 0, i);
		sp_append(blist, n + 1, k < 0, i);
	}
}

// sp_bsearch returns the index of c in the sorted p[0:n], which holds it.
__device__ __forceinline__ int sp_bsearch(const int *p, int n, int c) {
	int lo = 0, hi = n - 1;
	while (lo < hi) {
		int mid = (lo + hi) >> 1;
		if (p[mid] < c) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

#include "sparse_numeric.cuh"

// sp_scan_blocks sums each tile of SP_THREADS*4 sizes into part[tile]
// (int64, so that a total past 2^31 is seen).
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_scan_blocks(int n, const int *size, long long *part) {
	__shared__ long long red[SP_WARPS];
	int tiles = (n + SP_THREADS * 4 - 1) / (SP_THREADS * 4);
	for (int b = blockIdx.x; b < tiles; b += gridDim.x) {
		long long s = 0;
		for (int j = 0; j < 4; j++) {
			int x = b * SP_THREADS * 4 + j * SP_THREADS + threadIdx.x;
			if (x < n) s += size[x];
		}
#pragma unroll
		for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(SP_FULL, s, d);
		if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
		__syncthreads();
		if (threadIdx.x == 0) {
			long long t = 0;
			for (int u = 0; u < SP_WARPS; u++) t += red[u];
			part[b] = t;
		}
		__syncthreads();
	}
}

// sp_scan_parts turns part[0:tiles] into exclusive prefix sums and writes
// the total to *total. One block.
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_scan_parts(int tiles, long long *part, long long *total) {
	__shared__ long long carry;
	if (threadIdx.x == 0) carry = 0;
	__syncthreads();
	for (int t0 = 0; t0 < tiles; t0 += SP_THREADS) {
		int t = t0 + threadIdx.x;
		long long v = t < tiles ? part[t] : 0, x = v;
		int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll
		for (int d = 1; d < 32; d <<= 1) {
			long long y = __shfl_up_sync(SP_FULL, x, d);
			if (lane >= d) x += y;
		}
		__shared__ long long ws[SP_WARPS];
		if (lane == 31) ws[w] = x;
		__syncthreads();
		long long base = carry, all = 0;
		for (int u = 0; u < SP_WARPS; u++) {
			if (u < w) base += ws[u];
			all += ws[u];
		}
		if (t < tiles) part[t] = base + x - v;
		__syncthreads();
		if (threadIdx.x == 0) carry += all;
		__syncthreads();
	}
	if (threadIdx.x == 0) *total = carry;
}

// sp_scan_apply writes ptr[0] = 0 and ptr[x+1] = size[0] + … + size[x]
// (int32; the host refuses totals past 2^31-1 before using them). size
// may be ptr+1 (in place).
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_scan_apply(int n, const int *size, const long long *part, int *ptr) {
	int tiles = (n + SP_THREADS * 4 - 1) / (SP_THREADS * 4);
	if (blockIdx.x == 0 && threadIdx.x == 0) ptr[0] = 0;
	for (int b = blockIdx.x; b < tiles; b += gridDim.x) {
		int x0 = b * SP_THREADS * 4 + threadIdx.x * 4;
		int v[4], s = 0;
		for (int j = 0; j < 4; j++) {
			v[j] = x0 + j < n ? size[x0 + j] : 0;
			s += v[j];
		}
		int total;
		long long at = part[b] + sp_block_scan(s, &total);
		for (int j = 0; j < 4; j++) {
			at += v[j];
			if (x0 + j < n) ptr[x0 + j + 1] = (int)at;
		}
	}
}

// sp_tr_count counts the entries of every column of A into cnt[col]
// (zeroed before).
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_tr_count(int nnz, const int *acol, int *cnt) {
	for (int q = blockIdx.x * SP_THREADS + threadIdx.x; q < nnz; q += gridDim.x * SP_THREADS) atomicAdd(cnt + acol[q], 1);
}

// sp_tr_scatter puts row i of every entry (i, j) of A into row j of the
// transpose at a free slot (cursor[j] starts at tptr[j]), with the
// entry's position in perm: unsorted until sp_tr_sort.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_tr_scatter(int rows, const int *aptr, const int *acol, int *cursor, int *tcol, int *perm) {
	for (int i = blockIdx.x * SP_THREADS + threadIdx.x; i < rows; i += gridDim.x * SP_THREADS)
		for (int q = aptr[i]; q < aptr[i + 1]; q++) {
			int at = atomicAdd(cursor + acol[q], 1);
			tcol[at] = i;
			perm[at] = q;
		}
}

// sp_tr_sort orders each row of the transpose of at most SP_LIMIT entries
// by column (a warp per row, ranks in shared memory), moving perm along;
// the longer ones go to longs for sp_tr_mid and sp_tr_long, counted in
// nlong[0] and, those over SP_MID, in nlong[1].
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_tr_sort(int rows, const int *tptr, int *tcol, int *perm, int *longs, int *nlong) {
	__shared__ int key[SP_WARPS][SP_LIMIT], pos[SP_WARPS][SP_LIMIT];
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int j = blockIdx.x * SP_WARPS + w; j < rows; j += gridDim.x * SP_WARPS) {
		int ts = tptr[j], n = tptr[j + 1] - ts;
		if (n > SP_LIMIT) {
			if (lane == 0) longs[atomicAdd(nlong, 1)] = j;
			if (lane == 0 && n > SP_MID) atomicAdd(nlong + 1, 1);
			continue;
		}
		for (int x = lane; x < n; x += 32) key[w][x] = tcol[ts + x], pos[w][x] = perm[ts + x];
		__syncwarp();
		for (int x = lane; x < n; x += 32) {
			int c = key[w][x], rank = 0;
			for (int y = 0; y < n; y++) rank += key[w][y] < c;
			tcol[ts + rank] = c;
			perm[ts + rank] = pos[w][x];
		}
		__syncwarp();
	}
}

// sp_tr_mid orders the rows of the transpose listed in longs that have at
// most SP_MID entries, a block per row: a bitonic sort in shared memory
// of (column, position) pairs, the row padded to a power of two (columns
// are distinct in a row, so the order is the columns').
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_tr_mid(const int *longs, int nlong, const int *tptr, int *tcol, int *perm) {
	__shared__ long long kv[SP_MID];
	for (int l = blockIdx.x; l < nlong; l += gridDim.x) {
		int j = longs[l], ts = tptr[j], n = tptr[j + 1] - ts;
		if (n > SP_MID) continue;
		int m = 1 << (32 - __clz(n - 1));
		for (int x = threadIdx.x; x < m; x += SP_THREADS)
			kv[x] = x < n ? (long long)tcol[ts + x] << 32 | (unsigned)perm[ts + x] : 0x7fffffffffffffffLL;
		__syncthreads();
		for (int k = 2; k <= m; k <<= 1)
			for (int d = k >> 1; d > 0; d >>= 1) {
				for (int x = threadIdx.x; x < m / 2; x += SP_THREADS) {
					int lo = 2 * x - (x & (d - 1)), hi = lo + d;
					long long a = kv[lo], b = kv[hi];
					if ((a > b) == ((lo & k) == 0)) kv[lo] = b, kv[hi] = a;
				}
				__syncthreads();
			}
		for (int x = threadIdx.x; x < n; x += SP_THREADS) tcol[ts + x] = (int)(kv[x] >> 32), perm[ts + x] = (int)(unsigned)kv[x];
		__syncthreads();
	}
}

// sp_tr_long orders the rows of the transpose listed in longs that have
// more than SP_MID entries, a block per row with a bitmap over A's rows,
// and finds each entry's position in A by binary search in A's row.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_tr_long(const int *longs, int nlong, const int *aptr, const int *acol, const int *tptr, int *tcol, int *perm, unsigned *bits, int words) {
	unsigned *bm = bits + (size_t)blockIdx.x * words;
	for (int l = blockIdx.x; l < nlong; l += gridDim.x) {
		int j = longs[l], ts = tptr[j], te = tptr[j + 1];
		if (te - ts <= SP_MID) continue;
		for (int x = threadIdx.x; x < words; x += SP_THREADS) bm[x] = 0u;
		__syncthreads();
		for (int x = ts + threadIdx.x; x < te; x += SP_THREADS) atomicOr(bm + (tcol[x] >> 5), 1u << (tcol[x] & 31));
		__syncthreads();
		sp_emit_bits(bm, words, tcol + ts);
		__syncthreads();
		for (int x = ts + threadIdx.x; x < te; x += SP_THREADS) {
			int i = tcol[x], as = aptr[i];
			perm[x] = as + sp_bsearch(acol + as, aptr[i + 1] - as, j);
		}
		__syncthreads();
	}
}

// sp_gather sets out[x] = in[perm[x]]: the values of the transpose.
extern "C" __global__ void __launch_bounds__(SP_THREADS) sp_gather(int n, const int *perm, const double *in, double *out) {
	for (int x = blockIdx.x * SP_THREADS + threadIdx.x; x < n; x += gridDim.x * SP_THREADS) out[x] = in[perm[x]];
}

// sp_check validates a CSR that arrived as device pointers: ptr[0] = 0,
// ptr[rows] = nnz, offsets never decrease, columns in [0, cols) and
// strictly increasing in each row. *bad gets the smallest offending row
// (the host sets it to rows before). A warp per row, a column a lane.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_check(int rows, int cols, int nnz, const int *ptr, const int *col, int *bad) {
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int i = blockIdx.x * SP_WARPS + w; i < rows; i += gridDim.x * SP_WARPS) {
		int s = ptr[i], e = ptr[i + 1];
		bool ok = (i > 0 || s == 0) && (i < rows - 1 || e == nnz) && s <= e && s >= 0 && e <= nnz;
		for (int q = s + lane; ok && q - lane < e; q += 32)
			ok = __all_sync(SP_FULL, q >= e || (col[q] >= 0 && col[q] < cols && (q == s || col[q] > col[q - 1])));
		if (lane == 0 && !ok) atomicMin(bad, i);
	}
}
