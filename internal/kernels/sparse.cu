// Sparse matrix kernels of package internal/gpusparse: the two passes of
// a deterministic SpGEMM (symbolic, numeric), a deterministic transpose,
// a scan of row sizes into int32 offsets and a CSR check. Every kernel
// runs in blocks of SP_THREADS threads with grid-stride loops, so any
// grid size is correct. The host models of these kernels are in
// internal/gpusparse/model_test.go; keep the two in step.
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
// per lane, and returns the number of distinct columns, or -1 as soon as
// it is known to exceed SP_LIMIT. cnt and over are the warp's shared
// counter and flag. At most SP_LIMIT+32 columns are ever inserted, so
// the table never fills.
__device__ int sp_hash_row(int *t, int *cnt, int *over, int i, const int *aptr, const int *acol, const int *bptr, const int *bcol) {
	int lane = threadIdx.x & 31;
	for (int s = lane; s < SP_HCAP; s += 32) t[s] = SP_EMPTY;
	if (lane == 0) *cnt = 0, *over = 0;
	__syncwarp();
	int ae = aptr[i + 1];
	for (int q = aptr[i] + lane; q < ae; q += 32) {
		int k = acol[q];
		int be = bptr[k + 1];
		for (int r = bptr[k]; r < be; r++) {
			if (*(volatile int *)over) break;
			if (sp_insert(t, bcol[r]) && atomicAdd(cnt, 1) + 1 > SP_LIMIT) *(volatile int *)over = 1;
		}
	}
	__syncwarp();
	int n = *over ? -1 : *cnt;
	__syncwarp();
	return n;
}

struct sp_warp_scratch {
	int table[SP_WARPS][SP_HCAP];
	int cnt[SP_WARPS], over[SP_WARPS];
};

// sp_count writes the size of every row of A·B that has at most SP_LIMIT
// columns to size[i]; the others are listed in longs (*nlong of them,
// in any order) and get their size from sp_long_rows.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_count(int rows, const int *aptr, const int *acol, const int *bptr, const int *bcol, int *size, int *longs, int *nlong) {
	__shared__ sp_warp_scratch sh;
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int i = blockIdx.x * SP_WARPS + w; i < rows; i += gridDim.x * SP_WARPS) {
		int n = sp_hash_row(sh.table[w], &sh.cnt[w], &sh.over[w], i, aptr, acol, bptr, bcol);
		if (lane == 0) {
			if (n >= 0) size[i] = n;
			else longs[atomicAdd(nlong, 1)] = i;
		}
	}
}

// sp_fill writes the sorted columns of every row of A·B with at most
// SP_LIMIT of them at ccol[cptr[i]:]: the table is compacted in place,
// then each column goes to its rank in the row.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_fill(int rows, const int *aptr, const int *acol, const int *bptr, const int *bcol, const int *cptr, int *ccol) {
	__shared__ sp_warp_scratch sh;
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int *t = sh.table[w];
	for (int i = blockIdx.x * SP_WARPS + w; i < rows; i += gridDim.x * SP_WARPS) {
		int cs = cptr[i], n = cptr[i + 1] - cs;
		if (n > SP_LIMIT) continue;
		sp_hash_row(t, &sh.cnt[w], &sh.over[w], i, aptr, acol, bptr, bcol);
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

// sp_long_rows handles the rows of A·B listed in longs, one block per row
// with a bitmap over the columns of B (words words per block in bits).
// Without cptr it writes each row's size to size[i]; with it, the sorted
// columns to ccol[cptr[i]:].
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_long_rows(const int *longs, int nlong, const int *aptr, const int *acol, const int *bptr, const int *bcol, unsigned *bits, int words,
             int *size, const int *cptr, int *ccol) {
	unsigned *bm = bits + (size_t)blockIdx.x * words;
	for (int l = blockIdx.x; l < nlong; l += gridDim.x) {
		int i = longs[l];
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
		int n = sp_emit_bits(bm, words, cptr ? ccol + cptr[i] : nullptr);
		if (!cptr && threadIdx.x == 0) size[i] = n;
		__syncthreads();
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

// sp_numeric sets the values of C = A·B on its pattern, a warp per row:
// for each k of A's row in order, the lanes add a_ik·b_kj for the
// (distinct) columns j of B's row k into distinct slots, so each entry
// gets its products in A's row order. Rows of at most SP_LIMIT entries
// accumulate in shared memory, longer ones in cval itself.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_numeric(int rows, const int *aptr, const int *acol, const double *aval, const int *bptr, const int *bcol, const double *bval,
           const int *cptr, const int *ccol, double *cval, double init) {
	__shared__ int pat[SP_WARPS][SP_LIMIT];
	__shared__ double acc[SP_WARPS][SP_LIMIT];
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (int i = blockIdx.x * SP_WARPS + w; i < rows; i += gridDim.x * SP_WARPS) {
		int cs = cptr[i], n = cptr[i + 1] - cs;
		const int *p = ccol + cs;
		double *v = cval + cs;
		if (n <= SP_LIMIT) {
			for (int x = lane; x < n; x += 32) pat[w][x] = p[x];
			p = pat[w];
			v = acc[w];
		}
		for (int x = lane; x < n; x += 32) v[x] = init;
		__syncwarp();
		int ae = aptr[i + 1];
		for (int q0 = aptr[i]; q0 < ae; q0 += 32) {
			// A's next 32 entries and their rows of B, one per lane.
			int myk = 0, mybs = 0, mybe = 0;
			double mya = 0;
			if (q0 + lane < ae) {
				myk = acol[q0 + lane];
				mya = aval[q0 + lane];
				mybs = bptr[myk];
				mybe = bptr[myk + 1];
			}
			int m = min(32, ae - q0);
			for (int u = 0; u < m; u++) {
				double a = __shfl_sync(SP_FULL, mya, u);
				int bs = __shfl_sync(SP_FULL, mybs, u), be = __shfl_sync(SP_FULL, mybe, u);
				for (int r = bs + lane; r < be; r += 32) {
					int x = sp_bsearch(p, n, bcol[r]);
					v[x] = __dadd_rn(v[x], __dmul_rn(a, bval[r]));
				}
				__syncwarp();
			}
		}
		if (n <= SP_LIMIT)
			for (int x = lane; x < n; x += 32) cval[cs + x] = v[x];
		__syncwarp();
	}
}

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
// most SP_MID entries, a block per row with ranks in shared memory.
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_tr_mid(const int *longs, int nlong, const int *tptr, int *tcol, int *perm) {
	__shared__ int key[SP_MID], pos[SP_MID];
	for (int l = blockIdx.x; l < nlong; l += gridDim.x) {
		int j = longs[l], ts = tptr[j], n = tptr[j + 1] - ts;
		if (n > SP_MID) continue;
		for (int x = threadIdx.x; x < n; x += SP_THREADS) key[x] = tcol[ts + x], pos[x] = perm[ts + x];
		__syncthreads();
		for (int x = threadIdx.x; x < n; x += SP_THREADS) {
			int c = key[x], rank = 0;
			for (int y = 0; y < n; y++) rank += key[y] < c;
			tcol[ts + rank] = c;
			perm[ts + rank] = pos[x];
		}
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
// (the host sets it to rows before).
extern "C" __global__ void __launch_bounds__(SP_THREADS)
sp_check(int rows, int cols, int nnz, const int *ptr, const int *col, int *bad) {
	for (int i = blockIdx.x * SP_THREADS + threadIdx.x; i < rows; i += gridDim.x * SP_THREADS) {
		int s = ptr[i], e = ptr[i + 1];
		bool ok = (i > 0 || s == 0) && (i < rows - 1 || e == nnz) && s <= e && s >= 0 && e <= nnz;
		for (int q = s; ok && q < e; q++) ok = col[q] >= 0 && col[q] < cols && (q == s || col[q] > col[q - 1]);
		if (!ok) atomicMin(bad, i);
	}
}
