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
#define SU_AT_CAP 512 // entries of a row that su_at stages in shared memory
#define SU_NB_CAP 512 // neighbour entries of a node that su_strength stages

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

// su_distinct writes the distinct values of g[0, len) other than SU_NONE
// to d in ascending order and returns their number; g and d are the
// calling warp's (shared memory), len <= CAP. A value is counted at its
// first entry, and that entry's rank among the first entries places it:
// no sort, and runs of one value (a node's dofs, a row's block) cost one
// comparison each.
template <int CAP>
__device__ int su_distinct(const int *g, int len, int *d) {
	const int lane = threadIdx.x & 31;
	bool first[CAP / 32];
	int u = 0, rank[CAP / 32];
#pragma unroll
	for (int c = 0; c < CAP / 32; c++) first[c] = false;
#pragma unroll
	for (int c = 0; c < CAP / 32; c++) {
		if (c * 32 >= len) break;
		int q = c * 32 + lane;
		bool f = q < len && g[q] != SU_NONE && (q == 0 || g[q] != g[q - 1]);
		for (int p = 0; p < q && f; p++) f = g[p] != g[q];
		first[c] = f;
		u += __popc(__ballot_sync(SU_FULL, f));
		d[q] = f ? g[q] : SU_NONE;
	}
	__syncwarp();
#pragma unroll
	for (int c = 0; c < CAP / 32; c++) {
		rank[c] = 0;
		if (first[c]) {
			int x = g[c * 32 + lane];
			for (int p = 0; p < len; p++) rank[c] += d[p] < x;
		}
	}
	__syncwarp();
#pragma unroll
	for (int c = 0; c < CAP / 32; c++)
		if (first[c]) d[rank[c]] = g[c * 32 + lane];
	__syncwarp();
	return u;
}

// SU_WARP_FOR is the loop of a kernel that gives each item a warp,
// launched with 32 threads per item.
#define SU_WARP_FOR(i, n) \
	for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (n); i += ((long long)gridDim.x * blockDim.x) >> 5)

// su_block returns the norm of the block (u, v) of node rows u and
// whether the pattern has it; with norm false, only whether it has it.
__device__ __forceinline__ bool su_block(const int *ptr, const int *col, const double *val, int bs, int u, int v,
                                         su_norm2 &s, bool norm) {
	bool found = false;
	for (int i = u * bs; i < (u + 1) * bs; i++) {
		int e = ptr[i + 1];
		for (int k = su_lower(col, ptr[i], e, v * bs); k < e && col[k] < (v + 1) * bs; k++) {
			found = true;
			if (!norm) return true;
			su_add(s, val[k]);
		}
	}
	return found;
}

// su_node_diag sets dn[v], the norm of node v's diagonal block, and
// dir[v], whether its rows hold no nonzero off-diagonal entry. One warp
// per node (launched with 32 threads per node): the lanes look for an
// off-diagonal entry, lane 0 sums the block in the host's order.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_node_diag(int nodes, int bs, const int *ptr, const int *col, const double *val, double *dn,
                 unsigned char *dir) {
	const int lane = threadIdx.x & 31;
	SU_WARP_FOR(vv, nodes) {
		int v = (int)vv;
		bool off = false;
		for (int i = v * bs; i < (v + 1) * bs; i++)
			for (int k = ptr[i] + lane; k < ptr[i + 1]; k += 32) off = off || (col[k] != i && val[k] != 0);
		off = __any_sync(SU_FULL, off);
		if (lane == 0) {
			su_norm2 s = {0, 0};
			su_block(ptr, col, val, bs, v, v, s, true);
			dn[v] = su_value(s);
			dir[v] = !off;
		}
	}
}

// su_node_blocks is su_strength's node v by one thread, for a node whose
// neighbours do not fit the warp's shared memory: a merge of its rows
// (bs <= SU_MAX_BS, the rows' positions unrolled into registers); θ = 0
// keeps every coupling, and then no norm is computed, only the mirror
// looked up.
__device__ long long su_node_blocks(int v, int bs, const int *ptr, const int *col, const double *val, double theta,
                                    const double *dn, const unsigned char *dir, int *out, unsigned long long *err) {
	const bool norm = theta != 0;
	int p[SU_MAX_BS], e[SU_MAX_BS];
	long long w = 0;
#pragma unroll
	for (int r = 0; r < SU_MAX_BS; r++)
		if (r < bs) p[r] = ptr[v * bs + r], e[r] = ptr[v * bs + r + 1];
	for (;;) {
		int u = SU_NONE;
#pragma unroll
		for (int r = 0; r < SU_MAX_BS; r++)
			if (r < bs && p[r] < e[r]) u = min(u, col[p[r]] / bs);
		if (u == SU_NONE) break;
		su_norm2 s = {0, 0};
#pragma unroll
		for (int r = 0; r < SU_MAX_BS; r++)
			if (r < bs)
				for (; p[r] < e[r] && col[p[r]] / bs == u; p[r]++)
					if (norm) su_add(s, val[p[r]]);
		if (u == v || dir[u]) continue;
		su_norm2 t = {0, 0};
		if (!su_block(ptr, col, val, bs, u, v, t, norm)) {
			atomicMin(err, (unsigned long long)v);
			continue;
		}
		if (su_strong(su_value(s), theta, dn[v], dn[u]) || su_strong(su_value(t), theta, dn[u], dn[v])) {
			if (out) out[w] = u;
			w++;
		}
	}
	return w;
}

// su_strong_to is the strength test of v–u, u a neighbour node of v,
// when u is not v and not a Dirichlet node: either direction passes.
// A block (u, v) missing from the pattern sends v to err.
__device__ __forceinline__ bool su_strong_to(int v, int u, int bs, const int *ptr, const int *col, const double *val, double theta,
                                             const double *dn, const unsigned char *dir, unsigned long long *err) {
	if (u == v || dir[u]) return false;
	const bool norm = theta != 0;
	su_norm2 s = {0, 0}, t = {0, 0};
	if (norm) su_block(ptr, col, val, bs, v, u, s, true);
	if (!su_block(ptr, col, val, bs, u, v, t, norm)) {
		atomicMin(err, (unsigned long long)v);
		return false;
	}
	return su_strong(su_value(s), theta, dn[v], dn[u]) || su_strong(su_value(t), theta, dn[u], dn[v]);
}

// su_stage_nodes writes the nodes of node v's rows to g, each row's run
// of one node as one entry, and returns their number, or -1 past
// SU_NB_CAP.
__device__ int su_stage_nodes(int v, int bs, const int *ptr, const int *col, int *g) {
	const int lane = threadIdx.x & 31;
	int m = 0;
	for (int i = v * bs; i < (v + 1) * bs; i++)
		for (int q0 = ptr[i]; q0 < ptr[i + 1]; q0 += 32) {
			int q = q0 + lane;
			bool st = q < ptr[i + 1] && (q == ptr[i] || col[q] / bs != col[q - 1] / bs);
			unsigned b = __ballot_sync(SU_FULL, st);
			int at = m + __popc(b & ((1u << lane) - 1));
			if (st && at < SU_NB_CAP) g[at] = col[q] / bs;
			m += __popc(b);
			if (m > SU_NB_CAP) return -1;
		}
	__syncwarp();
	return m;
}

// su_window_distinct writes the distinct nodes of rows [r0, r1) of a
// block size bs to d, ascending, by a bitmap of the span of their
// columns in bm (the warp's, shared, SU_NB_CAP words), and returns their
// number, or -1 when the span or the count passes SU_NB_CAP.
__device__ int su_window_distinct(int r0, int r1, int bs, const int *ptr, const int *col, unsigned *bm, int *d) {
	const int lane = threadIdx.x & 31;
	int lo = SU_NONE, hi = -1;
	for (int i = r0 + lane; i < r1; i += 32)
		if (ptr[i] < ptr[i + 1]) lo = min(lo, col[ptr[i]] / bs), hi = max(hi, col[ptr[i + 1] - 1] / bs);
	lo = __reduce_min_sync(SU_FULL, lo);
	hi = __reduce_max_sync(SU_FULL, hi);
	if (hi < 0) return 0;
	int words = ((hi - lo) >> 5) + 1;
	if (words > SU_NB_CAP) return -1;
	for (int x = lane; x < words; x += 32) bm[x] = 0;
	__syncwarp();
	for (int i = r0; i < r1; i++)
		for (int q = ptr[i] + lane; q < ptr[i + 1]; q += 32) {
			int c = col[q] / bs - lo;
			atomicOr(bm + (c >> 5), 1u << (c & 31));
		}
	__syncwarp();
	int n = 0;
	for (int x0 = 0; x0 < words; x0 += 32) {
		unsigned b = x0 + lane < words ? bm[x0 + lane] : 0;
		int c = __popc(b), inc = c;
		for (int sh = 1; sh < 32; sh <<= 1) {
			int y = __shfl_up_sync(SU_FULL, inc, sh);
			if (lane >= sh) inc += y;
		}
		int at = n + inc - c;
		n += __shfl_sync(SU_FULL, inc, 31);
		if (n > SU_NB_CAP) return -1;
		for (; b; b &= b - 1) d[at++] = lo + ((x0 + lane) << 5) + __ffs(b) - 1;
	}
	__syncwarp();
	return n;
}

// su_strength counts (fill == 0: cnt[v+1]) or writes (fill: adj at
// off[v]) the strong neighbours of every node v: u–v is strong when
// either direction passes the test. The pattern must be structurally
// symmetric by nodes, as the union with the transpose is taken row by
// row; the smallest node whose block (u, v) lacks its mirror goes to
// err[0] (the host then builds the graph).
//
// One warp per node, launched with 32 threads per node; the lanes test
// one neighbour each and write the strong ones in order. With one dof
// per node the neighbours are the row's columns. Otherwise they are
// gathered in shared memory: each row's runs of one node staged as one
// entry, then sorted and made distinct (su_distinct); or, past SU_NB_CAP
// staged entries, marked in a bitmap of their span (su_window_distinct).
// A node that fits neither is lane 0's alone (su_node_blocks). The host
// keeps bs <= SU_MAX_BS.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_strength(int fill, int nodes, int bs, const int *ptr, const int *col, const double *val, double theta,
                const double *dn, const unsigned char *dir, long long *cnt, const long long *off, int *adj,
                unsigned long long *err) {
	__shared__ int sg[SU_WARPS][SU_NB_CAP]; // neighbour nodes as staged, or their bitmap
	__shared__ int sd[SU_WARPS][SU_NB_CAP]; // the distinct ones, ascending
	const int lane = threadIdx.x & 31;
	int *g = sg[threadIdx.x >> 5], *d = sd[threadIdx.x >> 5];
	SU_WARP_FOR(vv, nodes) {
		int v = (int)vv;
		if (dir[v]) {
			if (!fill && lane == 0) cnt[v + 1] = 0;
			continue;
		}
		const int *nb = col + ptr[v];
		int u = ptr[v + 1] - ptr[v];
		if (bs > 1) {
			nb = d;
			u = su_stage_nodes(v, bs, ptr, col, g);
			u = u >= 0 ? su_distinct<SU_NB_CAP>(g, u, d) : su_window_distinct(v * bs, (v + 1) * bs, bs, ptr, col, (unsigned *)g, d);
		}
		long long w = 0;
		if (u < 0) {
			if (lane == 0) w = su_node_blocks(v, bs, ptr, col, val, theta, dn, dir, fill ? adj + off[v] : 0, err);
		} else {
			for (int t0 = 0; t0 < u; t0 += 32) {
				int t = t0 + lane, x = t < u ? nb[t] : v;
				bool strong = t < u && su_strong_to(v, x, bs, ptr, col, val, theta, dn, dir, err);
				unsigned b = __ballot_sync(SU_FULL, strong);
				if (strong && fill) adj[off[v] + w + __popc(b & ((1u << lane) - 1))] = x;
				w += __popc(b);
			}
		}
		__syncwarp();
		if (!fill && lane == 0) cnt[v + 1] = w;
	}
}

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
// mm[0], mm[1] (set to n·max and 0 before).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_degrees(int n, const long long *off, unsigned long long *mm) {
	unsigned long long lo = ~0ull, hi = 0;
	SU_FOR(v, n) {
		unsigned long long d = (unsigned long long)(off[v + 1] - off[v]);
		lo = min(lo, d);
		hi = max(hi, d);
	}
	atomicMin(&mm[0], lo);
	atomicMax(&mm[1], hi);
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

// su_at_long is su_at's row i for a row longer than SU_AT_CAP, by one
// thread on scratch (nnz(A) ints at the row's offset): its aggregates
// sorted and made distinct in place, then each entry added at its
// aggregate's columns in A's row order.
__device__ void su_at_long(int pass, int i, int bs, int k, const int *aptr, const int *acol, const double *aval, const int *of,
                           const int *tptr, const double *tval, int *scratch, long long *cnt, const int *cptr, int *ccol,
                           double *cval) {
	int lo = aptr[i], len = aptr[i + 1] - lo;
	int *seg = scratch + lo;
	for (int q = 0; q < len; q++) {
		int g = of[acol[lo + q] / bs];
		seg[q] = g < 0 ? SU_NONE : g;
	}
	su_isort(seg, len);
	int u = 0;
	for (int q = 0; q < len && seg[q] != SU_NONE; q++)
		if (u == 0 || seg[u - 1] != seg[q]) seg[u++] = seg[q];
	if (pass == 0) {
		cnt[i + 1] = (long long)u * k;
		return;
	}
	int o = cptr[i];
	for (int q = 0; q < u; q++)
		for (int j = 0; j < k; j++) {
			ccol[o + q * k + j] = seg[q] * k + j;
			cval[o + q * k + j] = 0;
		}
	for (int q = lo; q < lo + len; q++) {
		int c = acol[q], g = of[c / bs];
		if (g < 0) continue;
		int at = su_lower(seg, 0, u, g);
		double x = aval[q];
		const double *t = tval + tptr[c];
		double *y = cval + o + at * k;
		for (int j = 0; j < k; j++) y[j] = ADD(y[j], MUL(x, t[j]));
	}
}

// su_at computes C = A·T for a tentative prolongator T, whose row of an
// aggregated node v holds the k columns of its aggregate of[v]·k + j.
// Row i of C has the aggregates of its neighbours' nodes, sorted, k
// columns each. Pass 0 sets cnt[i+1] to the row's length; pass 1 writes
// it at cptr[i] and sums a_ij·T_j in the row order of A, from 0.
//
// One warp per row, launched with 32 threads per row. A row of at most
// SU_AT_CAP entries is staged in shared memory, its distinct aggregates
// sorted there (su_distinct); then each lane owns an aggregate's k
// columns and adds the row's entries of that aggregate in order, so that
// every sum runs in the host's order with no exchange between lanes.
// Longer rows are lane 0's (su_at_long), on scratch.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_at(int pass, int n, int bs, int k, const int *aptr, const int *acol, const double *aval, const int *of,
          const int *tptr, const double *tval, int *scratch, long long *cnt, const int *cptr, int *ccol,
          double *cval) {
	__shared__ int sg[SU_WARPS][SU_AT_CAP]; // the aggregate of each entry (SU_NONE: none)
	__shared__ int sd[SU_WARPS][SU_AT_CAP]; // the distinct aggregates, ascending
	const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int *g = sg[w], *d = sd[w];
	SU_WARP_FOR(ii, n) {
		int i = (int)ii, lo = aptr[i], len = aptr[i + 1] - lo;
		if (len > SU_AT_CAP) {
			if (lane == 0) su_at_long(pass, i, bs, k, aptr, acol, aval, of, tptr, tval, scratch, cnt, cptr, ccol, cval);
			__syncwarp();
			continue;
		}
		for (int q = lane; q < len; q += 32) {
			int a = of[acol[lo + q] / bs];
			g[q] = a < 0 ? SU_NONE : a;
		}
		__syncwarp();
		int u = su_distinct<SU_AT_CAP>(g, len, d);
		if (pass == 0) {
			if (lane == 0) cnt[i + 1] = (long long)u * k;
			continue;
		}
		int o = cptr[i];
		for (int at = lane; at < u; at += 32) {
			int x = d[at];
			double y[SU_MAX_K];
#pragma unroll
			for (int j = 0; j < SU_MAX_K; j++) y[j] = 0;
			for (int q = 0; q < len; q++) {
				if (g[q] != x) continue;
				double a = aval[lo + q];
				const double *t = tval + tptr[acol[lo + q]];
#pragma unroll
				for (int j = 0; j < SU_MAX_K; j++)
					if (j < k) y[j] = ADD(y[j], MUL(a, t[j]));
			}
#pragma unroll
			for (int j = 0; j < SU_MAX_K; j++)
				if (j < k) ccol[o + at * k + j] = x * k + j, cval[o + at * k + j] = y[j];
		}
		__syncwarp();
	}
}

// su_smooth sets p = t − ω·D⁻¹·(a·t) on the pattern of at (smoothProlongator);
// pval may be atval.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_smooth(int n, double omega, const double *dinv, const int *tptr, const int *tcol, const double *tval,
              const int *atptr, const int *atcol, const double *atval, double *pval) {
	SU_FOR(ii, n) {
		int i = (int)ii;
		double s = -omega * dinv[i];
		int tk = tptr[i], te = tptr[i + 1];
		for (int q = atptr[i]; q < atptr[i + 1]; q++) {
			double v = MUL(s, atval[q]);
			if (tk < te && tcol[tk] == atcol[q]) {
				v = ADD(v, tval[tk]);
				tk++;
			}
			pval[q] = v;
		}
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
#undef SU_NB_CAP
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
