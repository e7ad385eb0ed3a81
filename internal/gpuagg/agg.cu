// Aggregation and coarse graph of one hierarchy level, on the device.
// Each kernel has a Go model in model.go that follows it step by step;
// the comments here say why, the models say what.
//
// Every length that depends on an earlier kernel's result (the number of
// aggregates, the coarse edge count) is read from the level's meta words
// in device memory, never passed from the host, so that a level runs
// without a host synchronisation. Kernels over such lengths use grid-
// stride loops over a fixed grid.

typedef unsigned char u8;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// Meta words of a level (u64 each), read back once per level.
#define M_N 0      // vertices of this level
#define M_NC 1     // aggregates (= vertices of the next level)
#define M_ERR1 2   // first phase-one conflict: root index << 32 | position in the root's row
#define M_ERR2 3   // smallest vertex with no aggregate
#define M_NNZC 4   // directed edges of the coarse graph
#define M_MAXDC 5  // largest coarse degree
#define M_NOVF 6   // aggregates whose coarse row overflowed a warp's shared memory
#define M_M 7      // directed edges of this level
#define M_NOVF2 8  // those whose row overflowed a block's too
#define M_WORDS 9

#define NONE 0xffffffffu
#define FULL 0xffffffffu

// ------------------------------------------------------------- scans

__device__ __forceinline__ i64 warp_incl(i64 x) {
	const int lane = threadIdx.x & 31;
#pragma unroll
	for (int d = 1; d < 32; d <<= 1) {
		i64 y = __shfl_up_sync(FULL, x, d);
		if (lane >= d) x += y;
	}
	return x;
}

// block_excl returns the exclusive prefix of x over the block (blockDim
// a multiple of 32, at most 1024) and the block's total in *tot.
__device__ i64 block_excl(i64 x, i64 *tot) {
	__shared__ i64 ws[33];
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	i64 incl = warp_incl(x);
	__syncthreads();
	if (lane == 31) ws[w] = incl;
	__syncthreads();
	if (w == 0) {
		i64 s = lane < nw ? ws[lane] : 0;
		i64 si = warp_incl(s);
		if (lane < nw) ws[lane] = si - s;
		if (lane == nw - 1) ws[32] = si;
	}
	__syncthreads();
	i64 r = ws[w] + incl - x;
	*tot = ws[32];
	__syncthreads();
	return r;
}

// Scans run as reduce (each block sums its chunk into part), top (one
// block scans part in place and stores the total) and down (each block
// rescans its chunk from its part). Lengths come from the meta words; a
// scan over per-aggregate values covers one slot more than there are
// aggregates, whose load is 0, so that offsets[nc] gets the total.
__device__ __forceinline__ void chunk_of(i64 len, i64 *lo, i64 *hi) {
	i64 chunk = (len + gridDim.x - 1) / gridDim.x;
	*lo = min(len, (i64)blockIdx.x * chunk);
	*hi = min(len, *lo + chunk);
}

template <class Load>
__device__ void scan_reduce(i64 len, i64 *part, Load load) {
	i64 lo, hi, tot;
	chunk_of(len, &lo, &hi);
	i64 s = 0;
	for (i64 i = lo + threadIdx.x; i < hi; i += blockDim.x) s += load(i);
	block_excl(s, &tot);
	if (threadIdx.x == 0) part[blockIdx.x] = tot;
}

template <class Load, class Store>
__device__ void scan_down(i64 len, const i64 *part, Load load, Store store) {
	i64 lo, hi, tot;
	chunk_of(len, &lo, &hi);
	i64 carry = part[blockIdx.x];
	for (i64 b = lo; b < hi; b += blockDim.x) {
		const i64 i = b + threadIdx.x;
		const i64 x = i < hi ? load(i) : 0;
		const i64 e = block_excl(x, &tot);
		if (i < hi) store(i, carry + e);
		carry += tot;
	}
}

// scan_top scans part[0..np) in place (one block) and stores the total in
// *total.
extern "C" __global__ void scan_top(i64 *part, int np, u64 *total) {
	i64 carry = 0, tot;
	for (int b = 0; b < np; b += blockDim.x) {
		const int i = b + threadIdx.x;
		const i64 x = i < np ? part[i] : 0;
		const i64 e = block_excl(x, &tot);
		if (i < np) part[i] = carry + e;
		carry += tot;
	}
	if (threadIdx.x == 0) *total = (u64)carry;
}

// ------------------------------------------------- phase one: roots

// rank numbers the members of the set by increasing vertex id: the root
// index of member v is the number of members before it. p1 gets the root
// index of members and NONE elsewhere; roots lists the members; the
// per-aggregate counters of phase two start at zero.
struct RankLoad {
	const u8 *in;
	i64 n;
	__device__ i64 operator()(i64 v) const { return v < n && in[v] != 0; }
};
struct RankStore {
	const u8 *in;
	i64 n;
	u32 *p1;
	int *roots, *mcnt;
	i64 *ub;
	__device__ void operator()(i64 v, i64 e) const {
		if (v >= n) return;
		if (in[v]) {
			p1[v] = (u32)e;
			roots[e] = (int)v;
			mcnt[e] = 0;
			ub[e] = 0;
		} else {
			p1[v] = NONE;
		}
	}
};

extern "C" __global__ void rank_reduce(const u8 *in, const u64 *meta, i64 *part) {
	const i64 n = (i64)meta[M_N];
	scan_reduce(n, part, RankLoad{in, n});
}

extern "C" __global__ void rank_down(const u8 *in, const u64 *meta, const i64 *part, u32 *p1, int *roots, int *mcnt, i64 *ub) {
	const i64 n = (i64)meta[M_N];
	scan_down(n, part, RankLoad{in, n}, RankStore{in, n, p1, roots, mcnt, ub});
}

// claim: every root lowers p1 of its non-member neighbours to its index,
// so p1[u] ends as the smallest adjacent root (what aggregateD1 picks, and
// for a valid distance-2 set the only one). One warp per root reads the
// row coalesced.
extern "C" __global__ void claim(const i64 *off, const int *adj, const u8 *in, const u64 *meta, const int *roots, u32 *p1) {
	const i64 nc = (i64)meta[M_NC];
	const int lane = threadIdx.x & 31;
	for (i64 a = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; a < nc; a += ((i64)gridDim.x * blockDim.x) >> 5) {
		const int r = roots[a];
		for (i64 k = off[r] + lane; k < off[r + 1]; k += 32) {
			const int u = adj[k];
			if (!in[u]) atomicMin(p1 + u, (u32)a);
		}
	}
}

// conflicts finds the first place, in the host's order (roots by index,
// each row in order), where a root meets a vertex that another root holds
// already: a neighbour that is a root itself, or one whose smallest
// adjacent root is not this one. The smallest key is the host's error.
extern "C" __global__ void conflicts(const i64 *off, const int *adj, u64 *meta, const int *roots, const u32 *p1) {
	const i64 nc = (i64)meta[M_NC];
	const int lane = threadIdx.x & 31;
	for (i64 a = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; a < nc; a += ((i64)gridDim.x * blockDim.x) >> 5) {
		const int r = roots[a];
		const i64 b = off[r];
		for (i64 k = b + lane; k < off[r + 1]; k += 32) {
			const int u = adj[k];
			if (u != r && p1[u] != (u32)a) atomicMin((u64 *)meta + M_ERR1, (u64)a << 32 | (u64)(k - b));
		}
	}
}

// ------------------------------------------------------- phase two

#define MODE_SLOTS 16

// mode returns the phase-one aggregate that most neighbours of v belong
// to, the lowest on a tie, or NONE. Up to MODE_SLOTS distinct candidates
// are counted in a small table; a row with more is counted exactly by
// rescanning it once per candidate.
__device__ u32 mode(const int *adj, i64 b, i64 e, const u32 *p1) {
	u32 ka[MODE_SLOTS];
	int kc[MODE_SLOTS];
	int nk = 0;
	bool over = false;
	for (i64 k = b; k < e; k++) {
		const u32 x = p1[adj[k]];
		if (x == NONE) continue;
		int j = 0;
		while (j < nk && ka[j] != x) j++;
		if (j < nk) kc[j]++;
		else if (nk < MODE_SLOTS) ka[nk] = x, kc[nk++] = 1;
		else over = true;
	}
	u32 best = NONE;
	int bc = 0;
	if (!over) {
		for (int j = 0; j < nk; j++)
			if (kc[j] > bc || (kc[j] == bc && ka[j] < best)) best = ka[j], bc = kc[j];
		return best;
	}
	for (i64 k = b; k < e; k++) {
		const u32 x = p1[adj[k]];
		if (x == NONE || x == best) continue;
		int c = 0;
		for (i64 q = b; q < e; q++) c += p1[adj[q]] == x;
		if (c > bc || (c == bc && x < best)) best = x, bc = c;
	}
	return best;
}

// assign sets of[v]: its phase-one aggregate, else (distance 2) the mode
// of its neighbours' phase-one aggregates; a vertex left without one is
// the error the host reports for the smallest such id. It counts the
// members and their degrees per aggregate for the coarse rows.
extern "C" __global__ void assign(const i64 *off, const int *adj, u64 *meta, const u32 *p1, int dist, int *of, int *mcnt, i64 *ub) {
	const i64 n = (i64)meta[M_N];
	for (i64 v = blockIdx.x * (i64)blockDim.x + threadIdx.x; v < n; v += (i64)gridDim.x * blockDim.x) {
		u32 a = p1[v];
		const i64 b = off[v], e = off[v + 1];
		if (a == NONE && dist == 2) a = mode(adj, b, e, p1);
		of[v] = (int)a;
		if (a == NONE) {
			atomicMin((u64 *)meta + M_ERR2, (u64)v);
			continue;
		}
		atomicAdd(mcnt + a, 1);
		atomicAdd((u64 *)ub + a, (u64)(e - b));
	}
}

// ------------------------------------------------------ coarse graph

struct I32Load {
	const int *x;
	i64 n;
	__device__ i64 operator()(i64 i) const { return i < n ? x[i] : 0; }
};
struct I64Load {
	const i64 *x;
	i64 n;
	__device__ i64 operator()(i64 i) const { return i < n ? x[i] : 0; }
};
struct I32Store {
	int *y;
	__device__ void operator()(i64 i, i64 e) const { y[i] = (int)e; }
};
struct I64Store {
	i64 *y;
	__device__ void operator()(i64 i, i64 e) const { y[i] = e; }
};

// Exclusive scans over the nc+1 slots of per-aggregate values: member
// counts into member offsets (int), degree sums into scratch bases and
// coarse degrees into coarse offsets (int64).
extern "C" __global__ void agg_reduce32(const int *x, const u64 *meta, i64 *part) {
	const i64 nc = (i64)meta[M_NC];
	scan_reduce(nc + 1, part, I32Load{x, nc});
}
extern "C" __global__ void agg_down32to32(const int *x, const u64 *meta, const i64 *part, int *y) {
	const i64 nc = (i64)meta[M_NC];
	scan_down(nc + 1, part, I32Load{x, nc}, I32Store{y});
}
extern "C" __global__ void agg_down32to64(const int *x, const u64 *meta, const i64 *part, i64 *y) {
	const i64 nc = (i64)meta[M_NC];
	scan_down(nc + 1, part, I32Load{x, nc}, I64Store{y});
}
extern "C" __global__ void agg_reduce64(const i64 *x, const u64 *meta, i64 *part) {
	const i64 nc = (i64)meta[M_NC];
	scan_reduce(nc + 1, part, I64Load{x, nc});
}
extern "C" __global__ void agg_down64(const i64 *x, const u64 *meta, const i64 *part, i64 *y) {
	const i64 nc = (i64)meta[M_NC];
	scan_down(nc + 1, part, I64Load{x, nc}, I64Store{y});
}

// members lists the vertices of each aggregate at mptr[a]: the slots are
// taken by counting mcnt down, so their order within an aggregate is
// arbitrary; nothing downstream depends on it (coarse rows are sorted).
extern "C" __global__ void members(const u64 *meta, const int *of, const int *mptr, int *mcnt, int *mem) {
	const i64 n = (i64)meta[M_N];
	for (i64 v = blockIdx.x * (i64)blockDim.x + threadIdx.x; v < n; v += (i64)gridDim.x * blockDim.x) {
		const int a = of[v];
		if (a < 0) continue;
		mem[mptr[a] + atomicSub(mcnt + a, 1) - 1] = (int)v;
	}
}

#define ROW_CAP 256  // coarse neighbours a warp keeps in shared memory
#define ROW_TAB 512  // its hash table's slots (at most half full)
#define ROW_WARPS 8  // warps per block of coarse_rows

// insert adds b to a warp's open-addressing set and counts new entries.
// Callers stop inserting once the count reaches ROW_CAP, so at most 31
// more arrive and the table never fills: the probe always ends.
__device__ __forceinline__ void insert(int *tab, int *cnt, int b) {
	u32 h = ((u32)b * 2654435761u) >> 23;  // 9 bits: ROW_TAB slots
	for (;;) {
		const int old = atomicCAS(tab + h, -1, b);
		if (old == -1) {
			atomicAdd(cnt, 1);
			return;
		}
		if (old == b) return;
		h = (h + 1) & (ROW_TAB - 1);
	}
}

// coarse_rows: one warp per aggregate gathers the aggregates of its
// members' neighbours into a shared-memory set, sorts it and writes it to
// scratch at the aggregate's base (the prefix of member degree sums, an
// upper bound of every earlier row). The members' rows are read as one
// flattened list, 32 entries a step, so short rows keep every lane busy.
// A set that outgrows ROW_CAP is left to coarse_block.
extern "C" __global__ void __launch_bounds__(32 * ROW_WARPS) coarse_rows(const i64 *off, const int *adj, u64 *meta, const int *of, const int *mptr, const int *mem, const i64 *base, int *scratch, int *cnt, int *ovf) {
	__shared__ int tabs[ROW_WARPS][ROW_TAB];
	__shared__ int lists[ROW_WARPS][ROW_CAP];
	__shared__ int ns[ROW_WARPS];
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	int *tab = tabs[w], *list = lists[w];
	const i64 nc = (i64)meta[M_NC];
	for (i64 a = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; a < nc; a += ((i64)gridDim.x * blockDim.x) >> 5) {
		for (int i = lane; i < ROW_TAB; i += 32) tab[i] = -1;
		if (lane == 0) ns[w] = 0;
		__syncwarp();
		const int m0 = mptr[a], m1 = mptr[a + 1];
		bool over = false;
		for (int g = m0; g < m1 && !over; g += 32) {
			const int v = g + lane < m1 ? mem[g + lane] : -1;
			const i64 s = v >= 0 ? off[v] : 0;
			const int d = v >= 0 ? (int)(off[v + 1] - s) : 0;
			int incl = d;
#pragma unroll
			for (int x = 1; x < 32; x <<= 1) {
				const int y = __shfl_up_sync(FULL, incl, x);
				if (lane >= x) incl += y;
			}
			const int tot = __shfl_sync(FULL, incl, 31);
			for (int p0 = 0; p0 < tot; p0 += 32) {
				const int p = p0 + lane;
				int lo = 0;  // lanes whose rows end at or before entry p
#pragma unroll
				for (int step = 16; step > 0; step >>= 1)
					if (__shfl_sync(FULL, incl, lo + step - 1) <= p) lo += step;
				lo = min(lo, 31);
				const int oe = __shfl_sync(FULL, incl, lo), od = __shfl_sync(FULL, d, lo);
				const i64 os = __shfl_sync(FULL, s, lo);
				if (p < tot) {
					const int b = of[adj[os + (p - (oe - od))]];
					if (b != (int)a && b >= 0) insert(tab, ns + w, b);
				}
				__syncwarp();
				if (ns[w] >= ROW_CAP) break;  // at most 31 past ROW_CAP: the table stays half empty
			}
			over = ns[w] >= ROW_CAP;
		}
		if (over) {
			if (lane == 0) {
				cnt[a] = 0;
				ovf[atomicAdd((u64 *)meta + M_NOVF, 1ull)] = (int)a;
			}
			__syncwarp();
			continue;
		}
		const int k = ns[w];
		int filled = 0;
		for (int i0 = 0; i0 < ROW_TAB; i0 += 32) {
			const int x = tab[i0 + lane];
			const u32 bal = __ballot_sync(FULL, x >= 0);
			if (x >= 0) list[filled + __popc(bal & ((1u << lane) - 1))] = x;
			filled += __popc(bal);
		}
		int P = 1;
		while (P < k) P <<= 1;
		for (int i = k + lane; i < P; i += 32) list[i] = 0x7fffffff;
		__syncwarp();
		for (int kk = 2; kk <= P; kk <<= 1)
			for (int j = kk >> 1; j > 0; j >>= 1) {
				for (int i = lane; i < P; i += 32) {
					const int l = i ^ j;
					if (l > i) {
						const int x = list[i], y = list[l];
						if ((x > y) == ((i & kk) == 0)) list[i] = y, list[l] = x;
					}
				}
				__syncwarp();
			}
		int *out = scratch + base[a];
		for (int i = lane; i < k; i += 32) out[i] = list[i];
		if (lane == 0) {
			cnt[a] = k;
			atomicMax((u64 *)meta + M_MAXDC, (u64)k);
		}
		__syncwarp();
	}
}

// sort_block sorts x[0..len) with the whole block: a sorting network
// whose comparators all put the smaller value at the lower index, so that
// slots past len act as +inf and are never touched (no padding needed).
__device__ void sort_block(int *x, i64 len) {
	i64 P = 1;
	while (P < len) P <<= 1;
	for (i64 size = 2; size <= P; size <<= 1) {
		const i64 half = size >> 1;
		for (i64 c = threadIdx.x; c < P / 2; c += blockDim.x) {
			const i64 lo = c / half * size + c % half, hi = c / half * size + size - 1 - c % half;
			if (hi < len && x[lo] > x[hi]) {
				const int t = x[lo];
				x[lo] = x[hi], x[hi] = t;
			}
		}
		__syncthreads();
		for (i64 j = half >> 1; j > 0; j >>= 1) {
			for (i64 c = threadIdx.x; c < P / 2; c += blockDim.x) {
				const i64 lo = c / j * 2 * j + c % j, hi = lo + j;
				if (hi < len && x[lo] > x[hi]) {
					const int t = x[lo];
					x[lo] = x[hi], x[hi] = t;
				}
			}
			__syncthreads();
		}
	}
}

#define BLK_TAB 8192  // a block's hash table for one coarse row
#define BLK_CAP 4096  // the entries it takes (at most half full)

// coarse_block builds the rows coarse_rows gave up on with a whole block
// and a hash set of BLK_CAP entries in shared memory: each warp walks the
// rows of some members. The set is compacted to the front of the table
// and sorted there. A row that outgrows it too goes to coarse_overflow.
extern "C" __global__ void coarse_block(const i64 *off, const int *adj, u64 *meta, const int *of, const int *mptr, const int *mem, const i64 *base, int *scratch, int *cnt, const int *ovf, int *ovf2) {
	__shared__ int tab[BLK_TAB];
	__shared__ int ns;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	const i64 novf = (i64)meta[M_NOVF];
	for (i64 i = blockIdx.x; i < novf; i += gridDim.x) {
		const int a = ovf[i];
		for (int q = threadIdx.x; q < BLK_TAB; q += blockDim.x) tab[q] = -1;
		if (threadIdx.x == 0) ns = 0;
		__syncthreads();
		for (int j = mptr[a] + w; j < mptr[a + 1] && atomicOr(&ns, 0) < BLK_CAP; j += nw) {
			const int v = mem[j];
			for (i64 q = off[v] + lane; q < off[v + 1]; q += 32) {
				const int b = of[adj[q]];
				if (b == a || b < 0) continue;
				u32 h = ((u32)b * 2654435761u) >> 19;  // 13 bits: BLK_TAB slots
				for (;;) {
					const int old = atomicCAS(tab + h, -1, b);
					if (old == -1) {
						atomicAdd(&ns, 1);
						break;
					}
					if (old == b) break;
					h = (h + 1) & (BLK_TAB - 1);
				}
			}
		}
		__syncthreads();
		const int k = ns;
		if (k >= BLK_CAP) {
			if (threadIdx.x == 0) {
				cnt[a] = 0;
				ovf2[atomicAdd((u64 *)meta + M_NOVF2, 1ull)] = a;
			}
			__syncthreads();
			continue;
		}
		// Compact: every slot into registers, then the survivors to the
		// front in slot order.
		constexpr int PER = BLK_TAB / 256;
		int x[PER], c = 0;
#pragma unroll
		for (int q = 0; q < PER; q++) {
			x[q] = tab[threadIdx.x * PER + q];
			c += x[q] >= 0;
		}
		i64 tot;
		int at = (int)block_excl(c, &tot);
#pragma unroll
		for (int q = 0; q < PER; q++)
			if (x[q] >= 0) tab[at++] = x[q];
		__syncthreads();
		sort_block(tab, k);
		int *out = scratch + base[a];
		for (int q = threadIdx.x; q < k; q += blockDim.x) out[q] = tab[q];
		if (threadIdx.x == 0) {
			cnt[a] = k;
			atomicMax((u64 *)meta + M_MAXDC, (u64)k);
		}
		__syncthreads();
	}
}

// coarse_overflow builds the rows coarse_block gave up on, one block per
// aggregate, in global memory: all foreign neighbour aggregates (duplicates
// included) go to the aggregate's scratch segment, which holds its member
// degree sum and so has room; sort_block sorts them there, and a block
// scan drops the duplicates in place.
extern "C" __global__ void coarse_overflow(const i64 *off, const int *adj, u64 *meta, const int *of, const int *mptr, const int *mem, const i64 *base, int *scratch, int *cnt, const int *ovf) {
	__shared__ int k;
	__shared__ int lastv;
	const i64 novf = (i64)meta[M_NOVF2];
	for (i64 i = blockIdx.x; i < novf; i += gridDim.x) {
		const int a = ovf[i];
		int *seg = scratch + base[a];
		if (threadIdx.x == 0) k = 0;
		__syncthreads();
		for (int j = mptr[a] + threadIdx.x; j < mptr[a + 1]; j += blockDim.x) {
			const int v = mem[j];
			for (i64 q = off[v]; q < off[v + 1]; q++) {
				const int b = of[adj[q]];
				if (b != a && b >= 0) seg[atomicAdd(&k, 1)] = b;
			}
		}
		__syncthreads();
		const i64 len = k;
		sort_block(seg, len);
		if (threadIdx.x == 0) lastv = -1;
		__syncthreads();
		i64 w = 0, tot;
		for (i64 b0 = 0; b0 < len; b0 += blockDim.x) {
			const i64 q = b0 + threadIdx.x;
			const int x = q < len ? seg[q] : -1;
			const int prev = threadIdx.x == 0 ? lastv : (q < len ? seg[q - 1] : -1);
			const bool keep = q < len && x != prev;
			__syncthreads();  // every read of this chunk before any write
			const i64 e = block_excl(keep, &tot);
			if (keep) seg[w + e] = x;
			if (q < len && (threadIdx.x == blockDim.x - 1 || q == len - 1)) lastv = x;
			w += tot;
			__syncthreads();
		}
		if (threadIdx.x == 0) {
			cnt[a] = (int)w;
			atomicMax((u64 *)meta + M_MAXDC, (u64)w);
		}
		__syncthreads();
	}
}

// compact copies each sorted row from scratch to its place in the coarse
// adjacency and carries each root's
// coordinates, class and Dirichlet flag to its aggregate.
extern "C" __global__ void compact(const u64 *meta, const i64 *base, const int *scratch, const int *cnt, const i64 *coff, int *cadj, const int *roots, const u8 *cls, u8 *ccls, const u8 *dir, u8 *cdir, const double *xyz, double *cxyz, int dim) {
	const i64 nc = (i64)meta[M_NC];
	const int lane = threadIdx.x & 31;
	for (i64 a = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; a < nc; a += ((i64)gridDim.x * blockDim.x) >> 5) {
		const int c = cnt[a];
		const int *src = scratch + base[a];
		int *dst = cadj + coff[a];
		for (int i = lane; i < c; i += 32) dst[i] = src[i];
		const int r = roots[a];
		if (lane == 0) {
			if (cls) ccls[a] = cls[r];
			if (dir) cdir[a] = dir[r];
		}
		if (xyz && lane < dim) cxyz[a * dim + lane] = xyz[(i64)r * dim + lane];
	}
}

// level_init sets a level's vertex and edge counts and resets the words
// its kernels accumulate into.
extern "C" __global__ void level_init(u64 *meta, u64 n, u64 m) {
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		meta[M_N] = n, meta[M_M] = m;
		meta[M_NC] = 0;
		meta[M_ERR1] = ~0ull;
		meta[M_ERR2] = ~0ull;
		meta[M_NNZC] = 0;
		meta[M_MAXDC] = 0;
		meta[M_NOVF] = 0;
		meta[M_NOVF2] = 0;
	}
}

// csr_bounds checks what the kernels above rely on to stay inside their
// buffers: offsets start at 0, never decrease and end at m; neighbours lie
// in [0, n) and are not the vertex itself. bad[0] gets the smallest
// offending row, bad[1] the largest degree.
extern "C" __global__ void csr_bounds(const i64 *off, const int *adj, i64 n, i64 m, u64 *bad) {
	u64 maxdeg = 0;
	for (i64 v = blockIdx.x * (i64)blockDim.x + threadIdx.x; v < n; v += (i64)gridDim.x * blockDim.x) {
		const i64 b = off[v], e = off[v + 1];
		bool ok = b >= 0 && e >= b && e <= m && (v != 0 || b == 0) && (v != n - 1 || e == m);
		for (i64 k = b; ok && k < e; k++) {
			const int u = adj[k];
			ok = u >= 0 && u < n && u != v;
		}
		if (!ok) atomicMin(bad, (u64)v);
		else maxdeg = max(maxdeg, (u64)(e - b));
	}
	// One atomic a warp: a million threads on one word queue for it.
	for (int o = 16; o > 0; o >>= 1) maxdeg = max(maxdeg, __shfl_xor_sync(0xffffffffu, maxdeg, o));
	if ((threadIdx.x & 31) == 0 && maxdeg) atomicMax(bad + 1, maxdeg);
}
