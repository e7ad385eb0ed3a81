// The numeric pass of the SpGEMM of sparse.cu (included there, after
// the definitions it uses): sp_numeric_g32, sp_numeric_g*r (a warp per
// chunk of rows of one pattern), sp_numeric_h* (a warp per one or two
// rows, a product a lane) and sp_numeric_blk (a block per chunk).
// Host models: modelNumeric in internal/gpusparse/model_test.go.

// sp_add_rows adds a[AS·t]·b to v[t·n] for the gt rows of a pass: all
// loads before all stores, as the rows' slots are distinct.
template <int GM, int AS>
__device__ __forceinline__ void sp_add_rows(double *v, int n, int gt, const double *a, double b) {
	double s[GM];
#pragma unroll
	for (int t = 0; t < GM; t++)
		if (t < gt) s[t] = v[t * n];
#pragma unroll
	for (int t = 0; t < GM; t++)
		if (t < gt) v[t * n] = __dadd_rn(s[t], __dmul_rn(a[AS * t], b));
}

// sp_find sets x[d] to the index of c[d] in the sorted p[0:n], which
// holds every c[d] that is not below p[0] (the others get 0): D searches
// interleaved, so that their loads overlap.
template <int D>
__device__ __forceinline__ void sp_find(const int *p, int n, const int *c, int *x) {
#pragma unroll
	for (int d = 0; d < D; d++) x[d] = 0;
	for (int st = n > 0 ? 1 << (31 - __clz(n)) : 0; st > 0; st >>= 1)
#pragma unroll
		for (int d = 0; d < D; d++)
			if (x[d] + st < n && p[x[d] + st] <= c[d]) x[d] += st;
}

// sp_add_ks_next adds the products of the m k's of a group of G lanes
// (lane u of the group holds B's row mybs..mybe of k u, sa[t][at+u] its
// value in row t of the pass) into the gt rows of accumulators v, k
// after k: each lane's first product of the next k and its slot are
// fetched while the current k is added (a software pipeline).
template <int G, int GM>
__device__ __forceinline__ void sp_add_ks_next(int m, int mybs, int mybe, unsigned mask, int gl, const double (*sa)[32], int at, const int *p, int n,
                                               const int *bcol, const double *bval, double *v, int gt) {
	int nbs = __shfl_sync(mask, mybs, 0, G), nbe = __shfl_sync(mask, mybe, 0, G);
	int nx = 0;
	double nb = 0;
	if (nbs + gl < nbe) nx = sp_bsearch(p, n, bcol[nbs + gl]), nb = bval[nbs + gl];
	for (int u = 0; u < m; u++) {
		double a[GM];
#pragma unroll
		for (int t = 0; t < GM; t++)
			if (t < gt) a[t] = sa[t][at + u];
		double b = nb;
		int bs = nbs, be = nbe, x = nx;
		if (u + 1 < m) {
			nbs = __shfl_sync(mask, mybs, u + 1, G), nbe = __shfl_sync(mask, mybe, u + 1, G);
			if (nbs + gl < nbe) nx = sp_bsearch(p, n, bcol[nbs + gl]), nb = bval[nbs + gl];
		}
		for (int r = bs + gl; r < be; r += G) {
			if (r != bs + gl) x = sp_bsearch(p, n, bcol[r]), b = bval[r];
			sp_add_rows<GM, 1>(v + x, n, gt, a, b);
		}
		__syncwarp(mask);
	}
}

// sp_add_ks_pf is sp_add_ks_next for chunks of several rows, which hold
// more registers: each lane loads its first H products (H rounds of the
// lanes over a row of B: 2 for 32 lanes, whose rows of B are the
// longest) of D = SP_PF/H k's at once and searches their slots
// together, before the k's are added one after the other, so that the
// latency of those loads and searches is paid once for D k's; the rest
// of a longer row of B is loaded as it is added.
template <int G, int GM>
__device__ __forceinline__ void sp_add_ks_pf(int m, int mybs, int mybe, unsigned mask, int gl, const double (*sa)[32], int at, const int *p, int n,
                                             const int *bcol, const double *bval, double *v, int gt) {
	constexpr int H = G == 32 ? 2 : 1, D = SP_PF / H < G ? SP_PF / H : G;
	for (int u0 = 0; u0 < m; u0 += D) {
		// Lanes past A's row have none: an empty row of B.
		int c[D * H], x[D * H];
		double b[D * H];
#pragma unroll
		for (int d = 0; d < D; d++) {
			int bs = __shfl_sync(mask, mybs, u0 + d, G) + gl, be = __shfl_sync(mask, mybe, u0 + d, G);
#pragma unroll
			for (int h = 0; h < H; h++) {
				c[d * H + h] = -1, b[d * H + h] = 0;
				if (bs + h * G < be) c[d * H + h] = bcol[bs + h * G], b[d * H + h] = bval[bs + h * G];
			}
		}
		sp_find<D * H>(p, n, c, x);
#pragma unroll
		for (int d = 0; d < D; d++) {
			int u = u0 + d;
			if (u >= m) break;
			const double *a = &sa[0][at + u];
#pragma unroll
			for (int h = 0; h < H; h++)
				if (c[d * H + h] >= 0) sp_add_rows<GM, 32>(v + x[d * H + h], n, gt, a, b[d * H + h]);
			int bs = __shfl_sync(mask, mybs, u, G), be = __shfl_sync(mask, mybe, u, G);
			for (int r = bs + gl + H * G; r < be; r += G) sp_add_rows<GM, 32>(v + sp_bsearch(p, n, bcol[r]), n, gt, a, bval[r]);
			__syncwarp(mask);
		}
	}
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
// rows. G is picked by the host from B's mean row length. The k's of A's
// row come G at a time, one per lane, and are added by sp_add_ks_next
// (one row at a time) or sp_add_ks_pf (several).
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
				int m = min(G, alen - q0);
				if constexpr (GM == 1) sp_add_ks_next<G, GM>(m, mybs, mybe, mask, gl, sa[w], grp * G, p, n, bcol, bval, v, gt);
				else sp_add_ks_pf<G, GM>(m, mybs, mybe, mask, gl, sa[w], grp * G, p, n, bcol, bval, v, gt);
			}
			for (int x = gl; x < gt * n; x += G) cval[cs + (size_t)t0 * n + x] = v[x];
			__syncwarp(mask);
		}
	}
}

// sp_numeric_g32 takes one row at a time (products of A without runs
// and with long rows of B; sp_numeric_h* takes those with short ones),
// sp_numeric_g<G>r up to SP_WROWS (fewer registers than SP_GMAX).
#define SP_NUMERIC(G, GM, NAME)                                                                                                         \
	extern "C" __global__ void __launch_bounds__(SP_THREADS, GM == 1 ? 6 : 4)                                                        \
	    NAME(int nw, const int *wlist, const int *kind, const int *aptr, const int *acol, const double *aval, const int *bptr, const int *bcol,         \
	         const double *bval, const int *cptr, const int *ccol, double *cval, double init) {                                           \
		sp_numeric_rows<G, GM>(nw, wlist, kind, aptr, acol, aval, bptr, bcol, bval, cptr, ccol, cval, init);                                 \
	}
SP_NUMERIC(32, 1, sp_numeric_g32)
SP_NUMERIC(4, SP_WROWS, sp_numeric_g4r)
SP_NUMERIC(8, SP_WROWS, sp_numeric_g8r)
SP_NUMERIC(16, SP_WROWS, sp_numeric_g16r)
SP_NUMERIC(32, SP_WROWS, sp_numeric_g32r)

// sp_blk_scatter puts the products of B's row k (entries bs..be-1) whose
// columns fall in the tile pat[0:nt] (columns lo..hi) into the batch's
// table, tab[j·nt + x] for the slot x of the column, and sets bit j of
// hit[x]: per lanes of the k's group (gl the thread's place in it), four
// products a thread at a time, their loads issued together and their
// searches interleaved. A k has one product per column, so the table's
// entries are distinct; the hit words are shared by the batch's k's.
__device__ __forceinline__ void sp_blk_scatter(int bs, int be, int gl, int per, int j, const int *bcol, const double *bval, const int *pat, int nt,
                                               int lo, int hi, double *tab, unsigned *hit) {
	int top = 1 << (31 - __clz(nt));
	for (int r0 = bs + gl; r0 < be; r0 += 4 * per) {
		int c[4], pos[4];
		double v[4];
#pragma unroll
		for (int h = 0; h < 4; h++) {
			int r = r0 + h * per;
			c[h] = lo - 1, v[h] = 0, pos[h] = 0;
			if (r < be) c[h] = bcol[r], v[h] = bval[r];
		}
		// The last slot whose column is at most c: c's, as the tile holds it.
		for (int st = top; st > 0; st >>= 1)
#pragma unroll
			for (int h = 0; h < 4; h++)
				if (pos[h] + st < nt && pat[pos[h] + st] <= c[h]) pos[h] += st;
#pragma unroll
		for (int h = 0; h < 4; h++)
			if (c[h] >= lo && c[h] <= hi) {
				tab[j * nt + pos[h]] = v[h];
				atomicOr(hit + pos[h], 1u << j);
			}
	}
}

// sp_blk_tile sets the values of the g rows of a chunk (row t at
// c[t·n]) in the columns of the tile p[0:nt], nt <= SP_BT: A's row
// (alen entries from as, row t's values t·alen further) in batches of
// nk = min(SP_BK, SP_BTAB/nt) k's. In the phase of batch b the block puts
// the products of batch b into one table (a group of SP_THREADS/nk
// threads per k) while each thread adds those of batch b-1 from the
// other into the accumulators of its slots x and x+SP_THREADS, in
// registers: the bits of hit[x] ascending, so k after k in A's row
// order. One block-wide barrier a batch; the next batch's k and its row
// of B are fetched while the current one is scattered.
__device__ void sp_blk_tile(int g, int as, int alen, const int *acol, const double *aval, const int *bptr, const int *bcol, const double *bval,
                            const int *p, int nt, double *c, int n, double init, double (*tab)[SP_BTAB], double (*sa)[SP_BK][SP_GMAX],
                            unsigned (*hit)[SP_BT], int *pat) {
	int tid = threadIdx.x;
	for (int x = tid; x < nt; x += SP_THREADS) pat[x] = p[x], hit[0][x] = 0u, hit[1][x] = 0u;
	int lo = p[0], hi = p[nt - 1];
	int nk = min(SP_BK, SP_BTAB / nt), per = SP_THREADS / nk, j = tid / per, gl = tid - j * per;
	bool grp = j < nk;
	double acc[2][SP_GMAX];
#pragma unroll
	for (int s = 0; s < 2; s++)
#pragma unroll
		for (int t = 0; t < SP_GMAX; t++) acc[s][t] = init;
	int bs = 0, be = 0;
	if (grp && j < alen) {
		int k = acol[as + j];
		bs = bptr[k], be = bptr[k + 1];
	}
	__syncthreads();
	int batches = (alen + nk - 1) / nk;
	for (int b = 0; b <= batches; b++) {
		int cur = b & 1, o = b * nk + j, kn = -1;
		if (grp && o + nk < alen) kn = acol[as + o + nk];
		if (grp && o < alen) {
			double av = gl < g ? aval[as + (size_t)gl * alen + o] : 0; // stored after the scatter, which waits on its own loads
			sp_blk_scatter(bs, be, gl, per, j, bcol, bval, pat, nt, lo, hi, tab[cur], hit[cur]);
			if (gl < g) sa[cur][j][gl] = av;
		}
		bs = 0, be = 0;
		if (kn >= 0) bs = bptr[kn], be = bptr[kn + 1];
		if (b > 0) {
			int pv = cur ^ 1;
#pragma unroll
			for (int s = 0; s < 2; s++) {
				int x = tid + s * SP_THREADS;
				if (x >= nt) continue;
				unsigned m = hit[pv][x];
				hit[pv][x] = 0u;
				while (m) {
					int q = __ffs(m) - 1;
					m &= m - 1;
					double v = tab[pv][q * nt + x];
#pragma unroll
					for (int t = 0; t < SP_GMAX; t++)
						if (t < g) acc[s][t] = __dadd_rn(acc[s][t], __dmul_rn(sa[pv][q][t], v));
				}
			}
		}
		__syncthreads();
	}
#pragma unroll
	for (int s = 0; s < 2; s++) {
		int x = tid + s * SP_THREADS;
		if (x < nt)
#pragma unroll
			for (int t = 0; t < SP_GMAX; t++)
				if (t < g) c[(size_t)t * n + x] = acc[s][t];
	}
}

// sp_numeric_blk sets the values of the chunks listed in list (kind[i] =
// -g: rows i..i+g-1, one pattern of n columns): the long rows, and the
// rows of products with few chunks, which a warp each would leave the GPU
// idle. Each chunk is cut into parts (the host's choice, more when the
// chunks are few) of n/parts of its columns, a block per part at a time;
// a part goes in tiles of at most SP_BT columns (sp_blk_tile), each of
// which walks all of A's row.
extern "C" __global__ void __launch_bounds__(SP_THREADS, 3)
sp_numeric_blk(const int *list, int nlist, int parts, const int *kind, const int *aptr, const int *acol, const double *aval, const int *bptr,
               const int *bcol, const double *bval, const int *cptr, const int *ccol, double *cval, double init) {
	__shared__ double tab[2][SP_BTAB];
	__shared__ double sa[2][SP_BK][SP_GMAX];
	__shared__ unsigned hit[2][SP_BT];
	__shared__ int pat[SP_BT];
	long long items = (long long)nlist * parts;
	for (long long it = blockIdx.x; it < items; it += gridDim.x) {
		int i = list[it / parts], f = (int)(it % parts);
		int g = -kind[i], cs = cptr[i], n = cptr[i + 1] - cs, as = aptr[i], alen = aptr[i + 1] - as;
		int xa = (int)((long long)n * f / parts), w = (int)((long long)n * (f + 1) / parts) - xa;
		int tiles = (w + SP_BT - 1) / SP_BT;
		for (int u = 0; u < tiles; u++) {
			int x0 = xa + (int)((long long)w * u / tiles), x1 = xa + (int)((long long)w * (u + 1) / tiles);
			sp_blk_tile(g, as, alen, acol, aval, bptr, bcol, bval, ccol + cs + x0, x1 - x0, cval + cs + x0, n, init, tab, sa, hit, pat);
		}
	}
}

// sp_hslot is the first slot of column c in a table of 1 << BITS slots
// (Fibonacci hashing: the top bits of c·2^32/φ).
template <int BITS>
__device__ __forceinline__ int sp_hslot(int c) { return (int)(((unsigned)c * 2654435761u) >> (32 - BITS)); }

// sp_hash_add adds the products of a batch (one a lane, in the order of
// A's rows over the lanes of a row; c < 0: none) to the accumulators of
// their slots, each found in its row's table (TS slots from rg): a slot
// that several lanes hit (products of several k's) gets them in rounds,
// lowest lane first, so each entry takes its products in A's row order.
template <int TS>
__device__ __forceinline__ void sp_hash_add(const int *key, double *acc, int rg, int c, double a, double b) {
	int lane = threadIdx.x & 31, s = -1;
	if (c >= 0) {
		int h = sp_hslot<__builtin_ctz(TS)>(c);
		for (int t = 1; key[rg + h] != c; t++) {
			if (t == TS) { // not in C's pattern: a pattern other than Mul's
				h = -1 - rg;
				break;
			}
			h = (h + 1) & (TS - 1);
		}
		s = rg + h;
	}
	unsigned m = __match_any_sync(SP_FULL, s >= 0 ? s : SP_HT + lane);
	int rank = __popc(m & ((1u << lane) - 1)), top = __reduce_max_sync(SP_FULL, s >= 0 ? rank : 0);
	double pr = __dmul_rn(a, b);
	for (int r = 0; r <= top; r++) {
		if (s >= 0 && rank == r) acc[s] = __dadd_rn(acc[s], pr);
		__syncwarp();
	}
}

// sp_part returns the part t (0..R-1) of position y, whose parts start
// at start[0] = 0 <= start[1] <= ... (the last t with start[t] <= y).
template <int R>
__device__ __forceinline__ int sp_part(int y, const int *start) {
	int t = 0;
#pragma unroll
	for (int u = 1; u < R; u++) t += y >= start[u];
	return t;
}

// sp_numeric_h<R> sets the values of C = A·B on its pattern for the rows
// listed in wlist (A without runs), R rows a warp: each row's columns
// go into a hash table of SP_HT/R slots (n <= SP_HT/2R), each slot with
// its accumulator. The rows' entries of A, one row after the other, come
// 32 k's at a time, their products flattened (a scan of the lengths of
// their rows of B, empty rows left out), and each lane takes one
// product of a batch of 32 (sp_hash_add), batch after batch. Short rows
// of B waste no lanes, a slot takes one probe where a search of the
// sorted pattern takes log2(n), and the R rows share the latency of
// fetching their rows.
template <int R>
__device__ __forceinline__ void sp_numeric_hash(int nw, const int *wlist, const int *aptr, const int *acol, const double *aval, const int *bptr,
                                                const int *bcol, const double *bval, const int *cptr, const int *ccol, double *cval, double init) {
	constexpr int TS = SP_HT / R;
	__shared__ int key[SP_WARPS][SP_HT];
	__shared__ double acc[SP_WARPS][SP_HT];
	__shared__ int at[SP_WARPS][SP_HT / 2]; // the slot of the rows' y-th column
	__shared__ int kb[SP_WARPS][32], ko[SP_WARPS][32], kt[SP_WARPS][32];
	__shared__ double ka[SP_WARPS][32]; // the chunk's nonempty k's: start of B's row less offset, offset, table, value of A
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	unsigned upto = SP_FULL >> (31 - lane), below = (1u << lane) - 1;
	int *tk = key[w];
	double *tv = acc[w];
	for (int s = lane; s < SP_HT; s += 32) tk[s] = SP_EMPTY;
	__syncwarp();
	for (int l0 = (blockIdx.x * SP_WARPS + w) * R; l0 < nw; l0 += gridDim.x * SP_WARPS * R) {
		// Lane t < R holds row t's offsets, and the starts of row t's
		// columns and k's in the rows' (np, ap); every lane has them all.
		int rcs = 0, rn = 0, ras = 0, ralen = 0;
		if (lane < R && l0 + lane < nw) {
			int i = wlist[l0 + lane];
			rcs = cptr[i], rn = cptr[i + 1] - rcs, ras = aptr[i], ralen = aptr[i + 1] - ras;
		}
		int np[R + 1], ap[R + 1];
		np[0] = 0, ap[0] = 0;
#pragma unroll
		for (int t = 0; t < R; t++) np[t + 1] = np[t] + __shfl_sync(SP_FULL, rn, t), ap[t + 1] = ap[t] + __shfl_sync(SP_FULL, ralen, t);
#pragma unroll
		for (int t = 0; t < R; t++)
			if (lane == t) rcs -= np[t], ras -= ap[t]; // so that row t's y-th column is at rcs + y
		for (int y0 = 0; y0 < np[R]; y0 += 32) {
			int y = y0 + lane, t = sp_part<R>(y, np), x = __shfl_sync(SP_FULL, rcs, t) + y;
			if (y < np[R]) {
				int c = ccol[x], h = sp_hslot<__builtin_ctz(TS)>(c);
				while (atomicCAS(tk + t * TS + h, SP_EMPTY, c) != SP_EMPTY) h = (h + 1) & (TS - 1);
				tv[t * TS + h] = init;
				at[w][y] = t * TS + h;
			}
		}
		__syncwarp();
		for (int q0 = 0; q0 < ap[R]; q0 += 32) {
			int y = q0 + lane, t = sp_part<R>(y, ap), q = __shfl_sync(SP_FULL, ras, t) + y, base = 0, len = 0;
			double a = 0;
			if (y < ap[R]) {
				int k = acol[q];
				a = aval[q];
				base = bptr[k];
				len = bptr[k + 1] - base;
			}
			int inc = len;
#pragma unroll
			for (int d = 1; d < 32; d <<= 1) {
				int v = __shfl_up_sync(SP_FULL, inc, d);
				if (lane >= d) inc += v;
			}
			int off = inc - len, total = __shfl_sync(SP_FULL, inc, 31);
			unsigned nonempty = __ballot_sync(SP_FULL, len > 0);
			if (len > 0) {
				int r = __popc(nonempty & below);
				kb[w][r] = base - off, ko[w][r] = off, kt[w][r] = t * TS, ka[w][r] = a;
			}
			__syncwarp();
			// Lane j holds the chunk's j-th nonempty k (offsets ascending).
			int myo = 0x7fffffff, myb = 0, myt = 0;
			double mya = 0;
			if (lane < __popc(nonempty)) myo = ko[w][lane], myb = kb[w][lane], myt = kt[w][lane], mya = ka[w][lane];
			__syncwarp();
			for (int b0 = 0; b0 < total; b0 += 32) {
				// The k of product p = b0 + lane: the last j whose offset is at most p.
				int p = b0 + lane;
				unsigned start = __reduce_or_sync(SP_FULL, myo >= b0 && myo < b0 + 32 ? 1u << (myo - b0) : 0u);
				int j = __popc(__ballot_sync(SP_FULL, myo < b0)) + __popc(start & upto) - 1;
				int rb = __shfl_sync(SP_FULL, myb, j), rg = __shfl_sync(SP_FULL, myt, j), c = -1;
				double av = __shfl_sync(SP_FULL, mya, j), bv = 0;
				if (p < total) c = bcol[rb + p], bv = bval[rb + p];
				sp_hash_add<TS>(tk, tv, rg, c, av, bv);
			}
		}
		for (int y0 = 0; y0 < np[R]; y0 += 32) {
			int y = y0 + lane, x = __shfl_sync(SP_FULL, rcs, sp_part<R>(y, np)) + y;
			if (y < np[R]) {
				int s = at[w][y];
				cval[x] = tv[s];
				tk[s] = SP_EMPTY;
			}
		}
		__syncwarp();
	}
}

// sp_numeric_h<R> takes R rows a warp: sp_numeric_h2 for rows of few
// products (the host's choice), sp_numeric_h1 for the others.
#define SP_NUMERIC_HASH(R)                                                                                                                   \
	extern "C" __global__ void __launch_bounds__(SP_THREADS, 6)                                                                      \
	    sp_numeric_h##R(int nw, const int *wlist, const int *kind, const int *aptr, const int *acol, const double *aval, const int *bptr,    \
	                    const int *bcol, const double *bval, const int *cptr, const int *ccol, double *cval, double init) {                    \
		sp_numeric_hash<R>(nw, wlist, aptr, acol, aval, bptr, bcol, bval, cptr, ccol, cval, init);                                          \
	}
SP_NUMERIC_HASH(1)
SP_NUMERIC_HASH(2)
