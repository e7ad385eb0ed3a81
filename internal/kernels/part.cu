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
// (part_sweep1v between parts that reach each other's memory) by the
// owner's direct stores of each decision.

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
//
// With rofs non-null (every link reaches its neighbour's memory: peers
// with access enabled, or parts on one device) there are no exchanges:
// each decision of a boundary vertex is also stored straight into the
// ghost slots that other parts keep of it, rofs[v]..rofs[v+1] indexing
// their device addresses in raddr. A decided value is a fact of the
// greedy set and is written once, so the parts sweep without waiting for
// each other; a ghost read before the store lands only delays a decision.

#include "shared.cuh"

typedef unsigned long long part_u64;
typedef unsigned int part_u32;

struct PartKey {
	const part_u32 *gown;    // global id of each owned vertex, or null: base + local id
	const part_u32 *gghost;  // global id of each ghost
	const part_u32 *prim;    // primary rank of each local vertex, or null (hash only)
	const int *rofs;         // remote ghost slots of each owned vertex, or null
	const part_u64 *raddr;
	int own;
	part_u32 base, seedlo, seedhi;
};

// part_tell stores v's decision into the other parts' ghost slots of v.
__device__ __forceinline__ void part_tell(const PartKey &K, int v, unsigned char dec) {
	if (!K.rofs) return;
	for (int k = __ldg(K.rofs + v), e = __ldg(K.rofs + v + 1); k < e; k++)
		*(volatile unsigned char *)(__ldg(K.raddr + k)) = dec;
}


__device__ __forceinline__ part_u64 part_key(const PartKey &K, int u) {
	part_u32 g = u < K.own ? (K.gown ? __ldg(K.gown + u) : K.base + (part_u32)u) : __ldg(K.gghost + (u - K.own));
	part_u64 k = hash32(g, K.seedlo, K.seedhi);
	if (K.prim) k |= (part_u64)__ldg(K.prim + u) << 32;
	return k;
}

// part_visit1 decides v if it can; true when v stays undecided.
__device__ __forceinline__ bool part_visit1(const long long *__restrict__ off, const int *__restrict__ adj,
                                            const PartKey &K, unsigned char *st, int v) {
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
	part_tell(K, v, dec);
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
				part_tell(K, u[j], PART_OUT);
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
                                        const int *rofs, const part_u64 *raddr, int own, part_u32 base,
                                        part_u32 seedlo, part_u32 seedhi, unsigned char *st,
                                        const unsigned int *prev, unsigned int *undone) {
	const PartKey K = {gown, gghost, prim, rofs, raddr, own, base, seedlo, seedhi};
	if (prev && *(volatile const unsigned int *)prev == 0) return;
	const int v = blockIdx.x * blockDim.x + threadIdx.x;
	bool und = false;
	if (v < K.own && st[v] == 0) und = part_visit1(off, adj, K, st, v);
	unsigned int m = __ballot_sync(0xffffffffu, und);
	if ((threadIdx.x & 31) == 0 && m) atomicAdd(undone, (unsigned int)__popc(m));
}

// part_ball2: for each owned w, m1[w] is the largest key in N[w] that is
// not OUT (undecided or IN) and near[w] says whether N[w] holds a member.
extern "C" __global__ void part_ball2(const long long *__restrict__ off, const int *__restrict__ adj,
                                      const unsigned long long *__restrict__ key, const unsigned char *__restrict__ st,
                                      int own, unsigned long long *m1, unsigned char *near) {
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
	m1[w] = m;
	near[w] = nr;
}

// part_decide2: an undecided owned v leaves when a ball around it holds a
// member, and joins when it is the largest non-OUT key of every ball that
// contains it (its own and its neighbours').
extern "C" __global__ void part_decide2(const long long *__restrict__ off, const int *__restrict__ adj,
                                        const unsigned long long *__restrict__ key, unsigned char *st,
                                        const unsigned long long *__restrict__ m1,
                                        const unsigned char *__restrict__ near, int own, unsigned int *undone) {
	int v = blockIdx.x * blockDim.x + threadIdx.x;
	if (v >= own || st[v] != 0) {
		return;
	}
	if (near[v]) {
		st[v] = PART_OUT;
		return;
	}
	unsigned long long kv = key[v];
	bool champion = m1[v] == kv;
	for (long long e = off[v], end = off[v + 1]; e < end; e++) {
		int w = adj[e];
		if (near[w]) {
			st[v] = PART_OUT;
			return;
		}
		if (m1[w] != kv) {
			champion = false;
		}
	}
	if (champion) {
		st[v] = PART_IN;
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
