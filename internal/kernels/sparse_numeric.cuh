// The numeric pass of the SpGEMM of sparse.cu (included there, after
// the definitions it uses): sp_numeric_g*, sp_numeric_g*r (a warp per
// chunk of rows of one pattern) and sp_numeric_blk (a block per chunk).
// Host models: modelNumeric in internal/gpusparse/model_test.go.

// sp_add_rows adds a[t]·b to v[t·n] for the gt rows of a pass: all loads
// before all stores, as the rows' slots are distinct.
template <int GM>
__device__ __forceinline__ void sp_add_rows(double *v, int n, int gt, const double *a, double b) {
	double s[GM];
#pragma unroll
	for (int t = 0; t < GM; t++)
		if (t < gt) s[t] = v[t * n];
#pragma unroll
	for (int t = 0; t < GM; t++)
		if (t < gt) v[t * n] = __dadd_rn(s[t], __dmul_rn(a[t], b));
}

// sp_numeric sets the values of C = A·B on its pattern for the chunks
// that sp_plan listed for it in wlist (kind[i] = g > 0: rows i..i+g-1,
// one pattern), G lanes per chunk: for each k of A's row in order, the lanes add
// a_(i+t)k·b_kj for the (distinct) columns j of B's row k into distinct
// slots, so each entry gets its products in A's row order; the rows of
// the chunk share the search of each column. The chunk's rows are
// consecutive in A and in C and equally long, so row i+t of A starts
// t·alen after row i and the chunk's values are cval[cs : cs+g·n]. A warp
// holds 32/G chunks, each with SP_LIMIT·G/32 pattern slots (beyond, the
// pattern is searched in ccol) and ACAP = WACC·G/32 accumulators, at
// least one row's (sp_plan): a chunk runs in passes of min(GM, ACAP/n)
// rows. G is picked by the host from B's mean row length.
template <int G, int GM>
__device__ __forceinline__ void sp_numeric_rows(int nw, const int *wlist, const int *kind, const int *aptr, const int *acol, const double *aval, const int *bptr,
                                                const int *bcol, const double *bval, const int *cptr, const int *ccol, double *cval, double init) {
	constexpr int WACC = GM == 1 ? SP_WACC / 2 : SP_WACC, R = 32 / G, PCAP = SP_LIMIT / R, ACAP = WACC / R;
	__shared__ int pat[SP_WARPS][SP_LIMIT];
	__shared__ double acc[SP_WARPS][WACC];
	__shared__ double sa[SP_WARPS][GM][32]; // the values of A's next G entries in the pass's rows
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31, grp = lane / G, gl = lane % G;
	unsigned mask = G == 32 ? SP_FULL : ((1u << G) - 1) << (grp * G);
	int *mypat = pat[w] + grp * PCAP;
	double *myacc = acc[w] + grp * ACAP;
	for (int l = (blockIdx.x * SP_WARPS + w) * R + grp; l < nw; l += gridDim.x * SP_WARPS * R) {
		int i = wlist[l], g = kind[i];
		int cs = cptr[i], n = cptr[i + 1] - cs;
		const int *p = ccol + cs;
		if (n <= PCAP) {
			for (int x = gl; x < n; x += G) mypat[x] = p[x];
			p = mypat;
		}
		int gp = min(min(g, GM), ACAP / max(n, 1));
		int as = aptr[i], alen = aptr[i + 1] - as;
		for (int t0 = 0; t0 < g; t0 += gp) {
			int gt = min(gp, g - t0);
			double *v = myacc;
			for (int x = gl; x < gt * n; x += G) v[x] = init;
			__syncwarp(mask);
			for (int q0 = 0; q0 < alen; q0 += G) {
				// A's next G entries, their rows of B and their values,
				// one per lane.
				int mybs = 0, mybe = 0;
				if (q0 + gl < alen) {
					int k = acol[as + q0 + gl];
					mybs = bptr[k];
					mybe = bptr[k + 1];
#pragma unroll
					for (int t = 0; t < GM; t++)
						if (t < gt) sa[w][t][lane] = aval[as + (size_t)(t0 + t) * alen + q0 + gl];
				}
				__syncwarp(mask);
				// Each lane's first product of the next k and its slot are
				// fetched while the current k is added (software pipeline).
				int m = min(G, alen - q0);
				int nbs = __shfl_sync(mask, mybs, 0, G), nbe = __shfl_sync(mask, mybe, 0, G);
				int nx = 0;
				double nb = 0;
				if (nbs + gl < nbe) nx = sp_bsearch(p, n, bcol[nbs + gl]), nb = bval[nbs + gl];
				for (int u = 0; u < m; u++) {
					double a[GM];
#pragma unroll
					for (int t = 0; t < GM; t++)
						if (t < gt) a[t] = sa[w][t][grp * G + u];
					double b = nb;
					int bs = nbs, be = nbe, x = nx;
					if (u + 1 < m) {
						nbs = __shfl_sync(mask, mybs, u + 1, G), nbe = __shfl_sync(mask, mybe, u + 1, G);
						if (nbs + gl < nbe) nx = sp_bsearch(p, n, bcol[nbs + gl]), nb = bval[nbs + gl];
					}
					for (int r = bs + gl; r < be; r += G) {
						if (r != bs + gl) x = sp_bsearch(p, n, bcol[r]), b = bval[r];
						sp_add_rows<GM>(v + x, n, gt, a, b);
					}
					__syncwarp(mask);
				}
			}
			for (int x = gl; x < gt * n; x += G) cval[cs + (size_t)t0 * n + x] = v[x];
			__syncwarp(mask);
		}
	}
}

// sp_numeric_g<G> takes one row at a time (products of A without runs),
// sp_numeric_g<G>r up to SP_WROWS (fewer registers than SP_GMAX).
#define SP_NUMERIC(G, GM, NAME)                                                                                                         \
	extern "C" __global__ void __launch_bounds__(SP_THREADS, GM == 1 ? 6 : 4)                                                          \
	    NAME(int nw, const int *wlist, const int *kind, const int *aptr, const int *acol, const double *aval, const int *bptr, const int *bcol,         \
	         const double *bval, const int *cptr, const int *ccol, double *cval, double init) {                                           \
		sp_numeric_rows<G, GM>(nw, wlist, kind, aptr, acol, aval, bptr, bcol, bval, cptr, ccol, cval, init);                                 \
	}
SP_NUMERIC(4, 1, sp_numeric_g4)
SP_NUMERIC(8, 1, sp_numeric_g8)
SP_NUMERIC(16, 1, sp_numeric_g16)
SP_NUMERIC(32, 1, sp_numeric_g32)
SP_NUMERIC(4, SP_WROWS, sp_numeric_g4r)
SP_NUMERIC(8, SP_WROWS, sp_numeric_g8r)
SP_NUMERIC(16, SP_WROWS, sp_numeric_g16r)
SP_NUMERIC(32, SP_WROWS, sp_numeric_g32r)

// sp_blk_batch is warp 0's part of the next batch of sp_numeric_blk: the
// k's of A's row from st[0] on (its B row from entry st[1]) whose
// products fit SP_BSTAGE, at most SP_BK, or the first SP_BSTAGE products
// of one k that alone does not fit. It sets kofs[0:nk+1] (where each k's
// products start in the stage), kbs (where they start in B), sa (the
// pass's values of A), st[2] = nk, and advances st[0:2].
__device__ void sp_blk_batch(int *st, int alen, int as, int t0, int gt, const int *acol, const double *aval, const int *bptr, int *kofs, int *kbs,
                             double (*sa)[SP_BK]) {
	int lane = threadIdx.x & 31, o0 = st[0], r0 = st[1];
	int len = 0, bs = 0;
	if (o0 + lane < alen) {
		int k = acol[as + o0 + lane];
		bs = bptr[k] + (lane == 0 ? r0 : 0);
		len = bptr[k + 1] - bs;
#pragma unroll
		for (int t = 0; t < SP_GMAX; t++)
			if (t < gt) sa[t][lane] = aval[as + (size_t)(t0 + t) * alen + o0 + lane];
	}
	int incl = len;
#pragma unroll
	for (int d = 1; d < 32; d <<= 1) {
		int y = __shfl_up_sync(SP_FULL, incl, d);
		if (lane >= d) incl += y;
	}
	int nk = __popc(__ballot_sync(SP_FULL, o0 + lane < alen && incl <= SP_BSTAGE));
	int part = nk == 0 ? SP_BSTAGE : 0;
	nk = max(nk, 1);
	int end = __shfl_sync(SP_FULL, incl, nk - 1);
	if (lane < nk) kofs[lane] = incl - len, kbs[lane] = bs;
	__syncwarp();
	if (lane == 0) {
		kofs[nk] = part ? part : end;
		st[0] = part ? o0 : o0 + nk;
		st[1] = part ? r0 + part : 0;
		st[2] = nk;
	}
}

// sp_owner is the warp of sp_numeric_blk that owns slot x of a row of n:
// warp w owns [n·w/8, n·(w+1)/8).
__device__ __forceinline__ int sp_owner(int x, int n) { return min(SP_WARPS - 1, (int)(((long long)SP_WARPS * (x + 1) + n - 1) / n) - 1); }

// sp_kof is the k of the batch whose products hold stage entry e.
__device__ __forceinline__ int sp_kof(const int *kofs, int nk, int e) {
	int lo = 0, hi = nk - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) >> 1;
		if (kofs[mid] <= e) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

// sp_stage puts the slot in p (n columns) and the value of B of each of
// the batch's tot products into sx and sb: four products a thread at a
// time, their loads issued together and their searches interleaved.
__device__ __forceinline__ void sp_stage(const int *p, int n, int nk, int tot, const int *kofs, const int *kbs, const int *bcol, const double *bval,
                                         int *sx, double *sb) {
	int top = 1 << (31 - __clz(n));
	for (int e0 = threadIdx.x; e0 < tot; e0 += 4 * SP_THREADS) {
		int c[4], pos[4];
		double b[4];
#pragma unroll
		for (int h = 0; h < 4; h++) {
			int e = e0 + h * SP_THREADS;
			c[h] = 0, b[h] = 0, pos[h] = 0;
			if (e < tot) {
				int j = sp_kof(kofs, nk, e), r = kbs[j] + e - kofs[j];
				c[h] = bcol[r], b[h] = bval[r];
			}
		}
		// The last position whose column is at most c: c's, as p holds it.
		for (int st = top; st > 0; st >>= 1)
#pragma unroll
			for (int h = 0; h < 4; h++)
				if (pos[h] + st < n && p[pos[h] + st] <= c[h]) pos[h] += st;
#pragma unroll
		for (int h = 0; h < 4; h++) {
			int e = e0 + h * SP_THREADS;
			if (e < tot) sx[e] = pos[h], sb[e] = b[h];
		}
	}
}

// sp_numeric_blk sets the values of the chunks listed in list (kind[i] =
// -g: rows i..i+g-1, one pattern of n columns), a block per chunk: the
// long rows, and the rows of products with few chunks, which a warp each
// would leave the GPU idle. It walks A's row in batches of k's: the
// block stages the products' slots (searched by all threads at once) and
// the values of B, then warp w adds those in its slots [n·w/8,
// n·(w+1)/8), k after k, so every entry still gets its products in A's
// row order. The accumulators of SP_BACC/n rows at a time are in shared
// memory (the chunk in passes of that many rows); rows over SP_BACC
// columns accumulate in cval itself, all g rows in one pass.
extern "C" __global__ void __launch_bounds__(SP_THREADS, 4)
sp_numeric_blk(const int *list, int nlist, const int *kind, const int *aptr, const int *acol, const double *aval, const int *bptr, const int *bcol,
               const double *bval, const int *cptr, const int *ccol, double *cval, double init) {
	__shared__ int pat[SP_BPAT];
	__shared__ double acc[SP_BACC];
	__shared__ int sx[SP_BSTAGE];
	__shared__ double sb[SP_BSTAGE];
	__shared__ double sa[SP_GMAX][SP_BK];
	__shared__ int kofs[SP_BK + 1], kbs[SP_BK], wofs[SP_BK][SP_WARPS + 1], st[3];
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31, tid = threadIdx.x;
	for (int l = blockIdx.x; l < nlist; l += gridDim.x) {
		int i = list[l], g = -kind[i], cs = cptr[i], n = cptr[i + 1] - cs;
		const int *p = ccol + cs;
		if (n <= SP_BPAT) {
			for (int x = tid; x < n; x += SP_THREADS) pat[x] = p[x];
			p = pat;
		}
		bool sh = n <= SP_BACC;
		int gp = sh ? min(g, SP_BACC / max(n, 1)) : g;
		int as = aptr[i], alen = aptr[i + 1] - as;
		int x0 = (int)((long long)n * w / SP_WARPS), x1 = (int)((long long)n * (w + 1) / SP_WARPS);
		for (int t0 = 0; t0 < g; t0 += gp) {
			int gt = min(gp, g - t0);
			double *v = sh ? acc : cval + cs + (size_t)t0 * n;
			for (int t = 0; t < gt; t++)
				for (int x = x0 + lane; x < x1; x += 32) v[t * n + x] = init;
			if (tid == 0) st[0] = 0, st[1] = 0;
			__syncthreads();
			while (st[0] < alen) {
				__syncthreads();
				if (w == 0) sp_blk_batch(st, alen, as, t0, gt, acol, aval, bptr, kofs, kbs, sa);
				__syncthreads();
				int nk = st[2], tot = kofs[nk];
				sp_stage(p, n, nk, tot, kofs, kbs, bcol, bval, sx, sb);
				__syncthreads();
				for (int e = tid; e < tot; e += SP_THREADS) {
					int j = sp_kof(kofs, nk, e), ow = sp_owner(sx[e], n), po = e == kofs[j] ? -1 : sp_owner(sx[e - 1], n);
					for (int u = po + 1; u <= ow; u++) wofs[j][u] = e;
					if (e == kofs[j + 1] - 1)
						for (int u = ow + 1; u <= SP_WARPS; u++) wofs[j][u] = kofs[j + 1];
				}
				if (tid < nk && kofs[tid] == kofs[tid + 1])
					for (int u = 0; u <= SP_WARPS; u++) wofs[tid][u] = kofs[tid];
				__syncthreads();
				for (int j = 0; j < nk; j++) {
					double a[SP_GMAX];
#pragma unroll
					for (int t = 0; t < SP_GMAX; t++)
						if (t < gt) a[t] = sa[t][j];
					for (int q = wofs[j][w] + lane; q < wofs[j][w + 1]; q += 32) sp_add_rows<SP_GMAX>(v + sx[q], n, gt, a, sb[q]);
					__syncwarp();
				}
			}
			if (sh)
				for (int t = 0; t < gt; t++)
					for (int x = x0 + lane; x < x1; x += 32) cval[cs + (size_t)(t0 + t) * n + x] = v[t * n + x];
			__syncthreads();
		}
	}
}
