// The setup of smoothed-aggregation AMG (package amg, gpu_setup*.go) on
// the GPU: the strength graph of a CSR matrix, the boundary classes of
// its vertices, the repair and renumbering of aggregates, the members of
// every aggregate, the tentative prolongator by a Householder QR per
// aggregate, the inverse diagonal, the vector steps of the Lanczos
// estimate, the product A·T and the smoothed prolongator.
//
// Determinism and agreement with the host. Every kernel gives each output
// element to one thread, which computes it in the order of the host code
// it mirrors (amg/strength.go, aggregate.go, tentative.go, eig.go,
// setup.go); the host's arithmetic is repeated with the rounding
// intrinsics (__dmul_rn, __dadd_rn, ...), which nvcc never contracts into
// fused multiply-adds, so a strength test or a QR gives the host's bits.
// Atomics appear only on integers (counts, minima), whose results do not
// depend on their order; the one atomic placement (su_place) is followed
// by a sort. The prefix sums add fixed chunks in a fixed tree. Names are
// prefixed su_.

#define SU_THREADS 256
#define SU_SCAN_BLOCKS 1024 // blocks of a prefix sum; amg/gpu_setup.go relies on it
#define SU_MAX_BS 8         // dofs per node the strength kernel merges
#define SU_MAX_K 8          // near-nullspace vectors of the QR
#define SU_NONE 0x7fffffff
#define SU_WARPS (SU_THREADS / 32)
#define SU_FULL 0xffffffffu
#define SU_AT_CAP 384   // members of an aggregate that su_sort_members stages in shared memory
#define SU_AT_RUNS 256  // runs of a row (its nodes) that su_at sorts in shared memory (25 KiB a block)
#define SU_NB_CAP 512   // runs of a node's rows that su_nb_count stages
#define SU_NF_CAP 256   // runs of a node's rows that su_nb_fill stages with their lists

#define SU_FOR(i, n) \
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

#define MUL(a, b) __dmul_rn((a), (b))
#define ADD(a, b) __dadd_rn((a), (b))
#define SUB(a, b) __dsub_rn((a), (b))

// su_norm2 is mesh.Norm2: a scaled sum of squares.
struct su_norm2 {
	double scale, ssq;
};

__device__ __forceinline__ void su_add(su_norm2 &n, double x) {
	if (x == 0) return;
	double a = fabs(x);
	if (a > n.scale) {
		double r = n.scale / a;
		n.ssq = ADD(1.0, MUL(MUL(n.ssq, r), r));
		n.scale = a;
		return;
	}
	double r = a / n.scale;
	n.ssq = ADD(n.ssq, MUL(r, r));
}

__device__ __forceinline__ double su_value(const su_norm2 &n) { return MUL(n.scale, sqrt(n.ssq)); }

// su_strong is the host's x > θ·sqrt(d_self)·sqrt(d_other), in its order.
__device__ __forceinline__ bool su_strong(double x, double theta, double dself, double dother) {
	return theta == 0 || x > MUL(MUL(theta, sqrt(dself)), sqrt(dother));
}

// su_lower returns the first position in col[lo, hi) holding c or more.
__device__ __forceinline__ int su_lower(const int *col, int lo, int hi, int c) {
	while (lo < hi) {
		int m = lo + (hi - lo) / 2;
		if (col[m] < c)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

#include "setup_strength.cuh"

// The prefix sum of x[0..n), in place (inclusive): su_scan_up sums the
// chunk of every block into part, su_scan_top turns the parts into
// exclusive offsets, su_scan_down scans each chunk from its offset.
// Chunks are ceil(n / gridDim.x) long; the grid is the same for all three.

__device__ __forceinline__ long long su_block_sum(long long s) {
	__shared__ long long sh[SU_THREADS];
	sh[threadIdx.x] = s;
	__syncthreads();
	for (int w = SU_THREADS / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	long long r = sh[0];
	__syncthreads();
	return r;
}

extern "C" __global__ void __launch_bounds__(SU_THREADS) su_scan_up(long long n, const long long *x, long long *part) {
	long long ch = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * ch, hi = min(n, lo + ch);
	long long s = 0;
	for (long long i = lo + threadIdx.x; i < hi; i += SU_THREADS) s += x[i];
	s = su_block_sum(s);
	if (threadIdx.x == 0) part[blockIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(SU_THREADS) su_scan_top(int parts, long long *part) {
	if (threadIdx.x != 0 || blockIdx.x != 0) return;
	long long s = 0;
	for (int b = 0; b < parts; b++) {
		long long x = part[b];
		part[b] = s;
		s += x;
	}
}

extern "C" __global__ void __launch_bounds__(SU_THREADS) su_scan_down(long long n, long long *x, const long long *part) {
	__shared__ long long sh[SU_THREADS];
	long long ch = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * ch, hi = min(n, lo + ch);
	long long carry = part[blockIdx.x];
	for (long long t = lo; t < hi; t += SU_THREADS) {
		long long i = t + threadIdx.x;
		long long v = i < hi ? x[i] : 0;
		sh[threadIdx.x] = v;
		__syncthreads();
		for (int o = 1; o < SU_THREADS; o <<= 1) {
			long long y = threadIdx.x >= o ? sh[threadIdx.x - o] : 0;
			__syncthreads();
			sh[threadIdx.x] += y;
			__syncthreads();
		}
		if (i < hi) x[i] = carry + sh[threadIdx.x];
		carry += sh[SU_THREADS - 1];
		__syncthreads();
	}
}

// su_to_i32 copies n+1 offsets into int32, the form of the solve's
// matrices (the caller checked the total).
extern "C" __global__ void __launch_bounds__(SU_THREADS) su_to_i32(long long n, const long long *x, int *y) {
	SU_FOR(i, n) y[i] = (int)x[i];
}

// su_fill64 sets x[0..n) to v.
extern "C" __global__ void __launch_bounds__(SU_THREADS) su_fill64(long long n, long long *x, long long v) {
	SU_FOR(i, n) x[i] = v;
}

// su_degrees keeps the smallest and the largest degree of a graph in
// mm[0], mm[1] (set to n·max and 0 before). Each warp reduces its
// threads' extremes first: one atomic a warp, not a thread, on the two
// words every block updates.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_degrees(int n, const long long *off, unsigned long long *mm) {
	unsigned lo = ~0u, hi = 0; // degrees fit: the adjacency has int32 offsets
	SU_FOR(v, n) {
		unsigned d = (unsigned)(off[v + 1] - off[v]);
		lo = min(lo, d);
		hi = max(hi, d);
	}
	lo = __reduce_min_sync(SU_FULL, lo);
	hi = __reduce_max_sync(SU_FULL, hi);
	if ((threadIdx.x & 31) == 0) {
		if (lo != ~0u) atomicMin(&mm[0], (unsigned long long)lo);
		atomicMax(&mm[1], (unsigned long long)hi);
	}
}

// su_classes maps every vertex's degree to its class through the host's
// table (mesh.ClassifyByDegree, a function of the degree).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_classes(int n, const long long *off, const unsigned char *table, unsigned char *cls) {
	SU_FOR(v, n) cls[v] = table[off[v + 1] - off[v]];
}

// su_fix_sizes drops Dirichlet nodes from their aggregates and counts the
// nodes of every aggregate (fixAggregates' first steps).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_fix_sizes(int nodes, const unsigned char *dir, int *of, int *size) {
	SU_FOR(v, nodes) {
		int a = of[v];
		if (dir[v]) a = of[v] = -1;
		if (a >= 0) atomicAdd(&size[a], 1);
	}
}

// su_fix_flags sets flag[a+1] for every non-empty aggregate (flag[0] = 0)
// and counts in *small those with fewer than need nodes.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_fix_flags(int nagg, const int *size, int need, long long *flag, unsigned long long *small) {
	SU_FOR(a, nagg) {
		int s = size[a];
		flag[a + 1] = s > 0;
		if (s > 0 && s < need) atomicAdd(small, 1ull);
		if (a == 0) flag[0] = 0;
	}
}

// su_renumber numbers the non-empty aggregates densely in their order.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_renumber(int nodes, int *of, const long long *id) {
	SU_FOR(v, nodes) {
		int a = of[v];
		if (a >= 0) of[v] = (int)id[a];
	}
}

// su_count sets cnt[of[v]+1] to the nodes of each aggregate (cnt zeroed
// before), and pre[v+1] whether node v is aggregated.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_count(int nodes, const int *of, unsigned long long *cnt, long long *pre) {
	SU_FOR(v, nodes) {
		int a = of[v];
		if (a >= 0) atomicAdd(&cnt[a + 1], 1ull);
		pre[v + 1] = a >= 0;
		if (v == 0) pre[0] = 0;
	}
}

// su_place writes every aggregated node into its aggregate's range of
// mem (in any order: su_sort_members orders them).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_place(int nodes, const int *of, const long long *mptr, int *pos, int *mem) {
	SU_FOR(v, nodes) {
		int a = of[v];
		if (a >= 0) mem[mptr[a] + atomicAdd(&pos[a], 1)] = (int)v;
	}
}

__device__ __forceinline__ void su_isort(int *x, long long n) {
	for (long long i = 1; i < n; i++) {
		int y = x[i];
		long long j = i - 1;
		for (; j >= 0 && x[j] > y; j--) x[j + 1] = x[j];
		x[j + 1] = y;
	}
}

// su_sort_members sorts every aggregate's members: one warp per
// aggregate (launched with 32 threads per aggregate), each member placed
// by the count of smaller ones (members are distinct); an aggregate of
// more than SU_AT_CAP members is lane 0's insertion sort.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_sort_members(int nagg, const long long *mptr, int *mem) {
	__shared__ int sm[SU_WARPS][SU_AT_CAP];
	const int lane = threadIdx.x & 31;
	int *y = sm[threadIdx.x >> 5];
	SU_WARP_FOR(a, nagg) {
		int *x = mem + mptr[a];
		long long m = mptr[a + 1] - mptr[a];
		if (m > SU_AT_CAP) {
			if (lane == 0) su_isort(x, m);
			__syncwarp();
			continue;
		}
		for (int q = lane; q < m; q += 32) y[q] = x[q];
		__syncwarp();
		for (int q = lane; q < m; q += 32) {
			int r = 0;
			for (int p = 0; p < m; p++) r += y[p] < y[q];
			x[r] = y[q];
		}
		__syncwarp();
	}
}

// su_tent_ptr sets the row offsets of the tentative prolongator: k
// entries in every row of an aggregated node.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_tent_ptr(int nodes, int bs, int k, const int *of, const long long *pre, int *pptr) {
	long long n = (long long)nodes * bs;
	SU_FOR(i, n + 1) {
		if (i == n) {
			pptr[i] = (int)(pre[nodes] * bs * k);
			continue;
		}
		int v = (int)(i / bs), d = (int)(i % bs);
		pptr[i] = (int)(pre[v] * bs * k + (of[v] >= 0 ? d * k : 0));
	}
}


// su_dot is Σ x[i·k]·y[i·k] over i in [lo, m), summed in order from 0
// (the host's loops), its loads issued ahead of the dependent adds.
__device__ __forceinline__ double su_dot(const double *x, const double *y, int lo, int m, int k) {
	double s = 0;
#pragma unroll 8
	for (int i = lo; i < m; i++) s = ADD(s, MUL(x[i * k], y[i * k]));
	return s;
}

// su_reflect applies the reflector I − bt·v·vᵀ of column j of v to
// columns j..k−1 of a (rows j..m−1), as householderQR does: lane c+1
// sums column c's dot product in the host's order, all at once; then
// every lane updates its rows of every column.
__device__ __forceinline__ void su_reflect(double *a, const double *vv, int m, int k, int j, double bt, int lane) {
	const int c = lane - 1;
	double s = c >= j && c < k ? MUL(su_dot(vv + j, a + c, j, m, k), bt) : 0, sc[SU_MAX_K];
#pragma unroll
	for (int q = 0; q < SU_MAX_K; q++) sc[q] = __shfl_sync(SU_FULL, s, q + 1);
	for (int i = j + lane; i < m; i += 32) {
		double x = vv[i * k + j];
#pragma unroll
		for (int q = 0; q < SU_MAX_K; q++)
			if (q >= j && q < k) a[i * k + q] = SUB(a[i * k + q], MUL(sc[q], x));
	}
	__syncwarp();
}

// su_tent_qr factors the rows of b (n×k, row-major) of every aggregate,
// b_a = Q·R, by the host's householderQR: Q goes into the aggregate's
// rows of the tentative prolongator, R into its rows of the coarse
// near-nullspace bc. w and v are scratch of n·k, used at the aggregate's
// members' offset. One warp per aggregate (launched with 32 threads per
// aggregate): every sum runs on one lane in the host's order, so the
// factors are the host's bits, but a step's sums run side by side (vᵀv
// on lane 0, column c's on lane c+1, su_reflect) and the lanes gather,
// update and write rows.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_tent_qr(int nagg, int bs, int k, const long long *mptr, const int *mem, const double *b, const int *pptr,
               int *pcol, double *pval, double *bc, double *w, double *v) {
	const int lane = threadIdx.x & 31;
	SU_WARP_FOR(ag, nagg) {
		long long m0 = mptr[ag];
		int m = (int)((mptr[ag + 1] - m0) * bs);
		double *a = w + m0 * bs * k, *vv = v + m0 * bs * k;
		for (int q = lane; q < m * k; q += 32) {
			int row = q / k;
			long long node = mem[m0 + row / bs];
			a[q] = b[(node * bs + row % bs) * k + q - row * k];
		}
		__syncwarp();
		double beta[SU_MAX_K];
		int steps = min(m, k);
		for (int j = 0; j < steps; j++) {
			double nrm = sqrt(su_dot(a + j, a + j, j, m, k)), x0 = a[j * k + j];
			double alpha = x0 < 0 ? nrm : -nrm;
			for (int i = j + lane; i < m; i += 32) vv[i * k + j] = i == j ? SUB(x0, alpha) : a[i * k + j];
			__syncwarp();
			double s2 = lane == 0 ? su_dot(vv + j, vv + j, j, m, k) : 0;
			s2 = __shfl_sync(SU_FULL, s2, 0);
			beta[j] = s2 > 0 ? 2 / s2 : 0;
			su_reflect(a, vv, m, k, j, beta[j], lane);
		}
		// R, each row negated where its diagonal is negative, and those
		// columns of Q; Q formed backwards from the identity's columns.
		unsigned flip = 0;
		for (int j = 0; j < steps; j++) flip |= (unsigned)(a[j * k + j] < 0) << j;
		for (int q = lane; q < k * k; q += 32) {
			int i = q / k;
			bool in = i < steps && q - i * k >= i;
			double x = in ? a[q] : 0;
			bc[ag * k * k + q] = in && (flip >> i & 1) ? -x : x;
		}
		__syncwarp();
		for (int q = lane; q < m * k; q += 32) a[q] = q / k == q % k ? 1 : 0;
		__syncwarp();
		for (int j = steps - 1; j >= 0; j--) su_reflect(a, vv, m, k, j, beta[j], lane);
		for (int q = lane; q < m * k; q += 32) {
			int row = q / k, j = q - row * k;
			long long node = mem[m0 + row / bs];
			int at = pptr[node * bs + row % bs] + j;
			pcol[at] = (int)ag * k + j;
			pval[at] = flip >> j & 1 ? -a[q] : a[q];
		}
		__syncwarp();
	}
}

// su_dinv sets dinv = 1/a_ii and sq = sqrt(dinv), and keeps in *err the
// first row whose diagonal is missing or not positive (*err set to ~0
// before).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_dinv(int n, const int *ptr, const int *col, const double *val, double *dinv, double *sq,
            unsigned long long *err) {
	SU_FOR(i, n) {
		int e = ptr[i + 1], q = su_lower(col, ptr[i], e, (int)i);
		double d = q < e && col[q] == i ? val[q] : 0;
		if (!(d > 0)) atomicMin(err, (unsigned long long)i);
		double x = 1 / d;
		dinv[i] = x;
		sq[i] = sqrt(x);
	}
}

// su_modes forms the fine level's near-nullspace, n rows of k (amg's
// nearNullspace): without coords the constant vectors (k = bs, row i's
// one in column i % bs); with them the rigid-body modes of the nodes
// (bs = dim, 2 or 3) about the centroid (cx, cy, cz), each row written
// whole.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_modes(int n, int bs, int k, const double *coords, double cx, double cy, double cz, double *b) {
	SU_FOR(ii, n) {
		int i = (int)ii, v = i / bs, d = i - v * bs;
		double *r = b + (long long)i * k;
		if (!coords) {
			for (int j = 0; j < k; j++) r[j] = j == d ? 1 : 0;
			continue;
		}
		double x = SUB(coords[v * bs], cx), y = SUB(coords[v * bs + 1], cy);
		for (int j = 0; j < k; j++) r[j] = j == d ? 1 : 0;
		if (bs == 2) {
			r[2] = d == 0 ? -y : x;
			continue;
		}
		double z = SUB(coords[v * bs + 2], cz);
		// Rows of node v: (1 0 0 −y 0 z), (0 1 0 x −z 0), (0 0 1 0 y −x).
		if (d == 0) r[3] = -y, r[5] = z;
		if (d == 1) r[3] = x, r[4] = -z;
		if (d == 2) r[4] = y, r[5] = -x;
	}
}

// su_lz_start sets the Lanczos estimate's start vector (amg/eig.go's
// startValue); its steps are amg.cu's amg_lz_*.
extern "C" __global__ void __launch_bounds__(SU_THREADS) su_lz_start(int n, double *x) {
	SU_FOR(i, n) {
		unsigned int h = (unsigned int)i ^ 0x5eedu;
		h = (h ^ h >> 16) * 0x7feb352du;
		h = (h ^ h >> 15) * 0x846ca68bu;
		h ^= h >> 16;
		x[i] = (double)h / 4294967296.0 - 0.5;
	}
}

#include "setup_at.cuh"

#undef SU_THREADS
#undef SU_SCAN_BLOCKS
#undef SU_MAX_BS
#undef SU_MAX_K
#undef SU_NONE
#undef SU_WARPS
#undef SU_FULL
#undef SU_AT_CAP
#undef SU_AT_RUNS
#undef SU_NB_CAP
#undef SU_NF_CAP
#undef SU_FOR
#undef SU_WARP_FOR
#undef MUL
#undef ADD
#undef SUB
