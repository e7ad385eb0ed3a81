/* The work of a host FEM code, sized as one, for valgrind memcheck (make
 * check-memory): the Laplacian of an nx^dim grid (5-point in 2D, 7-point
 * in 3D) through a distance-2 MIS with boundary priority, a coarse-grid
 * hierarchy, and an AMG-preconditioned CG solve; every handle destroyed.
 * Usage: memcheck DIM N (N points a side). Exits non-zero on any failure;
 * with MEMCHECK_LEAK set it leaks one of its arrays (the leak check's test). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "misgrid.h"

#define TRY(call)                                                                          \
    do {                                                                                   \
        misgrid_status st_ = (call);                                                       \
        if (st_ != MISGRID_OK) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, misgrid_status_string(st_), \
                    misgrid_error_message(ctx));                                           \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv) {
    int dim = argc > 1 ? atoi(argv[1]) : 2;
    int64_t m = argc > 2 ? atoll(argv[2]) : 317;
    if ((dim != 2 && dim != 3) || m < 3) {
        fprintf(stderr, "usage: memcheck 2|3 N\n");
        return 2;
    }
    int64_t nz = dim == 3 ? m : 1, n = m * m * nz;
    int64_t *rowptr = malloc((size_t)(n + 1) * sizeof *rowptr);
    int32_t *col = malloc((size_t)(7 * n) * sizeof *col);
    double *val = malloc((size_t)(7 * n) * sizeof *val), *b = malloc((size_t)n * sizeof *b),
           *x = calloc((size_t)n, sizeof *x);
    int64_t k = 0;
    rowptr[0] = 0;
    for (int64_t v = 0; v < n; v++) {
        int64_t i = v % m, j = (v / m) % m, l = v / (m * m);
        int64_t nb[6] = {i > 0 ? v - 1 : -1, i < m - 1 ? v + 1 : -1, j > 0 ? v - m : -1,
                         j < m - 1 ? v + m : -1, l > 0 ? v - m * m : -1, l < nz - 1 ? v + m * m : -1};
        col[k] = (int32_t)v, val[k++] = 2.0 * dim;
        for (int q = 0; q < 6; q++)
            if (nb[q] >= 0) col[k] = (int32_t)nb[q], val[k++] = -1;
        rowptr[v + 1] = k;
        b[v] = 1;
    }
    misgrid_context ctx;
    if (misgrid_context_create(&ctx) != MISGRID_OK) return 1;
    misgrid_graph g;
    misgrid_result set, hier;
    misgrid_solver s;
    int64_t size = 0, levels = 0, its = 0, live = -1;
    int32_t conv = 0;
    double res = 0;
    TRY(misgrid_graph_from_csr(ctx, n, n, k, MISGRID_INT64_INT32, 0, rowptr, col, MISGRID_FLOAT64, val, NULL, &g));
    TRY(misgrid_mis(ctx, g, "distance=2, priority=boundary", &set));
    TRY(misgrid_result_level_info(ctx, set, 0, NULL, &size, NULL, NULL, NULL));
    TRY(misgrid_hierarchy(ctx, g, NULL, &hier));
    TRY(misgrid_result_num_levels(ctx, hier, &levels));
    TRY(misgrid_solver_create(ctx, "tol=1e-8", &s));
    TRY(misgrid_solver_setup(ctx, s, n, n, k, MISGRID_INT64_INT32, 0, rowptr, col, MISGRID_FLOAT64, val));
    TRY(misgrid_solver_solve(ctx, s, n, b, x, &conv, &its, &res));
    TRY(misgrid_solver_destroy(ctx, s));
    TRY(misgrid_result_destroy(ctx, hier));
    TRY(misgrid_result_destroy(ctx, set));
    TRY(misgrid_graph_destroy(ctx, g));
    TRY(misgrid_context_destroy(ctx));
    misgrid_handle_count(&live);
    printf("memcheck %dD: %lld unknowns, MIS-2 %lld, %lld hierarchy levels, CG %s in %lld iterations (%.1e), %lld handles left\n",
           dim, (long long)n, (long long)size, (long long)levels, conv ? "converged" : "did NOT converge",
           (long long)its, res, (long long)live);
    /* MEMCHECK_LEAK set: lose x, so that make check-memory sees its leak
     * check fail on a leak in the host's memory. */
    if (getenv("MEMCHECK_LEAK")) x = NULL;
    free(rowptr); free(col); free(val); free(b); free(x);
    return conv && live == 0 ? 0 : 1;
}
