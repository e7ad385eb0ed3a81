/* Singular systems through the C ABI: a pure-Neumann Poisson problem
 * (kernel: the constants) and a free-floating 2D elasticity problem
 * (kernel: the three rigid-body modes), each solved with the kernel found
 * by the setup and with the kernel given by misgrid_solver_set_kernel; an
 * inconsistent right-hand side is MISGRID_ERR_INCONSISTENT with x left
 * as it was; bad kernels are refused. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct {
    int64_t n, nnz;
    int32_t *rp, *col;
    double *val;
} csr;

static void matvec(const csr *a, const double *x, double *y) { csr_matvec(a->n, a->rp, a->col, a->val, x, y); }

/* ||b - A x|| / ||b||, computed here, independently of the library. */
static double true_residual(const csr *a, const double *b, const double *x) {
    double *r = malloc((size_t)a->n * 8), rr = 0, bb = 0;
    matvec(a, x, r);
    for (int64_t i = 0; i < a->n; i++) {
        rr += (b[i] - r[i]) * (b[i] - r[i]);
        bb += b[i] * b[i];
    }
    free(r);
    return sqrt(rr / bb);
}

/* The graph Laplacian of an nx x ny grid (5-point, diagonal = degree):
 * pure Neumann, singular with the constants as kernel. */
static csr neumann_laplacian(int nx, int ny) {
    csr a;
    int32_t *rp, *col;
    double *val;
    a.n = (int64_t)nx * ny;
    a.nnz = grid_laplacian(nx, ny, &rp, &col, &val);
    for (int64_t i = 0; i < a.n; i++) {
        double off = 0;
        int64_t d = -1;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            if (col[k] == i) d = k;
            else off -= val[k];
        }
        val[d] = off;
    }
    a.rp = rp, a.col = col, a.val = val;
    return a;
}

/* Bilinear plane-stress elasticity (E = 1, nu = 0.3) on an nx x ny grid of
 * unit squares with no boundary condition: a free-floating body, 2 dofs per
 * node (x, y interleaved), singular with the rigid-body modes as kernel. */
static csr free_elasticity(int nx, int ny) {
    int px = nx + 1, py = ny + 1;
    csr a;
    a.n = 2 * (int64_t)px * py;
    a.rp = malloc((size_t)(a.n + 1) * sizeof *a.rp);
    a.col = malloc((size_t)(18 * a.n) * sizeof *a.col);
    a.val = calloc((size_t)(18 * a.n), sizeof *a.val);
    int64_t k = 0;
    a.rp[0] = 0;
    for (int j = 0; j < py; j++)
        for (int i = 0; i < px; i++)
            for (int c = 0; c < 2; c++) {
                for (int dj = -1; dj <= 1; dj++)
                    for (int di = -1; di <= 1; di++) {
                        int ii = i + di, jj = j + dj;
                        if (ii < 0 || jj < 0 || ii >= px || jj >= py) continue;
                        a.col[k++] = 2 * (ii + px * jj);
                        a.col[k++] = 2 * (ii + px * jj) + 1;
                    }
                a.rp[2 * (i + px * j) + c + 1] = (int32_t)k;
            }
    a.nnz = k;
    /* The element matrix by 2x2 Gauss quadrature (h = 1, det J = 1/4). */
    const double nu = 0.3, f = 1 / (1 - nu * nu);
    const double D[3][3] = {{f, f * nu, 0}, {f * nu, f, 0}, {0, 0, f * (1 - nu) / 2}};
    const int xi[4] = {-1, 1, 1, -1}, eta[4] = {-1, -1, 1, 1};
    double ke[8][8] = {{0}};
    for (int q = 0; q < 4; q++) {
        double gx = xi[q] / sqrt(3.0), gy = eta[q] / sqrt(3.0), B[3][8] = {{0}};
        for (int m = 0; m < 4; m++) {
            double dx = xi[m] * (1 + eta[m] * gy) / 4 * 2, dy = eta[m] * (1 + xi[m] * gx) / 4 * 2;
            B[0][2 * m] = dx, B[1][2 * m + 1] = dy, B[2][2 * m] = dy, B[2][2 * m + 1] = dx;
        }
        for (int r = 0; r < 8; r++)
            for (int s = 0; s < 8; s++)
                for (int p = 0; p < 3; p++)
                    for (int t = 0; t < 3; t++) ke[r][s] += B[p][r] * D[p][t] * B[t][s] * 0.25;
    }
    for (int ej = 0; ej < ny; ej++)
        for (int ei = 0; ei < nx; ei++) {
            int dof[8];
            for (int m = 0; m < 4; m++) {
                int node = ei + (xi[m] > 0) + px * (ej + (eta[m] > 0));
                dof[2 * m] = 2 * node, dof[2 * m + 1] = 2 * node + 1;
            }
            for (int r = 0; r < 8; r++)
                for (int s = 0; s < 8; s++) {
                    int64_t q = a.rp[dof[r]];
                    while (a.col[q] != dof[s]) q++;
                    a.val[q] += ke[r][s];
                }
        }
    return a;
}

static void free_csr(csr *a) {
    free(a->rp), free(a->col), free(a->val);
}

/* Solves A x = A xe from x = 0 and checks convergence to tol, the true
 * residual, and x orthogonal to the kernel (so x = xe minus its kernel
 * part). Prints the figures. */
static void solve_consistent(misgrid_context ctx, misgrid_solver s, const csr *a, const double *kernel, int nk,
                             const char *name) {
    int64_t n = a->n;
    double *xe = calloc((size_t)n, 8), *b = calloc((size_t)n, 8), *x = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) xe[i] = sin(0.37 * (double)i) + 0.01 * (double)(i % 13);
    matvec(a, xe, b);
    int32_t conv = -1;
    int64_t its = -1;
    double res = -1;
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s, n, b, x, &conv, &its, &res));
    double tr = true_residual(a, b, x);
    CHECK(conv == 1 && its > 0 && its < 60 && res <= 1e-8, "%s: converged %d in %lld its to %g", name, conv,
          (long long)its, res);
    CHECK(fabs(tr - res) <= 1e-3 * res + 1e-15, "%s: reported residual %g, true residual %g", name, res, tr);
    double worst = 0;
    for (int j = 0; j < nk; j++) {
        const double *v = kernel + (int64_t)j * n;
        double vx = 0, vv = 0, xx = 0;
        for (int64_t i = 0; i < n; i++) vx += v[i] * x[i], vv += v[i] * v[i], xx += x[i] * x[i];
        worst = fmax(worst, fabs(vx) / sqrt(vv * xx));
    }
    CHECK(worst < 1e-8, "%s: x has a kernel part %g", name, worst);
    printf("test_singular: %s: %lld rows, %lld iterations, residual %.3g (true %.3g)\n", name, (long long)n,
           (long long)its, res, tr);
    free(xe), free(b), free(x);
}

/* An inconsistent b (A xe plus a kernel vector) is MISGRID_ERR_INCONSISTENT
 * with x untouched. */
static void solve_inconsistent(misgrid_context ctx, misgrid_solver s, const csr *a, const double *kernel,
                               const char *name) {
    int64_t n = a->n;
    double *b = calloc((size_t)n, 8), *x = calloc((size_t)n, 8), *xe = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) xe[i] = cos(0.21 * (double)i);
    matvec(a, xe, b);
    for (int64_t i = 0; i < n; i++) b[i] += 0.1 * kernel[i], x[i] = 7;
    int32_t conv = -1;
    int64_t its = -1;
    double res = -1;
    CHECK_ERR(ctx, misgrid_solver_solve(ctx, s, n, b, x, &conv, &its, &res), MISGRID_ERR_INCONSISTENT,
              "inconsistent with the kernel");
    int same = conv == -1 && its == -1 && res == -1;
    for (int64_t i = 0; i < n; i++) same &= x[i] == 7;
    CHECK(same, "%s: outputs changed by a failed solve", name);
    printf("test_singular: %s inconsistent: %s\n", name, misgrid_error_message(ctx));
    int64_t cnt = 0;
    double hist[256];
    CHECK_OK(ctx, misgrid_solver_residuals(ctx, s, 256, hist, &cnt));
    CHECK(cnt >= 1, "%s: %lld residuals recorded for the inconsistent solve", name, (long long)cnt);
    free(b), free(x), free(xe);
}

static void poisson(misgrid_context ctx) {
    enum { NX = 48, NY = 40 };
    csr a = neumann_laplacian(NX, NY);
    double *ones = malloc((size_t)a.n * 8);
    for (int64_t i = 0; i < a.n; i++) ones[i] = 1;

    /* (a) the kernel found by the setup. */
    misgrid_solver s;
    CHECK_OK(ctx, misgrid_solver_create(ctx, "max_coarse=40 tol=1e-9", &s));
    CHECK_OK(ctx, misgrid_solver_setup(ctx, s, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rp, a.col, MISGRID_FLOAT64, a.val));
    solve_consistent(ctx, s, &a, ones, 1, "Neumann Poisson, kernel found");
    solve_inconsistent(ctx, s, &a, ones, "Neumann Poisson, kernel found");
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s));

    /* (b) the kernel given (not normalised: the setup orthonormalises). */
    for (int64_t i = 0; i < a.n; i++) ones[i] = 3;
    CHECK_OK(ctx, misgrid_solver_create(ctx, "max_coarse=40 tol=1e-9", &s));
    CHECK_OK(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 1, ones));
    CHECK_OK(ctx, misgrid_solver_setup(ctx, s, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rp, a.col, MISGRID_FLOAT64, a.val));
    solve_consistent(ctx, s, &a, ones, 1, "Neumann Poisson, kernel given");
    solve_inconsistent(ctx, s, &a, ones, "Neumann Poisson, kernel given");

    /* Bad kernels: counts out of range, NULL, not a null vector of A. */
    CHECK_ERR(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 0, ones), MISGRID_ERR_RANGE, "nvec = 0");
    CHECK_ERR(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 65, ones), MISGRID_ERR_RANGE, "1 to 64");
    CHECK_ERR(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 1, NULL), MISGRID_ERR_NULL, "vectors");
    CHECK_ERR(ctx, misgrid_solver_set_kernel(ctx, s, INT64_MAX / 16, 1, ones), MISGRID_ERR_NOMEM, "kernel vectors");
    ones[0] = NAN;
    CHECK_ERR(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 1, ones), MISGRID_ERR_ARG, "vectors[0] = NaN");
    ones[0] = 3;
    double *twice = malloc((size_t)(2 * a.n) * 8);
    for (int64_t i = 0; i < 2 * a.n; i++) twice[i] = 1;
    CHECK_OK(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 2, twice)); /* dependent: refused by the setup */
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rp, a.col, MISGRID_FLOAT64, a.val),
              MISGRID_ERR_ARG, "combination of the ones before it");
    free(twice);
    CHECK_OK(ctx, misgrid_solver_set_kernel(ctx, s, a.n - 1, 1, ones));
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rp, a.col, MISGRID_FLOAT64, a.val),
              MISGRID_ERR_ARG, "length");
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s));
    free(ones);
    free_csr(&a);
}

static void elasticity(misgrid_context ctx) {
    enum { NX = 24, NY = 16 };
    csr a = free_elasticity(NX, NY);
    int64_t nodes = a.n / 2;
    double *xy = malloc((size_t)nodes * 16), *rbm = malloc((size_t)(3 * a.n) * 8);
    for (int64_t v = 0; v < nodes; v++) {
        double x = (double)(v % (NX + 1)), y = (double)(v / (NX + 1));
        xy[2 * v] = x, xy[2 * v + 1] = y;
        rbm[2 * v] = 1, rbm[2 * v + 1] = 0;
        rbm[a.n + 2 * v] = 0, rbm[a.n + 2 * v + 1] = 1;
        rbm[2 * a.n + 2 * v] = -y, rbm[2 * a.n + 2 * v + 1] = x;
    }
    const char *opts = "block_size=2 nullspace=rbm max_coarse=60 tol=1e-9";
    for (int given = 0; given < 2; given++) {
        misgrid_solver s;
        CHECK_OK(ctx, misgrid_solver_create(ctx, opts, &s));
        CHECK_OK(ctx, misgrid_solver_set_coordinates(ctx, s, 2, nodes, xy));
        if (given) CHECK_OK(ctx, misgrid_solver_set_kernel(ctx, s, a.n, 3, rbm));
        CHECK_OK(ctx, misgrid_solver_setup(ctx, s, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rp, a.col, MISGRID_FLOAT64, a.val));
        const char *name = given ? "free 2D elasticity, kernel given" : "free 2D elasticity, kernel found";
        solve_consistent(ctx, s, &a, rbm, 3, name);
        solve_inconsistent(ctx, s, &a, rbm + 2 * a.n, name); /* b plus a rotation */
        CHECK_OK(ctx, misgrid_solver_destroy(ctx, s));
    }
    free(xy), free(rbm);
    free_csr(&a);
}

int main(void) {
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    CHECK_OK(ctx, misgrid_context_set_option(ctx, "threads=2"));
    poisson(ctx);
    elasticity(ctx);
    CHECK_OK(NULL, misgrid_context_destroy(ctx));
    return check_report("test_singular");
}
