// hash32 is mis.Hash32 (mis/priority.go) bit for bit: the low 32 bits of
// every key, computed on the fly from a vertex's (global) id. One
// definition for every kernel file of the image.
#pragma once

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
