/* device=gpu through the C ABI: the same sets, aggregates and hierarchies
 * as device=cpu, also from several threads at once. Without a usable GPU
 * the calls fail with MISGRID_ERR_NOGPU and the test says SKIP. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { NX = 700, NY = 600, NTHREADS = 4 };
static const char *opts[] = {"distance=1,priority=hash", "distance=2,priority=boundary,seed=3", "distance=2,priority=degree"};
enum { NOPTS = 3 };

static int64_t n;
static misgrid_graph g;
static int32_t *want[NOPTS], *want_agg[NOPTS];

/* compute returns the flags and aggregates (distance 2) of one run. */
static misgrid_status compute(misgrid_context ctx, const char *device, int o, int32_t *flags, int32_t *agg) {
    char all[128];
    snprintf(all, sizeof all, "%s,device=%s", opts[o], device);
    misgrid_result r;
    misgrid_status st = misgrid_mis(ctx, g, all, &r);
    if (st) return st;
    st = misgrid_result_set_flags(ctx, r, 0, n, flags);
    if (!st && strstr(opts[o], "distance=2")) st = misgrid_result_aggregates(ctx, r, 0, MISGRID_INT32, 0, n, agg);
    misgrid_result_destroy(ctx, r);
    return st;
}

static int thread_failures[NTHREADS];

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    misgrid_context ctx;
    misgrid_context_create(&ctx);
    int32_t *flags = malloc((size_t)n * 4), *agg = malloc((size_t)n * 4);
    for (int round = 0; round < 3; round++) {
        int o = (id + round) % NOPTS;
        if (compute(ctx, "gpu", o, flags, agg) || memcmp(flags, want[o], (size_t)n * 4) ||
            (strstr(opts[o], "distance=2") && memcmp(agg, want_agg[o], (size_t)n * 4))) {
            fprintf(stderr, "thread %d round %d: %s\n", id, round, misgrid_error_message(ctx));
            thread_failures[id]++;
        }
    }
    free(flags);
    free(agg);
    misgrid_context_destroy(ctx);
    return NULL;
}

int main(void) {
    int32_t *rp, *col;
    double *val;
    n = (int64_t)NX * NY;
    int64_t nnz = grid_laplacian(NX, NY, &rp, &col, &val);
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &g));
    free(rp); free(col); free(val);

    int32_t *flags = malloc((size_t)n * 4), *agg = malloc((size_t)n * 4);
    misgrid_status st = compute(ctx, "gpu", 0, flags, agg);
    if (st == MISGRID_ERR_NOGPU) {
        printf("test_gpu: SKIP (%s)\n", misgrid_error_message(ctx));
        misgrid_graph_destroy(ctx, g);
        misgrid_context_destroy(ctx);
        free(flags); free(agg);
        return 0;
    }
    CHECK_OK(ctx, st);
    for (int o = 0; o < NOPTS; o++) {
        want[o] = malloc((size_t)n * 4);
        want_agg[o] = malloc((size_t)n * 4);
        CHECK_OK(ctx, compute(ctx, "cpu", o, want[o], want_agg[o]));
        CHECK_OK(ctx, compute(ctx, "gpu", o, flags, agg));
        CHECK(memcmp(flags, want[o], (size_t)n * 4) == 0, "%s: GPU set differs from CPU set", opts[o]);
        if (strstr(opts[o], "distance=2"))
            CHECK(memcmp(agg, want_agg[o], (size_t)n * 4) == 0, "%s: GPU aggregates differ", opts[o]);
    }
    /* A hierarchy on the GPU has the CPU's level sizes. */
    misgrid_result rc, rg;
    CHECK_OK(ctx, misgrid_hierarchy(ctx, g, "priority=boundary,device=cpu", &rc));
    CHECK_OK(ctx, misgrid_hierarchy(ctx, g, "priority=boundary,device=gpu", &rg));
    int64_t lc = 0, lg = 0;
    misgrid_result_num_levels(ctx, rc, &lc);
    misgrid_result_num_levels(ctx, rg, &lg);
    CHECK(lc == lg && lc > 2, "levels: cpu %lld gpu %lld", (long long)lc, (long long)lg);
    for (int64_t l = 0; l < lc && l < lg; l++) {
        int64_t a[2], b[2];
        misgrid_result_level_info(ctx, rc, l, &a[0], &a[1], NULL, NULL, NULL);
        misgrid_result_level_info(ctx, rg, l, &b[0], &b[1], NULL, NULL, NULL);
        CHECK(a[0] == b[0] && a[1] == b[1], "level %lld: cpu %lld/%lld gpu %lld/%lld", (long long)l,
              (long long)a[0], (long long)a[1], (long long)b[0], (long long)b[1]);
    }
    misgrid_result_destroy(ctx, rc);
    misgrid_result_destroy(ctx, rg);

    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++) CHECK(thread_failures[i] == 0, "thread %d: %d failures", i, thread_failures[i]);

    for (int o = 0; o < NOPTS; o++) { free(want[o]); free(want_agg[o]); }
    free(flags); free(agg);
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g));
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
    printf("test_gpu: %lld vertices, GPU == CPU for %d option sets, %d threads\n", (long long)n, NOPTS, NTHREADS);
    return check_report("test_gpu");
}
