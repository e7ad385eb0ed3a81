// The strength graph of setup.cu (included there, after the definitions
// it uses): su_distinct (a warp's sorted distinct values), su_nb_count,
// su_nb_fill, su_strength, su_node_diag1, su_strength1 and their
// helpers. Host models: modelNodeBlocks, modelStrength and modelDistinct
// in amg/gpu_setup_strength_model_test.go.

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

// The strength graph of a matrix of bs >= 2 dofs per node goes through
// its node blocks: su_nb_count counts the distinct nodes of every node's
// rows, su_nb_fill lists them ascending with the norm of each block (the
// node's own rows only, read once and coalesced), su_strength tests
// every block against its mirror's norm, found in the mirror node's
// short list. A test thus reads a few words where it used to search the
// rows of both nodes.

// su_block returns the norm of the block (u, v) of node rows u and
// whether the pattern has it.
__device__ __forceinline__ bool su_block(const int *ptr, const int *col, const double *val, int bs, int u, int v,
                                         su_norm2 &s) {
	bool found = false;
	for (int i = u * bs; i < (u + 1) * bs; i++) {
		int e = ptr[i + 1];
		for (int k = su_lower(col, ptr[i], e, v * bs); k < e && col[k] < (v + 1) * bs; k++) {
			found = true;
			su_add(s, val[k]);
		}
	}
	return found;
}

// su_stage_runs writes the runs of node v's rows (a row's entries of one
// node) to g, their node, and with qs to qs, their first entry, with
// qs[m] the end of the node's entries: run p is [qs[p], qs[p+1]), as the
// runs tile the rows. It returns their number m, or -1 past CAP, and in
// per the runs of each row where all rows have as many (else -1).
template <int CAP>
__device__ int su_stage_runs(int v, int bs, const int *ptr, const int *col, int *g, int *qs, int &per) {
	const int lane = threadIdx.x & 31;
	int m = 0;
	per = -1;
	for (int i = v * bs; i < (v + 1) * bs; i++) {
		int b0 = ptr[i], e = ptr[i + 1], m0 = m;
		for (int q0 = b0; q0 < e; q0 += 32) {
			int q = q0 + lane, c = q < e ? col[q] / bs : 0;
			bool st = q < e && (q == b0 || c != col[q - 1] / bs);
			unsigned b = __ballot_sync(SU_FULL, st);
			int at = m + __popc(b & ((1u << lane) - 1));
			if (st && at < CAP) {
				g[at] = c;
				if (qs) qs[at] = q;
			}
			m += __popc(b);
			if (m > CAP) {
				__syncwarp(); // the staged runs before the bitmap that reuses g
				per = -1;
				return -1;
			}
		}
		per = i == v * bs ? m : per == m - m0 ? per : -2;
	}
	per = per < 0 ? -1 : per;
	if (qs && lane == 0) qs[m] = ptr[(v + 1) * bs];
	__syncwarp();
	return m;
}

// su_rows_alike tells whether the m staged runs of a node's rows, per
// in each row, name the same nodes in every row: the distinct nodes are
// then the first row's, ascending, and node t's runs are t + r·per.
__device__ bool su_rows_alike(const int *g, int m, int per) {
	const int lane = threadIdx.x & 31;
	bool same = per >= 0;
	for (int p = per + lane; p < m && same; p += 32) same = g[p] == g[p - per];
	return __all_sync(SU_FULL, same);
}

// su_count_distinct returns the number of distinct values of the warp's
// g[0, len): the entries with no equal one before them.
__device__ int su_count_distinct(const int *g, int len) {
	const int lane = threadIdx.x & 31;
	int u = 0;
	for (int q0 = 0; q0 < len; q0 += 32) {
		int q = q0 + lane, p = q - 1;
		if (q < len)
			for (; p >= 0; p--)
				if (g[p] == g[q]) break;
		u += __popc(__ballot_sync(SU_FULL, q < len && p < 0));
	}
	return u;
}

// su_window_distinct writes the distinct nodes of rows [r0, r1) of a
// block size bs to d, ascending, by a bitmap of the span of their
// columns in bm (the warp's, shared, CAP words), and returns their
// number, or -1 when the span or the count passes CAP.
template <int CAP>
__device__ int su_window_distinct(int r0, int r1, int bs, const int *ptr, const int *col, unsigned *bm, int *d) {
	const int lane = threadIdx.x & 31;
	int lo = SU_NONE, hi = -1;
	for (int i = r0 + lane; i < r1; i += 32)
		if (ptr[i] < ptr[i + 1]) lo = min(lo, col[ptr[i]] / bs), hi = max(hi, col[ptr[i + 1] - 1] / bs);
	lo = __reduce_min_sync(SU_FULL, lo);
	hi = __reduce_max_sync(SU_FULL, hi);
	if (hi < 0) return 0;
	int words = ((hi - lo) >> 5) + 1;
	if (words > CAP) return -1;
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
		if (n > CAP) return -1;
		if (d)
			for (; b; b &= b - 1) d[at++] = lo + ((x0 + lane) << 5) + __ffs(b) - 1;
	}
	__syncwarp();
	return n;
}

// su_node_merge is one thread's listing of node v's blocks, for a node
// whose runs or span pass the warp's shared memory: a merge of its rows
// (bs <= SU_MAX_BS, their positions unrolled into registers), each block
// summed in row order. With ncol (else only counted) it writes the nodes
// and norms from there, and sets dn[v].
__device__ int su_node_merge(int v, int bs, const int *ptr, const int *col, const double *val, int *ncol, double *bnorm,
                             double *dn) {
	int p[SU_MAX_BS], e[SU_MAX_BS], w = 0;
	double self = 0;
#pragma unroll
	for (int r = 0; r < SU_MAX_BS; r++)
		if (r < bs) p[r] = ptr[v * bs + r], e[r] = ptr[v * bs + r + 1];
	for (;; w++) {
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
					if (ncol) su_add(s, val[p[r]]);
		if (!ncol) continue;
		ncol[w] = u;
		bnorm[w] = su_value(s);
		if (u == v) self = bnorm[w];
	}
	if (ncol) dn[v] = self;
	return w;
}

// su_nb_count sets cnt[v+1] to the number of distinct nodes of node v's
// rows, for su_nb_fill's offsets. One warp per node (launched with 32
// threads per node): the rows' runs staged in shared memory, the first
// row's where all rows name the same nodes, else counted by their first
// entries; past SU_NB_CAP runs, a bitmap of their span; past that, lane
// 0's merge.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_nb_count(int nodes, int bs, const int *ptr, const int *col, long long *cnt) {
	__shared__ int sg[SU_WARPS][SU_NB_CAP]; // the runs' nodes, or their bitmap
	const int lane = threadIdx.x & 31;
	int *g = sg[threadIdx.x >> 5];
	SU_WARP_FOR(vv, nodes) {
		int v = (int)vv;
		int per, u = su_stage_runs<SU_NB_CAP>(v, bs, ptr, col, g, nullptr, per);
		if (u < 0)
			u = su_window_distinct<SU_NB_CAP>(v * bs, (v + 1) * bs, bs, ptr, col, (unsigned *)g, nullptr);
		else
			u = su_rows_alike(g, u, per) ? per : su_count_distinct(g, u);
		if (lane == 0) cnt[v + 1] = u >= 0 ? u : su_node_merge(v, bs, ptr, col, nullptr, nullptr, nullptr, nullptr);
		__syncwarp();
	}
}

// su_nb_fill lists node v's blocks from noff[v] (the scan of
// su_nb_count's counts): ncol their nodes, ascending, bnorm their norms,
// each summed over the block's entries in row order (the host's order),
// and sets dn[v], the norm of its diagonal block (0 where it has none),
// and dir[v], whether its rows hold no nonzero off-diagonal entry. One
// warp per node: up to SU_NF_CAP runs are staged with their first
// entries, and each lane sums its node's runs: every row's at the same
// place where the rows name the same nodes, else listed by su_distinct;
// past that, the
// span's bitmap lists the nodes and each lane searches the rows for its
// block; past that too, lane 0 merges the rows.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_nb_fill(int nodes, int bs, const int *ptr, const int *col, const double *val, const long long *noff,
               int *ncol, double *bnorm, double *dn, unsigned char *dir) {
	__shared__ int sg[SU_WARPS][SU_NF_CAP + 1]; // the runs' nodes, or the span's bitmap
	__shared__ int sq[SU_WARPS][SU_NF_CAP + 1]; // the runs' first entries, then the end
	__shared__ int sd[SU_WARPS][SU_NF_CAP];     // the distinct nodes, ascending
	__shared__ int sf[SU_WARPS][SU_NF_CAP];     // the first run of each
	__shared__ int sn[SU_WARPS][SU_NF_CAP];     // the next run of the same node
	const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int *g = sg[w], *qs = sq[w], *d = sd[w], *f = sf[w], *nx = sn[w];
	SU_WARP_FOR(vv, nodes) {
		int v = (int)vv;
		bool off = false;
		for (int i = v * bs; i < (v + 1) * bs; i++)
			for (int k = ptr[i] + lane; k < ptr[i + 1]; k += 32) off = off || (col[k] != i && val[k] != 0);
		off = __any_sync(SU_FULL, off);
		if (lane == 0) dir[v] = !off;
		long long o = noff[v];
		int per, m = su_stage_runs<SU_NF_CAP>(v, bs, ptr, col, g, qs, per), u;
		bool alike = m >= 0 && su_rows_alike(g, m, per);
		if (alike)
			u = per;
		else if (m >= 0)
			u = su_distinct<SU_NF_CAP>(g, m, d, f, nx);
		else
			u = su_window_distinct<SU_NF_CAP>(v * bs, (v + 1) * bs, bs, ptr, col, (unsigned *)g, d);
		if (u < 0) {
			if (lane == 0) su_node_merge(v, bs, ptr, col, val, ncol + o, bnorm + o, dn);
			__syncwarp();
			continue;
		}
		bool self = false;
		for (int t = lane; t < u; t += 32) {
			su_norm2 s = {0, 0};
			int x = alike ? g[t] : d[t];
			if (alike) {
				for (int p = t; p < m; p += per)
					for (int q = qs[p]; q < qs[p + 1]; q++) su_add(s, val[q]);
			} else if (m >= 0) {
				for (int p = f[t]; p >= 0; p = nx[p])
					for (int q = qs[p]; q < qs[p + 1]; q++) su_add(s, val[q]);
			} else {
				su_block(ptr, col, val, bs, v, x, s);
			}
			ncol[o + t] = x;
			bnorm[o + t] = su_value(s);
			if (x == v) dn[v] = bnorm[o + t], self = true;
		}
		if (!__any_sync(SU_FULL, self) && lane == 0) dn[v] = 0;
		__syncwarp();
	}
}

// su_strength flags (fill == 0: flag[k], and cnt[v+1] the count) or
// writes (fill: the flagged ones' nodes into adj at off[v]) the strong
// neighbours of every node v, from su_nb_fill's lists: u–v is strong when
// either direction passes the test, the block (v, u) against its own
// norm or the block (u, v) against its mirror's. The pattern must be
// structurally symmetric by nodes, as the union with the transpose is
// taken row by row; the smallest node whose block (u, v) lacks its
// mirror goes to err[0] (the host then builds the graph). One warp per
// node, a lane per block, the strong ones placed in order by a ballot.
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_strength(int fill, int nodes, const long long *noff, const int *ncol, const double *bnorm, double theta,
                const double *dn, const unsigned char *dir, unsigned char *flag, long long *cnt, const long long *off,
                int *adj, unsigned long long *err) {
	const int lane = threadIdx.x & 31;
	SU_WARP_FOR(vv, nodes) {
		int v = (int)vv;
		if (dir[v]) {
			if (!fill && lane == 0) cnt[v + 1] = 0;
			continue;
		}
		long long lo = noff[v], hi = noff[v + 1], w = fill ? off[v] : 0;
		for (long long k0 = lo; k0 < hi; k0 += 32) {
			long long k = k0 + lane;
			bool strong = false;
			int u = k < hi ? ncol[k] : v;
			if (fill) {
				strong = k < hi && flag[k];
			} else if (u != v && !dir[u]) {
				long long ul = noff[u], uh = noff[u + 1];
				while (ul < uh) {
					long long mid = ul + (uh - ul) / 2;
					if (ncol[mid] < v)
						ul = mid + 1;
					else
						uh = mid;
				}
				if (ul == noff[u + 1] || ncol[ul] != v)
					atomicMin(err, (unsigned long long)v);
				else
					strong = su_strong(bnorm[k], theta, dn[v], dn[u]) || su_strong(bnorm[ul], theta, dn[u], dn[v]);
			}
			unsigned b = __ballot_sync(SU_FULL, strong);
			if (fill && strong) adj[w + __popc(b & ((1u << lane) - 1))] = u;
			if (!fill && k < hi) flag[k] = strong;
			w += __popc(b);
		}
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
