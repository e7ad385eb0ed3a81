/* Graphs already in GPU memory through the C ABI (misgrid_device_*): a CUDA
 * code allocates the CSR with the CUDA runtime and passes the pointers. The
 * sets and hierarchies must be those of the same graph given on the host,
 * with outputs on the host and on the device; bad input fails as on the
 * host, names the entry, writes no output and leaves the device usable.
 * Built and run by scripts/cabi-device-check.sh on a GPU machine (nvcc,
 * libcudart); without a GPU it says SKIP. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { NX = 37, NY = 33, NZ = 29 };

/* stencil27 is the graph of the 27-point stencil on an NX×NY×NZ lattice,
 * rows sorted, no diagonal. */
static int64_t stencil27(int64_t **rowptr, int32_t **col) {
    int64_t n = (int64_t)NX * NY * NZ, k = 0;
    *rowptr = malloc((size_t)(n + 1) * sizeof **rowptr);
    *col = malloc((size_t)(26 * n) * sizeof **col);
    (*rowptr)[0] = 0;
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int a = x + dx, b = y + dy, c = z + dz;
                            if ((dx | dy | dz) == 0 || a < 0 || b < 0 || c < 0 || a >= NX || b >= NY || c >= NZ) continue;
                            (*col)[k++] = a + NX * (b + NY * c);
                        }
                (*rowptr)[x + NX * (y + NY * z) + 1] = k;
            }
    return k;
}

static const char *mis_opts[] = {"distance=1", "distance=2", "distance=2,priority=degree,seed=3",
                                 "distance=1,priority=hash,seed=5"};
enum { NOPTS = 4 };

/* compare_mis checks both outputs of misgrid_device_mis against misgrid_mis. */
static void compare_mis(misgrid_context ctx, misgrid_graph hg, misgrid_device_graph dg, int64_t n, uint8_t *dflags) {
    int32_t *want = malloc((size_t)n * 4);
    uint8_t *got = malloc((size_t)n), *back = malloc((size_t)n);
    for (int o = 0; o < NOPTS; o++) {
        misgrid_result r;
        int64_t want_size = 0, size = -1, dsize = -1;
        CHECK_OK(ctx, misgrid_mis(ctx, hg, mis_opts[o], &r));
        CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, n, want));
        CHECK_OK(ctx, misgrid_result_level_info(ctx, r, 0, NULL, &want_size, NULL, NULL, NULL));
        misgrid_result_destroy(ctx, r);
        CHECK_OK(ctx, misgrid_device_mis(ctx, dg, mis_opts[o], MISGRID_HOST, n, got, &size));
        CHECK_OK(ctx, misgrid_device_mis(ctx, dg, mis_opts[o], MISGRID_DEVICE, n, dflags, &dsize));
        CHECK(cuda_ok(cudaMemcpy(back, dflags, (size_t)n, cudaMemcpyDeviceToHost), "flags back"), "copy");
        int64_t bad = -1;
        for (int64_t v = 0; v < n && bad < 0; v++)
            if (got[v] != (want[v] != 0) || back[v] != got[v]) bad = v;
        CHECK(bad < 0, "%s: vertex %lld: host %d, device to host %d, device to device %d", mis_opts[o], (long long)bad,
              bad < 0 ? 0 : want[bad], bad < 0 ? 0 : got[bad], bad < 0 ? 0 : back[bad]);
        CHECK(size == want_size && dsize == want_size, "%s: set sizes %lld %lld, host %lld", mis_opts[o], (long long)size,
              (long long)dsize, (long long)want_size);
    }
    free(want);
    free(got);
    free(back);
}

/* compare_hierarchy checks misgrid_device_hierarchy against misgrid_hierarchy
 * level by level: sizes, sets and aggregates. */
static void compare_hierarchy(misgrid_context ctx, misgrid_graph hg, misgrid_device_graph dg, const char *opts) {
    misgrid_result want, got;
    CHECK_OK(ctx, misgrid_hierarchy(ctx, hg, opts, &want));
    CHECK_OK(ctx, misgrid_device_hierarchy(ctx, dg, opts, &got));
    int64_t nw = 0, ng = -1;
    CHECK_OK(ctx, misgrid_result_num_levels(ctx, want, &nw));
    CHECK_OK(ctx, misgrid_result_num_levels(ctx, got, &ng));
    CHECK(nw == ng && nw > 1, "%s: %lld levels on the device, %lld on the host", opts, (long long)ng, (long long)nw);
    for (int64_t l = 0; l < nw && nw == ng; l++) {
        int64_t w[3], g[3];
        CHECK_OK(ctx, misgrid_result_level_info(ctx, want, l, &w[0], &w[1], &w[2], NULL, NULL));
        CHECK_OK(ctx, misgrid_result_level_info(ctx, got, l, &g[0], &g[1], &g[2], NULL, NULL));
        CHECK(!memcmp(w, g, sizeof w), "%s level %lld: n %lld set %lld aggregates %lld, host %lld %lld %lld", opts,
              (long long)l, (long long)g[0], (long long)g[1], (long long)g[2], (long long)w[0], (long long)w[1],
              (long long)w[2]);
        if (memcmp(w, g, sizeof w)) break;
        int32_t *a = malloc((size_t)w[0] * 4), *b = malloc((size_t)w[0] * 4);
        CHECK_OK(ctx, misgrid_result_set_flags(ctx, want, l, w[0], a));
        CHECK_OK(ctx, misgrid_result_set_flags(ctx, got, l, w[0], b));
        CHECK(!memcmp(a, b, (size_t)w[0] * 4), "%s level %lld: the sets differ", opts, (long long)l);
        if (l + 1 < nw) {
            CHECK_OK(ctx, misgrid_result_aggregates(ctx, want, l, MISGRID_INT32, 0, w[0], a));
            CHECK_OK(ctx, misgrid_result_aggregates(ctx, got, l, MISGRID_INT32, 0, w[0], b));
            CHECK(!memcmp(a, b, (size_t)w[0] * 4), "%s level %lld: the aggregates differ", opts, (long long)l);
        }
        free(a);
        free(b);
    }
    misgrid_result_destroy(ctx, want);
    misgrid_result_destroy(ctx, got);
}

/* check_errors passes bad arrays: each call fails as the host path does,
 * names the entry and leaves its outputs alone; the device stays usable. */
static void check_errors(misgrid_context ctx, int64_t n, int64_t nnz, const int64_t *rowptr, const int32_t *col,
                         int64_t *d_rowptr, int32_t *d_col, misgrid_device_graph dg, uint8_t *dflags) {
    misgrid_device_graph sentinel = (misgrid_device_graph)(uintptr_t)0x5a5a, out = sentinel;
    /* An id out of range, at entry 1000. */
    int32_t bad = (int32_t)n + 7;
    cudaMemcpy(d_col + 1000, &bad, 4, cudaMemcpyHostToDevice);
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, n, nnz, d_rowptr, d_col, &out), MISGRID_ERR_RANGE,
              "colind[1000]");
    CHECK(out == sentinel, "the output graph was written on failure");
    cudaMemcpy(d_col + 1000, col + 1000, 4, cudaMemcpyHostToDevice);
    /* A diagonal entry in the row of entry 500. */
    int64_t row = 0;
    while (rowptr[row + 1] <= 500) row++;
    int32_t diag = (int32_t)row;
    cudaMemcpy(d_col + 500, &diag, 4, cudaMemcpyHostToDevice);
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, n, nnz, d_rowptr, d_col, &out), MISGRID_ERR_ARG,
              "colind[500]");
    cudaMemcpy(d_col + 500, col + 500, 4, cudaMemcpyHostToDevice);
    /* nnz that rowptr does not end at; a negative size; a host pointer. */
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, n, nnz - 1, d_rowptr, d_col, &out), MISGRID_ERR_ARG,
              "but nnz");
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, -1, nnz, d_rowptr, d_col, &out), MISGRID_ERR_RANGE,
              "negative");
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, n, nnz, rowptr, d_col, &out), MISGRID_ERR_ARG, "rowptr");
    CHECK_ERR(ctx, misgrid_device_graph_from_csr(ctx, NULL, n, nnz, d_rowptr, NULL, &out), MISGRID_ERR_NULL, "colind");
    CHECK(out == sentinel, "the output graph was written on failure");
    /* Bad calls on a good graph write nothing. */
    uint8_t mark[64];
    memset(mark, 0xab, sizeof mark);
    cudaMemcpy(dflags, mark, sizeof mark, cudaMemcpyHostToDevice);
    int64_t size = -5;
    CHECK_ERR(ctx, misgrid_device_mis(ctx, dg, "distance=2", 7, n, dflags, &size), MISGRID_ERR_ARG, "where");
    CHECK_ERR(ctx, misgrid_device_mis(ctx, dg, "priority=user", MISGRID_DEVICE, n, dflags, &size), MISGRID_ERR_ARG,
              "priority=user");
    CHECK_ERR(ctx, misgrid_device_mis(ctx, dg, "distance=2", MISGRID_DEVICE, n - 1, dflags, &size), MISGRID_ERR_RANGE,
              "flags");
    CHECK_ERR(ctx, misgrid_device_mis(ctx, dg, "nosuchkey=1", MISGRID_DEVICE, n, dflags, &size), MISGRID_ERR_OPTION,
              "nosuchkey");
    uint8_t seen[64];
    cudaMemcpy(seen, dflags, sizeof seen, cudaMemcpyDeviceToHost);
    CHECK(!memcmp(seen, mark, sizeof mark) && size == -5, "a failed call wrote its outputs");
    CHECK(cuda_ok(cudaDeviceSynchronize(), "after the errors"), "the device is left faulted");
}

int main(void) {
    if (no_gpu("test_device")) return 0;
    int64_t *rowptr;
    int32_t *col;
    int64_t nnz = stencil27(&rowptr, &col), n = (int64_t)NX * NY * NZ;
    int64_t *d_rowptr;
    int32_t *d_col;
    uint8_t *dflags;
    if (!cuda_ok(cudaMalloc((void **)&d_rowptr, (size_t)(n + 1) * 8), "cudaMalloc") ||
        !cuda_ok(cudaMalloc((void **)&d_col, (size_t)nnz * 4), "cudaMalloc") ||
        !cuda_ok(cudaMalloc((void **)&dflags, (size_t)n), "cudaMalloc"))
        return 1;
    cudaMemcpy(d_rowptr, rowptr, (size_t)(n + 1) * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(d_col, col, (size_t)nnz * 4, cudaMemcpyHostToDevice);

    int64_t handles0 = live_handles();
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    misgrid_graph hg;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT64_INT32, 0, rowptr, col, MISGRID_PATTERN, NULL,
                                         NULL, &hg));
    misgrid_device_graph dg;
    CHECK_OK(ctx, misgrid_device_graph_from_csr(ctx, NULL, n, nnz, d_rowptr, d_col, &dg));
    if (check_failed) return check_report("test_device");

    compare_mis(ctx, hg, dg, n, dflags);
    compare_hierarchy(ctx, hg, dg, "distance=2,min_vertices=8");
    compare_hierarchy(ctx, hg, dg, "distance=1,priority=degree,min_vertices=8");
    check_errors(ctx, n, nnz, rowptr, col, d_rowptr, d_col, dg, dflags);
    /* Still right after the errors. */
    compare_mis(ctx, hg, dg, n, dflags);

    CHECK_OK(ctx, misgrid_device_graph_destroy(ctx, dg));
    CHECK_ERR(ctx, misgrid_device_graph_destroy(ctx, dg), MISGRID_ERR_HANDLE, "graph");
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, hg));
    CHECK_OK(NULL, misgrid_context_destroy(ctx));
    CHECK_HANDLES(handles0);
    cudaFree(d_rowptr);
    cudaFree(d_col);
    cudaFree(dflags);
    free(rowptr);
    free(col);
    return check_report("test_device");
}
