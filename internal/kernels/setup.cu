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
#define SU_AT_STAGE 256 // entries of a row whose keys su_at sorts in shared memory (16 KiB a block)
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


// su_reflect applies the reflector I − bt·v·vᵀ of column j of v to
// columns j..k−1 of a (rows j..m−1), as householderQR does: lane 0 sums
// each column's dot product in the host's order, every lane updates its
// rows.
__device__ __forceinline__ void su_reflect(double *a, const double *vv, int m, int k, int j, double bt, int lane) {
	for (int c = j; c < k; c++) {
		double s = 0;
		if (lane == 0) {
			for (int i = j; i < m; i++) s = ADD(s, MUL(vv[i * k + j], a[i * k + c]));
			s = MUL(s, bt);
		}
		s = __shfl_sync(SU_FULL, s, 0);
		for (int i = j + lane; i < m; i += 32) a[i * k + c] = SUB(a[i * k + c], MUL(s, vv[i * k + j]));
		__syncwarp();
	}
}

// su_tent_qr factors the rows of b (n×k, row-major) of every aggregate,
// b_a = Q·R, by the host's householderQR: Q goes into the aggregate's
// rows of the tentative prolongator, R into its rows of the coarse
// near-nullspace bc. w and v are scratch of n·k, used at the aggregate's
// members' offset. One warp per aggregate: the lanes gather, update and
// write rows; the sums (norms, the reflectors' dot products) are lane
// 0's, in the host's order, so the factors are the host's bits. Launched
// with 32 threads per aggregate.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_tent_qr(int nagg, int bs, int k, const long long *mptr, const int *mem, const double *b, const int *pptr,
               int *pcol, double *pval, double *bc, double *w, double *v) {
	const int lane = threadIdx.x & 31;
	const long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
	for (long long ag = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; ag < nagg; ag += nw) {
		long long m0 = mptr[ag], nm = mptr[ag + 1] - m0;
		int m = (int)(nm * bs);
		double *a = w + m0 * bs * k, *vv = v + m0 * bs * k;
		for (int row = lane; row < m; row += 32) {
			long long node = mem[m0 + row / bs];
			int d = row % bs;
			for (int j = 0; j < k; j++) a[row * k + j] = b[(node * bs + d) * k + j];
		}
		__syncwarp();
		double r[SU_MAX_K * SU_MAX_K], beta[SU_MAX_K];
		for (int q = 0; q < k * k; q++) r[q] = 0;
		int steps = min(m, k);
		for (int j = 0; j < steps; j++) {
			double alpha = 0;
			if (lane == 0) {
				double nrm = 0;
				for (int i = j; i < m; i++) nrm = ADD(nrm, MUL(a[i * k + j], a[i * k + j]));
				nrm = sqrt(nrm);
				alpha = a[j * k + j] < 0 ? nrm : -nrm;
			}
			alpha = __shfl_sync(SU_FULL, alpha, 0);
			for (int i = j + lane; i < m; i += 32) {
				double x = a[i * k + j];
				vv[i * k + j] = i == j ? SUB(x, alpha) : x;
			}
			__syncwarp();
			double s2 = 0;
			if (lane == 0)
				for (int i = j; i < m; i++) s2 = ADD(s2, MUL(vv[i * k + j], vv[i * k + j]));
			s2 = __shfl_sync(SU_FULL, s2, 0);
			double bt = s2 > 0 ? 2 / s2 : 0;
			beta[j] = bt;
			su_reflect(a, vv, m, k, j, bt, lane);
		}
		for (int i = 0; i < steps; i++)
			for (int c = i; c < k; c++) r[i * k + c] = a[i * k + c];
		__syncwarp();
		for (int q = lane; q < m * k; q += 32) a[q] = 0;
		__syncwarp();
		for (int j = lane; j < steps; j += 32) a[j * k + j] = 1;
		__syncwarp();
		for (int j = steps - 1; j >= 0; j--) su_reflect(a, vv, m, k, j, beta[j], lane);
		for (int j = 0; j < steps; j++)
			if (r[j * k + j] < 0) {
				for (int c = j; c < k; c++) r[j * k + c] = -r[j * k + c];
				for (int i = lane; i < m; i += 32) a[i * k + j] = -a[i * k + j];
			}
		__syncwarp();
		for (int q = lane; q < k * k; q += 32) bc[ag * k * k + q] = r[q];
		for (int row = lane; row < m; row += 32) {
			long long node = mem[m0 + row / bs];
			int d = row % bs;
			int s = pptr[node * bs + d];
			for (int j = 0; j < k; j++) {
				pcol[s + j] = (int)ag * k + j;
				pval[s + j] = a[row * k + j];
			}
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

// Steps of the Lanczos estimate (amg/eig.go), element by element. The
// scalar c is cp[0], or its square root with root (a norm from a dot
// product that stays on the device: the host reads the estimate's
// scalars once at the end).
#define SU_LZ_START 0 // x = startValue(i)
#define SU_LZ_SCALE 1 // x = y*s
#define SU_LZ_W 2     // x = s*x − c*y
#define SU_LZ_AXPY 3  // x −= c*y
#define SU_LZ_DIV 4   // x /= c

extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_lanczos(int mode, int n, double *x, const double *y, const double *s, const double *cp, int root) {
	double c = cp ? (root ? sqrt(cp[0]) : cp[0]) : 0;
	SU_FOR(i, n) {
		switch (mode) {
		case SU_LZ_START: {
			unsigned int h = (unsigned int)i ^ 0x5eedu;
			h = (h ^ h >> 16) * 0x7feb352du;
			h = (h ^ h >> 15) * 0x846ca68bu;
			h ^= h >> 16;
			x[i] = (double)h / 4294967296.0 - 0.5;
			break;
		}
		case SU_LZ_SCALE: x[i] = MUL(s[i], y[i]); break;
		case SU_LZ_W: x[i] = SUB(MUL(s[i], x[i]), MUL(c, y[i])); break;
		case SU_LZ_AXPY: x[i] = SUB(x[i], MUL(c, y[i])); break;
		case SU_LZ_DIV: x[i] = x[i] / c; break;
		}
	}
}

// su_at_pair gives step t's pair (a, b), a < b, of the bitonic network
// whose merges all sort ascending: the first step of a merge of width w
// pairs mirror images (a ^ (w − 1)), the later steps pairs stride apart.
// Padded with +inf past n, the network never moves a key across n, so a
// pair with b >= n is skipped.
__device__ __forceinline__ void su_at_pair(int t, int stride, int w, int &a, int &b) {
	a = (t / stride) * 2 * stride + t % stride;
	b = stride == w / 2 ? a ^ (w - 1) : a + stride;
}

// su_at_agg is entry q's aggregate (SU_NONE where its node has none).
__device__ __forceinline__ unsigned su_at_agg(int q, int bs, const int *acol, const int *of) {
	int g = of[acol[q] / bs];
	return g < 0 ? SU_NONE : (unsigned)g;
}

// su_at_keys is a row's entries sorted by (aggregate, position): each
// aggregate's entries are then a segment, in row order. A row of at most
// SU_AT_STAGE entries keeps the keys in shared memory (sk); a longer one
// keeps only the positions, on scratch, and looks the aggregates up.
struct su_at_keys {
	unsigned long long *sk;
	int *x;
	int lo, bs;
	const int *acol, *of;
	__device__ unsigned agg(int s) const { return sk ? (unsigned)(sk[s] >> 32) : su_at_agg(lo + x[s], bs, acol, of); }
	__device__ int pos(int s) const { return sk ? (int)(sk[s] & 0xffffffffu) : x[s]; }
	__device__ unsigned long long key(int s) const {
		return sk ? sk[s] : (unsigned long long)su_at_agg(lo + x[s], bs, acol, of) << 32 | (unsigned)x[s];
	}
	__device__ void swap(int a, int b) {
		if (sk) {
			unsigned long long t = sk[a];
			sk[a] = sk[b], sk[b] = t;
		} else {
			int t = x[a];
			x[a] = x[b], x[b] = t;
		}
	}

	// sort loads a row of len entries and sorts it, by the calling warp.
	__device__ void sort(int len) {
		const int lane = threadIdx.x & 31;
		for (int q = lane; q < len; q += 32)
			if (sk)
				sk[q] = (unsigned long long)su_at_agg(lo + q, bs, acol, of) << 32 | (unsigned)q;
			else
				x[q] = q;
		__syncwarp();
		int p = 1;
		while (p < len) p <<= 1;
		for (int w = 2; w <= p; w <<= 1)
			for (int stride = w / 2; stride > 0; stride >>= 1) {
				for (int t = lane; t < p / 2; t += 32) {
					int a, b;
					su_at_pair(t, stride, w, a, b);
					if (b < len && key(b) < key(a)) swap(a, b);
				}
				__syncwarp();
			}
	}
};

// su_at_add adds x·t[j] to y[j], j < k; unrolled to SU_MAX_K, so that
// the sums stay in registers.
__device__ __forceinline__ void su_at_add(double *y, double x, const double *t, int k) {
#pragma unroll
	for (int j = 0; j < SU_MAX_K; j++)
		if (j < k) y[j] = ADD(y[j], MUL(x, t[j]));
}

// su_at_put writes row i's columns of aggregate g, the at-th of the row,
// from their sums y of A·T, smoothed: p = t − ω·d_i·y (the order of
// amg's smoothProlongator: the product, then T's entry where T has the
// column).
__device__ __forceinline__ void su_at_put(int i, int at, int g, int k, const double *y, double omega, const double *dinv,
                                          const int *tptr, const int *tcol, const double *tval, const int *cptr,
                                          int *ccol, double *cval) {
	double sc = -omega * dinv[i];
	int o = cptr[i] + at * k, tk = tptr[i], te = tptr[i + 1];
#pragma unroll
	for (int j = 0; j < SU_MAX_K; j++) {
		if (j >= k) break;
		int col = g * k + j;
		double v = MUL(sc, y[j]);
		if (tk + j < te && tcol[tk + j] == col) v = ADD(v, tval[tk + j]);
		ccol[o + j] = col;
		cval[o + j] = v;
	}
}

// su_at_runs finds the runs of row entries [lo, lo+len) that share a
// node (a node's dofs, consecutive in a sorted row): run r starts at
// nh[r] and ends at nh[r+1]. It returns the number of runs, or -1 past
// 32, by the calling warp.
__device__ int su_at_runs(int lo, int len, int bs, const int *acol, int *nh) {
	const int lane = threadIdx.x & 31;
	int runs = 0, prev = -1;
	for (int c = 0; c * 32 < len; c++) {
		int q = c * 32 + lane, nd = -1;
		if (q < len) nd = bs == 1 ? acol[lo + q] : acol[lo + q] / bs;
		int up = __shfl_up_sync(SU_FULL, nd, 1);
		bool head = q < len && nd != (lane == 0 ? prev : up);
		unsigned hb = __ballot_sync(SU_FULL, head);
		int at = runs + __popc(hb & ((1u << lane) - 1));
		if (head && at < 32) nh[at] = q;
		runs += __popc(hb);
		if (runs > 32) return -1;
		prev = __shfl_sync(SU_FULL, nd, 31);
	}
	if (lane == 0) nh[runs] = len;
	__syncwarp();
	return runs;
}

// su_at computes C = A·T for a tentative prolongator T, whose row of an
// aggregated node v holds the k columns of its aggregate of[v]·k + j.
// Row i of C has the aggregates of its neighbours' nodes, sorted, k
// columns each. Pass 0 sets cnt[i+1] to the row's length; pass 1 writes
// the row at cptr[i], each a_ij·T_j summed in the row order of A from 0,
// then smoothed as amg's smoothProlongator does: P = T − ω·D⁻¹·(A·T),
// on A·T's pattern.
//
// One warp per row, launched with 32 threads per row. A row of at most 32
// nodes gives each node's run of entries a lane: lanes of one aggregate
// find each other (match), the first of them sums the aggregate's runs in
// row order and places it by the aggregates below it. A row of more
// nodes is sorted by (aggregate, position) (su_at_keys), so that each
// aggregate is a segment in row order, summed by the lane at its head;
// the keys of up to SU_AT_STAGE entries sort in shared memory, longer
// rows on scratch (nnz(A) ints, at the row's offset).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_at(int pass, int n, int bs, int k, const int *aptr, const int *acol, const double *aval, const int *of,
          const int *tptr, const int *tcol, const double *tval, int *scratch, long long *cnt, const int *cptr,
          int *ccol, double *cval, double omega, const double *dinv) {
	__shared__ unsigned long long sks[SU_WARPS][SU_AT_STAGE];
	__shared__ int snh[SU_WARPS][33];
	const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int *nh = snh[w];
	SU_WARP_FOR(ii, n) {
		int i = (int)ii, lo = aptr[i], len = aptr[i + 1] - lo;
		int runs = su_at_runs(lo, len, bs, acol, nh);
		if (runs >= 0) {
			int g = lane < runs ? of[acol[lo + nh[lane]] / bs] : -1;
			unsigned m = __match_any_sync(SU_FULL, g >= 0 ? (unsigned)g : 0x80000000u + lane);
			bool lead = g >= 0 && __ffs(m) - 1 == lane;
			unsigned heads = __ballot_sync(SU_FULL, lead);
			if (pass == 0) {
				if (lane == 0) cnt[i + 1] = (long long)__popc(heads) * k;
			} else {
				int at = 0;
				for (unsigned b = heads; b; b &= b - 1) at += __shfl_sync(SU_FULL, g, __ffs(b) - 1) < g;
				if (lead) {
					double y[SU_MAX_K] = {};
					for (unsigned b = m; b; b &= b - 1)
						for (int q = lo + nh[__ffs(b) - 1], e = lo + nh[__ffs(b)]; q < e; q++)
							su_at_add(y, aval[q], tval + tptr[acol[q]], k);
					su_at_put(i, at, g, k, y, omega, dinv, tptr, tcol, tval, cptr, ccol, cval);
				}
			}
			__syncwarp();
			continue;
		}
		su_at_keys r{len <= SU_AT_STAGE ? sks[w] : nullptr, scratch + lo, lo, bs, acol, of};
		r.sort(len);
		// Each lane's positions s = c·32 + lane, c counted up: a head's rank
		// is the heads before it; the unaggregated entries sort last.
		int u = 0;
		for (int c = 0; c * 32 < len; c++) {
			int s = c * 32 + lane;
			unsigned g = s < len ? r.agg(s) : SU_NONE;
			bool head = g != SU_NONE && (s == 0 || r.agg(s - 1) != g);
			unsigned hb = __ballot_sync(SU_FULL, head);
			if (head && pass == 1) {
				double y[SU_MAX_K] = {};
				for (int e = s; e < len && r.agg(e) == g; e++) {
					int q = lo + r.pos(e);
					su_at_add(y, aval[q], tval + tptr[acol[q]], k);
				}
				su_at_put(i, u + __popc(hb & ((1u << lane) - 1)), (int)g, k, y, omega, dinv, tptr, tcol, tval, cptr,
				          ccol, cval);
			}
			u += __popc(hb);
		}
		if (pass == 0 && lane == 0) cnt[i + 1] = (long long)u * k;
		__syncwarp();
	}
}

#undef SU_THREADS
#undef SU_SCAN_BLOCKS
#undef SU_MAX_BS
#undef SU_MAX_K
#undef SU_NONE
#undef SU_WARPS
#undef SU_FULL
#undef SU_AT_CAP
#undef SU_AT_STAGE
#undef SU_NB_CAP
#undef SU_NF_CAP
#undef SU_FOR
#undef SU_WARP_FOR
#undef MUL
#undef ADD
#undef SUB
#undef SU_LZ_START
#undef SU_LZ_SCALE
#undef SU_LZ_W
#undef SU_LZ_AXPY
#undef SU_LZ_DIV
