// MIS-2 by sorted balls with cursors and countdowns (included by mis.cu
// after the other MIS-2 sweeps; not compiled alone). The Go model of
// these rules is mis/gpu_model2_test.go.
//
// The champion of a ball N[w] is the undecided vertex of largest key in
// it. The ball sweeps of mis2.cuh rescan a whole row whenever a champion
// leaves, and a vertex joins once every ball around it names it, which
// it learns by reading all of those balls. Here instead:
//
//  * Every closed row N[w] is sorted once by decreasing key (perm: the
//    row positions in that order, one byte each, w itself as position
//    deg). A ball keeps a cursor into its sorted row; when its champion
//    leaves, the walk goes on from the cursor past the vertices that read
//    OUT to the next that does not. Keys below the champion's are never
//    read twice, and a walk is a few entries long, not a row.
//  * cnt[v] counts the balls of N[v] that have not reached v yet
//    (deg(v)+1 at the start). A ball reaches each vertex at most once, as
//    its cursor only moves forward, so the walk that brings cnt[v] to zero
//    has seen every larger vertex within distance 2 decided and none a
//    member: v joins on the spot, with an atomic OR of IN, and the warp
//    ORs OUT into its two-hop neighbourhood before it goes on.
//
// States only move from undecided to IN or OUT, and a stale read only
// ever shows "undecided", so a walk that passes a vertex has seen it truly
// decided; a walk that stops on a stale "undecided" one waits on it for
// another sweep, and the countdown it spent there cannot reach zero for
// a vertex that left (a ball shared with the member that pushed it out
// stops at that member, or passed the vertex before the member joined,
// which needs yet another member, of larger key, and so on). Every state
// write is an atomic OR and IN wins over OUT, so no write is lost.
//
// Rows whose sorted order cannot be kept in a byte per entry or whose
// 32-bit sort keys tie (long rows, or the primary and hash do not fit)
// walk by key threshold instead: the next champion is the largest key
// below the last one among the entries that do not read OUT, found by a
// scan of the row. That is the same sequence of champions, so the
// countdown argument holds for them too.
//
// After the first kernel (sort, first champions, first members), sweeps
// take the balls still in play from a list and append those that stay
// in play to the next list, so late sweeps cost what is left, not n.

#define C_COVP 0xfffffffcu  // champion field: covered by a member, settled
#define C_NONE 0xfffffffeu  // champion field: the whole ball decided, no member
#define C_SCAN 0xffffffffu  // cursor field: walk by key threshold (unsorted row)

struct CParams {
	Params p;   // off, adj, st, count, n, ncount, pass, seeds, kf (ball and prim unused)
	u64 *ball;  // cursor<<32 | champion
	int *cnt;   // balls of N[v] that have not reached v
	u8 *perm;   // sorted closed rows, at off[w]+w
	int *list;  // two lists of npad entries
	u32 *len;   // ring of three list lengths
	int npad;
};

__device__ __forceinline__ u64 cball(u32 cur, u32 champ) { return (u64)cur << 32 | champ; }

// Members that a warp's lanes admitted and whose two-hop push the warp
// then does together (up to four per lane and round).
#define JMAX 128
struct Members {
	int m[JMAX];
	i64 b[32];
	int pre[33];
	u32 n;
};

// cjoin makes v a member and lists it for the warp's push. Only the walk
// that brings cnt[v] to zero gets here, and only once.
__device__ __forceinline__ void cjoin(const CParams &C, u32 v, Members &J) {
	atomicOr((u32 *)(C.p.st + (v & ~3u)), IN << (8 * (v & 3u)));
	const u32 i = atomicAdd(&J.n, 1u);
	J.m[i] = (int)v;
}

// cpush ORs OUT into the two-hop neighbourhood of the warp's new members
// and settles the balls next to them, 32 members at a time, the lanes
// taking (member, neighbour) pairs from one flat range (see push_joined).
__device__ __forceinline__ void cpush(const CParams &C, Members &J) {
	const Params &P = C.p;
	const u32 lane = threadIdx.x & 31;
	const u32 nj = J.n;
	for (u32 m0 = 0; m0 < nj; m0 += 32) {
		const u32 k = min(nj - m0, 32u);
		int d = 0;
		if (lane < k) {
			const int c = J.m[m0 + lane];
			const i64 b = __ldg(P.off + c);
			d = (int)(__ldg(P.off + c + 1) - b);
			J.b[lane] = b;
			C.ball[c] = cball(0, C_COVP);
		}
		int sum = d;
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			const int y = __shfl_up_sync(0xffffffffu, sum, o);
			if ((int)lane >= o) sum += y;
		}
		if (lane < k) J.pre[lane + 1] = sum;
		if (lane == 0) J.pre[0] = 0;
		__syncwarp();
		const int total = J.pre[k];
		u32 i = 0;
		for (int p = (int)lane; p < total; p += 64) {
			u32 u[2];
			i64 bu[2];
			int du[2];
			const bool two = p + 32 < total;
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int ph = h == 0 || two ? p + 32 * h : p;
				while (J.pre[i + 1] <= ph) i++;
				u[h] = (u32)__ldg(P.adj + J.b[i] + (ph - J.pre[i]));
			}
#pragma unroll
			for (int h = 0; h < 2; h++) {
				bu[h] = __ldg(P.off + u[h]);
				du[h] = (int)(__ldg(P.off + u[h] + 1) - bu[h]);
			}
#pragma unroll
			for (int h = 0; h < 1 + two; h++) {
				or_out(P.st, u[h]);
				if (P.kf & KF_WORDS) or_out_words(P, bu[h], du[h]);
				else or_out_row(P, bu[h], du[h], [](u32) { return true; });
				C.ball[u[h]] = cball(0, C_COVP);
			}
		}
		__syncwarp();
	}
	if (lane == 0) J.n = 0;
	__syncwarp();
}

// pbase is where the sorted row of w (at offset b) starts in perm: 4-byte
// aligned, so that rows are written and read in words, and never
// overlapping the next row's (see first_row).
__device__ __forceinline__ i64 pbase(i64 b, int w) { return (b & ~(i64)3) + 4 * (i64)w; }

// skey is the 32-bit sort key of a row entry: a marker bit (so that real
// keys are never 0, the padding), the key's top bits, and the slot. Equal
// truncated keys of two entries make the row walk by threshold instead.
template <int PK>
__device__ __forceinline__ u32 skey(const Params &P, u32 v, u32 s, u32 slot) {
	const u32 h = hash32(v, P.seedlo, P.seedhi);
	const u32 t = PK == PK_CLASS ? (CLASS(s) << 20 | h >> 12) : h >> 6;
	return 0x80000000u | t << 5 | slot;
}

// sort_desc sorts NS keys in registers, largest first (bitonic network).
template <int NS>
__device__ __forceinline__ void sort_desc(u32 (&k)[NS]) {
#pragma unroll
	for (int size = 2; size <= NS; size <<= 1) {
#pragma unroll
		for (int stride = size / 2; stride > 0; stride >>= 1) {
#pragma unroll
			for (int i = 0; i < NS; i++) {
				const int j = i ^ stride;
				if (j > i) {
					const u32 a = k[i], b = k[j];
					const bool down = (i & size) == 0;
					k[i] = down ? max(a, b) : min(a, b);
					k[j] = down ? min(a, b) : max(a, b);
				}
			}
		}
	}
}

// scan_max returns the undecided-or-member entry of N[w] of largest key
// below lim (all of them when first), as (key, vertex+1), 0 for none, and
// whether that entry reads IN. It is the walk of a row kept unsorted.
template <int PK>
__device__ __forceinline__ u64 scan_max(const Params &P, int w, i64 b, int deg, u64 lim, bool first, bool &in) {
	u64 best = 0;  // key+1 of the best entry so far
	u32 bv = 0, bs = 0;
	for (int k0 = -1; k0 < deg; k0 += 8) {
		u32 u[8], s[8];
		bool ok[8];
#pragma unroll
		for (int j = 0; j < 8; j++) {
			const int k = k0 + j;
			ok[j] = k < deg;
			u[j] = !ok[j] ? 0u : k < 0 ? (u32)w : (u32)__ldg(P.adj + b + k);
		}
#pragma unroll
		for (int j = 0; j < 8; j++) {
			// Hash keys need no state: read only the entries below the limit.
			const bool need = ok[j] && (PK == PK_CLASS || (!first && hash32(u[j], P.seedlo, P.seedhi) < lim));
			s[j] = need ? (u32)P.st[u[j]] : first ? UND : OUT;
		}
#pragma unroll
		for (int j = 0; j < 8; j++) {
			const u64 k = key_of<PK>(P, u[j], s[j], 0);
			const bool take = ok[j] && STATE(s[j]) != OUT && (first || k < lim) && k + 1 > best;
			best = take ? k + 1 : best;
			bv = take ? u[j] : bv;
			bs = take ? s[j] : bs;
		}
	}
	in = best != 0 && STATE(bs) == IN;
	return best == 0 ? 0 : (u64)bv + 1;
}

// first_row sorts N[w] (slots of up to NS entries: the 16-byte aligned
// row from its lead entries, w itself in the last slot), writes the row
// positions in that order to dst in 4-byte words, and returns the ball:
// the top entry at cursor 0, or with C_SCAN the top entry of a row that
// did not fit or whose keys tied.
template <int PK, int NS>
__device__ __forceinline__ u64 first_row(const CParams &C, int w, i64 b, int deg, bool valid, u32 *dst) {
	const Params &P = C.p;
	const i64 a = b & ~(i64)3;
	const int lead = (int)(b - a), tot = lead + deg;
	const bool fits = valid && tot + 1 <= NS;
	u32 k[NS];
#pragma unroll
	for (int c = 0; c < NS; c += 8) {
		u32 u[8];
		bool ok[8];
		load_row8(P.adj, a, lead, fits ? tot : 0, c, u, ok);
		u32 s[8];
#pragma unroll
		for (int j = 0; j < 8; j++) s[j] = PK == PK_CLASS && ok[j] ? (u32)P.st[u[j]] : 0u;
#pragma unroll
		for (int j = 0; j < 8; j++) k[c + j] = ok[j] ? skey<PK>(P, u[j], s[j], c + j) : 0u;
	}
	if (fits) k[NS - 1] = skey<PK>(P, w, PK == PK_CLASS ? P.st[w] : 0u, NS - 1);
	sort_desc<NS>(k);
	bool tie = false;
#pragma unroll
	for (int i = 0; i + 1 < NS; i++) tie |= k[i + 1] != 0 && (k[i] >> 5) == (k[i + 1] >> 5);
	if (fits && !tie) {
#pragma unroll
		for (int q = 0; q < NS / 4; q++) {
			if (4 * q > deg) break;
			u32 word = 0;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				const u32 slot = k[4 * q + j] & 31u;
				word |= (slot == NS - 1 ? (u32)deg : slot - lead) << (8 * j);
			}
			dst[q] = word;
		}
		const u32 slot = k[0] & 31u;
		const u32 c = slot == NS - 1 ? (u32)w : (u32)__ldg(P.adj + a + slot);
		return cball(0, c);
	}
	if (!valid) return cball(0, C_NONE);
	bool in;
	const u64 c = scan_max<PK>(P, w, b, deg, 0, true, in);
	return cball(C_SCAN, (u32)(c - 1));
}

// STAGE is the shared memory per warp through which the sorted rows of 32
// consecutive vertices go out as one coalesced run (a lane writing its
// own row would touch a sector per word).
#define STAGE 1184

// mis2c_first sorts every closed row, sets every ball to its top entry
// and admits the vertices that top every ball around them. A warp takes
// 128 rows, 32 at a time, and then does their countdowns together.
template <int PK>
__device__ void mis2c_first(const CParams &C) {
	__shared__ Members jm[WARPS];
	__shared__ u32 stage[WARPS][STAGE / 4];
	const Params &P = C.p;
	const u32 lane = threadIdx.x & 31;
	Members &J = jm[threadIdx.x >> 5];
	u32 *sg = stage[threadIdx.x >> 5];
	if (lane == 0) J.n = 0;
	__syncwarp();
	const int nwarps = gridDim.x * WARPS;
	for (int t = blockIdx.x * WARPS + (int)(threadIdx.x >> 5); t * 128 < P.n; t += nwarps) {
		u32 ch[4];
		// Not unrolled: three sort networks per group are code enough.
#pragma unroll 1
		for (int g = 0; g < 4; g++) {
			const int w = t * 128 + g * 32 + (int)lane;
			const bool valid = w < P.n;
			const i64 b = valid ? __ldg(P.off + w) : 0;
			const int deg = valid ? (int)(__ldg(P.off + w + 1) - b) : 0;
			const int need = valid ? (int)(b & 3) + deg + 1 : 0;
			const int mx = __reduce_max_sync(0xffffffffu, need);
			// The warp's rows as one run of perm, staged when it fits.
			const i64 pb = valid ? pbase(b, w) : 0;
			const i64 p0 = __shfl_sync(0xffffffffu, pb, 0);
			const u32 end = __reduce_max_sync(0xffffffffu, valid ? (u32)(pb + deg + 4 - p0) : 0u);
			const bool staged = end <= STAGE;
			u32 *dst = staged ? sg + (pb - p0) / 4 : (u32 *)(C.perm + pb);
			u64 bw;
			if (mx <= 8) bw = first_row<PK, 8>(C, w, b, deg, valid, dst);
			else if (mx <= 16) bw = first_row<PK, 16>(C, w, b, deg, valid, dst);
			else bw = first_row<PK, 32>(C, w, b, deg, valid, dst);
			if (staged) {
				__syncwarp();
				u32 *out = (u32 *)(C.perm + p0);
				for (u32 q = lane; q < end / 4; q += 32) out[q] = sg[q];
				__syncwarp();
			}
			if (valid) C.ball[w] = bw;
			ch[g] = valid ? (u32)bw : 0xffffffffu;
		}
		int old[4];
#pragma unroll
		for (int g = 0; g < 4; g++) old[g] = ch[g] != 0xffffffffu ? atomicSub(C.cnt + ch[g], 1) : 0;
#pragma unroll
		for (int g = 0; g < 4; g++)
			if (old[g] == 1) cjoin(C, ch[g], J);
		__syncwarp();
		if (J.n) cpush(C, J);
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(P.count + P.pass % P.ncount, (u32)max(P.n, 1));
}

// creach records that ball w reached vertex c at cursor position p, and
// admits c when w was the last ball of N[c] to get there.
__device__ __forceinline__ void creach(const CParams &C, int w, u32 p, u32 c, Members &J) {
	C.ball[w] = cball(p, c);
	if (atomicSub(C.cnt + c, 1) == 1) cjoin(C, c, J);
}

// CSTEP is the positions of a sorted row a walk step reads.
#define CSTEP 8

// cwalk moves ball w (at offset b, degree deg; its champion read OUT) on to its next champion and says whether it stays in play.
// Sorted rows are read CSTEP positions per step from the 4-byte word at or
// below the cursor, with every load of a step issued before any is used.
template <int PK>
__device__ __forceinline__ bool cwalk(const CParams &C, int w, i64 b, int deg, u64 bw, Members &J) {
	const Params &P = C.p;
	const u32 cur = (u32)(bw >> 32);
	if (cur == C_SCAN) {
		const u32 c = (u32)bw;
		const u32 sc = PK == PK_CLASS ? (u32)__ldcg(P.st + c) : 0u;
		bool in;
		const u64 x = scan_max<PK>(P, w, b, deg, key_of<PK>(P, c, sc, 0), false, in);
		if (x == 0 || in) {
			C.ball[w] = cball(0, x == 0 ? C_NONE : C_COVP);
			return false;
		}
		creach(C, w, C_SCAN, (u32)(x - 1), J);
		return true;
	}
	const u32 *pr = (const u32 *)(C.perm + pbase(b, w));
	for (int p0 = (int)(cur + 1) & ~3; p0 <= deg; p0 += CSTEP) {
		u32 wd[CSTEP / 4], u[CSTEP], s[CSTEP];
#pragma unroll
		for (int q = 0; q < CSTEP / 4; q++) wd[q] = p0 + 4 * q <= deg ? pr[p0 / 4 + q] : 0u;
#pragma unroll
		for (int j = 0; j < CSTEP; j++) {
			const int p = p0 + j;
			const u32 idx = (wd[j / 4] >> (8 * (j % 4))) & 255u;
			u[j] = p <= (int)cur || p > deg ? 0xffffffffu : idx == (u32)deg ? (u32)w : (u32)__ldg(P.adj + b + idx);
		}
#pragma unroll
		for (int j = 0; j < CSTEP; j++) s[j] = u[j] != 0xffffffffu ? (u32)P.st[u[j]] : OUT;
		int f = -1;
#pragma unroll
		for (int j = CSTEP - 1; j >= 0; j--)
			if (STATE(s[j]) != OUT) f = j;
		if (f >= 0) {
			u32 uf = u[0], sf = s[0];
#pragma unroll
			for (int j = 1; j < CSTEP; j++)
				if (j == f) uf = u[j], sf = s[j];
			if (STATE(sf) == IN) {
				C.ball[w] = cball(0, C_COVP);
				return false;
			}
			creach(C, w, (u32)(p0 + f), uf, J);
			return true;
		}
	}
	C.ball[w] = cball(0, C_NONE);
	return false;
}

// The per-warp state of a cursor sweep: balls waiting for a walk (with
// their row offsets), and balls still in play waiting to be appended to
// the next list, which a warp does for 128 or more at once.
#define CW_CAP 160
#define CW_OUT 256
struct CWarp {
	u64 wb[CW_CAP];
	i64 wbeg[CW_CAP];
	int ww[CW_CAP];
	int wdeg[CW_CAP];
	int out[CW_OUT];
	u32 nw, nout;
	Members J;
};

// cappend adds the lanes' balls for which take holds to the warp's
// buffer of balls in play.
__device__ __forceinline__ void cappend(CWarp &S, bool take, int w) {
	const u32 lane = threadIdx.x & 31;
	const u32 m = __ballot_sync(0xffffffffu, take);
	if (take) S.out[S.nout + __popc(m & ((1u << lane) - 1))] = w;
	__syncwarp();
	if (lane == 0) S.nout += __popc(m);
	__syncwarp();
}

// cflush appends the warp's buffered balls to the next list once at
// least min of them wait, with one atomic, and counts them as live.
__device__ __forceinline__ void cflush(const CParams &C, CWarp &S, int *dst, u32 *dlen, u32 min, u32 &live) {
	const u32 lane = threadIdx.x & 31;
	const u32 k = S.nout;
	if (k < min || k == 0) return;
	u32 at = 0;
	if (lane == 0) at = atomicAdd(dlen, k);
	at = __shfl_sync(0xffffffffu, at, 0);
	for (u32 i = lane; i < k; i += 32) dst[at + i] = S.out[i];
	live += lane == 0 ? k : 0;
	__syncwarp();
	if (lane == 0) S.nout = 0;
	__syncwarp();
}

// cwalks walks up to 32 of the waiting balls, one per lane, then pushes
// the members that the walks admitted.
template <int PK>
__device__ __forceinline__ void cwalks(const CParams &C, CWarp &S) {
	const u32 lane = threadIdx.x & 31;
	const u32 k = min(S.nw, 32u), at = S.nw - k;
	bool in = false;
	int w = -1;
	if (lane < k) {
		w = S.ww[at + lane];
		const u64 bw = S.wb[at + lane];
		in = cwalk<PK>(C, w, S.wbeg[at + lane], S.wdeg[at + lane], bw, S.J);
	}
	__syncwarp();
	if (lane == 0) S.nw = at;
	__syncwarp();
	cappend(S, in, w);
	if (S.J.n) cpush(C, S.J);
}

// mis2c_sweep takes the balls in play from the list of the last sweep
// (every vertex in sweep 1), 128 per warp and round: coalesced loads of
// the list and gathers of the balls and their champions' states, then
// walks for those whose champion left, 32 at a time. Balls that stay in
// play go to the next list.
template <int PK>
__device__ void mis2c_sweep(const CParams &C) {
	__shared__ CWarp cws[WARPS];
	const Params &P = C.p;
	if (!sweep_needed(P)) return;
	const u32 lane = threadIdx.x & 31;
	CWarp &S = cws[threadIdx.x >> 5];
	if (lane == 0) S.nw = S.nout = S.J.n = 0;
	__syncwarp();
	const bool all = P.pass == 1;
	const int *src = C.list + (i64)(P.pass & 1) * C.npad;
	int *dst = C.list + (i64)((P.pass + 1) & 1) * C.npad;
	const u32 len = all ? (u32)P.n : __ldcg(C.len + P.pass % 3);
	u32 *dlen = C.len + (P.pass + 1) % 3;
	if (blockIdx.x == 0 && threadIdx.x == 0) C.len[(P.pass + 2) % 3] = 0;
	u32 live = 0;
	const u32 nwarps = gridDim.x * WARPS;
	for (u32 t = blockIdx.x * WARPS + (threadIdx.x >> 5); t * 128 < len; t += nwarps) {
		const u32 i0 = t * 128 + lane * 4;
		int w[4];
		if (all) {
#pragma unroll
			for (int j = 0; j < 4; j++) w[j] = i0 + j < len ? (int)(i0 + j) : -1;
		} else if (i0 + 3 < len) {
			const int4 x = __ldcg((const int4 *)(src + i0));
			w[0] = x.x, w[1] = x.y, w[2] = x.z, w[3] = x.w;
		} else {
#pragma unroll
			for (int j = 0; j < 4; j++) w[j] = i0 + j < len ? __ldcg(src + i0 + j) : -1;
		}
		u64 bw[4];
		u32 sc[4];
#pragma unroll
		for (int j = 0; j < 4; j++) bw[j] = w[j] >= 0 ? __ldcg(C.ball + w[j]) : cball(0, C_NONE);
#pragma unroll
		for (int j = 0; j < 4; j++) sc[j] = (int)(u32)bw[j] >= 0 ? __ldcg(P.st + (u32)bw[j]) : IN;
		bool walk[4];
		i64 ob[4];
		int od[4];
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const bool has = (int)(u32)bw[j] >= 0;
			walk[j] = has && STATE(sc[j]) == OUT;
			if (has && STATE(sc[j]) == IN) C.ball[w[j]] = cball(0, C_COVP);
			ob[j] = walk[j] ? __ldg(P.off + w[j]) : 0;
			od[j] = walk[j] ? (int)(__ldg(P.off + w[j] + 1) - ob[j]) : 0;
		}
#pragma unroll
		for (int j = 0; j < 4; j++) {
			cappend(S, (int)(u32)bw[j] >= 0 && STATE(sc[j]) == UND, w[j]);
			const u32 m = __ballot_sync(0xffffffffu, walk[j]);
			if (walk[j]) {
				const u32 at = S.nw + __popc(m & ((1u << lane) - 1));
				S.ww[at] = w[j];
				S.wb[at] = bw[j];
				S.wbeg[at] = ob[j];
				S.wdeg[at] = od[j];
			}
			__syncwarp();
			if (lane == 0) S.nw += __popc(m);
			__syncwarp();
		}
		cflush(C, S, dst, dlen, 128, live);
		while (S.nw >= 32) {
			cwalks<PK>(C, S);
			cflush(C, S, dst, dlen, 128, live);
		}
	}
	while (S.nw > 0) {
		cwalks<PK>(C, S);
		cflush(C, S, dst, dlen, 128, live);
	}
	cflush(C, S, dst, dlen, 0, live);
	if (lane == 0 && live) atomicAdd(P.count + P.pass % P.ncount, live);
}

// mis2c_count sets every countdown to the size of the closed row.
extern "C" __global__ void mis2c_count(const i64 *off, int *cnt, int n) {
	for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
		cnt[v] = (int)(off[v + 1] - off[v]) + 1;
}

#define CURSOR_KERNEL(name, bounds, body)                                                               \
	extern "C" __global__ void __launch_bounds__ bounds                                                 \
	    name(const i64 *off, const int *adj, u8 *st, u64 *ball, int *cnt, u8 *perm, int *list, u32 *len, \
	         u32 *count, int n, int ncount, int pass, u32 seedlo, u32 seedhi, u32 kf, int npad) {        \
		CParams C = {{off, adj, st, nullptr, nullptr, count, n, ncount, pass, seedlo, seedhi, 0, kf},   \
		             ball, cnt, perm, list, len, npad};                                                  \
		body;                                                                                           \
	}
CURSOR_KERNEL(mis2c_first_p0, (256), (mis2c_first<PK_HASH>(C)))
CURSOR_KERNEL(mis2c_first_p1, (256), (mis2c_first<PK_CLASS>(C)))
CURSOR_KERNEL(mis2c_sweep_p0, (256, 4), (mis2c_sweep<PK_HASH>(C)))
CURSOR_KERNEL(mis2c_sweep_p1, (256, 4), (mis2c_sweep<PK_CLASS>(C)))
