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
