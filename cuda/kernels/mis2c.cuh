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
// then does together.
struct Members {
	int m[32];
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

// reach records that ball w reached vertex c at cursor position p.
__device__ __forceinline__ void creach(const CParams &C, int w, u32 p, u32 c, Members &J) {
	C.ball[w] = cball(p, c);
	if (atomicSub(C.cnt + c, 1) == 1) cjoin(C, c, J);
}

// cpush ORs OUT into the two-hop neighbourhood of the warp's new members
// and settles the balls next to them, the lanes taking (member,
// neighbour) pairs from one flat range (see push_joined).
__device__ __forceinline__ void cpush(const CParams &C, Members &J) {
	const Params &P = C.p;
	const u32 lane = threadIdx.x & 31;
	const u32 nj = J.n;
	int d = 0;
	if (lane < nj) {
		const int c = J.m[lane];
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
	if (lane < nj) J.pre[lane + 1] = sum;
	if (lane == 0) J.pre[0] = 0;
	__syncwarp();
	const int total = J.pre[nj];
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
	if (lane == 0) J.n = 0;
	__syncwarp();
}

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
// row from its lead entries, w itself in the last slot) into perm and
// returns the ball: the top entry at cursor 0, or with C_SCAN the top
// entry of a row that did not fit or whose keys tied.
template <int PK, int NS>
__device__ __forceinline__ u64 first_row(const CParams &C, int w, i64 b, int deg, bool valid) {
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
		u8 *out = C.perm + b + w;
#pragma unroll
		for (int i = 0; i < NS; i++) {
			if (i > deg) break;
			const u32 slot = k[i] & 31u;
			out[i] = (u8)(slot == NS - 1 ? deg : slot - lead);
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

// mis2c_first sorts every closed row, sets every ball to its top entry
// and admits the vertices that top every ball around them.
template <int PK>
__device__ void mis2c_first(const CParams &C) {
	__shared__ Members jm[WARPS];
	const Params &P = C.p;
	const u32 lane = threadIdx.x & 31;
	Members &J = jm[threadIdx.x >> 5];
	if (lane == 0) J.n = 0;
	__syncwarp();
	const int stride = gridDim.x * WARPS * 32;
	for (int base = (blockIdx.x * WARPS + (int)(threadIdx.x >> 5)) * 32; base < P.n; base += stride) {
		const int w = base + (int)lane;
		const bool valid = w < P.n;
		const i64 b = valid ? __ldg(P.off + w) : 0;
		const int deg = valid ? (int)(__ldg(P.off + w + 1) - b) : 0;
		const int need = valid ? (int)(b & 3) + deg + 1 : 0;
		const int mx = __reduce_max_sync(0xffffffffu, need);
		u64 bw;
		if (mx <= 8) bw = first_row<PK, 8>(C, w, b, deg, valid);
		else if (mx <= 16) bw = first_row<PK, 16>(C, w, b, deg, valid);
		else bw = first_row<PK, 32>(C, w, b, deg, valid);
		if (valid) {
			C.ball[w] = bw;
			const u32 c = (u32)bw;
			if (atomicSub(C.cnt + c, 1) == 1) cjoin(C, c, J);
		}
		__syncwarp();
		if (J.n) cpush(C, J);
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(P.count + P.pass % P.ncount, (u32)max(P.n, 1));
}

// cwalk moves ball w (champion c, state sc, read OUT) on to its next
// champion and says whether the ball stays in play.
template <int PK>
__device__ __forceinline__ bool cwalk(const CParams &C, int w, u64 bw, u32 sc, Members &J) {
	const Params &P = C.p;
	const i64 b = __ldg(P.off + w);
	const int deg = (int)(__ldg(P.off + w + 1) - b);
	const u32 cur = (u32)(bw >> 32);
	if (cur == C_SCAN) {
		const u32 c = (u32)bw;
		bool in;
		const u64 x = scan_max<PK>(P, w, b, deg, key_of<PK>(P, c, sc, 0), false, in);
		if (x == 0 || in) {
			C.ball[w] = cball(0, x == 0 ? C_NONE : C_COVP);
			return false;
		}
		creach(C, w, C_SCAN, (u32)(x - 1), J);
		return true;
	}
	const u8 *pr = C.perm + b + w;
	for (int p0 = (int)cur + 1; p0 <= deg; p0 += 8) {
		u32 u[8], s[8];
#pragma unroll
		for (int j = 0; j < 8; j++) u[j] = p0 + j <= deg ? (u32)pr[p0 + j] : 0xffffffffu;
#pragma unroll
		for (int j = 0; j < 8; j++)
			u[j] = u[j] == 0xffffffffu ? u[j] : u[j] == (u32)deg ? (u32)w : (u32)__ldg(P.adj + b + u[j]);
#pragma unroll
		for (int j = 0; j < 8; j++) s[j] = u[j] != 0xffffffffu ? (u32)P.st[u[j]] : OUT;
		int f = -1;
#pragma unroll
		for (int j = 7; j >= 0; j--)
			if (STATE(s[j]) != OUT) f = j;
		if (f >= 0) {
			u32 uf = u[0], sf = s[0];
#pragma unroll
			for (int j = 1; j < 8; j++)
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

// mis2c_sweep takes the balls in play from the list of the last sweep
// (every vertex in sweep 1), moves on those whose champion left, and
// lists those still in play for the next.
template <int PK>
__device__ void mis2c_sweep(const CParams &C) {
	__shared__ Members jm[WARPS];
	const Params &P = C.p;
	if (!sweep_needed(P)) return;
	const u32 lane = threadIdx.x & 31;
	Members &J = jm[threadIdx.x >> 5];
	if (lane == 0) J.n = 0;
	__syncwarp();
	const bool all = P.pass == 1;
	const int *src = C.list + (i64)(P.pass & 1) * C.npad;
	int *dst = C.list + (i64)((P.pass + 1) & 1) * C.npad;
	const u32 len = all ? (u32)P.n : __ldcg(C.len + P.pass % 3);
	u32 *dlen = C.len + (P.pass + 1) % 3;
	if (blockIdx.x == 0 && threadIdx.x == 0) C.len[(P.pass + 2) % 3] = 0;
	u32 live = 0;
	const u32 stride = gridDim.x * WARPS * 32;
	for (u32 i0 = (blockIdx.x * WARPS + (threadIdx.x >> 5)) * 32; i0 < len; i0 += stride) {
		const u32 i = i0 + lane;
		bool in = false;
		int w = -1;
		if (i < len) {
			w = all ? (int)i : __ldcg(src + i);
			const u64 bw = __ldcg(C.ball + w);
			const u32 c = (u32)bw;
			if ((int)c >= 0) {
				const u32 s = __ldcg(P.st + c);
				if (STATE(s) == UND) in = true;
				else if (STATE(s) == IN) C.ball[w] = cball(0, C_COVP);
				else in = cwalk<PK>(C, w, bw, s, J);
			}
		}
		const u32 m = __ballot_sync(0xffffffffu, in);
		if (m) {
			u32 at = 0;
			if (lane == 0) at = atomicAdd(dlen, __popc(m));
			at = __shfl_sync(0xffffffffu, at, 0);
			if (in) dst[at + __popc(m & ((1u << lane) - 1))] = w;
			live += lane == 0 ? __popc(m) : 0;
		}
		__syncwarp();
		if (J.n) cpush(C, J);
	}
	if (lane == 0 && live) atomicAdd(P.count + P.pass % P.ncount, live);
}

// mis2c_count sets every countdown to the size of the closed row.
extern "C" __global__ void mis2c_count(const i64 *off, int *cnt, int n) {
	for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
		cnt[v] = (int)(off[v + 1] - off[v]) + 1;
}

#define CURSOR_KERNEL(name, body)                                                                       \
	extern "C" __global__ void __launch_bounds__(256)                                                   \
	    name(const i64 *off, const int *adj, u8 *st, u64 *ball, int *cnt, u8 *perm, int *list, u32 *len, \
	         u32 *count, int n, int ncount, int pass, u32 seedlo, u32 seedhi, u32 kf, int npad) {        \
		CParams C = {{off, adj, st, nullptr, nullptr, count, n, ncount, pass, seedlo, seedhi, 0, kf},   \
		             ball, cnt, perm, list, len, npad};                                                  \
		body;                                                                                           \
	}
CURSOR_KERNEL(mis2c_first_p0, (mis2c_first<PK_HASH>(C)))
CURSOR_KERNEL(mis2c_first_p1, (mis2c_first<PK_CLASS>(C)))
CURSOR_KERNEL(mis2c_sweep_p0, (mis2c_sweep<PK_HASH>(C)))
CURSOR_KERNEL(mis2c_sweep_p1, (mis2c_sweep<PK_CLASS>(C)))
