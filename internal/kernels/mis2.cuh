// MIS-2 sweeps: champions per closed neighbourhood, runner-ups and the
// first sweep (included by mis.cu after MIS-1; not compiled alone). The
// rules are described at the top of mis.cu.

// ---------------------------------------------------------------- MIS-2

template <int G>
__device__ __forceinline__ void argmax_reduce(u64 &key, int &id) {
#pragma unroll
	for (int d = G / 2; d > 0; d >>= 1) {
		u64 k2 = __shfl_xor_sync(group_mask<G>(), key, d);
		int i2 = __shfl_xor_sync(group_mask<G>(), id, d);
		if (i2 >= 0 && (id < 0 || k2 > key)) {
			key = k2;
			id = i2;
		}
	}
}

// Top2 keeps the two undecided vertices of largest key that a scan
// offers it (R: the second too) and reduces them over a group of G lanes
// (the first only).
template <int PK, bool R>
struct Top2 {
	u64 key = 0, key2 = 0;
	int id = -1, id2 = -1;
	// Selects rather than branches (see the hash version below).
	__device__ __forceinline__ void add_if(const Params &P, bool take, u32 v, u32 s, u32 prim) {
		const u64 k = key_of<PK>(P, v, s, prim);
		const bool b1 = take && (id < 0 || k > key);
		const bool b2 = R && take && !b1 && (id2 < 0 || k > key2);
		if (R) {
			key2 = b1 ? key : b2 ? k : key2;
			id2 = b1 ? id : b2 ? (int)v : id2;
		}
		key = b1 ? k : key;
		id = b1 ? (int)v : id;
	}
	template <int G>
	__device__ __forceinline__ void reduce() { argmax_reduce<G>(key, id); }
	__device__ __forceinline__ int first() const { return id; }
	__device__ __forceinline__ int second() const { return id2; }
};

// With hash keys a vertex and its key fit one word, hash<<32 | v+1 (0 is
// nobody; hashes never tie, so the words order as the keys), and the top
// two follow with min and max, no branches: a branch per row entry, taken
// by some lanes and not others, cost more than the hashes themselves.
template <bool R>
struct Top2<PK_HASH, R> {
	u64 a = 0, b = 0;
	__device__ __forceinline__ void add_if(const Params &P, bool take, u32 v, u32, u32) {
		const u64 x = take ? (u64)vhash(P, v) << 32 | (v + 1) : 0;
		const u64 lo = min(a, x);
		a = max(a, x);
		if (R) b = max(b, lo);
	}
	template <int G>
	__device__ __forceinline__ void reduce() {
#pragma unroll
		for (int d = G / 2; d > 0; d >>= 1) a = max(a, __shfl_xor_sync(group_mask<G>(), a, d));
	}
	__device__ __forceinline__ int first() const { return (int)(u32)a - 1; }
	__device__ __forceinline__ int second() const { return (int)(u32)b - 1; }
};

__device__ __forceinline__ bool covered(int b) { return b == B_COV || b == B_COVP; }

// ball2 holds, beside each champion, the runner-up: the undecided vertex
// of largest key in N[w] but the champion, as the rescan that found the
// champion saw it (B_NONE when there was none, B_UNK when unknown). It
// lives in the ball buffer after the padded ball array and only the
// visitor of w reads or writes it. States read by that rescan may be
// stale, but only ever as undecided, so the runner-up is the largest of
// a superset of N[w]'s undecided vertices: when the champion leaves and
// the runner-up still reads undecided, it is the new champion, and most
// balls need no rescan.
__device__ __forceinline__ int *ball2(const Params &P) {
	return P.ball + (P.n + TILE - 1) / TILE * TILE;
}

// Members whose two-hop push the warp does together after its visits
// (KF_JOIN2), per warp.
#define JCAP 32
struct Joined {
	u8 at[JCAP];  // the member's place in the warp's list
	int pre[JCAP + 1];
	u32 n;
};

template <int G, int PK, bool CG = false, bool R = false>
__device__ __forceinline__ void mis2_visit(const Params &P, int w, i64 b, int deg, u32 sw, int bw, u32 champ,
                                           Joined *jd = nullptr, int at = 0) {
	constexpr int U = USCAN(G);
	const u32 q = threadIdx.x & (G - 1);
	const u32 gm = group_mask<G>();
	bool und = STATE(sw) == UND;
	int nb = bw;
	if (bw >= 0 && champ == IN) nb = B_COV;
	bool rescan = bw == B_UNK || (bw >= 0 && champ == OUT);
	if (R && CG && bw >= 0 && champ == OUT) {
		// The champion left: the runner-up takes over when it is still
		// undecided; a member there covers the ball; with none, all of
		// N[w] is decided without a member. (The sweeps do this in the
		// tile pass; this is for the tail.)
		const int r2 = ld<CG>(ball2(P) + w);
		const u32 s2 = r2 >= 0 ? STATE(ld<CG>(P.st + r2)) : OUT;
		if (r2 == B_NONE || (r2 >= 0 && s2 != OUT)) {
			rescan = false;
			nb = r2 == B_NONE ? B_NONE : (s2 == IN ? B_COV : r2);
			if (nb >= 0) ball2(P)[w] = B_UNK;
		}
	}
	bool cov = false, allme = true;
	// In the first sweep every ball is unknown and nearly every vertex
	// undecided: the champion is the vertex of largest key in N[w], which
	// needs no state reads unless the key lives in the state (classes),
	// and no neighbour's ball can name w yet. Treating a vertex decided
	// earlier in this sweep as undecided only delays decisions.
	const bool first = P.pass == 0 && PK != PK_CLASS;
	if (rescan) {
		// One pass over the row: the states give the ball's champion,
		// and for an undecided w the neighbours' balls say whether w
		// can join (all name w) or must leave (one is covered).
		bool anyin = STATE(sw) == IN;
		Top2<PK, R> top;
		top.add_if(P, q == 0 && und, w, sw, PK == PK_PRIM && q == 0 && und ? __ldg(P.prim + w) : 0);
		for (int k0 = 0; k0 < deg; k0 += G * U) {
			u32 u[U], s[U], p[U];
			int bu[U];
			bool ok[U];
			row_step<G>(P, b, deg, k0, u, ok);
#pragma unroll
			for (int j = 0; j < U; j++) {
				s[j] = ok[j] ? (first ? UND : ld<CG>(P.st + u[j])) : OUT;
				p[j] = (PK == PK_PRIM && ok[j]) ? __ldg(P.prim + u[j]) : 0;
				bu[j] = (ok[j] && und && !first) ? ld<CG>(P.ball + u[j]) : w;
			}
#pragma unroll
			for (int j = 0; j < U; j++) {
				if (STATE(s[j]) == IN) anyin = true;
				top.add_if(P, ok[j] && STATE(s[j]) == UND, u[j], s[j], p[j]);
				cov |= covered(bu[j]);
				allme &= bu[j] == w;
			}
		}
		top.template reduce<G>();
		anyin = group_any<G>(gm, anyin);
		const int id = top.first(), id2 = top.second();
		nb = anyin ? B_COV : (id < 0 ? B_NONE : id);
		if (R && nb >= 0) ball2(P)[w] = id2 < 0 ? B_NONE : id2;
		if (first) allme = false;
	} else if (und && nb == w) {
		// Only the decision is open: stop at the first neighbour whose
		// ball does not name w.
		for (int k0 = 0; k0 < deg; k0 += G * U) {
			int bu[U];
#pragma unroll
			for (int j = 0; j < U; j++) {
				int k = k0 + q + j * G;
				bu[j] = k < deg ? (int)__ldg(P.adj + b + k) : -1;
			}
#pragma unroll
			for (int j = 0; j < U; j++) bu[j] = bu[j] >= 0 ? ld<CG>(P.ball + bu[j]) : w;
#pragma unroll
			for (int j = 0; j < U; j++) {
				cov |= covered(bu[j]);
				allme &= bu[j] == w;
			}
			if (group_any<G>(gm, cov || !allme)) break;
		}
	}
	cov = group_any<G>(gm, cov);
	allme = !group_any<G>(gm, !allme);
	if (nb == B_COV) {
		// A member lies in N[w]: all of N[w] is within distance 2 of it.
		push_out<G, true, CG>(P, b, deg);
		if (q == 0 && und) P.st[w] = (u8)((sw & ~3u) | OUT);
		und = false;
		nb = B_COVP;
	}
	if (q == 0 && nb != bw) P.ball[w] = nb;
	if (!und) return;
	if (cov) {
		// A neighbour's ball holds a member, within distance 2 of w.
		if (q == 0) P.st[w] = (u8)((sw & ~3u) | OUT);
		return;
	}
	if (nb != w || !allme) return;
	// w joins: its neighbours leave, and their balls are covered. The
	// fence makes IN visible before anything that tells other threads of
	// the member (a covered ball), so that no push reaches w's byte while
	// it still reads undecided and leaves it reading OUT.
	if (q == 0) atomicOr((u32 *)(P.st + (w & ~3)), IN << (8 * (w & 3)));
	if constexpr (G > 1) __syncwarp(gm);
	__threadfence();
	if (q == 0) P.ball[w] = B_COVP;
	if (G == 1 && jd) {
		const u32 i = atomicAdd(&jd->n, 1u);
		if (i < JCAP) {
			jd->at[i] = (u8)at;
			return;
		}
	}
	constexpr int UP = UPUSH(G);
	for (int k0 = 0; k0 < deg; k0 += G * UP) {
		u32 u[UP], s[UP];
		int bu[UP];
#pragma unroll
		for (int j = 0; j < UP; j++) {
			int k = k0 + q + j * G;
			u[j] = k < deg ? (u32)__ldg(P.adj + b + k) : 0xffffffffu;
		}
		const bool red = P.kf & KF_RED;
#pragma unroll
		for (int j = 0; j < UP; j++) {
			s[j] = u[j] != 0xffffffffu && !red ? ld<CG>(P.st + u[j]) : OUT;
			bu[j] = u[j] != 0xffffffffu ? ld<CG>(P.ball + u[j]) : B_COVP;
		}
#pragma unroll
		for (int j = 0; j < UP; j++) {
			if (red && u[j] != 0xffffffffu) or_out(P.st, u[j]);
			else if (STATE(s[j]) == UND) P.st[u[j]] = (u8)((s[j] & ~3u) | OUT);
			if (!covered(bu[j])) P.ball[u[j]] = B_COV;
		}
	}
}

// push_joined ORs OUT into the whole distance-2 neighbourhood of the
// members a warp's visits listed, its lanes taking one neighbour u of a
// member each (all members' neighbours in one flat range, so that short
// rows keep the lanes busy): u and N(u) leave, and ball[u] is covered
// with the push done. That settles in the sweep where the member joined
// what would otherwise take the covered balls' visits in the next sweep.
__device__ __forceinline__ void push_joined(const Params &P, Joined &jd, const List<2> &L) {
	const u32 lane = threadIdx.x & 31;
	const u32 nj = min(jd.n, (u32)JCAP);
	// Prefix sums of the members' degrees.
	int sum = lane < nj ? L.deg[jd.at[lane]] : 0;
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		const int y = __shfl_up_sync(0xffffffffu, sum, o);
		if ((int)lane >= o) sum += y;
	}
	if (lane < nj) jd.pre[lane + 1] = sum;
	if (lane == 0) jd.pre[0] = 0;
	__syncwarp();
	const int total = jd.pre[nj];
	// Two pairs per lane and round, with their loads issued together:
	// the lanes wait on three dependent loads (neighbour, its row
	// offsets, its row) before any OR.
	u32 i = 0;  // the member of pair p; p only grows
	for (int p = (int)lane; p < total; p += 64) {
		u32 u[2];
		i64 bu[2];
		int du[2];
		const bool two = p + 32 < total;
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int ph = h == 0 || two ? p + 32 * h : p;
			while (jd.pre[i + 1] <= ph) i++;
			u[h] = (u32)__ldg(P.adj + L.beg[jd.at[i]] + (ph - jd.pre[i]));
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
			P.ball[u[h]] = B_COVP;
		}
	}
	__syncwarp();
	if (lane == 0) jd.n = 0;
	__syncwarp();
}

// R keeps runner-ups (ball2), for one lane per vertex only.
template <int G, int PK, bool R = false>
__device__ void mis2_sweep(const Params &P) {
	static_assert(!R || G == 1, "runner-ups need one lane per vertex");
	__shared__ List<2> lists[WARPS];
	__shared__ Joined joined[WARPS];
	if (!sweep_needed(P)) return;
	const u32 lane = threadIdx.x & 31;
	List<2> &L = lists[threadIdx.x >> 5];
	// KF_JOIN2 needs 16-byte row loads (aligned rows), which the host checks.
	Joined *jd = G == 1 && (P.kf & KF_JOIN2) ? &joined[threadIdx.x >> 5] : nullptr;
	if (jd && lane == 0) jd->n = 0;
	__syncwarp();
	const int nt = num_tiles(P), ts = tile_stride();
	u32 live = 0;
	int cnt = 0;
	int t = first_tile();
	u32 nw = 0;
	int4 nb4 = make_int4(0, 0, 0, 0);
	if (t < nt) {
		nw = __ldcg((const u32 *)(P.st + t * TILE + lane * 4));
		nb4 = __ldcg((const int4 *)(P.ball + t * TILE + lane * 4));
	}
	for (; t < nt; t += ts) {
		const int base = t * TILE;
		const u32 w = nw;
		int bs[4] = {nb4.x, nb4.y, nb4.z, nb4.w};
		const bool more = t + ts < nt;
		if (more) {
			nw = __ldcg((const u32 *)(P.st + (t + ts) * TILE + lane * 4));
			nb4 = __ldcg((const int4 *)(P.ball + (t + ts) * TILE + lane * 4));
		}
		// A vertex is in play until it is decided and its ball settled;
		// it has work when its ball needs a rescan or a push, or when it
		// is undecided and the champion of its own ball.
		u32 champ[4];
#pragma unroll
		for (int j = 0; j < 4; j++) champ[j] = bs[j] >= 0 ? __ldcg(P.st + bs[j]) : 0u;
		if constexpr (R) {
			// A ball whose champion left passes to its runner-up here,
			// with no visit (see ball2), when that is still undecided;
			// a member as runner-up covers the ball (the visit pushes).
			int r2[4];
			u32 s2[4];
#pragma unroll
			for (int j = 0; j < 4; j++)
				r2[j] = bs[j] >= 0 && STATE(champ[j]) == OUT ? __ldcg(ball2(P) + base + lane * 4 + j) : B_UNK;
#pragma unroll
			for (int j = 0; j < 4; j++) s2[j] = r2[j] >= 0 ? STATE(__ldcg(P.st + r2[j])) : OUT;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				if (!(r2[j] == B_NONE || (r2[j] >= 0 && s2[j] != OUT))) continue;
				const int v = base + (int)lane * 4 + j;
				const int nb = r2[j] == B_NONE ? B_NONE : (s2[j] == IN ? B_COV : r2[j]);
				if (nb != B_COV) P.ball[v] = nb;
				if (nb >= 0) ball2(P)[v] = B_UNK;
				bs[j] = nb;
				champ[j] = UND;
			}
		}
		u32 flags = 0, aux = 0;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int v = base + (int)lane * 4 + j;
			const u32 s = (w >> (8 * j)) & 3u;
			const int bj = bs[j];
			const bool inplay = s == UND || !(bj == B_NONE || bj == B_COVP);
			live += inplay;
			const u32 c = STATE(champ[j]);
			// In a band sweep, a ball whose champion left waits for a
			// rescan while that champion was below the band (its new
			// champion is smaller still), and only vertices in the band
			// try to join; pushes never wait.
			const bool work = inplay && (bj == B_UNK || bj == B_COV || (bj >= 0 && c == IN) ||
			                             (bj >= 0 && c == OUT && in_band(P, (u32)bj)) ||
			                             (s == UND && bj == v && in_band(P, (u32)v)));
			flags |= (work ? 1u : 0u) << j;
			aux |= c << (8 * j);
		}
		cnt = tile_list(P, L, cnt, base, flags, w, bs, aux);
		if (cnt < TILE && more) continue;
		for (int i = lane / G; i < cnt; i += 32 / G)
			mis2_visit<G, PK, false, R>(P, L.v[i], L.beg[i], L.deg[i], L.st[i], L.ball[i], L.aux[i], jd, i);
		__syncwarp();
		if (jd) push_joined(P, *jd, L);
		cnt = 0;
	}
	live = warp_sum(live);
	if (lane == 0 && live) atomicAdd(P.count + P.pass % P.ncount, live);
}

// mis2_first is the first MIS-2 sweep for one lane per vertex. With
// every vertex undecided, a ball's champion is the vertex of largest key
// in N[w] and its runner-up the next, and no vertex can join yet, so the
// sweep needs no tiles, lists or state reads (but for class keys): one
// pass over the rows with 16-byte loads (each_row), which the general visit
// cannot afford in registers. It replaces sweep 0 of mis2_g1[r].
template <int PK, bool R>
__device__ void mis2_first(const Params &P) {
	for (int w = blockIdx.x * blockDim.x + threadIdx.x; w < P.n; w += gridDim.x * blockDim.x) {
		const i64 b = __ldg(P.off + w);
		const int deg = (int)(__ldg(P.off + w + 1) - b);
		const u32 sw = PK == PK_CLASS ? P.st[w] : 0;
		Top2<PK, R> top;
		top.add_if(P, true, w, sw, PK == PK_PRIM ? __ldg(P.prim + w) : 0);
		each_row<8>(P, b, deg, [&](const u32(&u)[8], const bool(&ok)[8]) {
			u32 s[8], p[8];
#pragma unroll
			for (int j = 0; j < 8; j++) {
				s[j] = (PK == PK_CLASS && ok[j]) ? P.st[u[j]] : 0u;
				p[j] = (PK == PK_PRIM && ok[j]) ? __ldg(P.prim + u[j]) : 0u;
			}
#pragma unroll
			for (int j = 0; j < 8; j++) top.add_if(P, ok[j], u[j], s[j], p[j]);
			return true;
		});
		P.ball[w] = top.first();
		if (R) ball2(P)[w] = top.second() < 0 ? B_NONE : top.second();
	}
	// Every vertex is still in play.
	if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(P.count + P.pass % P.ncount, (u32)max(P.n, 1));
}
