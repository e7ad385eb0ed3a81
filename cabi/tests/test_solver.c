/* The AMG solver through the C ABI: setup, PCG, the preconditioner alone
 * (symmetric), reuse with new values, and bad input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static double dot(int64_t n, const double *x, const double *y) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* The hierarchy of a 2D Laplacian of n rows and nnz entries has at least
 * two levels, low complexities and a small coarsest level. */
static void check_levels(misgrid_context ctx, misgrid_solver s, int64_t n, int64_t nnz) {
    int64_t nlev = 0, rows = 0, nz = 0, bs = 0;
    double opc = 0, gc = 0, secs = -1;
    CHECK_OK(ctx, misgrid_solver_info(ctx, s, &nlev, &opc, &gc, &secs));
    CHECK(nlev >= 2 && opc >= 1 && opc < 2 && gc >= 1 && secs >= 0, "%lld levels, complexity %g/%g, %g s",
          (long long)nlev, opc, gc, secs);
    CHECK_OK(ctx, misgrid_solver_level_info(ctx, s, 0, &rows, &nz, &bs));
    CHECK(rows == n && nz == nnz && bs == 1, "level 0: %lld rows %lld nnz block %lld", (long long)rows, (long long)nz, (long long)bs);
    CHECK_OK(ctx, misgrid_solver_level_info(ctx, s, nlev - 1, &rows, NULL, NULL));
    CHECK(rows <= 50, "coarsest level has %lld rows", (long long)rows);
    CHECK_ERR(ctx, misgrid_solver_level_info(ctx, s, nlev, &rows, NULL, NULL), MISGRID_ERR_RANGE, "level");
}

/* The preconditioner alone is symmetric: <u, M v> = <v, M u>. */
static void check_symmetric(misgrid_context ctx, misgrid_solver s, int64_t n) {
    double *u = malloc((size_t)n * 8), *v = malloc((size_t)n * 8), *mu = malloc((size_t)n * 8), *mv = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) {
        u[i] = cos(1.3 * (double)i);
        v[i] = sin(0.11 * (double)(i * i % 101));
    }
    CHECK_OK(ctx, misgrid_solver_apply(ctx, s, n, u, mu));
    CHECK_OK(ctx, misgrid_solver_apply(ctx, s, n, v, mv));
    double a1 = dot(n, u, mv), a2 = dot(n, v, mu);
    CHECK(fabs(a1 - a2) <= 1e-10 * fabs(a1), "<u,Mv> = %.15g, <v,Mu> = %.15g", a1, a2);
    CHECK(dot(n, u, mu) > 0, "M not positive on u");
    free(u); free(v); free(mu); free(mv);
}

/* Bad input fails with a message naming it; s is set up, s2 a solver to
 * set up again; val is restored after each change. */
static void check_bad_input(misgrid_context ctx, misgrid_solver s, misgrid_solver s2, int64_t n, int64_t nnz,
                            const int32_t *rp, const int32_t *col, double *val, double *b, double *x) {
    misgrid_solver bad = 0;
    CHECK_ERR(ctx, misgrid_solver_create(ctx, "smoother=sor", &bad), MISGRID_ERR_OPTION, "sor");
    CHECK_ERR(ctx, misgrid_solver_create(ctx, "tol=2", &bad), MISGRID_ERR_OPTION, "tol");
    CHECK_ERR(ctx, misgrid_solver_create(ctx, "distance=2", &bad), MISGRID_ERR_OPTION, "does not apply here");
    CHECK(bad == 0, "failed create left a handle");
    CHECK_ERR(ctx, misgrid_solver_solve(ctx, s, n - 1, b, x, NULL, NULL, NULL), MISGRID_ERR_RANGE, "rows");
    CHECK_ERR(ctx, misgrid_solver_solve(ctx, s, n, b, NULL, NULL, NULL, NULL), MISGRID_ERR_NULL, "x is NULL");
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s2, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_PATTERN, NULL),
              MISGRID_ERR_ARG, "needs matrix values");
    double keep = val[1];
    val[1] = -7; /* A(0,1) != A(1,0) */
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s2, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val),
              MISGRID_ERR_ARG, "symmetric");
    val[1] = keep;
    keep = val[0];
    val[0] = 0; /* zero diagonal */
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s2, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val),
              MISGRID_ERR_ARG, "diagonal");
    val[0] = keep;
    misgrid_solver s3;
    CHECK_OK(ctx, misgrid_solver_create(ctx, "nullspace=rbm", &s3));
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s3, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val),
              MISGRID_ERR_ARG, "misgrid_solver_set_coordinates");
    CHECK_ERR(ctx, misgrid_solver_set_nullspace(ctx, s3, n, 0, val), MISGRID_ERR_RANGE, "nvec = 0");
    CHECK_ERR(ctx, misgrid_solver_apply(ctx, (misgrid_solver)ctx, n, b, x), MISGRID_ERR_HANDLE, "misgrid_context handle");
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s3));
}

int main(void) {
    enum { NX = 64, NY = 48 };
    int64_t n = NX * NY;
    int32_t *rp, *col;
    double *val;
    int64_t nnz = grid_laplacian(NX, NY, &rp, &col, &val); /* SPD: Dirichlet outside */

    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    CHECK_OK(ctx, misgrid_context_set_option(ctx, "threads=2 tol=1e-9"));
    misgrid_solver s;
    CHECK_OK(ctx, misgrid_solver_create(ctx, "smoother=chebyshev sweeps=2 max_coarse=50", &s));

    double *b = malloc((size_t)n * 8), *x = calloc((size_t)n, 8), *xe = malloc((size_t)n * 8);
    CHECK_ERR(ctx, misgrid_solver_solve(ctx, s, n, b, x, NULL, NULL, NULL), MISGRID_ERR_ARG, "misgrid_solver_setup");
    CHECK_OK(ctx, misgrid_solver_setup(ctx, s, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val));

    check_levels(ctx, s, n, nnz);

    /* A known solution: PCG converges to it. */
    for (int64_t i = 0; i < n; i++) xe[i] = sin(0.37 * (double)i) + 0.001 * (double)(i % 17);
    csr_matvec(n, rp, col, val, xe, b);
    int32_t conv = -1;
    int64_t its = -1;
    double res = -1;
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s, n, b, x, &conv, &its, &res));
    CHECK(conv == 1 && its > 0 && its < 30 && res <= 1e-9, "converged %d in %lld its to %g", conv, (long long)its, res);
    double err = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(x[i] - xe[i]));
    CHECK(err < 1e-6, "max error %g", err);
    int64_t cnt = 0;
    double hist[64];
    CHECK_OK(ctx, misgrid_solver_residuals(ctx, s, 64, hist, &cnt));
    CHECK(cnt == its + 1 && fabs(hist[0] - 1) < 1e-12 && hist[cnt - 1] == res, "history %lld entries, %g .. %g",
          (long long)cnt, hist[0], hist[cnt - 1]);
    CHECK_ERR(ctx, misgrid_solver_residuals(ctx, s, 1, hist, &cnt), MISGRID_ERR_RANGE, "room for 1");

    check_symmetric(ctx, s, n);

    /* New values, same pattern: 3A has the solution xe/3 and converges alike. */
    double *val3 = malloc((size_t)nnz * 8);
    for (int64_t k = 0; k < nnz; k++) val3[k] = 3 * val[k];
    CHECK_OK(ctx, misgrid_solver_update_values(ctx, s, nnz, MISGRID_FLOAT64, val3));
    memset(x, 0, (size_t)n * 8);
    int64_t its3 = -1;
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s, n, b, x, &conv, &its3, &res));
    err = 0;
    for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(3 * x[i] - xe[i]));
    CHECK(conv == 1 && its3 == its && err < 1e-6, "after update: %d, %lld its (before %lld), error %g", conv,
          (long long)its3, (long long)its, err);
    CHECK_ERR(ctx, misgrid_solver_update_values(ctx, s, nnz - 1, MISGRID_FLOAT64, val3), MISGRID_ERR_RANGE, "entries");

    /* A solve that cannot converge in 2 iterations is not an error. */
    misgrid_solver s2;
    CHECK_OK(ctx, misgrid_solver_create(ctx, "maxit=2", &s2));
    float *val32 = malloc((size_t)nnz * 4);
    for (int64_t k = 0; k < nnz; k++) val32[k] = (float)val[k];
    CHECK_OK(ctx, misgrid_solver_setup(ctx, s2, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT32, val32));
    memset(x, 0, (size_t)n * 8);
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s2, n, b, x, &conv, &its, &res));
    CHECK(conv == 0 && its == 2 && res > 1e-9, "maxit=2: converged %d its %lld res %g", conv, (long long)its, res);

    check_bad_input(ctx, s, s2, n, nnz, rp, col, val, b, x);

    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s));
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s2));
    CHECK_ERR(ctx, misgrid_solver_destroy(ctx, s), MISGRID_ERR_HANDLE, "destroyed");
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
    CHECK_HANDLES(0);
    free(rp); free(col); free(val); free(b); free(x); free(xe);
    free(val3); free(val32);
    return check_report("test_solver");
}
