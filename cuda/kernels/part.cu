// Kernels of the partitioned multi-GPU MIS (mis/mgpu*.go). Each part holds
// its own rows in local ids: owned vertices 0..own-1, then its ghosts
// (off-part neighbours), grouped by owning part. Keys are precomputed per
// local vertex from GLOBAL ids, so every part agrees on the order.
//
// Decisions follow the monotone greedy rules (docs/gpu.md): a vertex joins
// once every larger-key vertex within the distance is OUT, and leaves once
// a member is within the distance. Every value written is a fact of the
// greedy set and a stale read only delays a decision, so sweeps run in
// place; ghosts are refreshed between sweeps by whole-segment copies.

#define PART_IN 1
#define PART_OUT 2

// part_sweep1: one in-place distance-1 sweep over the owned vertices;
// undone[0] counts those still undecided after it.
extern "C" __global__ void part_sweep1(const long long *__restrict__ off, const int *__restrict__ adj,
                                       const unsigned long long *__restrict__ key, unsigned char *st, int own,
                                       unsigned int *undone) {
	int v = blockIdx.x * blockDim.x + threadIdx.x;
	if (v >= own || st[v] != 0) {
		return;
	}
	unsigned long long kv = key[v];
	bool blocked = false;
	for (long long e = off[v], end = off[v + 1]; e < end; e++) {
		int u = adj[e];
		unsigned char su = *(volatile unsigned char *)&st[u];
		if (su == PART_IN) {
			st[v] = PART_OUT;
			return;
		}
		if (su == 0 && !blocked && key[u] > kv) {
			blocked = true;
		}
	}
	if (!blocked) {
		// All larger neighbours read OUT: v is in the greedy set.
		st[v] = PART_IN;
		return;
	}
	atomicAdd(undone, 1u);
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
