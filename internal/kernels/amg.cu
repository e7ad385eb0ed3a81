// The solve phase of smoothed-aggregation AMG (package amg) on the GPU:
// sparse row passes (products, residuals, the fused Chebyshev steps),
// vector updates, deterministic dot products and the dense coarse solve.
//
// Determinism. A row is always summed by the same G lanes in the same
// order (lane l takes entries l, l+G, ...; then a butterfly over the G
// lanes), whatever the grid. A dot product is summed by a fixed number of
// blocks, AMG_PARTS, whatever the device: thread t of block k takes
// entries k*256+t, k*256+t+AMG_PARTS*256, ...; each block reduces its
// threads by a fixed tree into part[k], and amg_sum adds the parts by a
// fixed tree. So every result is bitwise the same run to run and on any
// GPU. The names here are prefixed amg_: all *.cu files are one unit.

#define AMG_THREADS 256
#define AMG_PARTS 512  // blocks of a dot product; amg/gpu.go relies on it

// Row pass modes (amg/gpu_solve.go mirrors them).
#define AMG_MV 0       // y = A v
#define AMG_MVADD 1    // y += A v
#define AMG_RESID 2    // r = b - A v
#define AMG_CHEB0 3    // r = b - A v; d = c1*dinv*r
#define AMG_CHEB 4     // r -= A v (v = d); x += d; dn = c1*d + c2*dinv*r
#define AMG_CHEBLAST 5 // r -= A v (v = d); x += d

// amg_row sums row i of A times v over G lanes; every lane of the group
// returns the sum. All 32 lanes of a warp must call it (ok false for
// rows past the end), because of the shuffles.
template <int G>
__device__ __forceinline__ double amg_row(const int *__restrict__ ptr, const int *__restrict__ col,
                                          const double *__restrict__ val, const double *v, int i, bool ok,
                                          int lane) {
	double s = 0;
	if (ok) {
		int e = ptr[i + 1];
		for (int k = ptr[i] + lane; k < e; k += G) s += val[k] * v[col[k]];
	}
#pragma unroll
	for (int o = G / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o, G);
	return s;
}

template <int G>
__device__ __forceinline__ void amg_rows(int mode, int n, const int *__restrict__ ptr, const int *__restrict__ col,
                                         const double *__restrict__ val, const double *v, double *y, const double *b,
                                         double *r, double *x, double *d, double *dn, const double *dinv, double c1,
                                         double c2) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int i = (int)(t / G), lane = (int)(t % G);
	bool ok = i < n;
	double s = amg_row<G>(ptr, col, val, v, i, ok, lane);
	if (!ok || lane != 0) return;
	switch (mode) {
	case AMG_MV: y[i] = s; break;
	case AMG_MVADD: y[i] += s; break;
	case AMG_RESID: r[i] = b[i] - s; break;
	case AMG_CHEB0: {
		double ri = b[i] - s;
		r[i] = ri;
		d[i] = c1 * dinv[i] * ri;
		break;
	}
	case AMG_CHEB: {
		double ri = r[i] - s, di = d[i];
		r[i] = ri;
		x[i] += di;
		dn[i] = c1 * di + c2 * dinv[i] * ri;
		break;
	}
	case AMG_CHEBLAST:
		r[i] -= s;
		x[i] += d[i];
		break;
	}
}

#define AMG_ROWS_KERNEL(G)                                                                                         \
	extern "C" __global__ void __launch_bounds__(AMG_THREADS) amg_rows_g##G(                                       \
	    int mode, int n, const int *ptr, const int *col, const double *val, const double *v, double *y,            \
	    const double *b, double *r, double *x, double *d, double *dn, const double *dinv, double c1, double c2) { \
		amg_rows<G>(mode, n, ptr, col, val, v, y, b, r, x, d, dn, dinv, c1, c2);                                   \
	}
AMG_ROWS_KERNEL(1)
AMG_ROWS_KERNEL(4)
AMG_ROWS_KERNEL(8)
AMG_ROWS_KERNEL(16)
AMG_ROWS_KERNEL(32)
#undef AMG_ROWS_KERNEL

// Vector modes.
#define AMG_V_CHEBZERO 0 // o0 = i0; o1 = a*i1*i0; o2 = 0   (r = b, d = dinv*b/theta, x = 0)
#define AMG_V_ADD 1      // o0 += i0
#define AMG_V_SCALE 2    // o0 = i1*i0                       (x = dinv*b)
#define AMG_V_SCALEADD 3 // o0 += i1*i0                      (x += dinv*r)
#define AMG_V_XPAY 4     // o0 = i0 + a*o0                   (d = z + beta*d)
#define AMG_V_COPY 5     // o0 = i0

extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_vec(int mode, int n, double *o0, double *o1, double *o2, const double *i0, const double *i1, double a) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		switch (mode) {
		case AMG_V_CHEBZERO: {
			double bi = i0[i];
			o0[i] = bi;
			o1[i] = a * i1[i] * bi;
			o2[i] = 0;
			break;
		}
		case AMG_V_ADD: o0[i] += i0[i]; break;
		case AMG_V_SCALE: o0[i] = i1[i] * i0[i]; break;
		case AMG_V_SCALEADD: o0[i] += i1[i] * i0[i]; break;
		case AMG_V_XPAY: o0[i] = i0[i] + a * o0[i]; break;
		case AMG_V_COPY: o0[i] = i0[i]; break;
		}
	}
}

// amg_block_sum reduces one value per thread by a fixed tree; thread 0
// gets the block's sum.
__device__ __forceinline__ double amg_block_sum(double s) {
	__shared__ double sh[AMG_THREADS];
	sh[threadIdx.x] = s;
	__syncthreads();
#pragma unroll
	for (int w = AMG_THREADS / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	return sh[0];
}

// amg_dot writes the part of x·y of each of the AMG_PARTS blocks.
extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_dot(int n, const double *x, const double *y, double *part) {
	double s = 0;
	for (long long i = (long long)blockIdx.x * AMG_THREADS + threadIdx.x; i < n; i += (long long)AMG_PARTS * AMG_THREADS)
		s += x[i] * y[i];
	s = amg_block_sum(s);
	if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// amg_cg is the conjugate gradient update x += alpha*d, r -= alpha*q,
// with the parts of r·r, in the order of amg_dot.
extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_cg(int n, double alpha, double *x, double *r, const double *d, const double *q, double *part) {
	double s = 0;
	for (long long i = (long long)blockIdx.x * AMG_THREADS + threadIdx.x; i < n;
	     i += (long long)AMG_PARTS * AMG_THREADS) {
		x[i] += alpha * d[i];
		double ri = r[i] - alpha * q[i];
		r[i] = ri;
		s += ri * ri;
	}
	s = amg_block_sum(s);
	if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// Steps of the device setup's Lanczos estimate (amg's eigen) fused with
// the dot product that follows each: su_lanczos's operations (separate
// multiply and add) and amg_dot's order (its loop and amg_block_sum), so
// that the estimate is bitwise the unfused one, in fewer passes and
// launches.

// amg_lz_w sets w = s∘w − √cp[0]·y and writes the parts of w·q.
extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_lz_w(int n, double *w, const double *y, const double *s, const double *cp, const double *q, double *part) {
	double c = sqrt(cp[0]), acc = 0;
	for (long long i = (long long)blockIdx.x * AMG_THREADS + threadIdx.x; i < n; i += (long long)AMG_PARTS * AMG_THREADS) {
		double x = __dsub_rn(__dmul_rn(s[i], w[i]), __dmul_rn(c, y[i]));
		w[i] = x;
		acc += x * q[i];
	}
	acc = amg_block_sum(acc);
	if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

// amg_lz_axpy sets w −= cp[0]·q and writes the parts of w·w.
extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_lz_axpy(int n, double *w, const double *q, const double *cp, double *part) {
	double c = cp[0], acc = 0;
	for (long long i = (long long)blockIdx.x * AMG_THREADS + threadIdx.x; i < n; i += (long long)AMG_PARTS * AMG_THREADS) {
		double x = __dsub_rn(w[i], __dmul_rn(c, q[i]));
		w[i] = x;
		acc += x * x;
	}
	acc = amg_block_sum(acc);
	if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

// amg_lz_next sets q /= √cp[0] and the next step's t = s∘q.
extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_lz_next(int n, double *q, double *t, const double *s, const double *cp) {
	double c = sqrt(cp[0]);
	for (long long i = (long long)blockIdx.x * AMG_THREADS + threadIdx.x; i < n; i += (long long)AMG_PARTS * AMG_THREADS) {
		double x = q[i] / c;
		q[i] = x;
		t[i] = __dmul_rn(s[i], x);
	}
}

// amg_sum adds the AMG_PARTS parts into *out; one block.
extern "C" __global__ void __launch_bounds__(AMG_THREADS) amg_sum(const double *part, double *out) {
	double s = 0;
	for (int k = threadIdx.x; k < AMG_PARTS; k += AMG_THREADS) s += part[k];
	s = amg_block_sum(s);
	if (threadIdx.x == 0) *out = s;
}

// amg_dense_mv sets x = M b for the dense n×n row-major inverse of the
// coarsest operator: one warp per row.
extern "C" __global__ void __launch_bounds__(AMG_THREADS)
    amg_dense_mv(int n, const double *__restrict__ m, const double *__restrict__ b, double *x) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int i = (int)(t / 32), lane = (int)(t % 32);
	double s = 0;
	if (i < n) {
		const double *row = m + (long long)i * n;
		for (int k = lane; k < n; k += 32) s += row[k] * b[k];
	}
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
	if (i < n && lane == 0) x[i] = s;
}

#undef AMG_MV
#undef AMG_MVADD
#undef AMG_RESID
#undef AMG_CHEB0
#undef AMG_CHEB
#undef AMG_CHEBLAST
#undef AMG_V_CHEBZERO
#undef AMG_V_ADD
#undef AMG_V_SCALE
#undef AMG_V_SCALEADD
#undef AMG_V_XPAY
#undef AMG_V_COPY
#undef AMG_THREADS
#undef AMG_PARTS
