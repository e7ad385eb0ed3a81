// MIS-2 by key buckets (included by mis.cu; not compiled alone).
//
// The ball sweeps (mis2.cuh) keep a champion per closed neighbourhood
// and spend most of their time keeping those champions current. This
// kernel keeps no balls. It takes the vertices roughly in decreasing
// key order, a bucket of keys per launch, and decides each undecided
// vertex v of the bucket (a candidate) by scanning its two-hop
// neighbourhood N²[v] once:
//
//   a member in N²[v]                      -> v is OUT
//   an undecided vertex of larger key      -> v waits (stays undecided)
//   neither                                -> v joins
//
// and a vertex that joins ORs OUT into its whole two-hop neighbourhood.
// These are the greedy rules themselves (every larger vertex within
// distance 2 decided, none a member), so the set is the greedy set
// whatever the buckets are and whichever stale values a scan reads:
// states only ever move from undecided to final, a stale read shows a
// decided vertex as undecided, and that only makes v wait. A vertex that
// waits is a candidate again in the next launch (the launches' key
// ranges only ever grow downwards), and the last range takes every key,
// repeated until no vertex is left undecided.
//
// Why it is cheap: when the buckets of larger keys are done, their
// members have pushed OUT into their two-hop neighbourhoods, so the
// candidates of a bucket are nearly all members; the scans cost about
// what the pushes cost, a fraction of the adjacency each on the
// benchmark graphs (docs/gpu.md). Bucket sizes grow with the key rank
// (the host's thresholds), so that the first buckets, where nothing is
// decided yet, hold few candidates that could wait on each other.

// A warp decides its listed candidates once it has FLUSHB of them (or a
// host-given number below that): its list then never holds more than
// FLUSHB - 1 + TILE. Deciding sooner keeps the rows the candidates read
// in L2 (the whole device works on one window of the graph), and the
// short list leaves shared memory for more blocks per SM.
#define FLUSHB 32
typedef List<1, TILE + FLUSHB> ListB;

// The blocks per SM the bucket kernels' registers are capped for
// (BUCKET_MINB); the lists above let 8 blocks of them fit in shared
// memory.
#ifndef BUCKET_MINB
#define BUCKET_MINB 4
#endif

// BB is the number of candidates a warp decides together: their
// (candidate, neighbour) pairs are spread over its lanes, so that short
// rows keep every lane busy.
#define BB 32
// The entries of a warp's table of recent push targets (DEDUP); 512
// measured no better.
#define SEEN 256
struct Bucket2 {
	u64 kv[BB];      // the candidates' keys
	int pre[BB + 1];  // prefix sums of deg+1 over the candidates (or members)
	u8 at[BB];       // members of the batch to push
	u32 hit;         // bit i: candidate i saw a member
	u32 larger;      // bit i: candidate i saw an undecided vertex of larger key
	u32 nj;
};

// each_pair calls f(i, u, bu, du) for every u in N[v_i] (the row of v_i,
// then v_i itself) of the nc vertices v_i = L.v[idx(i)], with u's row
// (its offset bu and degree du), the pairs spread over the warp's lanes
// in order, after pre holds the prefix sums of deg+1.
//
// A pair's work waits on a chain of loads: the neighbour u, its row
// offsets, its row, the states the row names. With KF_PIPE each lane
// loads the neighbour of its pair after next and the offsets of its next
// pair before it works on the current one, so that only the row and the
// states are left in the chain of every pair but a lane's first: 2-6 %
// faster for hash keys and split runs on tet meshes, whose short local
// rows make the offsets a large part of the chain; 1-7 % slower on
// 27-point rows, grid7, random graphs and class keys mixed over all
// keys (docs/gpu.md), where the plan leaves it off.
#define KF_PIPE 65536u  // 1 << 16
template <typename Idx, typename F>
__device__ __forceinline__ void each_pair(const Params &P, const ListB &L, const int *pre, int nc, Idx idx, F f) {
	const u32 lane = threadIdx.x & 31;
	const int total = pre[nc];
	int i = 0;
	// nbr returns the neighbour of pair p and its vertex's index ip; p
	// only grows.
	auto nbr = [&](int p, int &ip) -> u32 {
		while (pre[i + 1] <= p) i++;
		ip = i;
		const int c = idx(i), j = p - pre[i];
		return j < L.deg[c] ? (u32)__ldg(P.adj + L.beg[c] + j) : (u32)L.v[c];
	};
	if (!(P.kf & KF_PIPE)) {
		for (int p = (int)lane; p < total; p += 32) {
			int ip;
			const u32 u = nbr(p, ip);
			const i64 bu = __ldg(P.off + u);
			f(ip, u, bu, (int)(__ldg(P.off + u + 1) - bu));
		}
		return;
	}
	int p = (int)lane;
	if (p >= total) return;
	int i0, i1 = 0;
	u32 u0 = nbr(p, i0), u1 = p + 32 < total ? nbr(p + 32, i1) : 0u;
	i64 b0 = __ldg(P.off + u0), e0 = __ldg(P.off + u0 + 1);
	for (; p < total; p += 32) {
		i64 b1 = 0, e1 = 0;
		if (p + 32 < total) b1 = __ldg(P.off + u1), e1 = __ldg(P.off + u1 + 1);
		int i2 = 0;
		const u32 u2 = p + 64 < total ? nbr(p + 64, i2) : 0u;
		f(i0, u0, b0, (int)(e0 - b0));
		i0 = i1, u0 = u1, b0 = b1, e0 = e1;
		i1 = i2, u1 = u2;
	}
}

// prefix_deg writes pre[0..nc] for the vertices L.v[idx(i)], i < nc.
template <typename Idx>
__device__ __forceinline__ void prefix_deg(const ListB &L, int *pre, int nc, Idx idx) {
	const u32 lane = threadIdx.x & 31;
	int sum = (int)lane < nc ? L.deg[idx(lane)] + 1 : 0;
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		const int y = __shfl_up_sync(0xffffffffu, sum, o);
		if ((int)lane >= o) sum += y;
	}
	if ((int)lane < nc) pre[lane + 1] = sum;
	if (lane == 0) pre[0] = 0;
	__syncwarp();
}

// PREFIX2B says whether the bucket kernels compare keys by the hash
// prefixes in the states (PART_PREFIX): a candidate's neighbours in its
// scan, and a tile's vertices against the bucket's threshold. Where a
// hash takes a table load (PART_TABLE), or the scan hashed every entry
// before its state load anyway (SCAN), the prefix spares a hash.
// Elsewhere the hash needs no load and runs beside the state's, while a
// prefix tie (one in 64: a few in every step of a warp) hashes only once
// the state has arrived, which kept each step waiting: on two H200s the
// parts of hex27 256³ took 1.570-1.575 ms at MIS-2 with the scans by
// hash against 1.628-1.637 ms by prefix. MIS-1's scans measured faster
// by prefix in the window images too (hex27 0.428 against 0.436-0.438
// ms, the random graph 0.783 against 0.800).
#if defined(PART_PREFIX) && defined(PART_TABLE)
template <bool SCAN>
constexpr bool PREFIX2B = true;
#elif defined(PART_PREFIX)
template <bool SCAN>
constexpr bool PREFIX2B = SCAN;
#else
template <bool SCAN>
constexpr bool PREFIX2B = false;
#endif

// mis2b_batch decides candidates L.v[b0 .. b0+nc) (nc <= BB) and pushes
// OUT from those that join; it returns how many wait.
template <int PK, bool SCAN, bool DEDUP>
__device__ __forceinline__ u32 mis2b_batch(const Params &P, const ListB &L, Bucket2 &S, u32 *seen, int b0, int nc) {
	const u32 lane = threadIdx.x & 31;
	if ((int)lane < nc) {
		const int c = b0 + (int)lane;
		S.kv[lane] = key_of<PK>(P, L.v[c], L.st[c], PK == PK_PRIM ? __ldg(P.prim + L.v[c]) : 0);
	}
	if (lane == 0) S.hit = 0, S.larger = 0, S.nj = 0;
	prefix_deg(L, S.pre, nc, [&](int i) { return b0 + i; });
	// Scan: the row of every u in N[v] holds all of N²[v].
	each_pair(P, L, S.pre, nc, [&](int i) { return b0 + i; }, [&](int i, u32 u, i64 bu, int du) {
		const u32 v = (u32)L.v[b0 + i];
		const u64 kv = S.kv[i];
		bool hit = false;
		// The largest undecided key seen, kept as a select per entry: a
		// bool ORed with && measured 5-12 % slower for class keys
		// (docs/gpu.md).
		u64 best = 0;
		// 8 row entries per step, all their loads issued before any
		// state is used (16 measured no faster, docs/gpu.md).
		each_row<8>(P, bu, du, [&](const u32(&x)[8], const bool(&ok)[8]) {
			u32 s[8], p[8];
#pragma unroll
			for (int j = 0; j < 8; j++) {
				// SCAN (hash keys): only larger keys are read. A member
				// within distance 2 of an undecided v has a larger key,
				// since it saw v undecided when it joined.
				const bool need = ok[j] && x[j] != v && (!SCAN || vhash(P, x[j]) > (u32)kv);
				s[j] = need ? ld<false>(P.st + x[j]) : OUT;
				p[j] = (PK == PK_PRIM && STATE(s[j]) == UND) ? __ldg(P.prim + x[j]) : 0;
			}
#pragma unroll
			for (int j = 0; j < 8; j++) {
				hit |= STATE(s[j]) == IN;
				u64 b;
				if constexpr (PREFIX2B<SCAN>) {
					// Only whether one is larger counts.
					b = STATE(s[j]) == UND && key_above<PK>(P, x[j], s[j], p[j], kv) ? x[j] + 1 : 0;
				} else {
					const u64 k = key_of<PK>(P, x[j], s[j], p[j]);
					b = STATE(s[j]) == UND && k > kv ? (u64)(u32)k << 32 | (x[j] + 1) : 0;
				}
				best = max(best, b);
			}
			return !hit;
		});
		if (hit) atomicOr(&S.hit, 1u << i);
		else if (best) atomicOr(&S.larger, 1u << i);
	});
	__syncwarp();
	u32 wait = 0;
	if ((int)lane < nc) {
		const int c = b0 + (int)lane;
		const int v = L.v[c];
		const u32 sv = L.st[c];
		if (S.hit >> lane & 1u) {
			P.st[v] = (u8)((sv & ~3u) | OUT);
		} else if (!(S.larger >> lane & 1u)) {
			atomicOr((u32 *)(P.st + (v & ~3)), IN << (8 * (v & 3)));
			S.at[atomicAdd(&S.nj, 1u)] = (u8)c;
		} else {
			wait = 1;
		}
	}
	__syncwarp();
	const int nj = (int)S.nj;
	if (nj == 0) return wait;
	// Push: OUT into N(u) for every u in N[m], m a new member (m itself
	// excepted; its neighbours come with the row of m).
	prefix_deg(L, S.pre, nj, [&](int i) { return (int)S.at[i]; });
	each_pair(P, L, S.pre, nj, [&](int i) { return (int)S.at[i]; }, [&](int i, u32 u, i64 bu, int du) {
		const u32 m = (u32)L.v[S.at[i]];
		// SCAN: only smaller keys; the larger ones within distance 2
		// of a member are OUT already.
		const u32 hm = SCAN ? vhash(P, m) : 0;
		if (P.kf & KF_WORDS) or_out_words(P, bu, du);  // IN wins over the OUT it ORs into m
		else if constexpr (DEDUP) {
			// A 27-point N²[m] names each of its 125 vertices about 6
			// times; on scattered rows each OR is a reduction of its
			// own at L2, which bounds the heavy launches. The warp's
			// table of recent targets drops the repeats: a vertex found
			// there has had OUT ORed in by this warp in this launch
			// (a collision only lets a repeat through).
			each_row<16>(P, bu, du, [&](const u32(&u)[16], const bool(&ok)[16]) {
#pragma unroll
				for (int j = 0; j < 16; j++)
					if (ok[j] && u[j] != m && (!SCAN || vhash(P, u[j]) < hm) &&
					    atomicExch(seen + (u[j] & (SEEN - 1)), u[j]) != u[j])
						or_out(P.st, u[j]);
				return true;
			});
		} else or_out_row(P, bu, du, [&](u32 x) { return x != m && (!SCAN || vhash(P, x) < hm); });
	});
	__syncwarp();
	return wait;
}

// Where a bucket launch takes its candidates from.
#define SRC_TILES 0  // every tile of the graph
#define SRC_LIST 1   // a list of vertex ids at P.ball, 32 a warp at a time

// mis2b_sweep is one bucket launch: the candidates are the undecided
// vertices of key at least P.lohi<<32 | P.band. Launches of the last
// range (threshold 0) after the first return at once when the one
// before left nothing undecided; KF_ALWAYS runs regardless.
#define KF_ALWAYS 64u
// SCAN (hash keys only) reads and pushes by key (see mis2b_batch).
// SRC_LIST: the candidates come from the nlist vertex ids at P.ball (the
// classes above 0 of a split run, mis/gpu_bucket.go) instead of the
// tiles: the launches of a few spread-out vertices then cost as little
// as those vertices, not a pass over every tile.
// DYN: the warps of a block take the block's tiles (or chunks of the
// list) as they go (DynUnits in mis.cu), instead of every WARPS-th one
// each. A warp decides the candidates it finds one batch after the
// other, so with fixed shares a launch lasts as long as the warp with
// the most candidates; its time follows that maximum, not the mean
// (docs/gpu.md).
// DEDUP: pushes along scattered rows skip the targets the warp pushed
// to lately (see mis2b_batch).
template <int PK, bool SCAN, int SRC, bool DYN, bool DEDUP>
__device__ void mis2b_sweep(const Params &P, int nlist) {
	__shared__ ListB lists[WARPS];
	__shared__ Bucket2 scans[WARPS];
	if (!(P.kf & KF_ALWAYS) && !sweep_needed(P)) return;
	const u32 lane = threadIdx.x & 31;
	ListB &L = lists[threadIdx.x >> 5];
	Bucket2 &S = scans[threadIdx.x >> 5];
	const u64 lo = (u64)P.lohi << 32 | P.band;
	u32 *seen = nullptr;
	if constexpr (DEDUP) {
		__shared__ u32 seens[WARPS][SEEN];
		seen = seens[threadIdx.x >> 5];
		for (int i = (int)lane; i < SEEN; i += 32) seen[i] = 0xffffffffu;
		__syncwarp();
	}
	// Candidates are decided once a warp has this many listed (kf bits
	// 8-15, at most FLUSHB; 0: FLUSHB). Fewer decide sooner; more keep
	// the lanes of a batch busy.
	const int flush = (P.kf >> 8 & 0xffu) ? min((int)(P.kf >> 8 & 0xffu), FLUSHB) : FLUSHB;
	u32 wait = 0;
	int cnt = 0;
	if constexpr (SRC == SRC_LIST) {
		const int nc = (nlist + 31) / 32, cs = tile_stride();
		DynUnits d;
		for (int c = DYN ? d.first(dyn_counter(), nc) : first_tile(); c < nc; c = DYN ? d.next() : c + cs) {
			const int i = c * 32 + (int)lane;
			const int v = i < nlist ? P.ball[i] : -1;
			const u32 s = v >= 0 ? __ldcg(P.st + v) : OUT;
			const bool und = STATE(s) == UND;
			const bool flag = und && key_atleast<PK>(P, (u32)v, s, PK == PK_PRIM && und ? __ldg(P.prim + v) : 0, lo);
			const u32 b = __ballot_sync(0xffffffffu, flag);
			if (flag) {
				const int pos = cnt + __popc(b & ((1u << lane) - 1));
				const i64 o0 = P.off[v], o1 = P.off[v + 1];
				L.v[pos] = v;
				L.beg[pos] = o0;
				L.deg[pos] = (int)(o1 - o0);
				L.st[pos] = (u8)s;
			}
			__syncwarp();
			cnt += __popc(b);
			if (cnt < flush && (DYN ? d.more() : c + cs < nc)) continue;
			for (int b0 = 0; b0 < cnt; b0 += BB) wait += mis2b_batch<PK, SCAN, DEDUP>(P, L, S, seen, b0, min(BB, cnt - b0));
			cnt = 0;
		}
		wait = warp_sum(wait);
		if (lane == 0 && wait) atomicAdd(P.count + P.pass % P.ncount, wait);
		return;
	}
	auto visit = [&](int t, u32 w, bool more) {
		// A tile with no undecided vertex (no byte with neither state
		// bit) lists nothing, so its keys and the list's scan are
		// skipped: the launches of the last range, repeated until no
		// vertex is left, find nearly every tile so.
		if (__any_sync(0xffffffffu, ~(w | w >> 1) & 0x01010101u)) {
			u32 flags = 0;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				const u32 s = (w >> (8 * j)) & 0xffu;
				const u32 v = (u32)(t * TILE) + lane * 4 + j;
				const bool und = STATE(s) == UND;
				const u32 pv = PK == PK_PRIM && und ? __ldg(P.prim + v) : 0;
				bool at;
				if constexpr (PREFIX2B<SCAN>) at = key_atleast<PK>(P, v, s, pv, lo);
				else at = key_of<PK>(P, v, s, pv) >= lo;
				flags |= (und && at ? 1u : 0u) << j;
			}
			cnt = tile_list(P, L, cnt, t * TILE, flags, w, nullptr, 0);
		}
		if (cnt < flush && more) return;
		for (int b0 = 0; b0 < cnt; b0 += BB) wait += mis2b_batch<PK, SCAN, DEDUP>(P, L, S, seen, b0, min(BB, cnt - b0));
		cnt = 0;
	};
	each_tile<DYN>(P, visit);
	wait = warp_sum(wait);
	if (lane == 0 && wait) atomicAdd(P.count + P.pass % P.ncount, wait);
}
