// The image of the multi-GPU driver (internal/misgpu/part*.go): the
// single-GPU engine's kernels (mis.cu), built so that a part hashes the
// global ids of its vertices (PART_ENGINE: Params.gid), plus the
// boundary kernels that carry each part's decisions to the others.
//
// A part holds its owned vertices at local ids 0..own-1, padding up to a
// whole tile (decided bytes, as on one graph), then its ghosts: the
// vertices of other parts within the distance. At distance 2 the ghosts
// one hop away come with their rows, so that the bucket kernels scan
// two-hop neighbourhoods as on one graph. The engine's kernels visit the
// owned tiles only, so a ghost changes only by what its owner sends, and
// by the OUT a member pushes into it, which is the same fact.
//
// Decisions are monotone facts of the greedy set (mis.cu), so a ghost
// read before its owner's decision lands only delays a decision: the
// parts never wait for each other. After every launch of the engine a
// part sends the boundary vertices it decided since the last send
// (part_send): straight into the ghost slots of parts whose memory it
// reaches (peers with access enabled, or parts on one device), else as
// (slot, byte) pairs into a pinned host mailbox of the receiver, which
// applies them before its own launches (part_recv). Each decision
// travels once.
#define PART_ENGINE 1
#include "mis.cu"

// MIS-2 with 32-bit ranks goes by buckets in a part too (the ball sweeps
// need the balls of the ghosts, which no part computes).
BUCKET2K(mis2b_p2, 2, false, false)

// A remote slot is part<<PART_SLOT_BITS | local id, with PART_MAILBOX set
// where the part is reached through its mailbox.
#define PART_SLOT_BITS 40
#define PART_MAILBOX (1ull << 63)

// A mailbox pair is epoch<<PART_EPOCH_SHIFT | local id<<8 | state byte.
// The epoch (never 0) names the run: a receiver applies a pair only once
// it reads the current epoch there and a slot it holds. A count can run
// ahead of the pairs it covers: the sender's stores into host memory and
// the copy engine's store of the count travel separately, and a mailbox
// reuses memory that earlier runs (or an earlier graph's mailboxes)
// filled with other pairs. A pair not ready yet is taken again at the
// receiver's next launch.
#define PART_EPOCH_SHIFT 40

// A boundary kernel that runs after every launch scans only the entries
// its last call left pending (pendingModel in misgpu's tests models
// it). Block b of every call of a run (the grid the same in all) owns
// segment b of the list's m entries, chunk = ceil(m/grid) from
// b*chunk, in each of the two halves of pend (2m ints): call c takes
// the block's whole segment at c = 0, else the pcnt[(c&1)*grid+b]
// entries its call c-1 left in half c&1, and leaves those it keeps
// pending in half (c+1)&1, their count in pcnt[((c+1)&1)*grid+b]. A
// block keeps no more than it took, so its segment holds them, and its
// threads count them with shared atomics: no two blocks touch one word.
// Every thread of a block takes the same trips (the count is the
// block's), so the warp votes see all lanes.
struct Pending {
	const int *in;  // the entries to take, or null: the segment itself
	int *out;
	int n, first;
};

// A boundary kernel's blocks: block blk of grid (part_exchange runs
// part_send's and part_return's in one launch, each over its own range
// of the launch's blocks).
struct Blocks {
	u32 blk, grid;
};

__device__ __forceinline__ Pending pending(int *pend, const u32 *pcnt, int m, int call, Blocks B) {
	const int chunk = (int)((m + B.grid - 1) / B.grid), first = (int)B.blk * chunk;
	const int size = max(0, min(chunk, m - first));
	int *in = pend + (size_t)(call & 1) * m + first, *out = pend + (size_t)((call + 1) & 1) * m + first;
	return Pending{call ? in : nullptr, out, call ? (int)pcnt[(call & 1) * B.grid + B.blk] : size, first};
}

// pend_entry is the block's entry t < P.n.
__device__ __forceinline__ int pend_entry(const Pending &P, int t) { return P.in ? P.in[t] : P.first + t; }

// pend_keep keeps entry i pending when keep, a warp's entries with one
// shared atomic on the block's count *kept. Every lane must call it.
__device__ __forceinline__ void pend_keep(const Pending &P, bool keep, int i, u32 *kept) {
	const u32 lane = threadIdx.x & 31, k = __ballot_sync(0xffffffffu, keep);
	if (!k) return;
	const u32 lead = __ffs(k) - 1;
	u32 at = 0;
	if (lane == lead) at = atomicAdd(kept, (u32)__popc(k));
	at = __shfl_sync(0xffffffffu, at, lead) + __popc(k & ((1u << lane) - 1));
	if (keep) P.out[at] = i;
}

// pend_done stores the block's count of kept entries for the next call.
// Every thread of the block must call it.
__device__ __forceinline__ void pend_done(u32 *pcnt, int call, const u32 *kept, Blocks B) {
	__syncthreads();
	if (threadIdx.x == 0) pcnt[((call + 1) & 1) * B.grid + B.blk] = *kept;
}

// part_send: for each boundary vertex v = list[i] decided and not sent
// yet, store its state byte (OUT or IN alone, with the class bits
// xcls[i] when xcls is not null, else v's own) into every ghost slot
// other parts keep of it: slot[ofs[i]..ofs[i+1]]. The class bits come
// from the host because a part whose primaries do not fit the state
// byte keeps none there, while a neighbour whose halo holds only small
// ones keys its ghosts by them. base
// holds each part's state array, or for a mailbox its pair array, whose
// fill count this part keeps in fill[part]. The lanes of a warp that
// write pairs to one mailbox reserve their places with one atomic, so
// that a warp writes its pairs as one run (whole lines over the link).
// bytes adds what was sent; epoch tags the pairs. It scans the entries
// still undecided at its last call (pend, pcnt, call: Pending), and
// leaves pending those still undecided; an entry the tail sent
// (part1_tail marks sent) leaves the list unsent.
#define PART_SEND_PARAMS                                                                                     \
	const u8 *st, const u8 *xcls, const int *list, int nlist, u8 *sent, const int *ofs, const u64 *slot,     \
	    const u64 *base, u32 *fill, u64 *bytes, u32 epoch, int *pend, u32 *pcnt, int call
#define PART_SEND_ARGS st, xcls, list, nlist, sent, ofs, slot, base, fill, bytes, epoch, pend, pcnt, call

__device__ __forceinline__ void part_send_blocks(PART_SEND_PARAMS, Blocks B) {
	__shared__ u32 kept;
	const u32 lane = threadIdx.x & 31;
	const Pending P = pending(pend, pcnt, nlist, call, B);
	if (threadIdx.x == 0) kept = 0;
	__syncthreads();
	u32 b = 0;
	for (int i0 = 0; i0 < P.n; i0 += blockDim.x) {
		const int e = i0 + (int)threadIdx.x;
		const int i = e < P.n ? pend_entry(P, e) : 0;
		int k = 0, cnt = 0;
		u8 x = 0;
		bool keep = false;
		if (e < P.n && !sent[i]) {
			const u32 s = __ldcg(st + list[i]);
			keep = STATE(s) == UND;
			if (!keep) {
				sent[i] = 1;
				x = (u8)((xcls ? (u32)__ldg(xcls + i) << 2 : s & ~3u) | STATE(s));
				k = __ldg(ofs + i);
				cnt = __ldg(ofs + i + 1) - k;
			}
		}
		pend_keep(P, keep, i, &kept);
		int most = cnt;
#pragma unroll
		for (int d = 16; d > 0; d >>= 1) most = max(most, __shfl_xor_sync(0xffffffffu, most, d));
		for (int j = 0; j < most; j++) {
			const bool has = j < cnt;
			const u64 d = has ? __ldg(slot + k + j) : 0;
			const bool box = has && (d & PART_MAILBOX);
			const u64 q = (d & ~PART_MAILBOX) >> PART_SLOT_BITS, l = d & ((1ull << PART_SLOT_BITS) - 1);
			const u32 peers = __match_any_sync(0xffffffffu, box ? (u32)q : 0xffffffffu);
			if (box) {
				const u32 lead = __ffs(peers) - 1;
				u32 at = 0;
				if (lane == lead) at = atomicAdd(fill + q, (u32)__popc(peers));
				at = __shfl_sync(peers, at, lead) + __popc(peers & ((1u << lane) - 1));
				((u64 *)__ldg(base + q))[at] = (u64)epoch << PART_EPOCH_SHIFT | l << 8 | x;
				b += 8;
			} else if (has) {
				*(volatile u8 *)((u8 *)__ldg(base + q) + l) = x;
				b += 1;
			}
		}
	}
	pend_done(pcnt, call, &kept, B);
	b = warp_sum(b);
	if (lane == 0 && b) atomicAdd(bytes, (u64)b);
}

extern "C" __global__ void part_send(PART_SEND_PARAMS) { part_send_blocks(PART_SEND_ARGS, Blocks{blockIdx.x, gridDim.x}); }

// part_recv_at takes a snapshot of what a sender has published in a
// mailbox of cap pairs (*filled, written after its sends completed):
// the pairs to apply are at[0]..at[1], from the first one the last
// part_recv did not apply (at[2]) up to the count, at most cap. part_recv
// then applies them and leaves in at[2] the first it could not.
extern "C" __global__ void part_recv_at(const volatile u32 *filled, u32 *at, u32 cap) {
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		const u32 from = at[2];
		const u32 to = min(max(*filled, from), cap);
		at[0] = from, at[1] = to, at[2] = to;
	}
}

extern "C" __global__ void part_recv(const u64 *box, u32 *at, u8 *st, u32 epoch, u32 nslots) {
	const u32 from = at[0], to = at[1];
	for (u32 i = from + blockIdx.x * blockDim.x + threadIdx.x; i < to; i += gridDim.x * blockDim.x) {
		const u64 p = ((const volatile u64 *)box)[i];
		const u32 l = (u32)(p >> 8);
		if ((u32)(p >> PART_EPOCH_SHIFT) != epoch || l >= nslots) {
			atomicMin(at + 2, i);
			continue;
		}
		st[l] = (u8)(p & 0xffu);
	}
}

// part_or ORs bits into the state word at owner<<PART_SLOT_BITS | local
// id (a multiple of 4) where rbase reaches the owner; it returns the
// bytes that took.
__device__ __forceinline__ u32 part_or(const u64 *rbase, u64 word, u32 bits) {
	u8 *to = (u8 *)__ldg(rbase + (word >> PART_SLOT_BITS));
	if (!to) return 0;
	atomicOr((u32 *)(to + (word & ((1ull << PART_SLOT_BITS) - 1))), bits);
	return 4;
}

// part_return gives back what a part's own pushes taught it about its
// ghosts: a ghost that is OUT here (a member of this part within the
// distance pushed OUT into it, or its owner sent it) is OUT in its
// owner's memory too, ORed in once per run (back[g] marks it). Without
// it the owner would have to scan that vertex itself, which on the
// engine it never does: the member's push settles it. A ghost's home is
// owner<<PART_SLOT_BITS | owner's local id, and rbase[owner] the owner's
// state array, or null where this part cannot reach it (mailboxes: the
// owner then scans). A thread takes 16 ghosts, and ghosts that go to one
// state word of one owner (runs of consecutive ids, as contiguous ranges
// give) go with one atomic; the state and flag arrays are padded to
// whole tiles. bytes adds 4 per atomic. The ghosts below wend are in
// windows: ghost g of the last window k with wf[k] <= g goes to
// wh[k]+(g-wf[k]) (misgpu.PartSpec.HomeWord models it); from wend on,
// home[g-wend] says where. It scans the groups of 16 that held an
// undecided ghost at its last call (pend, pcnt, call: Pending) and
// leaves pending those that still do.
#define PART_RETURN_PARAMS                                                                                   \
	const u8 *gst, int nghost, u8 *back, const u64 *home, const u64 *rbase, u64 *rbytes, int wend, u32 wf0,   \
	    u64 wh0, u32 wf1, u64 wh1, u32 wf2, u64 wh2, int *rpend, u32 *rpcnt, int rcall
#define PART_RETURN_ARGS gst, nghost, back, home, rbase, rbytes, wend, wf0, wh0, wf1, wh1, wf2, wh2, rpend, rpcnt, rcall

__device__ __forceinline__ void part_return_blocks(PART_RETURN_PARAMS, Blocks B) {
	const u8 *st = gst;
	u64 *bytes = rbytes;
	int *pend = rpend;
	u32 *pcnt = rpcnt;
	const int call = rcall;
	__shared__ u32 kept;
	const u32 wf[PART_WINDOWS] = {wf0, wf1, wf2};
	const u64 wh[PART_WINDOWS] = {wh0, wh1, wh2};
	u32 b = 0;
	const Pending P = pending(pend, pcnt, (nghost + 15) / 16, call, B);
	if (threadIdx.x == 0) kept = 0;
	__syncthreads();
	for (int i0 = 0; i0 < P.n; i0 += blockDim.x) {
		const int t = i0 + (int)threadIdx.x;
		const int i = t < P.n ? pend_entry(P, t) : 0;
		bool keep = false;
		if (t < P.n) {
			const uint4 w4 = __ldcg((const uint4 *)st + i), d4 = ((const uint4 *)back)[i];
			const u32 w[4] = {w4.x, w4.y, w4.z, w4.w}, done[4] = {d4.x, d4.y, d4.z, d4.w};
			u32 mark[4] = {0, 0, 0, 0};
			u64 word = ~0ull;  // the run so far: owner<<PART_SLOT_BITS | its word, and its OUT bits
			u32 bits = 0;
#pragma unroll
			for (int j = 0; j < 16; j++) {
				const int g = 16 * i + j;
				const u32 sj = w[j >> 2] >> (8 * (j & 3)) & 0xffu;
				keep |= g < nghost && STATE(sj) == UND;
				if (g >= nghost || (done[j >> 2] >> (8 * (j & 3)) & 0xffu) || STATE(sj) != OUT) continue;
				mark[j >> 2] |= 1u << (8 * (j & 3));
				u64 d = 0;
				if (g >= wend) {
					d = __ldg(home + (g - wend));
				} else {
#pragma unroll
					for (int k = 0; k < PART_WINDOWS; k++)
						if ((u32)g >= wf[k]) d = wh[k] + ((u32)g - wf[k]);
				}
				const u64 wd = d & ~3ull;
				if (wd != word && bits) b += part_or(rbase, word, bits);
				bits = (wd != word ? 0u : bits) | OUT << (8 * (d & 3));
				word = wd;
			}
			if (bits) b += part_or(rbase, word, bits);
			if (mark[0] | mark[1] | mark[2] | mark[3])
				((uint4 *)back)[i] = make_uint4(done[0] | mark[0], done[1] | mark[1], done[2] | mark[2], done[3] | mark[3]);
		}
		pend_keep(P, keep, i, &kept);
	}
	pend_done(pcnt, call, &kept, B);
	b = warp_sum(b);
	if ((threadIdx.x & 31) == 0 && b) atomicAdd(bytes, (u64)b);
}

extern "C" __global__ void part_return(PART_RETURN_PARAMS) {
	part_return_blocks(PART_RETURN_ARGS, Blocks{blockIdx.x, gridDim.x});
}

// part_exchange is part_send over its first sgrid blocks and part_return
// over the rest, with their arguments: one launch after each of the
// engine's instead of two, where a part both sends and gives ghosts
// back. Each keeps its pending lists as its own launches would, with
// its own grid (sgrid, and the launch's grid less sgrid).
extern "C" __global__ void part_exchange(PART_SEND_PARAMS, PART_RETURN_PARAMS, u32 sgrid) {
	if (blockIdx.x < sgrid)
		part_send_blocks(PART_SEND_ARGS, Blocks{blockIdx.x, sgrid});
	else
		part_return_blocks(PART_RETURN_ARGS, Blocks{blockIdx.x - sgrid, gridDim.x - sgrid});
}

// PULL_WORDS is the words a thread of part_pull takes at a time
// (misgpu.pullUnroll sizes its grid by it).
#define PULL_WORDS 4

// pull_src is the neighbour's address of this part's state word w of a
// segment that starts at the neighbour's s0 and meets this part's bytes
// at dst: the neighbour's byte for this part's byte i is s0 + i - dst.
// The word straddles the neighbour's aligned words at its address & ~3
// and the one after, (its address & 3) bytes into the first.
__device__ __forceinline__ u64 pull_src(u64 s0, u32 w, u32 dst) { return s0 + 4 * (u64)w - dst; }

// part_pull: where every ghost of every part lies in a window and each
// part reaches its neighbours' memory, a part reads after each of its
// launches what its neighbours decided, instead of being sent it (no
// part_send, no part_return). Segment k is seg[2k], the address of a
// neighbour's state bytes, and seg[2k+1] = back<<63 | len<<32 | dst:
// those len bytes meet this part's states from byte dst on. Forward (a
// window of the neighbour's vertices): a decided state there decides
// the ghost here. Back (this part's vertices in the neighbour's window
// of them): an OUT there, which the neighbour's members pushed or this
// part had decided, makes the vertex OUT here, as part_return's OR
// would. Every fact read is true wherever it was read, so a byte read
// before it changed only delays a decision; a word here changes only by
// an atomic OR of the bits it lacks, since the neighbour's tail
// (part1_tail) may store into the same ghost words meanwhile. Class bits
// are not read: pulls serve hash keys, whose states hold none. Block b
// takes segment b % nseg (the grid a multiple of nseg), each thread
// PULL_WORDS words of 4 destination bytes at a time; a lane reads the
// neighbour's aligned word and takes the bytes past it from the next
// lane's, so a warp's reads are whole lines over the link whatever the
// alignment.
// The bytes read (added to bytes) fall as the segment's bytes here get
// decided.
extern "C" __global__ void part_pull(u8 *st, const u64 *seg, int nseg, u64 *bytes) {
	PART_NEXT // a push's next launch, the compaction before a tail, may start beside it
	const u32 k = blockIdx.x % (u32)nseg, per = gridDim.x / (u32)nseg;
	const u64 s0 = seg[2 * k], d = seg[2 * k + 1];
	const u32 dst = (u32)d, len = (u32)(d >> 32) & 0x7fffffffu;
	const bool back = d >> 63;
	const u32 w1 = (u32)(((u64)dst + len + 3) >> 2);
	const u32 lane = threadIdx.x & 31;
	u32 b = 0;
	// PULL_WORDS words a thread at a time, blockDim.x apart, their reads
	// over the link issued together: a read there takes microseconds, so
	// a thread keeps several in flight.
	for (u32 w0 = (dst >> 2) + (blockIdx.x / (u32)nseg) * blockDim.x * PULL_WORDS; w0 < w1;
	     w0 += per * blockDim.x * PULL_WORDS) {
		u32 m[PULL_WORDS], cur[PULL_WORDS], lo[PULL_WORDS], hi[PULL_WORDS];
		bool need[PULL_WORDS];
#pragma unroll
		for (u32 u = 0; u < PULL_WORDS; u++) {
			const u32 w = w0 + u * blockDim.x + threadIdx.x;
			m[u] = 0;
#pragma unroll
			for (u32 j = 0; j < 4; j++) {
				const u32 i = 4 * w + j;
				if (w < w1 && i >= dst && i - dst < len) m[u] |= 0xffu << (8 * j);
			}
			// A word whose bytes of the segment are all decided here has
			// nothing to learn: its neighbour's word is not read, so that
			// the bytes a pull reads fall with what is left undecided.
			cur[u] = m[u] ? __ldcg((u32 *)st + w) : 0u;
			need[u] = ~(cur[u] | cur[u] >> 1) & m[u] & 0x01010101u;
		}
#pragma unroll
		for (u32 u = 0; u < PULL_WORDS; u++) {
			const u32 w = w0 + u * blockDim.x + threadIdx.x;
			const bool prev = __shfl_up_sync(0xffffffffu, need[u], 1) && lane > 0;
			const u64 al = pull_src(s0, w, dst) & ~3ull;
			// Only words that hold a byte of the segment are read: they
			// lie within the neighbour's (word-aligned) allocation.
			const bool rlo = (need[u] || prev) && al + 4 > s0 && al < s0 + len;
			lo[u] = rlo ? __ldcg((const u32 *)al) : 0u;
			b += 4 * rlo;
		}
#pragma unroll
		for (u32 u = 0; u < PULL_WORDS; u++) {
			const u32 w = w0 + u * blockDim.x + threadIdx.x;
			const u64 a = pull_src(s0, w, dst), al = a & ~3ull;
			const u32 sh = (u32)(a & 3) * 8;
			hi[u] = __shfl_down_sync(0xffffffffu, lo[u], 1);
			const bool rhi = lane == 31 && need[u] && sh && al + 8 > s0 && al + 4 < s0 + len;
			if (rhi) hi[u] = __ldcg((const u32 *)(al + 4));
			b += 4 * rhi;
		}
#pragma unroll
		for (u32 u = 0; u < PULL_WORDS; u++) {
			if (!need[u]) continue;
			const u32 w = w0 + u * blockDim.x + threadIdx.x;
			const u32 sh = (u32)(pull_src(s0, w, dst) & 3) * 8;
			const u32 v = (sh ? __funnelshift_r(lo[u], hi[u], sh) : lo[u]) & m[u];
			const u32 add = back ? v & 0x02020202u & ~((v & 0x01010101u) << 1) : v & 0x03030303u;
			if (add & ~cur[u]) atomicOr((u32 *)st + w, add);
		}
	}
	b = warp_sum(b);
	if (lane == 0 && b) atomicAdd(bytes, (u64)b);
}

// PartSend is what a persistent tail needs to send its boundary
// decisions itself (part1_tail): at[v] is owned vertex v's index in the
// boundary list (-1: none), and the rest part_send's arrays, with base
// every neighbour's state array (no mailboxes).
struct PartSend {
	const int *at;
	const u8 *xcls;
	const int *ofs;
	const u64 *slot, *base;
	u8 *sent;
};

// part_store stores decided vertex v's state byte s into every ghost
// slot other parts keep of it, unless it has none or was sent; it
// returns the bytes stored. One thread owns v (the tail lists each
// vertex once), so sent needs no atomic.
__device__ __forceinline__ u32 part_store(const PartSend &S, int v, u32 s) {
	const int i = __ldg(S.at + v);
	if (i < 0 || S.sent[i]) return 0;
	S.sent[i] = 1;
	const u8 x = (u8)((S.xcls ? (u32)__ldg(S.xcls + i) << 2 : s & ~3u) | STATE(s));
	const int e = __ldg(S.ofs + i + 1);
	for (int j = __ldg(S.ofs + i); j < e; j++) {
		const u64 d = __ldg(S.slot + j);
		*(volatile u8 *)((u8 *)__ldg(S.base + (d >> PART_SLOT_BITS)) + (d & ((1ull << PART_SLOT_BITS) - 1))) = x;
	}
	return (u32)(e - __ldg(S.ofs + i));
}

// part1_tail is mis1_tail for a part whose neighbours are all on other
// devices it reaches: a vertex the tail decides on the boundary goes
// into the neighbours' ghosts at once, where their tails, which read
// states from L2, see it. (A tail that left the sends to part_send after
// it would spin to its pass bound on every ghost, each part waiting on
// the other's tail.) The grid fits its own device, and each neighbour's
// tail runs on its own, so the undecided vertex of largest key is always
// being settled.
template <int PK>
__device__ void part1_tail(const Params &P, const int *list, const u32 *len, const PartSend &S, u64 *bytes) {
	const u32 m = *(volatile const u32 *)len;
	const u32 stride = gridDim.x * blockDim.x;
	const u32 t0 = blockIdx.x * blockDim.x + threadIdx.x;
	u32 b = 0;
	const u32 passes = tail_passes(list, m, [&](int v) {
		const u32 d = mis1_try<PK>(P, v);
		if (d != UND && S.at) b += part_store(S, v, __ldcg(P.st + v));
		return d == UND;
	});
	u32 left = 0;
	for (u32 i = t0; left == 0 && passes == TAIL_PASSES && i < m; i += stride)
		left += STATE(__ldcg(P.st + list[i])) == UND;
	tail_report(P, passes, left);
	b = warp_sum(b);
	if ((threadIdx.x & 31) == 0 && b) atomicAdd(bytes, (u64)b);
}

#define PART_TAIL(PK)                                                                                         \
	extern "C" __global__ void __launch_bounds__(256)                                                         \
	    part1_tail_p##PK(const i64 *off, const int *adj, u8 *st, int *ball, const int *list, const u32 *len,   \
	                     const u32 *prim, u32 *count, int n, int ncount, int pass, u32 seedlo, u32 seedhi,   \
	                     const u32 *gid, u32 gbase, int gfrom, u64 gw0, u64 gw1, u64 gw2, const int *at,     \
	                     const u8 *xcls, const int *ofs,                                                   \
	                     const u64 *slot, const u64 *base, u8 *sent, u64 *bytes) {                           \
		Params P = {off, adj, st, ball, prim, count, n, ncount, pass, seedlo, seedhi};                      \
		PART_SET(P)                                                                                         \
		if (!sweep_needed(P)) return;                                                                       \
		part1_tail<PK>(P, list, len, PartSend{at, xcls, ofs, slot, base, sent}, bytes);                     \
	}
PART_TAIL(0)
PART_TAIL(1)
PART_TAIL(2)

// part_ghosts sets the initial ghost states: class bits from cls (or
// zero) and undecided.
extern "C" __global__ void part_ghosts(u8 *st, const u8 *cls, int n) {
	for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
		st[v] = cls ? (u8)((cls[v] & 63u) << 2) : 0;
}

// part_prefix puts the top six bits of the hash of each vertex's global
// id into its state's class bits (PART_PREFIX in mis.cu), for the owned
// vertices [0, own) and the ghosts [from, n), once their states are
// initialised.
extern "C" __global__ void part_prefix(u8 *st, int own, int from, int n, u32 seedlo, u32 seedhi PART_PARAMS) {
	Params P = {};
	P.seedlo = seedlo, P.seedhi = seedhi;
	PART_SET(P)
	const int m = own + (n - from);
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
		const u32 v = i < own ? (u32)i : (u32)(from + (i - own));
		st[v] = (u8)((st[v] & 3u) | HPREFIX(vhash(P, v)) << 2);
	}
}
