// Greedy maximal independent sets at distance 1 and 2, on the GPU.
//
// The set is the one a serial loop builds by visiting vertices in
// decreasing key order, key(v) = prim(v)<<32 | hash32(v, seed) (see
// mis/priority.go). Keys never tie, so the set is unique, and every
// decision below is a fact about that set:
//
//   MIS-1: v is IN once every neighbour with a larger key is OUT; v is OUT
//   once some neighbour with a larger key is IN.
//
// Decisions only ever move a vertex from undecided to IN or OUT, so a value
// read at any moment is either "undecided" (wait) or final. That makes
// asynchronous, in-place sweeps exact: a thread may read states that other
// threads write in the same sweep, a vertex scan may stop at the first
// undecided larger neighbour, and a vertex that joins may write OUT into
// its neighbours at once (a larger neighbour is already OUT, a smaller one
// cannot join while it is undecided). Races only ever write equal values.
//
// MIS-2 by default takes the vertices in buckets of decreasing key, one
// launch each, and decides each undecided vertex of a bucket by one scan
// of its two-hop neighbourhood (mis2b.cuh): no per-vertex state but the
// byte. The ball sweeps below remain for several lanes per vertex and
// for primaries that do not fit the state byte.
//
// The ball sweeps keep, for every vertex w, ball[w]: the vertex with the largest key
// among the undecided vertices of its closed neighbourhood N[w] (the
// "champion"), or COVERED when N[w] holds a member, or NONE when all of it
// is decided without a member. v joins when it is the champion of every
// ball that contains it (N[u] for u in N[v]), and leaves when one of those
// balls is covered. A champion stays valid while it is undecided (the set
// of undecided vertices only shrinks, and a member can appear in N[w] only
// by being its champion first), so a ball is rescanned only when its
// champion left the set.
//
// Work is organised in tiles of 128 vertices per warp. A tile pass reads
// the state bytes (and MIS-2 balls) of the tile with coalesced loads,
// decides which vertices have work, and prefetches their row offsets, so
// that the vertex visits that follow start with everything but the row
// itself. Groups of G lanes then visit one listed vertex each, reading
// the row G*U neighbours at a time with all loads of a step issued
// together: the sweeps are bound by memory latency more than by bytes,
// and this keeps the number of dependent round trips per visit small.
//
// The first MIS-1 sweeps visit only vertices of large hash (in_band), so
// that vertices are visited roughly in decreasing key order and most find
// their larger neighbours settled; members OR OUT into their neighbours
// without reading them (KF_*).
//
// Neighbour states are read with ordinary (L1-cached) loads. Within a
// sweep a cached line may be stale, which only delays a decision; L1 is
// invalidated between kernel launches, so every sweep sees the writes of
// the sweeps before it. A sweep counts the vertices still in play; the
// next returns at once when that count was zero, so the host can queue
// several sweeps and check the count only now and then.

#include <stdint.h>

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

// State byte: bit 0 IN, bit 1 OUT, bits 2-7 a small primary key: the
// boundary class, or the rank of any primary with at most 64 values
// (Degree on most graphs), which then costs no load of its own. IN wins
// over OUT: a push may OR the OUT bit into a member's byte (see
// or_out), which must leave it a member.
#define UND 0u
#define IN 1u
#define OUT 2u
#define STATE(s) (((s)&1u) ? IN : ((s)&2u))
#define CLASS(s) (((s) >> 2) & 63u)

// Ball values for MIS-2 (non-negative values are champion ids).
#define B_COV (-1)   // a member is in the ball; OUT not yet pushed
#define B_NONE (-2)  // every vertex of the ball is decided, none is a member
#define B_UNK (-3)   // not computed yet
#define B_COVP (-4)  // covered, and OUT pushed into the whole ball

// MIS-1 read modes (Params.kf), for one lane per vertex. A state read
// that misses L1 costs a 32-byte sector from L2 and a round trip, so on
// graphs whose rows name far-apart vertices these trade reads for hashes
// or for reductions. KF_SCAN: with hash keys a scan reads the states of
// larger neighbours only (their keys need no load), and a push reads
// those of smaller ones only. KF_RED: a member ORs OUT into its smaller
// neighbours (hash keys) without reading them; with KF_ALL into every
// neighbour, any priority. MIS-2 takes KF_RED only: pushes OR OUT into
// a covered ball and a member's neighbours without reading them.
#define KF_SCAN 1u
#define KF_RED 2u
#define KF_ALL 4u
// KF_JOIN2 (MIS-2, one lane per vertex, 16-byte loads): a warp pushes
// OUT into the two-hop neighbourhood of its new members itself.
#define KF_JOIN2 16u
// KF_WORDS (with KF_JOIN2): the two-hop pushes OR OUT once per state word
// into runs of row entries that share it (or_out_words).
#define KF_WORDS 32u

#define TILE 128
#define WARPS 8  // per block of 256 threads
// Neighbours per lane per step of a row scan: all loads of a step are
// issued before any result is used. Single lanes take more per step, so
// that a 27-point row takes few steps.
#define USCAN(G) ((G) == 1 ? 8 : 4)
#define UPUSH(G) ((G) == 1 ? 8 : 4)

// Priority kinds: hash only; class in the state byte (Boundary);
// a 32-bit primary array (Degree, User).
#define PK_HASH 0
#define PK_CLASS 1
#define PK_PRIM 2

// The most ghost windows of a part (Params.gw; misgpu.MaxWindows).
#define PART_WINDOWS 3

// PART_GW is the ghost windows the image's vhash selects from. part1w.cu
// and part2w.cu set it (1, 2) for parts whose ghosts all lie in that many
// windows: their hash of a global id takes one select a window and no
// table check. part.cu's image selects from all PART_WINDOWS and looks
// the ghosts past them up in the table (PART_TABLE).
#ifndef PART_GW
#define PART_GW PART_WINDOWS
#ifdef PART_ENGINE
#define PART_TABLE 1
#endif
#endif

// PART_PREFIX (the part images): with hash keys the class bits of a state
// byte, unused by the keys, hold the top six bits of the vertex's hash
// (part_prefix sets them for every local id; every store of a state keeps
// them, and a state byte is the same on every part), so a comparison of
// two keys whose prefixes differ needs neither hash. A part with id
// tables would otherwise load a global id for every neighbour it keys:
// a 4-byte table beside 1-byte states, which pushed the states out of L2.
#ifdef PART_ENGINE
#define PART_PREFIX 1
#define HPREFIX(h) ((u32)(h) >> 26)
#endif

struct Params {
	const i64 *off;
	const int *adj;
	u8 *st;
	int *ball;
	const u32 *prim;
	u32 *count;  // count[pass % ncount]: vertices still in play after that sweep
	int n;
	int ncount;
	int pass;
	u32 seedlo, seedhi;
	u32 band;  // see in_band
	u32 kf;    // MIS-1 read modes, one lane per vertex: KF_* bits
	u32 lohi;  // mis2b: the upper word of the bucket's key threshold (band the lower)
	// A part of the multi-GPU driver (part.cu) hashes global ids: local
	// id v from gfrom on is gid[v-gfrom], any other computed (gbase and
	// the ghost windows gw: vhash). Null in this image, where
	// every Params leaves it so and the compiler drops the lookups.
	const u32 *gid;
	u32 gbase;
	int gfrom;
#ifdef PART_ENGINE
	u64 gw[PART_GW];
#endif
};

// PART_PARAMS and PART_SET add the kernel parameters of gid, gbase,
// gfrom and the ghost windows in part.cu's image, and nothing here.
// PART_SET also lets the launch queued next start (a part's pull, which
// waits for nothing of this launch's: misgpu's exchange) as soon as
// every block of this one has: the pull then runs beside this launch's
// last blocks instead of after them. The instruction does nothing for a
// launch queued next without programmatic serialization.
#ifdef PART_ENGINE
#define PART_PARAMS , const u32 *gid, u32 gbase, int gfrom, u64 gw0, u64 gw1, u64 gw2
#if __CUDA_ARCH__ >= 900
#define PART_NEXT asm volatile("griddepcontrol.launch_dependents;");
#else
#define PART_NEXT
#endif
#if PART_GW == 1
#define PART_SET_GW(P) (P).gw[0] = gw0
#elif PART_GW == 2
#define PART_SET_GW(P) (P).gw[0] = gw0, (P).gw[1] = gw1
#else
#define PART_SET_GW(P) (P).gw[0] = gw0, (P).gw[1] = gw1, (P).gw[2] = gw2
#endif
#define PART_SET(P) (P).gid = gid, (P).gbase = gbase, (P).gfrom = gfrom, PART_SET_GW(P); PART_NEXT
#else
#define PART_PARAMS
#define PART_SET(P)
#endif

// The per-warp list of vertices to visit, filled by the tile pass. A
// warp keeps adding tiles until the list holds at least one tile's worth,
// so that sparse sweeps visit as many vertices per round as dense ones.
#define CAP (2 * TILE)
template <int DIST, int C = CAP>
struct List {
	int v[C];
	int deg[C];
	i64 beg[C];
	u8 st[C];
};
template <int C>
struct List<2, C> {
	int v[C];
	int deg[C];
	i64 beg[C];
	int ball[C];
	u8 st[C];
	u8 aux[C];  // state of the ball's champion
};

#include "shared.cuh"

// vhash is the hash of v's id (vgid): its own, or in a part its global id
// (misgpu.PartSpec.GlobalID models it): gbase+v below the first ghost
// window, v plus the offset (the lower word of gw[k]) in the last window
// k whose first local id (the upper word) v reaches, and from gfrom on
// the table gid. A part's sweeps take it for every neighbour they key,
// so it has no branch but the table's load: selects let the compiler
// interleave the hashes of a row's entries, where nested branches (and
// their convergence barriers) made them one after the other and a part's
// MIS-1 sweeps a quarter slower than the engine's. In part.cu's image a
// null gid (a part whose local ids are its global ids) hashes v. The
// window images map every id without that test, which there doubled the
// sweeps' code and kept their hashes apart as the nested branches did: a
// part whose ids are its global ids passes base 0 and no window.
__device__ __forceinline__ u32 vgid(const Params &P, u32 v) {
	u32 g = v;
#ifdef PART_ENGINE
#ifdef PART_TABLE
	if (P.gid)
#endif
	{
		u32 d = P.gbase;
#pragma unroll
		for (int k = 0; k < PART_GW; k++) d = v >= (u32)(P.gw[k] >> 32) ? (u32)P.gw[k] : d;
		g = v + d;
#ifdef PART_TABLE
		if ((int)v >= P.gfrom) g = __ldg(P.gid + (v - (u32)P.gfrom));
#endif
	}
#else
	// Null here: the compiler drops it.
	if (P.gid) g = (int)v < P.gfrom ? P.gbase + v : __ldg(P.gid + (v - (u32)P.gfrom));
#endif
	return g;
}

__device__ __forceinline__ u32 vhash(const Params &P, u32 v) { return hash32(vgid(P, v), P.seedlo, P.seedhi); }

// in_band says whether a sweep with band threshold P.band visits v for a
// decision. Decisions wait on larger keys, so a sweep over all vertices
// visits most of them too early: a vertex whose larger neighbours are
// still undecided learns nothing, and pays the gathers of its row. Sweeps
// that first take only the vertices of largest hash (the lower bits of
// the key, uniform over the vertices) let those settle and push OUT into
// their neighbours, which then need no visit at all. The band uses the
// hash alone, whatever the primary key (in a part, that of the global
// id, as the keys take it): it only orders the work, the decisions stay
// the same.
__device__ __forceinline__ bool in_band(const Params &P, u32 v) {
	return P.band == 0 || vhash(P, v) >= P.band;
}

template <int PK>
__device__ __forceinline__ u64 key_of(const Params &P, u32 v, u32 s, u32 prim) {
	u64 h = vhash(P, v);
	if (PK == PK_CLASS) return ((u64)CLASS(s) << 32) | h;
	if (PK == PK_PRIM) return ((u64)prim << 32) | h;
	return h;
}

// key_above says whether the key of u (state s, primary prim) is above
// kv, and key_atleast whether it reaches the threshold lo: key_of's
// comparisons, which with PART_PREFIX and hash keys hash u only where the
// prefix in its state ties kv's (one in 64).
template <int PK>
__device__ __forceinline__ bool key_above(const Params &P, u32 u, u32 s, u32 prim, u64 kv) {
#ifdef PART_PREFIX
	if (PK == PK_HASH) {
		const u32 a = CLASS(s), b = HPREFIX(kv);
		return a != b ? a > b : vhash(P, u) > (u32)kv;
	}
#endif
	return key_of<PK>(P, u, s, prim) > kv;
}

template <int PK>
__device__ __forceinline__ bool key_atleast(const Params &P, u32 u, u32 s, u32 prim, u64 lo) {
#ifdef PART_PREFIX
	if (PK == PK_HASH) {
		const u32 a = CLASS(s), b = HPREFIX(lo);
		return lo >> 32 ? false : a != b ? a > b : vhash(P, u) >= (u32)lo;
	}
#endif
	return key_of<PK>(P, u, s, prim) >= lo;
}

// live_above says whether the neighbour u of state s is a member or
// undecided with a key above kv: what a MIS-1 scan waits on. In the
// image with id tables a decided OUT neighbour is dropped before its
// key, so that where the prefixes tie its hash (a load through the
// tables) is not taken: later sweeps find most neighbours OUT.
template <int PK>
__device__ __forceinline__ bool live_above(const Params &P, u32 u, u32 s, u32 prim, u64 kv) {
#ifdef PART_TABLE
	if (PK == PK_HASH && STATE(s) == OUT) return false;
#endif
	return key_above<PK>(P, u, s, prim, kv);
}

// band_has is in_band for v of state s. In the image with id tables the
// band is the hash prefixes at or above the threshold's: a band only
// orders the work, so it need not be the exact hash, and the tile pass
// then takes no hash through the tables on a prefix tie. (In the window
// images the exact band measured a little faster.)
template <int PK>
__device__ __forceinline__ bool band_has(const Params &P, u32 v, u32 s) {
#ifdef PART_PREFIX
#ifdef PART_TABLE
	if (PK == PK_HASH) return CLASS(s) >= HPREFIX(P.band);
#else
	if (PK == PK_HASH) return P.band == 0 || key_atleast<PK_HASH>(P, v, s, 0, P.band);
#endif
#endif
	return in_band(P, v);
}

template <int G>
__device__ __forceinline__ u32 group_mask() {
	if (G == 32) return 0xffffffffu;
	u32 lane = threadIdx.x & 31;
	return (u32)((1ull << G) - 1) << (lane & ~(u32)(G - 1));
}

// group_any says whether p holds on any lane of the group. A group of one
// lane needs no vote, and must not have one: in divergent code the lanes
// would each bring their own single-lane mask, and the compiler runs the
// votes one mask after the other.
template <int G>
__device__ __forceinline__ bool group_any(u32 gm, bool p) {
	if constexpr (G == 1) return p;
	else return __ballot_sync(gm, p) != 0;
}

// Sweep prologue: false when the previous sweep found nothing left.
__device__ __forceinline__ bool sweep_needed(const Params &P) {
	if (P.pass == 0) return true;
	int prev = (P.pass - 1) % P.ncount;
	return *(volatile u32 *)(P.count + prev) != 0;
}

// tile_list appends the tile's flagged vertices (bit j of flags: vertex
// base+4*lane+j) to the list from position at, in id order, with their
// row offsets and the given per-vertex bytes, and returns the new length.
template <int DIST, int C>
__device__ __forceinline__ int tile_list(const Params &P, List<DIST, C> &L, int at, int base, u32 flags, u32 st4,
                                         const int *ball4, u32 aux4) {
	const u32 lane = threadIdx.x & 31;
	i64 o[5];
	if (flags) {
		// Vertices past n are padding and never flagged; clamp the loads.
		const int v0 = base + (int)lane * 4;
#pragma unroll
		for (int j = 0; j < 5; j++) o[j] = P.off[min(v0 + j, P.n)];
	}
	u32 c = __popc(flags);
	u32 pre = c;
#pragma unroll
	for (int d = 1; d < 32; d <<= 1) {
		u32 y = __shfl_up_sync(0xffffffffu, pre, d);
		if (lane >= (u32)d) pre += y;
	}
	u32 total = __shfl_sync(0xffffffffu, pre, 31);
	u32 pos = at + pre - c;
#pragma unroll
	for (int j = 0; j < 4; j++) {
		if (flags & (1u << j)) {
			L.v[pos] = base + (int)lane * 4 + j;
			L.beg[pos] = o[j];
			L.deg[pos] = (int)(o[j + 1] - o[j]);
			L.st[pos] = (u8)(st4 >> (8 * j));
			if constexpr (DIST == 2) {
				L.ball[pos] = ball4[j];
				L.aux[pos] = (u8)(aux4 >> (8 * j));
			}
			pos++;
		}
	}
	__syncwarp();
	return at + (int)total;
}

// Warps take tiles in a grid-stride order, so that at any moment the
// whole device works on one window of the graph: neighbouring rows and
// states are then read by many warps while they are in cache.
__device__ __forceinline__ int first_tile() { return blockIdx.x * WARPS + (threadIdx.x >> 5); }
__device__ __forceinline__ int tile_stride() { return gridDim.x * WARPS; }
__device__ __forceinline__ int num_tiles(const Params &P) { return (P.n + TILE - 1) / TILE; }

// DynUnits hands out the units (tiles, or chunks of a list) of a block
// to its warps as they ask, instead of fixing each warp's share: the
// block's units are those a grid-stride loop gives its warps (so the
// device still works on one window of the graph at a time), the j-th
// going to whichever warp takes j from the block's counter in shared
// memory. A warp starts with its own first unit and asks for the next
// one a unit ahead, so that the atomic's latency hides behind the work.
struct DynUnits {
	u32 *ctr;  // shared; starts at WARPS (the first units go by warp)
	int n, ahead;
	__device__ __forceinline__ int unit(int j) const {
		return j / WARPS * tile_stride() + (int)blockIdx.x * WARPS + j % WARPS;
	}
	__device__ __forceinline__ int grab() {
		u32 x = 0;
		if ((threadIdx.x & 31) == 0) x = atomicAdd(ctr, 1u);
		return unit((int)__shfl_sync(0xffffffffu, x, 0));
	}
	// first returns the warp's first unit, or n when it has none.
	__device__ __forceinline__ int first(u32 *c, int n_) {
		ctr = c, n = n_;
		const int u = first_tile();
		if (u >= n) return n;
		ahead = grab();
		return u;
	}
	// more says whether the warp has a unit after the current one.
	__device__ __forceinline__ bool more() const { return ahead < n; }
	// next returns the warp's next unit, or n.
	__device__ __forceinline__ int next() {
		if (ahead >= n) return n;
		const int u = ahead;
		ahead = grab();
		return u;
	}
};

// dyn_counter returns the block's DynUnits counter, set to WARPS; every
// thread of the block must call it.
__device__ __forceinline__ u32 *dyn_counter() {
	__shared__ u32 ctr;
	if (threadIdx.x == 0) ctr = WARPS;
	__syncthreads();
	return &ctr;
}

// each_tile runs f(t, w, more) on a warp's tiles in that order: w holds
// this lane's 4 state bytes of tile t (the state array is padded to
// whole tiles with decided bytes), the next tile's word already in
// flight, and more says whether tiles follow. The tiles are every
// tile_stride()-th from first_tile(), or with DYN the block's tiles as
// DynUnits hands them out (every thread of the block must call it then).
template <bool DYN = false, typename F>
__device__ __forceinline__ void each_tile(const Params &P, F f) {
	const u32 lane = threadIdx.x & 31;
	const int nt = num_tiles(P), ts = tile_stride();
	DynUnits d;
	int t;
	if constexpr (DYN) t = d.first(dyn_counter(), nt);
	else t = first_tile();
	u32 next = t < nt ? __ldcg((const u32 *)(P.st + t * TILE + lane * 4)) : 0;
	while (t < nt) {
		const u32 w = next;
		int tn;
		if constexpr (DYN) tn = d.next();
		else tn = t + ts;
		const bool more = tn < nt;
		if (more) next = __ldcg((const u32 *)(P.st + tn * TILE + lane * 4));
		f(t, w, more);
		t = tn;
	}
}

// block_append appends v+j for each bit j of flags to list and
// counts them in *len, in id order within the block's call, with one
// atomic per block: many warps appending to one counter queue on it
// (docs/gpu.md). Every thread of the block calls it
// together, with blockDim.x a multiple of 32 up to 1024.
__device__ __forceinline__ void block_append(u32 flags, int v, int *list, u32 *len) {
	__shared__ u32 warps[32];
	__shared__ u32 base;
	const u32 lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	const u32 c = __popc(flags);
	u32 x = c;  // inclusive prefix over the warp
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		const u32 y = __shfl_up_sync(0xffffffffu, x, o);
		if (lane >= (u32)o) x += y;
	}
	if (lane == 31) warps[w] = x;
	__syncthreads();
	if (w == 0) {
		u32 t = lane < nw ? warps[lane] : 0, sum = t;
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			const u32 y = __shfl_up_sync(0xffffffffu, sum, o);
			if (lane >= (u32)o) sum += y;
		}
		if (lane < nw) warps[lane] = sum - t;  // exclusive
		const u32 total = __shfl_sync(0xffffffffu, sum, 31);
		if (lane == 0) base = total ? atomicAdd(len, total) : 0;
	}
	__syncthreads();
	u32 at = base + warps[w] + x - c;
	for (u32 f = flags; f; f &= f - 1) list[at++] = v + __ffs(f) - 1;
	__syncthreads();  // warps[] and base are reused by the next call
}

// list_where lists with block_append the vertices that flags_of(v)
// flags among v..v+K-1 (bit j for v+j), K a thread at a time, a block's
// K*blockDim.x in id order with one atomic.
template <int K, typename F>
__device__ __forceinline__ void list_where(int n, int *list, u32 *len, F flags_of) {
	const int step = K * blockDim.x;
	for (int v0 = blockIdx.x * step; v0 < n; v0 += gridDim.x * step) {
		const int v = v0 + K * (int)threadIdx.x;
		block_append(v < n ? flags_of(v) : 0u, v, list, len);
	}
}

__device__ __forceinline__ u32 warp_sum(u32 x) {
#pragma unroll
	for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(0xffffffffu, x, d);
	return x;
}

// or_out sets the OUT bit of v's state with an atomic OR on its word.
__device__ __forceinline__ void or_out(u8 *st, u32 v) {
	atomicOr((u32 *)(st + (v & ~3u)), OUT << (8 * (v & 3u)));
}

// ld reads a state or ball word: through L1 in sweeps (L1 is clean at
// each launch), from L2 in the persistent tails, where L1 could hold a
// stale line for the whole launch.
template <bool CG, typename T>
__device__ __forceinline__ T ld(const T *p) {
	if constexpr (CG) return __ldcg(p);
	else return *p;
}

// Writes OUT into every undecided vertex of a row. A plain store is
// right when no vertex of the row can be a member (the neighbours of a
// member). When the row may hold the member that caused the push (the
// ball of a vertex next to it), the state read here may be stale (an
// L1 line from before the member joined), so the OUT bit goes in with
// an atomic OR, which a member survives.
//
// The loads of a step are all issued before the first store: a store to
// st may alias a later load, so the compiler would otherwise wait for
// each load in turn.
template <int G, bool MAYHOLDMEMBER, bool CG = false>
__device__ __forceinline__ void push_out(const Params &P, i64 b, int deg) {
	constexpr int UP = UPUSH(G);
	const u32 q = threadIdx.x & (G - 1);
	if (MAYHOLDMEMBER && (P.kf & KF_RED)) {
		// OR the OUT bit into every vertex without reading it first.
		for (int k0 = q; k0 < deg; k0 += G) or_out(P.st, (u32)__ldg(P.adj + b + k0));
		return;
	}
	for (int k0 = 0; k0 < deg; k0 += G * UP) {
		u32 u[UP], s[UP];
#pragma unroll
		for (int j = 0; j < UP; j++) {
			int k = k0 + q + j * G;
			u[j] = k < deg ? (u32)__ldg(P.adj + b + k) : 0xffffffffu;
		}
#pragma unroll
		for (int j = 0; j < UP; j++) s[j] = u[j] != 0xffffffffu ? ld<CG>(P.st + u[j]) : OUT;
#pragma unroll
		for (int j = 0; j < UP; j++) {
			if (STATE(s[j]) != UND) continue;
			if (MAYHOLDMEMBER) or_out(P.st, u[j]);
			else P.st[u[j]] = (u8)((s[j] & ~3u) | OUT);
		}
	}
}

// ---------------------------------------------------------------- MIS-1

// each_row hands the row at b to step N entries (8 or 16) at a time,
// all loaded with 16-byte loads (load_row8, shared.cuh) from the 16-byte
// boundary at or below the row's start before step runs, until step
// returns false. Scattered requests, not bytes, are what the L1 serves
// slowest. Pushes, which nothing waits on, take 16: a 27-point row then
// costs two round trips instead of four.
template <int N, typename Step>
__device__ __forceinline__ void each_row(const Params &P, i64 b, int deg, Step step) {
	static_assert(N == 8 || N == 16, "load_row8 steps");
	const i64 a = b & ~(i64)3;
	const int lead = (int)(b - a), tot = lead + deg;
	for (int c0 = 0; c0 < tot; c0 += N) {
		u32 u[N];
		bool ok[N];
#pragma unroll
		for (int h = 0; h < N; h += 8) load_row8(P.adj, a, lead, tot, c0 + h, u + h, ok + h);
		if (!step(u, ok)) return;
	}
}

// or_out_row ORs OUT into the entries u of the row at b for which
// keep(u) holds, without reading the states.
template <typename Keep>
__device__ __forceinline__ void or_out_row(const Params &P, i64 b, int deg, Keep keep) {
	each_row<16>(P, b, deg, [&](const u32(&u)[16], const bool(&ok)[16]) {
#pragma unroll
		for (int j = 0; j < 16; j++)
			if (ok[j] && keep(u[j])) or_out(P.st, u[j]);
		return true;
	});
}

// or_out_words ORs OUT into every entry of the row at b, with one
// reduction per run of consecutive entries in the same 4-byte state
// word: rows of meshes in natural order hold runs of consecutive ids.
__device__ __forceinline__ void or_out_words(const Params &P, i64 b, int deg) {
	u32 word = 0xffffffffu, bits = 0;  // the run so far
	each_row<16>(P, b, deg, [&](const u32(&u)[16], const bool(&ok)[16]) {
#pragma unroll
		for (int j = 0; j < 16; j++) {
			if (!ok[j]) continue;
			const u32 wj = u[j] >> 2;
			if (wj != word && bits) atomicOr((u32 *)P.st + word, bits);
			bits = (wj != word ? 0u : bits) | OUT << (8 * (u[j] & 3u));
			word = wj;
		}
		return true;
	});
	if (bits) atomicOr((u32 *)P.st + word, bits);
}

// row_step loads the entries k0+q, k0+q+G, ... (U of them) of a row that
// G lanes scan together; ok says which lie in it.
template <int G, int U>
__device__ __forceinline__ void row_step(const Params &P, i64 b, int deg, int k0, u32 (&u)[U], bool (&ok)[U]) {
	const int q = (int)(threadIdx.x & (G - 1));
#pragma unroll
	for (int j = 0; j < U; j++) {
		const int k = k0 + q + j * G;
		ok[j] = k < deg;
		u[j] = ok[j] ? (u32)__ldg(P.adj + b + k) : 0;
	}
}

#ifdef PART_TABLE
// mis1_visit_table is mis1_visit_vec for hash keys in the image with id
// tables. The prefixes in the states decide a comparison alone but on a
// tie (one in 64), so v's own hash is taken only there: its id, loaded at
// the visit's start beside the row, is hashed inside the tie's branch
// (the empty asm keeps the compiler from hoisting the hash), where the
// visit used to wait on that load before it issued the row's. A member
// ORs OUT into every neighbour, right under any mode (KF_ALL).
__device__ __forceinline__ void mis1_visit_table(const Params &P, int v, i64 b, int deg, u32 sv) {
	const u32 gv = vgid(P, v), pv = CLASS(sv);
	u32 dec = IN;
	each_row<8>(P, b, deg, [&](const u32(&u)[8], const bool(&ok)[8]) {
		u32 s[8];
#pragma unroll
		for (int j = 0; j < 8; j++) s[j] = ok[j] ? P.st[u[j]] : OUT;
		bool hin = false, hund = false;
#pragma unroll
		for (int j = 0; j < 8; j++) {
			if (!ok[j] || STATE(s[j]) == OUT) continue;
			const u32 a = CLASS(s[j]);
			bool above = a > pv;
			if (a == pv) {
				u32 g = gv;
				asm volatile("" : "+r"(g));
				above = vhash(P, u[j]) > hash32(g, P.seedlo, P.seedhi);
			}
			hin |= above && STATE(s[j]) == IN;
			hund |= above && STATE(s[j]) == UND;
		}
		dec = hin ? OUT : hund ? UND : IN;
		return dec == IN;
	});
	if (dec == UND) return;
	P.st[v] = (u8)((sv & ~3u) | dec);
	if (dec == IN) or_out_row(P, b, deg, [](u32) { return true; });
}
#endif

// mis1_visit_vec is mis1_visit for one lane per vertex with 16-byte row loads (each_row).
template <int PK>
__device__ __forceinline__ void mis1_visit_vec(const Params &P, int v, i64 b, int deg, u32 sv) {
#ifdef PART_TABLE
	if (PK == PK_HASH) {
		mis1_visit_table(P, v, b, deg, sv);
		return;
	}
#endif
	const u64 kv = key_of<PK>(P, v, sv, PK == PK_PRIM ? __ldg(P.prim + v) : 0);
	u32 dec = IN;
	each_row<8>(P, b, deg, [&](const u32(&u)[8], const bool(&ok)[8]) {
		u32 s[8], p[8];
#pragma unroll
		for (int j = 0; j < 8; j++) {
			const bool need = ok[j] && (PK != PK_HASH || !(P.kf & KF_SCAN) || key_of<PK>(P, u[j], 0, 0) > kv);
			s[j] = need ? P.st[u[j]] : OUT;
			p[j] = (PK == PK_PRIM && ok[j]) ? __ldg(P.prim + u[j]) : 0;
		}
		bool hin = false, hund = false;
#pragma unroll
		for (int j = 0; j < 8; j++) {
			if (ok[j] && key_above<PK>(P, u[j], s[j], p[j], kv)) {
				hin |= STATE(s[j]) == IN;
				hund |= STATE(s[j]) == UND;
			}
		}
		dec = hin ? OUT : hund ? UND : IN;
		return dec == IN;
	});
	if (dec == UND) return;
	P.st[v] = (u8)((sv & ~3u) | dec);
	if (dec != IN) return;
	if ((P.kf & KF_RED) && (PK == PK_HASH || (P.kf & KF_ALL))) {
		// OR the OUT bit in without reading first (a reduction: no round
		// trip). That is harmless on a larger neighbour, which is OUT
		// already, so KF_ALL sends it to every neighbour without keys.
		or_out_row(P, b, deg, [&](u32 u) { return (P.kf & KF_ALL) || key_of<PK>(P, u, 0, 0) < kv; });
		return;
	}
	each_row<8>(P, b, deg, [&](const u32(&u)[8], const bool(&ok)[8]) {
		u32 s[8];
#pragma unroll
		for (int j = 0; j < 8; j++)
			s[j] = ok[j] && (PK != PK_HASH || !(P.kf & KF_SCAN) || key_of<PK>(P, u[j], 0, 0) < kv) ? P.st[u[j]] : OUT;
#pragma unroll
		for (int j = 0; j < 8; j++)
			if (STATE(s[j]) == UND) P.st[u[j]] = (u8)((s[j] & ~3u) | OUT);
		return true;
	});
}

// mis1_scan reads v's row, G lanes together, and returns IN when no
// larger neighbour is IN or undecided, OUT when one is IN, UND when one
// is undecided. CG reads the states from L2 (the persistent tail).
template <int G, int PK, bool CG = false>
__device__ __forceinline__ u32 mis1_scan(const Params &P, i64 b, int deg, u64 kv) {
	const u32 gm = group_mask<G>();
	constexpr int U = USCAN(G);
	for (int k0 = 0; k0 < deg; k0 += G * U) {
		u32 u[U], s[U], p[U];
		bool ok[U];
		row_step<G>(P, b, deg, k0, u, ok);
#pragma unroll
		for (int j = 0; j < U; j++) {
			// All gathers of the step go out before any is used.
			s[j] = ok[j] ? ld<CG>(P.st + u[j]) : OUT;
			p[j] = (PK == PK_PRIM && ok[j]) ? __ldg(P.prim + u[j]) : 0;
		}
		bool hin = false, hund = false;
#pragma unroll
		for (int j = 0; j < U; j++) {
			if (ok[j] && live_above<PK>(P, u[j], s[j], p[j], kv)) {
				hin |= STATE(s[j]) == IN;
				hund |= STATE(s[j]) == UND;
			}
		}
		if (group_any<G>(gm, hin)) return OUT;
		if (group_any<G>(gm, hund)) return UND;
	}
	return IN;
}

template <int G, int PK>
__device__ __forceinline__ void mis1_visit(const Params &P, int v, i64 b, int deg, u32 sv) {
	const u32 q = threadIdx.x & (G - 1);
	const u32 dec = mis1_scan<G, PK>(P, b, deg, key_of<PK>(P, v, sv, PK == PK_PRIM ? __ldg(P.prim + v) : 0));
	if (dec == UND) return;
	if (q == 0) P.st[v] = (u8)((sv & ~3u) | dec);
	// A member's undecided neighbours all have smaller keys and are OUT;
	// writing that now spares them a scan.
	if (dec == IN) push_out<G, false>(P, b, deg);
}

template <int G, int PK, bool VEC = false>
__device__ void mis1_sweep(const Params &P) {
	__shared__ List<1> lists[WARPS];
	if (!sweep_needed(P)) return;
	const u32 lane = threadIdx.x & 31;
	List<1> &L = lists[threadIdx.x >> 5];
	u32 live = 0;
	int cnt = 0;
	each_tile(P, [&](int t, u32 w, bool more) {
		u32 flags = 0;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const u32 s = (w >> (8 * j)) & 0xffu;
			const bool und = (s & 3u) == UND;
			live += und;
			flags |= (und && band_has<PK>(P, (u32)(t * TILE + lane * 4 + j), s) ? 1u : 0u) << j;
		}
		cnt = tile_list(P, L, cnt, t * TILE, flags, w, nullptr, 0);
		if (cnt < TILE && more) return;
		for (int i = lane / G; i < cnt; i += 32 / G) {
			if constexpr (VEC) mis1_visit_vec<PK>(P, L.v[i], L.beg[i], L.deg[i], L.st[i]);
			else mis1_visit<G, PK>(P, L.v[i], L.beg[i], L.deg[i], L.st[i]);
		}
		__syncwarp();
		cnt = 0;
	});
	live = warp_sum(live);
	if (lane == 0 && live) atomicAdd(P.count + P.pass % P.ncount, live);
}

// ---------------------------------------------------------------- MIS-2

#include "mis2.cuh"

// SWEEP_KERNEL defines a kernel with the sweeps' parameters, which runs
// body on them as P. Kernel parameters are flat scalars and pointers (the
// Go launcher passes each in an 8-byte slot). Register caps that would
// raise occupancy (__launch_bounds__ with a minimum of 5 or 6 blocks)
// measured slower: the visits want their loads in flight
// more than extra warps (but see mis2_g1r4).
#define SWEEP_KERNEL(name, bounds, body)                                                             \
	extern "C" __global__ void __launch_bounds__ bounds                                              \
	    name(const i64 *off, const int *adj, u8 *st, int *ball, const u32 *prim, u32 *count, int n,  \
	         int ncount, int pass, u32 seedlo, u32 seedhi, u32 band, u32 kf PART_PARAMS) {           \
		Params P = {off, adj, st, ball, prim, count, n, ncount, pass, seedlo, seedhi, band, kf};     \
		PART_SET(P)                                                                                  \
		body;                                                                                        \
	}

#define SWEEP(dist, G, PK) SWEEP_KERNEL(mis##dist##_g##G##_p##PK, (256), (mis##dist##_sweep<G, PK>(P)))
#define SWEEPS(dist, G) SWEEP(dist, G, 0) SWEEP(dist, G, 1) SWEEP(dist, G, 2)

SWEEPS(1, 1)
SWEEPS(1, 4)
SWEEPS(1, 8)
SWEEPS(1, 32)
SWEEPS(2, 4)
SWEEPS(2, 8)
SWEEPS(2, 32)

// MIS-2, one lane per vertex, with runner-ups (ball2); g1r4: the same
// with registers capped for 4 blocks per SM (64 per thread), faster on
// graphs whose rows are local (5-7 % on the natural meshes), slower where
// they are scattered (docs/gpu.md); the host picks.
#define SWEEPR(PK)                                                          \
	SWEEP_KERNEL(mis2_g1r_p##PK, (256), (mis2_sweep<1, PK, true>(P)))       \
	SWEEP_KERNEL(mis2_g1r4_p##PK, (256, 4), (mis2_sweep<1, PK, true>(P)))
SWEEPR(0)
SWEEPR(1)
SWEEPR(2)

// MIS-1, one lane per vertex, 16-byte row loads (each_row).
#define SWEEPV(PK) SWEEP_KERNEL(mis1_g1v_p##PK, (256), (mis1_sweep<1, PK, true>(P)))
SWEEPV(0)
SWEEPV(1)
SWEEPV(2)

// The first MIS-2 sweep with runner-ups.
#define FIRST2(PK) SWEEP_KERNEL(mis2_first_r1_p##PK, (256), (mis2_first<PK, 1>(P)))
FIRST2(0)
FIRST2(1)
FIRST2(2)

// MIS-2 by key buckets: the threshold key is lohi<<32 | band.
#include "mis2b.cuh"
// BAL picks the balanced kernels (mis/gpu_run.go): the warps take their
// block's tiles as they go (DYN in mis2b.cuh) and pushes along scattered
// rows skip repeated targets (DEDUP).
#define BUCKET2K(name, PK, SCAN, BAL)                                                               \
	extern "C" __global__ void __launch_bounds__(256, BUCKET_MINB)                                    \
	    name(const i64 *off, const int *adj, u8 *st, const u32 *prim, u32 *count, int n, int ncount,   \
	         int pass, u32 seedlo, u32 seedhi, u32 lohi, u32 band, u32 kf PART_PARAMS) {               \
		Params P = {off, adj, st, nullptr, prim, count, n, ncount, pass, seedlo, seedhi, band, kf, lohi}; \
		PART_SET(P)                                                                                     \
		mis2b_sweep<PK, SCAN, SRC_TILES, BAL, BAL>(P, 0);                                               \
	}
// Kernel names: mis2b, then d (balanced), then s (hash keys: scans of
// larger keys and pushes into smaller ones only), then the priority
// kind.
BUCKET2K(mis2b_p0, 0, false, false)
BUCKET2K(mis2b_p1, 1, false, false)
BUCKET2K(mis2bs_p0, 0, true, false)
BUCKET2K(mis2bd_p0, 0, false, true)
BUCKET2K(mis2bd_p1, 1, false, true)
BUCKET2K(mis2bds_p0, 0, true, true)
// mis2bl_p1, mis2bdl_p1: candidates from a list of vertex ids (SRC_LIST
// in mis2b.cuh).
#define BUCKET2L(name, BAL)                                                                               \
	extern "C" __global__ void __launch_bounds__(256, BUCKET_MINB)                                          \
	    name(const i64 *off, const int *adj, u8 *st, const u32 *prim, u32 *count, int n, int ncount, int pass, \
	         u32 seedlo, u32 seedhi, u32 lohi, u32 band, u32 kf, int *list, int nlist PART_PARAMS) {          \
		Params P = {off, adj, st, list, prim, count, n, ncount, pass, seedlo, seedhi, band, kf, lohi};       \
		PART_SET(P)                                                                                        \
		mis2b_sweep<1, false, SRC_LIST, BAL, BAL>(P, nlist);                                               \
	}
BUCKET2L(mis2bl_p1, false)
BUCKET2L(mis2bdl_p1, true)

// The persistent tails of both distances.
#include "mis_tail.cuh"

// Initialisation, result, validation and floor kernels, and the cuda
// package's test kernels.
#include "helpers.cuh"

// Boundary classes by degree.
#include "degree_class.cuh"
