// Persistent tails of the MIS sweeps (included by mis.cu after the
// sweeps; not compiled alone).

// ------------------------------------------------------- MIS-1, tail
//
// After the first full sweeps only a few per cent of the vertices are
// undecided, yet every further sweep reads all state bytes and pays a
// launch and, every few sweeps, a host round trip. The tail instead
// compacts the undecided vertices into a list and settles them in one
// persistent launch: each thread revisits its list entries until all are
// decided. The rules are those of the sweeps; only the loads change.
// Within one launch L1 is not invalidated, so states are read from L2
// (ld.cg), which every store reaches. The grid is no larger than the
// blocks that fit on the device at once, so the owner of the undecided
// vertex of largest key always runs and always settles it: every pass
// makes progress. A bounded number of passes guards against a grid that
// does not fit after all; what is left then goes back to the sweeps.

// mis_compact appends the undecided vertices to list and counts them in
// *len, 16 a thread (16 state bytes; the states are padded to whole
// tiles).
extern "C" __global__ void mis_compact(const u8 *st, int n, int *list, u32 *len) {
	list_where<16>(n, list, len, [&](int v) {
		const uint4 q = __ldcg((const uint4 *)(st + v));
		const u32 w[4] = {q.x, q.y, q.z, q.w};
		u32 flags = 0;
#pragma unroll
		for (int j = 0; j < 16; j++)
			flags |= (v + j < n && STATE(w[j >> 2] >> (8 * (j & 3)) & 0xffu) == UND ? 1u : 0u) << j;
		return flags;
	});
}

// mis1_try visits v once with L2 loads: it returns v's state after the
// visit (UND while a larger neighbour is undecided).
template <int PK>
__device__ __forceinline__ u32 mis1_try(const Params &P, int v) {
	const u32 sv = __ldcg(P.st + v);
	if (STATE(sv) != UND) return STATE(sv);
	const i64 b = __ldg(P.off + v);
	const int deg = (int)(__ldg(P.off + v + 1) - b);
	const u32 dec = mis1_scan<1, PK, true>(P, b, deg, key_of<PK>(P, v, sv, PK == PK_PRIM ? __ldg(P.prim + v) : 0));
	if (dec == UND) return UND;
	__stcg(P.st + v, (u8)((sv & ~3u) | dec));
	if (dec == IN) push_out<1, false, true>(P, b, deg);
	return dec;
}

// The tail's passes are bounded; a launch that reaches the bound leaves
// the rest to ordinary sweeps (its live count is then not zero).
#define TAIL_PASSES 4096

// tail_report adds the vertices a tail left in play to its live count
// and keeps the most passes in count[ncount].
__device__ __forceinline__ void tail_report(const Params &P, u32 passes, u32 left) {
	left = warp_sum(left);
	u32 mx = passes;
#pragma unroll
	for (int d = 16; d > 0; d >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, d));
	if ((threadIdx.x & 31) == 0) {
		if (left) atomicAdd(P.count + P.pass % P.ncount, left);
		if (mx) atomicMax(P.count + P.ncount, mx);
	}
}

// mis1_tail settles the listed vertices. count[pass % ncount] gets the
// vertices left undecided (0 unless the bound was hit) and
// count[ncount] the most passes any thread made.
// tail_passes revisits this thread's share of the m listed vertices
// until play(v) is false for all of them, or for at most TAIL_PASSES
// passes, and returns the number of passes.
template <typename Play>
__device__ __forceinline__ u32 tail_passes(const int *list, u32 m, Play play) {
	const u32 stride = gridDim.x * blockDim.x;
	const u32 t0 = blockIdx.x * blockDim.x + threadIdx.x;
	u32 passes = 0;
	for (bool any = t0 < m; any && passes < TAIL_PASSES;) {
		any = false;
		passes++;
		for (u32 i = t0; i < m; i += stride) any |= play(list[i]);
	}
	return passes;
}

template <int PK>
__device__ void mis1_tail(const Params &P, const int *list, const u32 *len) {
	const u32 m = *(volatile const u32 *)len;
	const u32 stride = gridDim.x * blockDim.x;
	const u32 t0 = blockIdx.x * blockDim.x + threadIdx.x;
	const u32 passes = tail_passes(list, m, [&](int v) { return mis1_try<PK>(P, v) == UND; });
	u32 left = 0;
	for (u32 i = t0; left == 0 && passes == TAIL_PASSES && i < m; i += stride)
		left += STATE(__ldcg(P.st + list[i])) == UND;
	tail_report(P, passes, left);
}

// ------------------------------------------------------- MIS-2, tail
//
// As for MIS-1 (see mis1_tail): the vertices still in play after the
// full sweeps are listed and settled by one persistent launch, with the
// rules and the work test of the sweeps' tile pass.

// mis_compact2 lists the vertices in play: undecided, or with a ball
// not yet settled.
extern "C" __global__ void mis_compact2(const u8 *st, const int *ball, int n, int *list, u32 *len) {
	list_where<4>(n, list, len, [&](int v) {
		const u32 w = __ldcg((const u32 *)(st + v));
		const int4 b = __ldcg((const int4 *)(ball + v));
		const int bv[4] = {b.x, b.y, b.z, b.w};
		u32 flags = 0;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const bool play = STATE(w >> (8 * j) & 0xffu) == UND || !(bv[j] == B_NONE || bv[j] == B_COVP);
			flags |= (v + j < n && play ? 1u : 0u) << j;
		}
		return flags;
	});
}

// mis2_try does the tile pass's test and, when w has work, its visit;
// it returns whether w was in play before.
template <int PK, bool R>
__device__ __forceinline__ bool mis2_try(const Params &P, int w) {
	const u32 sw = __ldcg(P.st + w);
	const int bw = __ldcg(P.ball + w);
	const u32 s = STATE(sw);
	if (!(s == UND || !(bw == B_NONE || bw == B_COVP))) return false;
	const u32 c = bw >= 0 ? STATE(__ldcg(P.st + bw)) : 0u;
	if (bw == B_UNK || bw == B_COV || (bw >= 0 && c != UND) || (s == UND && bw == w)) {
		const i64 b = __ldg(P.off + w);
		mis2_visit<1, PK, true, R>(P, w, b, (int)(__ldg(P.off + w + 1) - b), sw, bw, c);
	}
	return true;
}

template <int PK, bool R = false>
__device__ void mis2_tail(const Params &P, const int *list, const u32 *len) {
	const u32 m = *(volatile const u32 *)len;
	const u32 stride = gridDim.x * blockDim.x;
	const u32 t0 = blockIdx.x * blockDim.x + threadIdx.x;
	const u32 passes = tail_passes(list, m, [&](int w) { return mis2_try<PK, R>(P, w); });
	u32 left = 0;
	for (u32 i = t0; left == 0 && passes == TAIL_PASSES && i < m; i += stride) {
		const int w = list[i];
		const int bw = __ldcg(P.ball + w);
		left += STATE(__ldcg(P.st + w)) == UND || !(bw == B_NONE || bw == B_COVP);
	}
	tail_report(P, passes, left);
}

// The tails (MIS-1's list lives in the ball buffer, which it does not
// use; MIS-2's in a buffer of its own).
#define TAIL(dist, PK)                                                                                        \
	extern "C" __global__ void __launch_bounds__(256)                                                         \
	    mis##dist##_tail_p##PK(const i64 *off, const int *adj, u8 *st, int *ball, const int *list,             \
	                           const u32 *len, const u32 *prim, u32 *count, int n, int ncount, int pass,       \
	                           u32 seedlo, u32 seedhi PART_PARAMS) {                                           \
		Params P = {off, adj, st, ball, prim, count, n, ncount, pass, seedlo, seedhi};                      \
		PART_SET(P)                                                                                         \
		if (!sweep_needed(P)) return;                                                                       \
		mis##dist##_tail<PK>(P, list, len);                                                                 \
	}
TAIL(1, 0)
TAIL(1, 1)
TAIL(1, 2)
TAIL(2, 0)
TAIL(2, 1)
TAIL(2, 2)

// The MIS-2 tail with runner-ups (ball2; see mis2_g1r).
#define TAILR(PK)                                                                                             \
	extern "C" __global__ void __launch_bounds__(256)                                                         \
	    mis2_tailr_p##PK(const i64 *off, const int *adj, u8 *st, int *ball, const int *list, const u32 *len,   \
	                     const u32 *prim, u32 *count, int n, int ncount, int pass, u32 seedlo,               \
	                     u32 seedhi PART_PARAMS) {                                                           \
		Params P = {off, adj, st, ball, prim, count, n, ncount, pass, seedlo, seedhi};                      \
		PART_SET(P)                                                                                         \
		if (!sweep_needed(P)) return;                                                                       \
		mis2_tail<PK, true>(P, list, len);                                                                  \
	}
TAILR(0)
TAILR(1)
TAILR(2)

