// Device code that every kernel file of the image shares: one definition
// each.
#pragma once

// hash32 is mis.Hash32 (mis/priority.go) bit for bit: the low 32 bits of
// every key, computed on the fly from a vertex's (global) id.

__device__ __forceinline__ unsigned int hash32(unsigned int v, unsigned int lo, unsigned int hi) {
	unsigned int x = v ^ lo;
	x += hi * 0x9e3779b9u;
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

// load_row8 loads entries c0..c0+7 of a row whose 16-byte aligned start
// is a (lead entries before the row's first) with two 16-byte loads; ok
// marks those inside the row (tot = lead + degree). A single lane
// reading a whole row issues a quarter of the load requests this way.
// Needs a 16-byte aligned adjacency readable up to the next 16-byte
// boundary after its end.
template <typename T>
__device__ __forceinline__ void load_row8(const int *adj, long long a, int lead, int tot, int c0, T u[8], bool ok[8]) {
	const int4 *p = (const int4 *)(adj + a + c0);
	int4 x = c0 < tot ? __ldg(p) : make_int4(0, 0, 0, 0);
	int4 y = c0 + 4 < tot ? __ldg(p + 1) : make_int4(0, 0, 0, 0);
	u[0] = (T)x.x, u[1] = (T)x.y, u[2] = (T)x.z, u[3] = (T)x.w;
	u[4] = (T)y.x, u[5] = (T)y.y, u[6] = (T)y.z, u[7] = (T)y.w;
#pragma unroll
	for (int j = 0; j < 8; j++) ok[j] = c0 + j >= lead && c0 + j < tot;
}
