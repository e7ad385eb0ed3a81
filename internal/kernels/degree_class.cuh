// Boundary classes by degree on the device (included by mis.cu): the
// classes mesh.ClassifyByDegree gives on the host, bit for bit. The host
// computes the table lg[d] = log((maxdeg+1)/(d+1)) for d = 0..maxdeg
// with Go's math.Log (the device's log may differ in the last bit, which
// could move a vertex across a rounding boundary); the device finds
// lmax, the largest lg over the degrees present, and rounds 3*lg/lmax
// with the same correctly rounded multiply and divide. Degrees above
// maxdeg (a wrong table) read as maxdeg.

// degree_lmax writes the largest lg[deg(v)] into *lmax as
// its bit pattern: lg is never negative, and non-negative doubles order
// as their bit patterns do. *lmax must be zero beforehand.
extern "C" __global__ void degree_lmax(const i64 *off, int n, const double *lg, int maxdeg, unsigned long long *lmax) {
	unsigned long long mx = 0;
	for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
		const i64 d = min(off[v + 1] - off[v], (i64)maxdeg);
		mx = max(mx, (unsigned long long)__double_as_longlong(lg[d]));
	}
#pragma unroll
	for (int s = 16; s > 0; s >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, s));
	if ((threadIdx.x & 31) == 0 && mx) atomicMax(lmax, mx);
}

// degree_class writes class round(3*lg[deg(v)]/lmax), clamped to 0..3,
// into cls[v] (0 everywhere when lmax is 0: every degree is maxdeg).
extern "C" __global__ void degree_class(const i64 *off, int n, const double *lg, int maxdeg, const unsigned long long *lmax,
                                        u8 *cls) {
	const double lm = __longlong_as_double((long long)*lmax);
	for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
		const i64 d = min(off[v + 1] - off[v], (i64)maxdeg);
		u8 c = 0;
		if (lm != 0) {
			// Two roundings, as Go's 3 * l / lmax: no contraction applies
			// to a product followed by a quotient.
			const double x = __dmul_rn(3.0, lg[d]);
			const double r = round(__ddiv_rn(x, lm));
			c = (u8)min(max(r, 0.0), 3.0);
		}
		cls[v] = c;
	}
}
