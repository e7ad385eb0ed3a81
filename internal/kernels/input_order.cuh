// The renumbering of input.cu (included there, after the definitions it
// uses): amg's reverse Cuthill–McKee (amg/order_search.go) of a checked
// matrix with one dof per node, and the matrix in the new numbering. Host
// models: amg/gpu_input_order_model_test.go.
//
// The searches go a level at a time, as the host's does: a vertex of the
// next level belongs to the first vertex of this level that reaches it
// (own[u], an atomic minimum of positions: the same in any order), and
// each vertex of the level places the vertices it won, in adjacency order
// (the probing search) or by (degree, id), at its offset in the level
// (a scan of their counts). own[v] holds the position of the vertex that
// placed v, -1 where a search started or for a vertex placed alone,
// IN_UNOWNED for a vertex not placed yet.

#define IN_UNOWNED 0x7fffffff
#define IN_ORDER_CAP 256 // entries of a row a warp stages in shared memory

// in_fill32 sets a[0..n) to v.
extern "C" __global__ void __launch_bounds__(IN_THREADS) in_fill32(int n, int *a, int v) {
	IN_FOR(i, n) a[i] = v;
}

// in_first_edge lowers word[0] to the first vertex v >= from that no
// search has placed and whose row has an entry off the diagonal: where
// the next component's search starts (the vertices before it are placed
// alone).
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_first_edge(int n, int from, const int *ptr, const int *col, const int *own, unsigned long long *word) {
	IN_FOR(ii, n - from) {
		int v = from + (int)ii;
		if (own[v] != IN_UNOWNED) continue;
		for (int k = ptr[v]; k < ptr[v + 1]; k++)
			if (col[k] != v) {
				atomicMin(word, (unsigned long long)v);
				break;
			}
	}
}

// in_alone_count sets cnt[i+1] to whether vertex from+i is not placed
// (cnt[0] = 0), for the vertices of [from, to) that go alone.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_alone_count(int from, int to, const int *own, long long *cnt) {
	IN_FOR(i, to - from) {
		cnt[i + 1] = own[from + i] == IN_UNOWNED;
		if (i == 0) cnt[0] = 0;
	}
}

// in_alone_place places the vertices in_alone_count counted, in id order,
// from order[at] (cnt scanned).
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_alone_place(int from, int to, int at, int *own, const long long *cnt, int *order) {
	IN_FOR(i, to - from) {
		int v = from + (int)i;
		if (own[v] != IN_UNOWNED) continue;
		order[at + cnt[i]] = v;
		own[v] = -1;
	}
}

// in_start starts a search at v (v < 0: at src[si], where the probing
// search ended), in q[at].
extern "C" __global__ void in_start(int at, int v, const int *src, int si, int *q, int *own) {
	if (blockIdx.x != 0 || threadIdx.x != 0) return;
	if (v < 0) v = src[si];
	q[at] = v;
	own[v] = -1;
}

// in_claim: each vertex q[lo+i] of the level (i < m) lowers own[u] to its
// position for every neighbour u that placed (if not null: the main
// search's, for the probing one) has not placed. One warp per vertex.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_claim(int lo, int m, const int *q, const int *ptr, const int *col, int *own, const int *placed) {
	const int lane = threadIdx.x & 31;
	IN_WARP_FOR(ii, m) {
		int p = lo + (int)ii, v = q[p];
		for (int k = ptr[v] + lane; k < ptr[v + 1]; k += 32) {
			int u = col[k];
			if (own[u] > p && (!placed || placed[u] == IN_UNOWNED)) atomicMin(&own[u], p);
		}
	}
}

// in_won_count sets cnt[i+1] to the vertices q[lo+i] won (cnt[0] = 0).
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_won_count(int lo, int m, const int *q, const int *ptr, const int *col, const int *own, long long *cnt) {
	const int lane = threadIdx.x & 31;
	IN_WARP_FOR(ii, m) {
		int i = (int)ii, p = lo + i, v = q[p], w = 0;
		for (int k = ptr[v] + lane; k < ptr[v + 1]; k += 32) w += own[col[k]] == p;
		w = __reduce_add_sync(0xffffffffu, w);
		if (lane == 0) {
			cnt[i + 1] = w;
			if (i == 0) cnt[0] = 0;
		}
	}
}

// in_key orders the vertices a vertex won: degree (row length), then id.
__device__ __forceinline__ unsigned long long in_key(const int *ptr, int u) {
	return (unsigned long long)(ptr[u + 1] - ptr[u]) << 32 | (unsigned)u;
}

// in_won_place writes the vertices q[lo+i] won from q[hi + cnt[i]] (cnt
// scanned): in adjacency order, by ballot, or sorted by in_key, each
// lane ranking the keys it staged against all of them. A vertex that won
// more than IN_ORDER_CAP is lane 0's, sorted in place.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_won_place(int lo, int m, int hi, int sorted, int *q, const int *ptr, const int *col, const int *own,
                 const long long *cnt) {
	__shared__ unsigned long long sk[IN_THREADS / 32][IN_ORDER_CAP];
	const int lane = threadIdx.x & 31;
	unsigned long long *key = sk[threadIdx.x >> 5];
	IN_WARP_FOR(ii, m) {
		int i = (int)ii, p = lo + i, v = q[p];
		int base = hi + (int)cnt[i], c = (int)(cnt[i + 1] - cnt[i]), w = 0;
		bool stage = sorted && c <= IN_ORDER_CAP;
		for (int k0 = ptr[v]; k0 < ptr[v + 1]; k0 += 32) {
			int k = k0 + lane, u = k < ptr[v + 1] ? col[k] : 0;
			bool won = k < ptr[v + 1] && own[u] == p;
			unsigned b = __ballot_sync(0xffffffffu, won);
			int at = w + __popc(b & ((1u << lane) - 1));
			if (won) {
				if (stage)
					key[at] = in_key(ptr, u);
				else
					q[base + at] = u;
			}
			w += __popc(b);
		}
		__syncwarp();
		if (stage) {
			for (int a = lane; a < c; a += 32) {
				unsigned long long x = key[a];
				int r = 0;
				for (int b = 0; b < c; b++) r += key[b] < x;
				q[base + r] = (int)(unsigned)x;
			}
		} else if (sorted && lane == 0) {
			for (int a = 1; a < c; a++) {
				int u = q[base + a], b = a - 1;
				unsigned long long x = in_key(ptr, u);
				for (; b >= 0 && in_key(ptr, q[base + b]) > x; b--) q[base + b + 1] = q[base + b];
				q[base + b + 1] = u;
			}
		}
		__syncwarp();
	}
}

// in_unmark clears the probing search's marks of q[0..m).
extern "C" __global__ void __launch_bounds__(IN_THREADS) in_unmark(int m, const int *q, int *own) {
	IN_FOR(i, m) own[q[i]] = IN_UNOWNED;
}

// in_reverse turns the search order into the renumbering: the vertex at
// position p of order becomes n-1-p (inv[new] = old, perm[old] = new).
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_reverse(int n, const int *order, int *inv, int *perm) {
	IN_FOR(p, n) {
		int v = order[p], i = n - 1 - (int)p;
		inv[i] = v;
		perm[v] = i;
	}
}

// in_perm_len sets cnt[i+1] to the length of row inv[i] (cnt[0] = 0).
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_perm_len(int n, const int *inv, const int *ptr, long long *cnt) {
	IN_FOR(i, n) {
		cnt[i + 1] = ptr[inv[i] + 1] - ptr[inv[i]];
		if (i == 0) cnt[0] = 0;
	}
}

// in_permute writes row i of P·A·Pᵀ from row inv[i] of A, its columns
// renumbered by perm and sorted (each lane ranks the entries it staged
// against all of the row's), at off[i], and (src not null) each entry's
// position in A, through which Update maps new values. A row longer than
// IN_ORDER_CAP is lane 0's, sorted in place. One warp per row.
extern "C" __global__ void __launch_bounds__(IN_THREADS)
    in_permute(int n, const int *inv, const int *perm, const int *ptr, const int *col, const double *val,
               const long long *off, int *ncol, double *nval, int *src) {
	__shared__ int sc[IN_THREADS / 32][IN_ORDER_CAP];
	const int lane = threadIdx.x & 31;
	int *c = sc[threadIdx.x >> 5];
	IN_WARP_FOR(ii, n) {
		int i = (int)ii, o = inv[i], lo = ptr[o], len = ptr[o + 1] - lo;
		long long at = off[i];
		if (len <= IN_ORDER_CAP) {
			for (int k = lane; k < len; k += 32) c[k] = perm[col[lo + k]];
			__syncwarp();
			for (int k = lane; k < len; k += 32) {
				int x = c[k], r = 0;
				for (int b = 0; b < len; b++) r += c[b] < x;
				ncol[at + r] = x;
				nval[at + r] = val[lo + k];
				if (src) src[at + r] = lo + k;
			}
			__syncwarp();
			continue;
		}
		for (int k = lane; k < len; k += 32) {
			ncol[at + k] = perm[col[lo + k]], nval[at + k] = val[lo + k];
			if (src) src[at + k] = lo + k;
		}
		__syncwarp();
		if (lane == 0)
			for (int a = 1; a < len; a++) {
				int x = ncol[at + a], b = a - 1, z = src ? src[at + a] : 0;
				double y = nval[at + a];
				for (; b >= 0 && ncol[at + b] > x; b--) {
					ncol[at + b + 1] = ncol[at + b], nval[at + b + 1] = nval[at + b];
					if (src) src[at + b + 1] = src[at + b];
				}
				ncol[at + b + 1] = x, nval[at + b + 1] = y;
				if (src) src[at + b + 1] = z;
			}
		__syncwarp();
	}
}
