/* A tiny check harness for the C tests: count checks, report failures
 * with file and line, exit non-zero when any failed. */
#ifndef MISGRID_TEST_CHECK_H
#define MISGRID_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "misgrid.h"

static int check_count, check_failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        check_count++;                                                     \
        if (!(cond)) {                                                     \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* CHECK_STATUS(ctx, call, want): the call returns want. */
#define CHECK_STATUS(ctx, call, want)                                        \
    do {                                                                     \
        misgrid_status st_ = (call);                                         \
        CHECK(st_ == (want), "got %s, want %s (message: %s)",                \
              misgrid_status_string(st_), misgrid_status_string(want),       \
              misgrid_error_message(ctx));                                   \
    } while (0)

/* CHECK_OK(ctx, call): the call succeeds. */
#define CHECK_OK(ctx, call) CHECK_STATUS(ctx, call, MISGRID_OK)

/* CHECK_ERR(ctx, call, want, fragment): the call fails with status want
 * and its message contains fragment. */
#define CHECK_ERR(ctx, call, want, fragment)                                 \
    do {                                                                     \
        misgrid_status st_ = (call);                                         \
        const char *m_ = misgrid_error_message(ctx);                         \
        CHECK(st_ == (want) && strstr(m_, fragment) != NULL,                 \
              "got %s \"%s\", want %s with \"%s\"", misgrid_status_string(st_), \
              m_, misgrid_status_string(want), fragment);                    \
    } while (0)

static inline int check_report(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count, check_failed);
    return check_failed ? 1 : 0;
}

/* live_handles is misgrid_handle_count's count, or -1 when the call
 * fails: a failed count then never passes for a clean one. */
static inline int64_t live_handles(void) {
    int64_t n = -1;
    if (misgrid_handle_count(&n) != MISGRID_OK) return -1;
    return n;
}

/* CHECK_HANDLES(want): want handles are live, so that a test which
 * destroys what it made shows every leaked handle. A macro, so that a
 * failure names the caller's line. */
#define CHECK_HANDLES(want)                                                  \
    do {                                                                     \
        int64_t live_ = live_handles(), want_ = (want);                      \
        CHECK(live_ == want_, "%lld handles live, want %lld", (long long)live_, \
              (long long)want_);                                             \
    } while (0)

/* y = A x for a CSR matrix with 0-based int32 indices: the tests compute
 * residuals themselves, independently of the library. */
static inline void csr_matvec(int64_t n, const int32_t *rp, const int32_t *col, const double *val, const double *x,
                              double *y) {
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
}

/* A 2D grid graph's matrix: the 5-point Laplacian on nx*ny points, CSR
 * 0-based, entries of each row in increasing column order. Returns nnz.
 * The arrays are malloc'd; the caller frees them. */
static inline int64_t grid_laplacian(int nx, int ny, int32_t **rowptr, int32_t **col, double **val) {
    int64_t n = (int64_t)nx * ny, k = 0;
    *rowptr = malloc((size_t)(n + 1) * sizeof **rowptr);
    *col = malloc((size_t)(5 * n) * sizeof **col);
    *val = malloc((size_t)(5 * n) * sizeof **val);
    (*rowptr)[0] = 0;
    for (int j = 0; j < ny; j++) {
        for (int i = 0; i < nx; i++) {
            int v = i + nx * j;
            if (j > 0) { (*col)[k] = v - nx; (*val)[k++] = -1; }
            if (i > 0) { (*col)[k] = v - 1; (*val)[k++] = -1; }
            (*col)[k] = v; (*val)[k++] = 4;
            if (i < nx - 1) { (*col)[k] = v + 1; (*val)[k++] = -1; }
            if (j < ny - 1) { (*col)[k] = v + nx; (*val)[k++] = -1; }
            (*rowptr)[v + 1] = (int32_t)k;
        }
    }
    return k;
}

/* The tests of GPU input (test_device*.c) include cuda_runtime.h before
 * this header; the others build where there is no CUDA toolkit. */
#ifdef CUDART_VERSION
/* cuda_ok reports a failed CUDA runtime call on stderr. */
static inline int cuda_ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
}

/* no_gpu says "name: SKIP (no GPU)" when there is none to test on: a
 * machine without one passes the test rather than failing it. */
static inline int no_gpu(const char *name) {
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return 0;
    printf("%s: SKIP (no GPU)\n", name);
    return 1;
}
#endif

#endif
