// A·T and the smoothed prolongator of setup.cu (included there, after
// the definitions it uses): su_at and its helpers. Host model: modelAT
// in amg/gpu_setup_model_test.go.

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

// su_at_keys sorts a row's items by (aggregate, item): its runs, whose
// keys sk[r] the warp has set (shared memory), or, for a row of more
// runs than SU_AT_RUNS, its entries, whose positions x[q] = q it sets
// (on scratch) and whose aggregates it looks up. Each aggregate's items
// are then a segment, in row order; item s's entries are [from(s),
// to(s)) of the row.
struct su_at_keys {
	unsigned long long *sk;
	int *x;
	const int *nh;
	int lo, bs;
	const int *acol, *of;
	__device__ unsigned agg(int s) const { return sk ? (unsigned)(sk[s] >> 32) : su_at_agg(lo + x[s], bs, acol, of); }
	__device__ int from(int s) const { return sk ? nh[sk[s] & 0xffffffffu] : x[s]; }
	__device__ int to(int s) const { return sk ? nh[(sk[s] & 0xffffffffu) + 1] : x[s] + 1; }
	__device__ unsigned long long key(int s) const {
		return sk ? sk[s] : (unsigned long long)su_at_agg(lo + x[s], bs, acol, of) << 32 | (unsigned)x[s];
	}

	__device__ void sort(int n) {
		const int lane = threadIdx.x & 31;
		if (!sk)
			for (int q = lane; q < n; q += 32) x[q] = q;
		__syncwarp();
		int p = 1;
		while (p < n) p <<= 1;
		for (int w = 2; w <= p; w <<= 1)
			for (int stride = w / 2; stride > 0; stride >>= 1) {
				for (int t = lane; t < p / 2; t += 32) {
					int a, b;
					su_at_pair(t, stride, w, a, b);
					if (b < n && key(b) < key(a)) {
						if (sk) {
							unsigned long long y = sk[a];
							sk[a] = sk[b], sk[b] = y;
						} else {
							int y = x[a];
							x[a] = x[b], x[b] = y;
						}
					}
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

// su_at_put_col writes column col of P at o, the j-th of its aggregate
// in row i: p = sc·y, plus T's entry where T has the column (the order
// of amg's smoothProlongator: the product, then T's entry); sc is
// −ω·d_i and T's row i is [tk, te).
__device__ __forceinline__ void su_at_put_col(int o, int col, int j, double y, double sc, int tk, int te,
                                              const int *tcol, const double *tval, int *ccol, double *cval) {
	double v = MUL(sc, y);
	if (tk + j < te && tcol[tk + j] == col) v = ADD(v, tval[tk + j]);
	ccol[o] = col;
	cval[o] = v;
}

// su_at_put writes row i's columns of aggregate g, the at-th of the row,
// from their sums y of A·T, smoothed: p = t − ω·d_i·y.
__device__ __forceinline__ void su_at_put(int i, int at, int g, int k, const double *y, double omega, const double *dinv,
                                          const int *tptr, const int *tcol, const double *tval, const int *cptr,
                                          int *ccol, double *cval) {
	double sc = -omega * dinv[i];
	int o = cptr[i] + at * k, tk = tptr[i], te = tptr[i + 1];
#pragma unroll
	for (int j = 0; j < SU_MAX_K; j++) {
		if (j >= k) break;
		su_at_put_col(o + j, g * k + j, j, y[j], sc, tk, te, tcol, tval, ccol, cval);
	}
}

// su_at_deal deals the lanes the next round of the aggregates whose
// first lanes (or items) are the set bits of heads, where k > 1: lane l
// gets column l % k of the (l / k)-th, 32 / k aggregates a round, and
// the round's aggregates leave heads. It returns the aggregate's bit, or
// −1 for a lane with none.
__device__ __forceinline__ int su_at_deal(unsigned &heads, int k) {
	const int lane = threadIdx.x & 31, per = 32 / k;
	unsigned b = heads;
	for (int t = lane / k; t > 0 && b; t--) b &= b - 1;
	for (int t = 0; t < per && heads; t++) heads &= heads - 1;
	return lane < per * k && b ? __ffs(b) - 1 : -1;
}

// su_at_runs finds the runs of row entries [lo, lo+len) that share a
// node (a node's dofs, consecutive in a sorted row): run r starts at
// nh[r] and ends at nh[r+1]. It returns the number of runs, or -1 past
// SU_AT_RUNS, by the calling warp.
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
		if (head && at < SU_AT_RUNS) nh[at] = q;
		runs += __popc(hb);
		if (runs > SU_AT_RUNS) return -1;
		prev = __shfl_sync(SU_FULL, nd, 31);
	}
	if (lane == 0) nh[runs] = len;
	__syncwarp();
	return runs;
}

// su_at_cols is su_at_few's sums where k > 1, one lane a column of an
// aggregate (su_at_deal): the lane of column j of aggregate g (whose runs
// are the lanes of m, its rank at) sums a_ij·t_jj' over the aggregate's
// entries in row order, as su_at_add does for all k columns at once.
__device__ void su_at_cols(int i, int k, int g, unsigned m, int at, unsigned heads, const int *nh, const double *sv,
                           const int *st, const int *tptr, const int *tcol, const double *tval, const int *cptr,
                           int *ccol, double *cval, double omega, const double *dinv) {
	const int j = (threadIdx.x & 31) % k;
	int o = cptr[i], tk = tptr[i], te = tptr[i + 1];
	double sc = -omega * dinv[i];
	while (heads) {
		int h = su_at_deal(heads, k), hs = max(h, 0);
		unsigned mh = __shfl_sync(SU_FULL, m, hs);
		int gh = __shfl_sync(SU_FULL, g, hs), ah = __shfl_sync(SU_FULL, at, hs);
		if (h < 0) continue;
		double y = 0;
		for (; mh; mh &= mh - 1)
			for (int q = nh[__ffs(mh) - 1]; q < nh[__ffs(mh)]; q++) y = ADD(y, MUL(sv[q], tval[st[q] + j]));
		su_at_put_col(o + ah * k + j, gh * k + j, j, y, sc, tk, te, tcol, tval, ccol, cval);
	}
}

// su_at_few is su_at's pass 1 on a row of at most 32 runs (lane r has
// run r's aggregate g) and SU_AT_RUNS entries: the lanes of one aggregate
// find each other (match), and the first of them sums the aggregate's
// runs in row order and places it by the aggregates below it (where
// k > 1, su_at_cols spreads its columns over lanes). The entries'
// factors are staged first, by all lanes: the product itself where k is
// 1, else a_ij (sv) and the start of T's row j (st).
__device__ void su_at_few(int i, int lo, int len, int k, int g, const int *nh, double *sv, int *st, const int *acol,
                          const double *aval, const int *tptr, const int *tcol, const double *tval, const int *cptr,
                          int *ccol, double *cval, double omega, const double *dinv) {
	const int lane = threadIdx.x & 31;
	unsigned m = __match_any_sync(SU_FULL, g >= 0 ? (unsigned)g : 0x80000000u + lane);
	bool lead = g >= 0 && __ffs(m) - 1 == lane;
	unsigned heads = __ballot_sync(SU_FULL, lead);
	int at = 0;
	for (unsigned b = heads; b; b &= b - 1) at += __shfl_sync(SU_FULL, g, __ffs(b) - 1) < g;
	for (int q = lane; q < len; q += 32) {
		double x = aval[lo + q];
		int c = acol[lo + q], t = tptr[c];
		if (k == 1) {
			// An unaggregated node's row of T is empty: nothing to read
			// (and nothing that reads the product).
			sv[q] = t < tptr[c + 1] ? MUL(x, tval[t]) : 0;
		} else {
			sv[q] = x;
			st[q] = t;
		}
	}
	__syncwarp();
	if (k > 1) {
		su_at_cols(i, k, g, m, at, heads, nh, sv, st, tptr, tcol, tval, cptr, ccol, cval, omega, dinv);
		return;
	}
	if (!lead) return;
	double y[SU_MAX_K] = {};
	for (unsigned b = m; b; b &= b - 1)
		for (int q = nh[__ffs(b) - 1]; q < nh[__ffs(b)]; q++)
			if (k == 1)
				y[0] = ADD(y[0], sv[q]);
			else
				su_at_add(y, sv[q], tval + st[q], k);
	su_at_put(i, at, g, k, y, omega, dinv, tptr, tcol, tval, cptr, ccol, cval);
}

// The code of an entry of a row that su_at sums from codes (k = 1):
// its position in the row's order by (aggregate, entry), and at the
// first entry of an aggregate that aggregate's rank in the row (the
// column of P it feeds) and its entries; −1 for an unaggregated node.
__device__ __forceinline__ int su_at_code(int pos, int rank, int size) { return pos | rank << 8 | size << 16; }
__device__ __forceinline__ int su_at_pos(int e) { return e & 0xff; }
__device__ __forceinline__ int su_at_rank(int e) { return e >> 8 & 0xff; }
__device__ __forceinline__ int su_at_size(int e) { return e >> 16; }

// su_at_sum writes P's entry of an aggregate g whose products lie in
// sv[0, size): their sum in order, smoothed (su_at_put where k is 1;
// tc and tv are T's entry in row i, tc −1 where it has none).
__device__ __forceinline__ void su_at_sum(const double *sv, int size, int g, int at, double sc, int tc, double tv,
                                          int *ccol, double *cval) {
	double y = 0;
	for (int t = 0; t < size; t++) y = ADD(y, sv[t]);
	double v = MUL(sc, y);
	if (tc == g) v = ADD(v, tv);
	ccol[at] = g;
	cval[at] = v;
}

// su_at_row1 is what su_at_sum needs of row i: its offset in P, the
// smoothing factor −ω·d_i and T's entry (column tc, value tv).
struct su_at_row1 {
	int o, tc;
	double sc, tv;
	__device__ su_at_row1(int i, const int *cptr, const int *tptr, const int *tcol, const double *tval, double omega,
	                      const double *dinv) {
		int tk = tptr[i], te = tptr[i + 1];
		o = cptr[i];
		sc = -omega * dinv[i];
		tc = -1, tv = 0;
		if (tk < te) tc = tcol[tk], tv = tval[tk];
	}
};

// su_at_short is su_at on a row of at most 32 entries where k is 1: one
// entry a lane. Pass 0 sorts the entries by (aggregate, entry) once and
// keeps their codes in scratch (s, the row's nnz ints). Pass 1 (also a
// numeric Update's, on the same pattern) stages each product a_ij·t_j
// at its position in shared memory (sv), and the lane of an aggregate's
// first entry sums its products there, in row order, into P's entry.
// Neither pass sorts, searches or matches again, and pass 1 reads
// nothing it does not use.
__device__ void su_at_short(int pass, int i, int lo, int len, int bs, const int *acol, const double *aval, const int *of,
                            const int *tptr, const int *tcol, const double *tval, int *s, long long *cnt, const int *cptr,
                            int *ccol, double *cval, double omega, const double *dinv, double *sv) {
	const int lane = threadIdx.x & 31;
	if (pass == 0) {
		int g = -1;
		if (lane < len) {
			int c = acol[lo + lane];
			g = of[bs == 1 ? c : c / bs];
		}
		unsigned m = __match_any_sync(SU_FULL, g >= 0 ? (unsigned)g : 0x80000000u + lane);
		bool head = g >= 0 && __ffs(m) - 1 == lane;
		unsigned heads = __ballot_sync(SU_FULL, head);
		int size = __popc(m), at = 0, below = 0;
		for (unsigned b = heads; b; b &= b - 1) {
			int h = __ffs(b) - 1, gh = __shfl_sync(SU_FULL, g, h), nh = __shfl_sync(SU_FULL, size, h);
			if (gh < g) at++, below += nh;
		}
		if (lane < len)
			s[lo + lane] = g < 0 ? -1 : su_at_code(below + __popc(m & ((1u << lane) - 1)), at, head ? size : 0);
		if (lane == 0) cnt[i + 1] = __popc(heads);
		return;
	}
	int e = -1, c = 0;
	double x = 0;
	if (lane < len) e = s[lo + lane], c = acol[lo + lane], x = aval[lo + lane];
	// Row i's own entries, read while the gathers below wait.
	su_at_row1 r(i, cptr, tptr, tcol, tval, omega, dinv);
	int g = -1;
	if (e >= 0) {
		// An aggregated node's row of T has its one entry.
		sv[su_at_pos(e)] = MUL(x, tval[tptr[c]]);
		if (su_at_size(e) > 0) g = of[bs == 1 ? c : c / bs];
	}
	__syncwarp();
	if (su_at_size(e) > 0) su_at_sum(sv + su_at_pos(e), su_at_size(e), g, r.o + su_at_rank(e), r.sc, r.tc, r.tv, ccol, cval);
	__syncwarp();
}

// su_at_coded is su_at_short's pass 1 on a longer row (of one dof a
// node, up to SU_AT_RUNS entries, whose codes su_at's pass 0 kept),
// 32 entries at a time.
__device__ void su_at_coded(int i, int lo, int len, const int *acol, const double *aval, const int *of, const int *tptr,
                            const int *tcol, const double *tval, const int *s, const int *cptr, int *ccol, double *cval,
                            double omega, const double *dinv, double *sv) {
	const int lane = threadIdx.x & 31;
	for (int q = lo + lane; q < lo + len; q += 32) {
		int e = s[q];
		if (e >= 0) sv[su_at_pos(e)] = MUL(aval[q], tval[tptr[acol[q]]]);
	}
	su_at_row1 r(i, cptr, tptr, tcol, tval, omega, dinv);
	__syncwarp();
	for (int q = lo + lane; q < lo + len; q += 32) {
		int e = s[q];
		if (su_at_size(e) > 0)
			su_at_sum(sv + su_at_pos(e), su_at_size(e), of[acol[q]], r.o + su_at_rank(e), r.sc, r.tc, r.tv, ccol, cval);
	}
	__syncwarp();
}

// su_at computes C = A·T for a tentative prolongator T, whose row of an
// aggregated node v holds the k columns of its aggregate of[v]·k + j.
// Row i of C has the aggregates of its neighbours' nodes, sorted, k
// columns each. Pass 0 sets cnt[i+1] to the row's length; pass 1 writes
// the row at cptr[i], each a_ij·T_j summed in the row order of A from 0,
// then smoothed as amg's smoothProlongator does: P = T − ω·D⁻¹·(A·T),
// on A·T's pattern.
//
// For k > 1, su_at takes every row. Where k is 1, su_at_s takes the
// rows of at most 32 entries and lists the others (list[0] of them at
// list[1..]) for su_at_l, su_at on the listed rows.
//
// One warp per row, launched with 32 threads per row; the row's runs of
// entries of one node are the items. A row of at most 32 runs gives each
// a lane (su_at_few). Otherwise the warp sorts the items by (aggregate,
// item) (su_at_keys): the row's runs, up to SU_AT_RUNS, in shared memory,
// else its entries, on scratch (nnz(A) ints at the row's offset); each
// aggregate is then a segment in row order, summed by the lane at its
// head.
template <bool listed>
__device__ __forceinline__ void su_at_rows(int pass, int n, int bs, int k, const int *aptr, const int *acol,
                                           const double *aval, const int *of, const int *tptr, const int *tcol,
                                           const double *tval, int *scratch, const int *list, long long *cnt,
                                           const int *cptr, int *ccol, double *cval, double omega, const double *dinv) {
	// Per warp: the runs' starts, and either the runs' keys or (su_at_few)
	// the entries' staged factors.
	__shared__ int snh[SU_WARPS][SU_AT_RUNS + 1];
	__shared__ double sbuf[SU_WARPS][SU_AT_RUNS * 3 / 2];
	const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int *nh = snh[w];
	SU_WARP_FOR(ii, listed ? list[0] : n) {
		int i = listed ? list[1 + ii] : (int)ii, lo = aptr[i], len = aptr[i + 1] - lo;
		// A listed row of one dof a node goes by codes (k is 1; its runs
		// are its entries, more than 32: sorted in shared memory).
		bool coded = listed && bs == 1 && len <= SU_AT_RUNS;
		if (coded && pass == 1) {
			su_at_coded(i, lo, len, acol, aval, of, tptr, tcol, tval, scratch, cptr, ccol, cval, omega, dinv, sbuf[w]);
			continue;
		}
		int runs = su_at_runs(lo, len, bs, acol, nh);
		int g = lane < runs ? of[acol[lo + nh[lane]] / bs] : -1;
		if (runs >= 0 && runs <= 32 && len <= SU_AT_RUNS) {
			if (pass == 0) {
				unsigned m = __match_any_sync(SU_FULL, g >= 0 ? (unsigned)g : 0x80000000u + lane);
				unsigned heads = __ballot_sync(SU_FULL, g >= 0 && __ffs(m) - 1 == lane);
				if (lane == 0) cnt[i + 1] = (long long)__popc(heads) * k;
			} else {
				su_at_few(i, lo, len, k, g, nh, sbuf[w], (int *)(sbuf[w] + SU_AT_RUNS), acol, aval, tptr, tcol, tval,
				          cptr, ccol, cval, omega, dinv);
			}
			__syncwarp();
			continue;
		}
		su_at_keys r{runs >= 0 ? (unsigned long long *)sbuf[w] : nullptr, scratch + lo, nh, lo, bs, acol, of};
		if (r.sk)
			for (int q = lane; q < runs; q += 32)
				r.sk[q] = (unsigned long long)su_at_agg(lo + nh[q], bs, acol, of) << 32 | (unsigned)q;
		int items = r.sk ? runs : len;
		r.sort(items);
		// Each lane's items s = c·32 + lane, c counted up: a head's rank is
		// the heads before it; the unaggregated items sort last.
		int u = 0;
		for (int c = 0; c * 32 < items; c++) {
			int s = c * 32 + lane;
			unsigned gs = s < items ? r.agg(s) : SU_NONE;
			bool head = gs != SU_NONE && (s == 0 || r.agg(s - 1) != gs);
			unsigned hb = __ballot_sync(SU_FULL, head);
			if (coded && s < items) {
				int size = 0;
				if (head)
					while (s + size < items && r.agg(s + size) == gs) size++;
				int rank = u + __popc(hb & ((1u << lane) - 1));
				scratch[lo + r.from(s)] = gs == SU_NONE ? -1 : su_at_code(s, rank, size);
			}
			if (pass == 1 && k > 1) {
				// The heads' columns over the lanes (su_at_deal).
				for (unsigned left = hb; left;) {
					int h = su_at_deal(left, k);
					unsigned gh = __shfl_sync(SU_FULL, gs, max(h, 0));
					if (h < 0) continue;
					int j = lane % k, at = (u + __popc(hb & ((1u << h) - 1))) * k;
					double y = 0;
					for (int e = c * 32 + h; e < items && r.agg(e) == gh; e++)
						for (int q = lo + r.from(e), end = lo + r.to(e); q < end; q++)
							y = ADD(y, MUL(aval[q], tval[tptr[acol[q]] + j]));
					su_at_put_col(cptr[i] + at + j, (int)gh * k + j, j, y, -omega * dinv[i], tptr[i], tptr[i + 1], tcol,
					              tval, ccol, cval);
				}
			} else if (head && pass == 1) {
				double y[SU_MAX_K] = {};
				for (int e = s; e < items && r.agg(e) == gs; e++)
					for (int q = lo + r.from(e), end = lo + r.to(e); q < end; q++)
						su_at_add(y, aval[q], tval + tptr[acol[q]], k);
				su_at_put(i, u + __popc(hb & ((1u << lane) - 1)), (int)gs, k, y, omega, dinv, tptr, tcol, tval, cptr,
				          ccol, cval);
			}
			u += __popc(hb);
		}
		if (pass == 0 && lane == 0) cnt[i + 1] = (long long)u * k;
		__syncwarp();
	}
}

extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_at(int pass, int n, int bs, int k, const int *aptr, const int *acol, const double *aval, const int *of,
          const int *tptr, const int *tcol, const double *tval, int *scratch, long long *cnt, const int *cptr,
          int *ccol, double *cval, double omega, const double *dinv) {
	su_at_rows<false>(pass, n, bs, k, aptr, acol, aval, of, tptr, tcol, tval, scratch, nullptr, cnt, cptr, ccol, cval,
	                  omega, dinv);
}

// su_at_l is su_at on the rows su_at_s listed; those of one dof a node
// and at most SU_AT_RUNS entries keep their codes in pass 0, which pass
// 1 sums from (su_at_coded).
extern "C" __global__ void __launch_bounds__(SU_THREADS)
    su_at_l(int pass, int bs, const int *aptr, const int *acol, const double *aval, const int *of, const int *tptr,
            const int *tcol, const double *tval, int *scratch, const int *list, long long *cnt, const int *cptr,
            int *ccol, double *cval, double omega, const double *dinv) {
	su_at_rows<true>(pass, 0, bs, 1, aptr, acol, aval, of, tptr, tcol, tval, scratch, list, cnt, cptr, ccol, cval, omega,
	                 dinv);
}

// su_at_s is su_at's kernel where k is 1: su_at_short on every row of at
// most 32 entries; pass 0 lists the longer rows for su_at_l (list[0]
// counts them, zero before; list[1..] holds them in any order: no row's
// result depends on it). Its small shared memory and register count
// (bounded for 2048 threads a multiprocessor) keep twice as many rows in
// flight as su_at, whose warps wait on memory.
extern "C" __global__ void __launch_bounds__(SU_THREADS, 2048 / SU_THREADS)
    su_at_s(int pass, int n, int bs, const int *aptr, const int *acol, const double *aval, const int *of, const int *tptr,
            const int *tcol, const double *tval, int *scratch, int *list, long long *cnt, const int *cptr, int *ccol,
            double *cval, double omega, const double *dinv) {
	__shared__ double sv[SU_WARPS][32];
	const int w = threadIdx.x >> 5;
	SU_WARP_FOR(ii, n) {
		int i = (int)ii, lo = aptr[i], len = aptr[i + 1] - lo;
		if (len <= 32)
			su_at_short(pass, i, lo, len, bs, acol, aval, of, tptr, tcol, tval, scratch, cnt, cptr, ccol, cval, omega, dinv,
			            sv[w]);
		else if (pass == 0 && (threadIdx.x & 31) == 0)
			list[1 + atomicAdd(list, 1)] = i;
	}
}
