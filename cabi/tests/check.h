/* A tiny check harness for the C tests: count checks, report failures
 * with file and line, exit non-zero when any failed. */
#ifndef MISGRID_TEST_CHECK_H
#define MISGRID_TEST_CHECK_H

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

#endif
