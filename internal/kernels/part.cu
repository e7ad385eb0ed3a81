// Kernels of the partitioned multi-GPU MIS (mis/mgpu*.go). Each part holds
// its own rows in local ids: owned vertices 0..own-1, then its ghosts
// (off-part neighbours), grouped by owning part. Keys are precomputed per
// local vertex from GLOBAL ids, so every part agrees on the order.
//
// Decisions follow the monotone greedy rules (docs/gpu.md): a vertex joins
// once every larger-key vertex within the distance is OUT, and leaves once
// a member is within the distance. Every value written is a fact of the
// greedy set and a stale read only delays a decision, so sweeps run in
// place; ghosts are refreshed between sweeps by whole-segment copies, or
// (between parts that reach each other's memory: peers with access
// enabled, or parts on one device) by the owner's direct stores of what
// changed.
//
// Direct stores (Remote.ofs non-null): each owned vertex v lists, in
// ofs[v]..ofs[v+1] of slot, the ghost slots other parts keep of it, each
// as part<<40 | local id; bases holds the device addresses of every part's
// state bytes, then of its MIS-2 champion keys, then of its near flags.
// A part stores a value there only when it changed (a state once, a
// champion key when it drops, a near flag once) and adds the bytes it
// stored to *sent. The parts then never wait for each other: a ghost read
// before a store lands only delays a decision, and every value is a fact
// that stays true (a champion key only ever overstates the largest key
// still in play in its ball, and the stores of one part land in the
// order its kernels ran).

#define PART_IN 1
#define PART_OUT 2

// ------------------------------------------------- distance 1, tuned
//
// part_sweep1v is the distance-1 sweep with the techniques of the
// single-GPU kernels (mis.cu): keys are computed on the fly from the
// global id (hash) and an optional 32-bit primary, so a neighbour costs
// one state byte instead of an 8-byte key; one lane reads its whole row
// 16 bytes at a time; the scan stops at the first undecided larger
// neighbour; a vertex that joins writes OUT into its undecided owned
// neighbours at once (all have smaller keys, so that is their greedy
// state). Ghosts are never written here: only their owner's copies do.

#include "shared.cuh"

typedef unsigned long long part_u64;
typedef unsigned int part_u32;

// Remote is what direct stores need (see the top of this file); ofs is
// null where the ghosts travel by copies.
struct Remote {
	const int *ofs;
	const part_u64 *slot;
	const part_u64 *bases;  // 3*parts addresses: states, champion keys, near flags
	int parts;
	unsigned long long *sent;
};

#define PART_SLOT_BITS 40
#define PART_ST 0
#define PART_M1 1
#define PART_NEAR 2

// part_addr is the address of remote slot k in array arr of elements of
// size bytes.
__device__ __forceinline__ char *part_addr(const Remote &R, int k, int arr, int size) {
	const part_u64 x = __ldg(R.slot + k);
	const part_u64 q = x >> PART_SLOT_BITS, l = x & ((1ull << PART_SLOT_BITS) - 1);
	return (char *)__ldg(R.bases + arr * R.parts + q) + l * size;
}

// part_tell stores byte x of v into array arr of every ghost slot of v.
__device__ __forceinline__ void part_tell(const Remote &R, int v, unsigned char x, int arr = PART_ST) {
	if (!R.ofs) return;
	const int b = __ldg(R.ofs + v), e = __ldg(R.ofs + v + 1);
	for (int k = b; k < e; k++) *(volatile unsigned char *)part_addr(R, k, arr, 1) = x;
	if (R.sent && e > b) atomicAdd(R.sent, (unsigned long long)(e - b));
}

// part_tell64 stores v's champion key into every ghost slot of v.
__device__ __forceinline__ void part_tell64(const Remote &R, int v, part_u64 x) {
	if (!R.ofs) return;
	const int b = __ldg(R.ofs + v), e = __ldg(R.ofs + v + 1);
	for (int k = b; k < e; k++) *(volatile part_u64 *)part_addr(R, k, PART_M1, 8) = x;
	if (R.sent && e > b) atomicAdd(R.sent, 8ull * (unsigned long long)(e - b));
}

struct PartKey {
	const part_u32 *gown;    // global id of each owned vertex, or null: base + local id
	const part_u32 *gghost;  // global id of each ghost
	const part_u32 *prim;    // primary rank of each local vertex, or null (hash only)
	int own;
	part_u32 base, seedlo, seedhi;
};


__device__ __forceinline__ part_u64 part_key(const PartKey &K, int u) {
	part_u32 g = u < K.own ? (K.gown ? __ldg(K.gown + u) : K.base + (part_u32)u) : __ldg(K.gghost + (u - K.own));
	part_u64 k = hash32(g, K.seedlo, K.seedhi);
	if (K.prim) k |= (part_u64)__ldg(K.prim + u) << 32;
	return k;
}

// part_visit1 decides v if it can; true when v stays undecided.
__device__ __forceinline__ bool part_visit1(const long long *__restrict__ off, const int *__restrict__ adj,
                                            const PartKey &K, const Remote &R, unsigned char *st, int v) {
	const long long b = off[v], e = off[v + 1];
	const long long a = b & ~(long long)3;
	const int lead = (int)(b - a), tot = lead + (int)(e - b);
	const part_u64 kv = part_key(K, v);
	unsigned char dec = PART_IN;
	for (int c0 = 0; c0 < tot; c0 += 8) {
		int u[8];
		unsigned char s[8];
		bool ok[8];
		load_row8(adj, a, lead, tot, c0, u, ok);
#pragma unroll
		for (int j = 0; j < 8; j++) s[j] = ok[j] ? st[u[j]] : PART_OUT;
		bool hin = false, hund = false;
#pragma unroll
		for (int j = 0; j < 8; j++) {
			hin |= s[j] == PART_IN;
			hund |= s[j] == 0 && part_key(K, u[j]) > kv;
		}
		if (hin) {
			dec = PART_OUT;
			break;
		}
		if (hund) return true;
	}
	st[v] = dec;
	part_tell(R, v, dec);
	if (dec != PART_IN) return false;
	for (int c0 = 0; c0 < tot; c0 += 8) {
		int u[8];
		unsigned char s[8];
		bool ok[8];
		load_row8(adj, a, lead, tot, c0, u, ok);
#pragma unroll
		for (int j = 0; j < 8; j++) s[j] = ok[j] && u[j] < K.own ? st[u[j]] : PART_OUT;
#pragma unroll
		for (int j = 0; j < 8; j++)
			if (s[j] == 0) {
				st[u[j]] = PART_OUT;
				part_tell(R, u[j], PART_OUT);
			}
	}
	return false;
}

// part_sweep1v: one in-place sweep over the owned vertices. prev, when
// not null, is this part's count after its previous sweep: zero means
// every owned vertex is decided and nothing is left to do. undone gets
// the count after this sweep.
extern "C" __global__ void part_sweep1v(const long long *__restrict__ off, const int *__restrict__ adj,
                                        const part_u32 *gown, const part_u32 *gghost, const part_u32 *prim,
                                        const int *rofs, const part_u64 *rslot, const part_u64 *bases, int parts,
                                        int own, part_u32 base, part_u32 seedlo, part_u32 seedhi, unsigned char *st,
                                        const unsigned int *prev, unsigned int *undone) {
	const PartKey K = {gown, gghost, prim, own, base, seedlo, seedhi};
	const Remote R = {rofs, rslot, bases, parts, nullptr};
	if (prev && *(volatile const unsigned int *)prev == 0) return;
	const int v = blockIdx.x * blockDim.x + threadIdx.x;
	bool und = false;
	if (v < K.own && st[v] == 0) und = part_visit1(off, adj, K, R, st, v);
	unsigned int m = __ballot_sync(0xffffffffu, und);
	if ((threadIdx.x & 31) == 0 && m) atomicAdd(undone, (unsigned int)__popc(m));
}

// part_ball2: for each owned w, m1[w] is the largest key in N[w] that is
// not OUT (undecided or IN) and near[w] says whether N[w] holds a member.
// With direct stores, a boundary w stores what changed into its ghosts.
extern "C" __global__ void part_ball2(const long long *__restrict__ off, const int *__restrict__ adj,
                                      const unsigned long long *__restrict__ key, const unsigned char *__restrict__ st,
                                      int own, unsigned long long *m1, unsigned char *near, const int *rofs,
                                      const part_u64 *rslot, const part_u64 *bases, int parts,
                                      unsigned long long *sent) {
	const Remote R = {rofs, rslot, bases, parts, sent};
	int w = blockIdx.x * blockDim.x + threadIdx.x;
	if (w >= own || near[w] != 0) {
		// A ball with a member is settled: its m1 no longer matters.
		return;
	}
	unsigned char sw = st[w];
	unsigned long long m = sw != PART_OUT ? key[w] : 0;
	unsigned char nr = sw == PART_IN;
	for (long long e = off[w], end = off[w + 1]; e < end; e++) {
		int u = adj[e];
		unsigned char su = st[u];
		if (su == PART_IN) {
			nr = 1;
		} else if (su == 0) {
			unsigned long long ku = key[u];
			m = ku > m ? ku : m;
		}
	}
	if (nr) {
		// A covered ball is final, whatever its champion.
		part_tell(R, w, 1, PART_NEAR);
	} else if (m != m1[w]) {
		part_tell64(R, w, m);
	}
	m1[w] = m;
	near[w] = nr;
}

// part_decide2: an undecided owned v leaves when a ball around it holds a
// member, and joins when it is the largest non-OUT key of every ball that
// contains it (its own and its neighbours').
extern "C" __global__ void part_decide2(const long long *__restrict__ off, const int *__restrict__ adj,
                                        const unsigned long long *__restrict__ key, unsigned char *st,
                                        const unsigned long long *__restrict__ m1,
                                        const unsigned char *__restrict__ near, int own, unsigned int *undone,
                                        const int *rofs, const part_u64 *rslot, const part_u64 *bases, int parts,
                                        unsigned long long *sent) {
	const Remote R = {rofs, rslot, bases, parts, sent};
	int v = blockIdx.x * blockDim.x + threadIdx.x;
	if (v >= own || st[v] != 0) {
		return;
	}
	if (near[v]) {
		st[v] = PART_OUT;
		part_tell(R, v, PART_OUT);
		return;
	}
	unsigned long long kv = key[v];
	bool champion = m1[v] == kv;
	for (long long e = off[v], end = off[v + 1]; e < end; e++) {
		int w = adj[e];
		if (near[w]) {
			st[v] = PART_OUT;
			part_tell(R, v, PART_OUT);
			return;
		}
		if (m1[w] != kv) {
			champion = false;
		}
	}
	if (champion) {
		st[v] = PART_IN;
		part_tell(R, v, PART_IN);
		return;
	}
	atomicAdd(undone, 1u);
}

// part_gather packs the bytes of the listed owned vertices (the ghosts of
// one neighbouring part, in its order) into a contiguous send buffer.
extern "C" __global__ void part_gather8(const unsigned char *__restrict__ src, const int *__restrict__ list, int n,
                                        unsigned char *dst) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		dst[i] = src[list[i]];
	}
}

extern "C" __global__ void part_gather64(const unsigned long long *__restrict__ src, const int *__restrict__ list,
                                         int n, unsigned long long *dst) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		dst[i] = src[list[i]];
	}
}
