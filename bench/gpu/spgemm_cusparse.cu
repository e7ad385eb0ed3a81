// spgemm_cusparse times cuSPARSE's SpGEMM on the matrices that
// internal/gpusparse's TestGPUBench writes (binary CSR: int64 rows, cols,
// nnz, then int32 offsets, int32 columns, float64 values), for the
// comparison of issue 20. Not part of the library; bench/gpu/spgemm.sh
// compiles it on the GPU machine:
//
//	nvcc -O3 -o spgemm_cusparse spgemm_cusparse.cu -lcusparse
//	spgemm_cusparse BASE      # reads BASE.A.bin and BASE.P.bin
//
// It prints, like TestGPUBench, the median and best of 7 timed runs
// after a warm-up, each synchronised, of: A·P in full (work estimation,
// compute, allocation of C, copy: cusparseSpGEMM), A·P numeric only
// (cusparseSpGEMMreuse_compute on a known pattern), Pᵀ by
// cusparseCsr2cscEx2, Pᵀ·(AP) in full and numeric only; and the device
// copy bandwidth, measured the same way as the Go side.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include <cusparse.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)
#define CS(x) do { cusparseStatus_t e = (x); if (e != CUSPARSE_STATUS_SUCCESS) { fprintf(stderr, "%s:%d: cusparse %s\n", __FILE__, __LINE__, cusparseGetErrorString(e)); exit(1); } } while (0)

struct Csr {
	int64_t rows = 0, cols = 0, nnz = 0;
	int *ptr = nullptr, *col = nullptr;
	double *val = nullptr;
	cusparseSpMatDescr_t d = nullptr;
	void describe() { CS(cusparseCreateCsr(&d, rows, cols, nnz, ptr, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)); }
	void release() {
		if (d) cusparseDestroySpMat(d);
		cudaFree(ptr), cudaFree(col), cudaFree(val);
		*this = Csr{};
	}
};

static Csr readCsr(const std::string &path) {
	FILE *f = fopen(path.c_str(), "rb");
	if (!f) { perror(path.c_str()); exit(1); }
	int64_t h[3];
	if (fread(h, 8, 3, f) != 3) { fprintf(stderr, "%s: short header\n", path.c_str()); exit(1); }
	Csr m;
	m.rows = h[0], m.cols = h[1], m.nnz = h[2];
	std::vector<int> p(m.rows + 1), c(m.nnz);
	std::vector<double> v(m.nnz);
	if (fread(p.data(), 4, p.size(), f) != p.size() || fread(c.data(), 4, c.size(), f) != c.size() || fread(v.data(), 8, v.size(), f) != v.size()) {
		fprintf(stderr, "%s: short file\n", path.c_str());
		exit(1);
	}
	fclose(f);
	CK(cudaMalloc(&m.ptr, p.size() * 4));
	CK(cudaMalloc(&m.col, std::max<size_t>(c.size(), 1) * 4));
	CK(cudaMalloc(&m.val, std::max<size_t>(v.size(), 1) * 8));
	CK(cudaMemcpy(m.ptr, p.data(), p.size() * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(m.col, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(m.val, v.data(), v.size() * 8, cudaMemcpyHostToDevice));
	m.describe();
	return m;
}

static cusparseHandle_t H;
static const double one = 1, zero = 0;
static const cusparseOperation_t NT = CUSPARSE_OPERATION_NON_TRANSPOSE;

// emptyProduct is the descriptor of C = A·B before its size is known.
static Csr emptyProduct(Csr &a, Csr &b) {
	Csr c;
	c.rows = a.rows, c.cols = b.cols;
	CK(cudaMalloc(&c.ptr, (c.rows + 1) * 4));
	CS(cusparseCreateCsr(&c.d, c.rows, c.cols, 0, c.ptr, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
	return c;
}

// bindProduct allocates C's columns and values for the size cuSPARSE found.
static void bindProduct(Csr &c) {
	int64_t r, cc, nnz;
	CS(cusparseSpMatGetSize(c.d, &r, &cc, &nnz));
	c.nnz = nnz;
	CK(cudaMalloc(&c.col, std::max<int64_t>(nnz, 1) * 4));
	CK(cudaMalloc(&c.val, std::max<int64_t>(nnz, 1) * 8));
	CS(cusparseCsrSetPointers(c.d, c.ptr, c.col, c.val));
}

// spgemm forms C = A·B with cusparseSpGEMM, allocating all it needs.
static Csr spgemm(Csr &a, Csr &b) {
	Csr c = emptyProduct(a, b);
	cusparseSpGEMMDescr_t sp;
	CS(cusparseSpGEMM_createDescr(&sp));
	size_t s1 = 0, s2 = 0;
	void *b1 = nullptr, *b2 = nullptr;
	CS(cusparseSpGEMM_workEstimation(H, NT, NT, &one, a.d, b.d, &zero, c.d, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sp, &s1, nullptr));
	CK(cudaMalloc(&b1, s1));
	CS(cusparseSpGEMM_workEstimation(H, NT, NT, &one, a.d, b.d, &zero, c.d, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sp, &s1, b1));
	CS(cusparseSpGEMM_compute(H, NT, NT, &one, a.d, b.d, &zero, c.d, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sp, &s2, nullptr));
	CK(cudaMalloc(&b2, s2));
	CS(cusparseSpGEMM_compute(H, NT, NT, &one, a.d, b.d, &zero, c.d, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sp, &s2, b2));
	bindProduct(c);
	CS(cusparseSpGEMM_copy(H, NT, NT, &one, a.d, b.d, &zero, c.d, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sp));
	CK(cudaDeviceSynchronize());
	cusparseSpGEMM_destroyDescr(sp);
	cudaFree(b1), cudaFree(b2);
	return c;
}

// Reuse is C = A·B prepared by the reuse API, whose compute step is
// the numeric pass.
struct Reuse {
	Csr c;
	cusparseSpGEMMDescr_t sp;
	void *buf[5] = {};
	Reuse(Csr &a, Csr &b) {
		c = emptyProduct(a, b);
		CS(cusparseSpGEMM_createDescr(&sp));
		size_t s[5] = {};
		CS(cusparseSpGEMMreuse_workEstimation(H, NT, NT, a.d, b.d, c.d, CUSPARSE_SPGEMM_DEFAULT, sp, &s[0], nullptr));
		CK(cudaMalloc(&buf[0], s[0]));
		CS(cusparseSpGEMMreuse_workEstimation(H, NT, NT, a.d, b.d, c.d, CUSPARSE_SPGEMM_DEFAULT, sp, &s[0], buf[0]));
		CS(cusparseSpGEMMreuse_nnz(H, NT, NT, a.d, b.d, c.d, CUSPARSE_SPGEMM_DEFAULT, sp, &s[1], nullptr, &s[2], nullptr, &s[3], nullptr));
		CK(cudaMalloc(&buf[1], s[1]));
		CK(cudaMalloc(&buf[2], s[2]));
		CK(cudaMalloc(&buf[3], s[3]));
		CS(cusparseSpGEMMreuse_nnz(H, NT, NT, a.d, b.d, c.d, CUSPARSE_SPGEMM_DEFAULT, sp, &s[1], buf[1], &s[2], buf[2], &s[3], buf[3]));
		bindProduct(c);
		CS(cusparseSpGEMMreuse_copy(H, NT, NT, a.d, b.d, c.d, CUSPARSE_SPGEMM_DEFAULT, sp, &s[4], nullptr));
		CK(cudaMalloc(&buf[4], s[4]));
		CS(cusparseSpGEMMreuse_copy(H, NT, NT, a.d, b.d, c.d, CUSPARSE_SPGEMM_DEFAULT, sp, &s[4], buf[4]));
		cudaFree(buf[1]), cudaFree(buf[2]), buf[1] = buf[2] = nullptr;
		CK(cudaDeviceSynchronize());
	}
	void compute(Csr &a, Csr &b) {
		CS(cusparseSpGEMMreuse_compute(H, NT, NT, &one, a.d, b.d, &zero, c.d, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, sp));
	}
	~Reuse() {
		cusparseSpGEMM_destroyDescr(sp);
		for (void *b : buf) cudaFree(b);
		c.release();
	}
};

// transpose forms Pᵀ as CSR (the CSC of P), allocating all it needs.
static Csr transpose(Csr &p) {
	Csr t;
	t.rows = p.cols, t.cols = p.rows, t.nnz = p.nnz;
	CK(cudaMalloc(&t.ptr, (t.rows + 1) * 4));
	CK(cudaMalloc(&t.col, std::max<int64_t>(t.nnz, 1) * 4));
	CK(cudaMalloc(&t.val, std::max<int64_t>(t.nnz, 1) * 8));
	size_t sz = 0;
	void *buf = nullptr;
	CS(cusparseCsr2cscEx2_bufferSize(H, p.rows, p.cols, p.nnz, p.val, p.ptr, p.col, t.val, t.ptr, t.col, CUDA_R_64F, CUSPARSE_ACTION_NUMERIC,
	                                 CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &sz));
	CK(cudaMalloc(&buf, std::max<size_t>(sz, 1)));
	CS(cusparseCsr2cscEx2(H, p.rows, p.cols, p.nnz, p.val, p.ptr, p.col, t.val, t.ptr, t.col, CUDA_R_64F, CUSPARSE_ACTION_NUMERIC,
	                      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, buf));
	CK(cudaDeviceSynchronize());
	cudaFree(buf);
	t.describe();
	return t;
}

static void timeIt(const char *name, const char *what, const std::function<void()> &fn) {
	fn();
	CK(cudaDeviceSynchronize());
	std::vector<double> ts;
	for (int r = 0; r < 7; r++) {
		auto t0 = std::chrono::steady_clock::now();
		fn();
		CK(cudaDeviceSynchronize());
		ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
	}
	std::sort(ts.begin(), ts.end());
	printf("RESULT %s | cuSPARSE %-28s | median %8.3f ms | best %8.3f ms\n", name, what, ts[3], ts[0]);
	fflush(stdout);
}

static double bandwidth() {
	const size_t size = 512u << 20;
	void *a, *b;
	CK(cudaMalloc(&a, size));
	CK(cudaMalloc(&b, size));
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0), cudaEventCreate(&e1);
	float best = 1e30f;
	for (int r = 0; r < 6; r++) {
		cudaEventRecord(e0);
		CK(cudaMemcpyAsync(b, a, size, cudaMemcpyDeviceToDevice));
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float ms;
		cudaEventElapsedTime(&ms, e0, e1);
		if (r > 0) best = std::min(best, ms);
	}
	cudaFree(a), cudaFree(b);
	return 2.0 * size / (best * 1e-3);
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s BASE (reads BASE.A.bin and BASE.P.bin)\n", argv[0]);
		return 2;
	}
	std::string base = argv[1];
	std::string name = base.substr(base.find_last_of('/') + 1);
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	CS(cusparseCreate(&H));
	int ver = 0;
	CS(cusparseGetVersion(H, &ver));
	printf("%s: %s, cuSPARSE %d, device copy bandwidth %.0f GB/s (read + write)\n", name.c_str(), prop.name, ver, bandwidth() / 1e9);
	Csr a = readCsr(base + ".A.bin"), p = readCsr(base + ".P.bin");
	Csr ap = spgemm(a, p), r = transpose(p), ac = spgemm(r, ap);
	printf("%s: A %lld×%lld %lld nnz, P %lld nnz, A·P %lld nnz, Pᵀ·A·P %lld×%lld %lld nnz\n", name.c_str(), (long long)a.rows, (long long)a.cols,
	       (long long)a.nnz, (long long)p.nnz, (long long)ap.nnz, (long long)ac.rows, (long long)ac.cols, (long long)ac.nnz);
	timeIt(name.c_str(), "A·P symbolic+numeric", [&] { Csr c = spgemm(a, p); c.release(); });
	{
		Reuse ru(a, p);
		timeIt(name.c_str(), "A·P numeric (reuse)", [&] { ru.compute(a, p); });
	}
	timeIt(name.c_str(), "Pᵀ transpose (csr2cscEx2)", [&] { Csr t = transpose(p); t.release(); });
	timeIt(name.c_str(), "Pᵀ·(AP) symbolic+numeric", [&] { Csr c = spgemm(r, ap); c.release(); });
	{
		Reuse ru(r, ap);
		timeIt(name.c_str(), "Pᵀ·(AP) numeric (reuse)", [&] { ru.compute(r, ap); });
	}
	timeIt(name.c_str(), "Galerkin all (AP, Pᵀ, RAP)", [&] {
		Csr x = spgemm(a, p), t = transpose(p), c = spgemm(t, x);
		x.release(), t.release(), c.release();
	});
	a.release(), p.release(), ap.release(), r.release(), ac.release();
	cusparseDestroy(H);
	return 0;
}
