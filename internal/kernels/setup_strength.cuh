// The strength graph of setup.cu (included there, after the definitions
// it uses): su_distinct (a warp's sorted distinct values), su_node_diag,
// su_node_blocks, su_strength, su_node_diag1, su_strength1 and their
// helpers. Host models:
// modelNodeDiag, modelStrength and modelDistinct in
// amg/gpu_setup_strength_model_test.go.

// su_distinct writes the distinct values of g[0, len) other than SU_NONE
// to d in ascending order and returns their number; g and d are the
// calling warp's (shared memory), len <= CAP. A value is counted at its
// first entry, and that entry's rank among the first entries places it:
// no sort, and runs of one value (a node's dofs, a row's block) cost one
// comparison each. With f and nx (else null), f[r] is the first entry of
// d[r] and nx[q] the next entry after q with g[q]'s value (-1 after the
// last): a list of each value's entries in order.
template <int CAP>
__device__ int su_distinct(const int *g, int len, int *d, int *f, int *nx) {
	const int lane = threadIdx.x & 31;
	bool first[CAP / 32];
	int u = 0, rank[CAP / 32];
	if (nx) {
		for (int q = lane; q < len; q += 32) nx[q] = -1;
		__syncwarp();
	}
#pragma unroll
	for (int c = 0; c < CAP / 32; c++) first[c] = false;
#pragma unroll
	for (int c = 0; c < CAP / 32; c++) {
		if (c * 32 >= len) break;
		int q = c * 32 + lane, p = q - 1;
		bool in = q < len && g[q] != SU_NONE;
		if (in)
			for (; p >= 0; p--)
				if (g[p] == g[q]) break;
		first[c] = in && p < 0;
		if (in && p >= 0 && nx) nx[p] = q;
		u += __popc(__ballot_sync(SU_FULL, first[c]));
		d[q] = first[c] ? g[q] : SU_NONE;
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
		if (first[c]) {
			d[rank[c]] = g[c * 32 + lane];
			if (f) f[rank[c]] = c * 32 + lane;
		}
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
// For 2 <= bs <= SU_MAX_BS (one dof per node is su_strength1's): one warp
// per node, launched with 32 threads per node; the lanes test one
// neighbour each and write the strong ones in order. The neighbours are
// gathered in shared memory: each row's runs of one node staged as one
// entry, then sorted and made distinct (su_distinct); or, past SU_NB_CAP
// staged entries, marked in a bitmap of their span (su_window_distinct).
// A node that fits neither is lane 0's alone (su_node_blocks).
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
		int u = su_stage_nodes(v, bs, ptr, col, g);
		u = u >= 0 ? su_distinct<SU_NB_CAP>(g, u, d, nullptr, nullptr) : su_window_distinct(v * bs, (v + 1) * bs, bs, ptr, col, (unsigned *)g, d);
		long long w = 0;
		if (u < 0) {
			if (lane == 0) w = su_node_blocks(v, bs, ptr, col, val, theta, dn, dir, fill ? adj + off[v] : 0, err);
		} else {
			for (int t0 = 0; t0 < u; t0 += 32) {
				int t = t0 + lane, x = t < u ? d[t] : v;
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

// su_node_diag1 and su_strength1 are su_node_diag and su_strength for one
// dof per node: a thread per row, whose short rows leave a warp per row
// mostly idle.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_node_diag1(int n, const int *ptr, const int *col, const double *val, double *dn, unsigned char *dir) {
	SU_FOR(v, n) {
		su_norm2 s = {0, 0};
		bool off = false;
		for (int k = ptr[v]; k < ptr[v + 1]; k++) {
			if (col[k] == v) su_add(s, val[k]);
			off = off || (col[k] != v && val[k] != 0);
		}
		dn[v] = su_value(s);
		dir[v] = !off;
	}
}

extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_strength1(int fill, int n, const int *ptr, const int *col, const double *val, double theta, const double *dn,
                 const unsigned char *dir, long long *cnt, const long long *off, int *adj, unsigned long long *err) {
	SU_FOR(vv, n) {
		int v = (int)vv;
		long long w = 0;
		for (int k = ptr[v]; k < ptr[v + 1] && !dir[v]; k++) {
			int u = col[k];
			if (u == v || dir[u]) continue;
			int q = su_lower(col, ptr[u], ptr[u + 1], v);
			if (q == ptr[u + 1] || col[q] != v) {
				atomicMin(err, (unsigned long long)v);
				continue;
			}
			if (su_strong(fabs(val[k]), theta, dn[v], dn[u]) || su_strong(fabs(val[q]), theta, dn[u], dn[v])) {
				if (fill) adj[off[v] + w] = u;
				w++;
			}
		}
		if (!fill) cnt[v + 1] = w;
	}
}
