// The input of the AMG setup on the device (package amg, gpu_input.go):
// the checks amg's fromMesh makes on a CSR matrix, the removal of small
// entries (csr.dropSmall), the gather that maps the caller's values onto
// the hierarchy's finest pattern, and the test vectors of the symmetry
// check. The matrix is the caller's as uploaded, with int64 (in_*64) or
// int32 (in_*32) row offsets. The renumbering (reverse Cuthill–McKee and
// the permuted matrix) is in input_order.cuh.
//
// Errors are minima of row or entry indices (integer atomics, whose
// result does not depend on their order), so the host names the entry
// its own loop would have named first. Each output element has one
// writer. Names are prefixed in_.

#include "shared.cuh"

#define IN_THREADS 256

#define IN_FOR(i, n) \
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)
#define IN_WARP_FOR(i, n) \
	for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (n); i += ((long long)gridDim.x * blockDim.x) >> 5)

// Words of bad[] (set to all ones before): the first row whose offsets
// decrease, the first entry with a column out of range or a value that is
// not finite, the first row out of order or with a repeat, the first row
// whose diagonal is not positive (checked on sorted rows only).
#define IN_BAD_PTR 0
#define IN_BAD_ENTRY 1
#define IN_BAD_ORDER 2
#define IN_BAD_DIAG 3

// in_check validates the rows of an n×n matrix with nnz entries whose
// ptr[0] = 0 and ptr[n] = nnz the host checked, and sets diag[i] (0 where
// row i has no diagonal). A row whose offsets leave [0, nnz] reads
// nothing: the offsets decrease at some other row, which bad[0] names.
// One warp per row (launched with 32 threads per row), reading it
// coalesced: a row's first bad entry is the minimum of its bad entries,
// and a row with one, or with a column not above the one before, is out
// of order, as a loop over the row that stops at its first bad entry
// finds (nvcc keeps the sums and comparisons as they are).
template <typename P>
__device__ __forceinline__ void in_check(int n, long long nnz, const P *ptr, const int *col, const double *val,
                                         double *diag, unsigned long long *bad) {
	const int lane = threadIdx.x & 31;
	IN_WARP_FOR(ii, n) {
		int i = (int)ii;
		long long lo = ptr[i], hi = ptr[i + 1];
		if (lo > hi) {
			if (lane == 0) atomicMin(&bad[IN_BAD_PTR], (unsigned long long)i);
			continue;
		}
		if (lo < 0 || hi > nnz) continue;
		unsigned first = 0xffffffffu; // the row's first bad entry (nnz <= INT32_MAX)
		bool order = false, has = false;
		double d = 0;
		for (long long k = lo + lane; k < hi; k += 32) {
			int c = col[k];
			double v = val[k];
			if (c < 0 || c >= n || !isfinite(v)) first = min(first, (unsigned)k);
			order = order || (k > lo && c <= col[k - 1]);
			if (c == i) has = true, d = v;
		}
		first = __reduce_min_sync(0xffffffffu, first);
		order = __any_sync(0xffffffffu, order) || first != 0xffffffffu;
		unsigned at = __ballot_sync(0xffffffffu, has);
		d = at ? __shfl_sync(0xffffffffu, d, __ffs(at) - 1) : 0;
		if (lane != 0) continue;
		if (first != 0xffffffffu) atomicMin(&bad[IN_BAD_ENTRY], (unsigned long long)first);
		if (order) {
			atomicMin(&bad[IN_BAD_ORDER], (unsigned long long)i);
			continue;
		}
		diag[i] = d;
		if (!(d > 0)) atomicMin(&bad[IN_BAD_DIAG], (unsigned long long)i);
	}
}

extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_check64(int n, long long nnz, const long long *ptr, const int *col, const double *val, double *diag,
               unsigned long long *bad) {
	in_check(n, nnz, ptr, col, val, diag, bad);
}

extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_check32(int n, long long nnz, const int *ptr, const int *col, const double *val, double *diag,
               unsigned long long *bad) {
	in_check(n, nnz, ptr, col, val, diag, bad);
}

// in_far adds to cnt[0] the entries of a checked matrix more than window
// rows from their row: amg's scattered test (order.go), whose count
// decides whether the host renumbers the matrix. One warp per row.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_far(int n, int window, const int *ptr, const int *col, unsigned long long *cnt) {
	const int lane = threadIdx.x & 31;
	unsigned long long far = 0;
	IN_WARP_FOR(ii, n) {
		int i = (int)ii;
		for (int k = ptr[i] + lane; k < ptr[i + 1]; k += 32) {
			int d = col[k] - i;
			far += d > window || d < -window;
		}
	}
	far = __reduce_add_sync(0xffffffffu, (unsigned)far);
	if (lane == 0 && far) atomicAdd(cnt, far);
}

// in_small is dropSmall's test |a_ij| ≤ tol·sqrt(a_ii·a_jj) off the
// diagonal, squared as the host writes it (t2 = tol²).
__device__ __forceinline__ bool in_small(double v, double t2, const double *diag, int i, int j) {
	return __dmul_rn(v, v) <= __dmul_rn(__dmul_rn(t2, diag[i]), diag[j]) && j != i;
}

// in_drop_count sets cnt[i+1] to the entries row i keeps. One warp per
// row (launched with 32 threads per row), reading the row coalesced.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_drop_count(int n, const int *ptr, const int *col, const double *val, const double *diag, double t2,
                  long long *cnt) {
	const int lane = threadIdx.x & 31;
	IN_WARP_FOR(ii, n) {
		int i = (int)ii, w = 0;
		for (int k = ptr[i] + lane; k < ptr[i + 1]; k += 32) w += !in_small(val[k], t2, diag, i, col[k]);
		w = __reduce_add_sync(0xffffffffu, w);
		if (lane == 0) cnt[i + 1] = w;
	}
}

// in_drop_block checks the node blocks of bs rows for dropSmall: flag[0]
// is the first node whose rows have different patterns (the matrix is
// then not grouped, groupOf), flag[1] the first node where a column is
// small in some of its rows only. One warp per node (launched with 32
// threads per node): each lane compares its positions of the bs rows, so
// every row is read coalesced.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_drop_block(int nodes, int bs, const int *ptr, const int *col, const double *val, const double *diag,
                  double t2, unsigned long long *flag) {
	const int lane = threadIdx.x & 31;
	IN_WARP_FOR(vv, nodes) {
		int i0 = (int)vv * bs, p0 = ptr[i0], len = ptr[i0 + 1] - p0;
		bool same = true, mixed = false;
		for (int r = 1; r < bs; r++) same = same && ptr[i0 + r + 1] - ptr[i0 + r] == len;
		for (int q = lane; q < len && same; q += 32)
			for (int r = 1; r < bs; r++) same = same && col[ptr[i0 + r] + q] == col[p0 + q];
		if (!__all_sync(0xffffffffu, same)) {
			if (lane == 0) atomicMin(&flag[0], (unsigned long long)vv);
			continue;
		}
		for (int q = lane; q < len; q += 32) {
			int j = col[p0 + q];
			bool s0 = in_small(val[p0 + q], t2, diag, i0, j);
			for (int r = 1; r < bs; r++) mixed = mixed || in_small(val[ptr[i0 + r] + q], t2, diag, i0 + r, j) != s0;
		}
		if (__any_sync(0xffffffffu, mixed) && lane == 0) atomicMin(&flag[1], (unsigned long long)vv);
	}
}

// in_drop_place writes the kept entries of every row from off[i] (the
// exclusive prefix sum of in_drop_count's counts) with their positions in
// the matrix given. One warp per row: each 32 entries' kept ones are
// placed by a ballot, in order, so the writes are coalesced.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_drop_place(int n, const int *ptr, const int *col, const double *val, const double *diag, double t2,
                  const long long *off, int *col2, double *val2, int *keep) {
	const int lane = threadIdx.x & 31;
	IN_WARP_FOR(ii, n) {
		int i = (int)ii;
		long long w = off[i];
		for (int k0 = ptr[i]; k0 < ptr[i + 1]; k0 += 32) {
			int k = k0 + lane, j = 0;
			double v = 0;
			bool kept = false;
			if (k < ptr[i + 1]) j = col[k], v = val[k], kept = !in_small(v, t2, diag, i, j);
			unsigned b = __ballot_sync(0xffffffffu, kept);
			if (kept) {
				long long at = w + __popc(b & ((1u << lane) - 1));
				col2[at] = j;
				val2[at] = v;
				keep[at] = k;
			}
			w += __popc(b);
		}
	}
}

// in_gather sets dst[q] = src[keep[q]]: a numeric update's values on the
// pattern the hierarchy kept.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_gather(long long m, const int *keep, const double *src, double *dst) {
	IN_FOR(q, m) dst[q] = src[keep[q]];
}

// in_hash_vec sets x[i] = Hash32(i, seed)/2³² − 0.5 (mis.Hash32), the
// symmetry check's test vectors.
extern "C" __global__ void __launch_bounds__(IN_THREADS) in_hash_vec(int n, unsigned int seed, double *x) {
	IN_FOR(i, n) x[i] = (double)hash32((unsigned int)i, seed, 0) / 4294967296.0 - 0.5;
}

// Theta's auto rule (amg/theta.go): the rows counted are every row, or
// those whose hash picks them, one in IN_THETA_SAMPLE.
#define IN_THETA_SEED 0x7e7au
#define IN_THETA_SAMPLE 8u

__device__ __forceinline__ bool in_theta_row(int i, int every) {
	return every || hash32((unsigned int)i, IN_THETA_SEED, 0) % IN_THETA_SAMPLE == 0;
}

// in_theta adds scalarTheta's counts of a checked matrix (diag from
// in_check, positive): cnt[0] the off-diagonal couplings between counted
// rows that are not rounding zeros (a_ij² > 1e-20·a_ii·a_jj), cnt[1] the
// weak ones among them (a_ij² < 1e-6·a_ii·a_jj). Integer sums: the same
// in any order.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_theta(int n, int every, const int *ptr, const int *col, const double *val, const double *diag,
             unsigned long long *cnt) {
	unsigned long long all = 0, weak = 0;
	IN_FOR(ii, n) {
		int i = (int)ii;
		if (!in_theta_row(i, every)) continue;
		double di = fabs(diag[i]);
		for (int k = ptr[i]; k < ptr[i + 1]; k++) {
			int j = col[k];
			if (j == i || !in_theta_row(j, every)) continue;
			double dd = __dmul_rn(di, fabs(diag[j])), x = __dmul_rn(val[k], val[k]);
			if (dd == 0 || !(x > __dmul_rn(1e-20, dd))) continue;
			all++;
			weak += x < __dmul_rn(1e-6, dd);
		}
	}
	// A warp's counts first: one atomic per warp, not per thread.
	for (int o = 16; o > 0; o >>= 1) {
		all += __shfl_down_sync(0xffffffffu, all, o);
		weak += __shfl_down_sync(0xffffffffu, weak, o);
	}
	if ((threadIdx.x & 31) == 0 && all) atomicAdd(&cnt[0], all);
	if ((threadIdx.x & 31) == 0 && weak) atomicAdd(&cnt[1], weak);
}

#include "input_order.cuh"
