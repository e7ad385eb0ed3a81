// Kernels for the cuda package's own tests and example (testdata: no
// package launches them).

extern "C" __global__ void test_add(int *p, int n, int add) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] += add;
}

extern "C" __global__ void test_trap(int *p) {
	if (p != 0) p[0] = 1;
	__trap();
}

// test_hold spins for about cycles clock cycles, then sets *flag. On
// compute capability 9.0 and later it first lets the launch queued next
// with cuda.Launch.Overlap start.
extern "C" __global__ void test_hold(int *flag, long long cycles) {
#if __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;");
#endif
	const long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
	atomicExch(flag, 1);
}

// test_peek copies *flag into *seen.
extern "C" __global__ void test_peek(const int *flag, int *seen) { *seen = *(const volatile int *)flag; }
