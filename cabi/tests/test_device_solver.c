/* The AMG setup of a matrix in GPU memory through the C ABI
 * (misgrid_device_solver_*): a Laplacian allocated with the CUDA runtime,
 * with int32 offsets (as PETSc's aijcusparse keeps them) and int64 ones,
 * set up in place, solves as the same matrix set up from the host does,
 * takes new values on the device as misgrid_solver_update_values does on
 * the host, and fails as the host path does (naming the entry), leaving
 * the solver, the caller's arrays and the device as they were. Built and
 * run by scripts/upload-check.sh on a GPU machine (nvcc, libcudart);
 * without a GPU it says SKIP. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { NX = 300, NY = 280 };
static const char *opts = "reuse=true,max_coarse=100,tol=1e-10";

static void *dev_copy(const void *src, size_t bytes) {
    void *d = NULL;
    if (!cuda_ok(cudaMalloc(&d, bytes), "cudaMalloc") || !cuda_ok(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy"))
        exit(1);
    return d;
}

/* solve runs PCG on s for b and returns the iterations (x in x). */
static int64_t solve(misgrid_context ctx, misgrid_solver s, int64_t n, const double *b, double *x) {
    int32_t conv = 0;
    int64_t its = -1;
    double res = 1;
    memset(x, 0, (size_t)n * sizeof *x);
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s, n, b, x, &conv, &its, &res));
    CHECK(conv && res < 1e-9, "not converged: %lld iterations, residual %g", (long long)its, res);
    return its;
}

static double rel_diff(const double *x, const double *y, int64_t n) {
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) d += (x[i] - y[i]) * (x[i] - y[i]), s += y[i] * y[i];
    return sqrt(d / s);
}

/* set_entry writes one value of a device array and returns the old one. */
static double set_val(double *d, int64_t k, double v) {
    double old;
    cudaMemcpy(&old, d + k, 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(d + k, &v, 8, cudaMemcpyHostToDevice);
    return old;
}

static int32_t set_col(int32_t *d, int64_t k, int32_t v) {
    int32_t old;
    cudaMemcpy(&old, d + k, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(d + k, &v, 4, cudaMemcpyHostToDevice);
    return old;
}

/* check_errors: bad matrices fail with the host's words and leave the
 * solver s (set up before) solving as it did. */
static void check_errors(misgrid_context ctx, misgrid_solver s, int64_t n, int64_t nnz, const int32_t *rowptr,
                         int32_t *d_rp, int32_t *d_col, double *d_val, const double *b, double *x, int64_t its) {
    int64_t diag17 = -1;
    int32_t *col = malloc((size_t)nnz * 4);
    cudaMemcpy(col, d_col, (size_t)nnz * 4, cudaMemcpyDeviceToHost);
    for (int64_t k = rowptr[17]; k < rowptr[18]; k++)
        if (col[k] == 17) diag17 = k;
    double v = set_val(d_val, 1000, NAN);
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, MISGRID_INT32, d_rp, d_col, d_val), MISGRID_ERR_ARG,
              "is NaN");
    set_val(d_val, 1000, v);
    v = set_val(d_val, diag17, 0);
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, MISGRID_INT32, d_rp, d_col, d_val), MISGRID_ERR_ARG,
              "diagonal entry (17,17) is 0");
    set_val(d_val, diag17, v);
    int32_t c = set_col(d_col, 500, (int32_t)n + 3);
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, MISGRID_INT32, d_rp, d_col, d_val), MISGRID_ERR_ARG,
              "Col[500]");
    set_col(d_col, 500, c);
    /* Two columns of row 40 swapped. */
    int64_t k = rowptr[40];
    set_col(d_col, k, col[k + 1]);
    set_col(d_col, k + 1, col[k]);
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, MISGRID_INT32, d_rp, d_col, d_val), MISGRID_ERR_ARG,
              "row 40: columns out of order");
    set_col(d_col, k, col[k]);
    set_col(d_col, k + 1, col[k + 1]);
    /* Sizes, types and pointers. */
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz - 1, MISGRID_INT32, d_rp, d_col, d_val),
              MISGRID_ERR_ARG, "but nnz");
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, 7, d_rp, d_col, d_val), MISGRID_ERR_ARG,
              "index_type");
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, MISGRID_INT32, rowptr, d_col, d_val),
              MISGRID_ERR_ARG, "rowptr");
    CHECK_ERR(ctx, misgrid_device_solver_setup(ctx, s, NULL, n, nnz, MISGRID_INT32, d_rp, d_col, NULL), MISGRID_ERR_NULL,
              "values");
    /* An update with a NaN keeps the previous values. */
    v = set_val(d_val, 77, INFINITY);
    CHECK_ERR(ctx, misgrid_device_solver_update(ctx, s, nnz, d_val), MISGRID_ERR_ARG, "is +Inf");
    set_val(d_val, 77, v);
    CHECK(solve(ctx, s, n, b, x) == its, "the solver changed after the failed calls");
    CHECK(cuda_ok(cudaDeviceSynchronize(), "after the errors"), "the device is left faulted");
    free(col);
}

int main(void) {
    if (no_gpu("test_device_solver")) return 0;
    int32_t *rowptr, *col;
    double *val;
    int64_t nnz = grid_laplacian(NX, NY, &rowptr, &col, &val), n = (int64_t)NX * NY;
    int64_t *rowptr64 = malloc((size_t)(n + 1) * 8);
    double *val2 = malloc((size_t)nnz * 8), *b = malloc((size_t)n * 8), *xh = malloc((size_t)n * 8),
           *xd = malloc((size_t)n * 8), *back = malloc((size_t)nnz * 8);
    for (int64_t i = 0; i <= n; i++) rowptr64[i] = rowptr[i];
    /* D·A·D keeps the matrix symmetric positive definite. */
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            val2[k] = val[k] * (1 + 0.4 * sin((double)i)) * (1 + 0.4 * sin((double)col[k]));
    for (int64_t i = 0; i < n; i++) b[i] = 1 + cos(0.01 * (double)i);
    int32_t *d_rp = dev_copy(rowptr, (size_t)(n + 1) * 4), *d_col = dev_copy(col, (size_t)nnz * 4);
    int64_t *d_rp64 = dev_copy(rowptr64, (size_t)(n + 1) * 8);
    double *d_val = dev_copy(val, (size_t)nnz * 8), *d_val2 = dev_copy(val2, (size_t)nnz * 8);

    int64_t handles0 = live_handles();
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    misgrid_solver hs;
    CHECK_OK(ctx, misgrid_solver_create(ctx, opts, &hs));
    CHECK_OK(ctx, misgrid_solver_setup(ctx, hs, n, n, nnz, MISGRID_INT32, 0, rowptr, col, MISGRID_FLOAT64, val));
    int64_t its_h = solve(ctx, hs, n, b, xh), levels_h = 0, levels_d = -1;
    CHECK_OK(ctx, misgrid_solver_info(ctx, hs, &levels_h, NULL, NULL, NULL));
    CHECK_OK(ctx, misgrid_solver_update_values(ctx, hs, nnz, MISGRID_FLOAT64, val2));
    int64_t its_h2 = solve(ctx, hs, n, b, xh);

    for (int v = 0; v < 2; v++) {
        int32_t itype = v ? MISGRID_INT64 : MISGRID_INT32;
        const void *rp = v ? (const void *)d_rp64 : (const void *)d_rp;
        misgrid_solver ds;
        CHECK_OK(ctx, misgrid_solver_create(ctx, opts, &ds));
        CHECK_OK(ctx, misgrid_device_solver_setup(ctx, ds, NULL, n, nnz, itype, rp, d_col, d_val));
        if (check_failed) break;
        CHECK_OK(ctx, misgrid_solver_info(ctx, ds, &levels_d, NULL, NULL, NULL));
        CHECK(levels_d == levels_h, "%lld levels, host %lld", (long long)levels_d, (long long)levels_h);
        int64_t its = solve(ctx, ds, n, b, xd);
        CHECK(llabs(its - its_h) <= 1, "offsets %d: %lld iterations, host %lld", v, (long long)its, (long long)its_h);
        /* New values in a second array. */
        CHECK_OK(ctx, misgrid_device_solver_update(ctx, ds, nnz, d_val2));
        its = solve(ctx, ds, n, b, xd);
        CHECK(llabs(its - its_h2) <= 1, "after the update: %lld iterations, host %lld", (long long)its, (long long)its_h2);
        misgrid_solver_solve(ctx, hs, n, b, xh, NULL, NULL, NULL);
        CHECK(rel_diff(xd, xh, n) < 1e-4, "after the update the solutions differ by %g", rel_diff(xd, xh, n));
        CHECK_ERR(ctx, misgrid_solver_update_values(ctx, ds, nnz, MISGRID_FLOAT64, val2), MISGRID_ERR_ARG,
                  "misgrid_device_solver_update");
        CHECK_ERR(ctx, misgrid_device_solver_update(ctx, hs, nnz, d_val2), MISGRID_ERR_ARG, "not set up from device");
        cudaMemcpy(back, d_val2, (size_t)nnz * 8, cudaMemcpyDeviceToHost);
        CHECK(!memcmp(back, val2, (size_t)nnz * 8), "the caller's values changed");
        if (v == 0) check_errors(ctx, ds, n, nnz, rowptr, d_rp, d_col, d_val2, b, xd, its);
        CHECK_OK(ctx, misgrid_solver_destroy(ctx, ds));
    }
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, hs));
    CHECK_OK(ctx, misgrid_release_device_memory(ctx));
    CHECK_OK(NULL, misgrid_context_destroy(ctx));
    CHECK_HANDLES(handles0);
    cudaFree(d_rp);
    cudaFree(d_rp64);
    cudaFree(d_col);
    cudaFree(d_val);
    cudaFree(d_val2);
    free(rowptr);
    free(rowptr64);
    free(col);
    free(val);
    free(val2);
    free(b);
    free(xh);
    free(xd);
    free(back);
    return check_report("test_device_solver");
}
