/*
 * poisson.c - coarse grids for a 2D Poisson problem through libmisgrid.
 *
 * Assembles the Q1 finite-element Laplacian on the unit square (n x n
 * nodes, u = 0 on x = 0 imposed by symmetric elimination: identity rows
 * and zeroed columns), builds the matrix graph, attaches coordinates and
 * boundary classes, computes a distance-2 maximal independent set with
 * boundary priority and its aggregates, checks them independently, then
 * solves -Laplace(u) = 1 with the AMG-preconditioned CG solver, and again
 * after new matrix values (the reuse of Newton or time-stepping loops).
 * Prints a summary.
 *
 * Build against an installed libmisgrid:
 *   cc -std=c99 poisson.c $(pkg-config --cflags --libs misgrid) -o poisson
 * Run: ./poisson [n] [out.vtu]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <misgrid.h>

/* Stop with the library's message when a call fails. */
#define TRY(call)                                                                    \
    do {                                                                             \
        misgrid_status st_ = (call);                                                 \
        if (st_ != MISGRID_OK) {                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__,                   \
                    misgrid_status_string(st_), misgrid_error_message(ctx));         \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

struct csr {
    int64_t n, nnz;
    int64_t *rowptr;
    int64_t *col;
    double *val;
};

/* assemble builds the Q1 stiffness matrix of -Laplace(u) on an n x n node
 * grid: the pattern is each node's 3 x 3 neighbourhood, the values are the
 * sums of the element matrices. The unknowns on x = 0 are eliminated
 * symmetrically: identity rows, zeroed columns (kept as explicit zeros,
 * so the pattern does not change), which keeps the matrix SPD. */
static struct csr assemble(int n) {
    static const double ke[4][4] = {
        {4, -1, -2, -1}, {-1, 4, -1, -2}, {-2, -1, 4, -1}, {-1, -2, -1, 4}};
    struct csr a;
    a.n = (int64_t)n * n;
    a.rowptr = malloc((size_t)(a.n + 1) * sizeof *a.rowptr);
    a.col = malloc((size_t)(9 * a.n) * sizeof *a.col);
    a.val = calloc((size_t)(9 * a.n), sizeof *a.val);
    a.nnz = 0;
    a.rowptr[0] = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++)
                    if (i + di >= 0 && i + di < n && j + dj >= 0 && j + dj < n)
                        a.col[a.nnz++] = (i + di) + n * (j + dj);
            a.rowptr[i + n * j + 1] = a.nnz;
        }
    for (int j = 0; j + 1 < n; j++)
        for (int i = 0; i + 1 < n; i++) {
            int64_t node[4] = {i + n * j, i + 1 + n * j, i + 1 + n * (j + 1), i + n * (j + 1)};
            for (int p = 0; p < 4; p++)
                for (int q = 0; q < 4; q++)
                    for (int64_t k = a.rowptr[node[p]]; k < a.rowptr[node[p] + 1]; k++)
                        if (a.col[k] == node[q]) a.val[k] += ke[p][q] / 6;
        }
    for (int64_t row = 0; row < a.n; row++)
        for (int64_t k = a.rowptr[row]; k < a.rowptr[row + 1]; k++)
            if (row % n == 0 || a.col[k] % n == 0) a.val[k] = a.col[k] == row ? 1 : 0; /* x = 0 */
    return a;
}

/* set_geometry attaches coordinates (for the VTU file) and the boundary
 * classes of the square to g, and returns the classes. */
static int32_t *set_geometry(misgrid_context ctx, misgrid_graph g, int n) {
    int64_t nn = (int64_t)n * n;
    double *xy = malloc((size_t)(2 * nn) * sizeof *xy);
    int32_t *cls = malloc((size_t)nn * sizeof *cls);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            int64_t v = i + (int64_t)n * j;
            xy[2 * v] = (double)i / (n - 1);
            xy[2 * v + 1] = (double)j / (n - 1);
            int sides = (i == 0 || i == n - 1) + (j == 0 || j == n - 1);
            cls[v] = sides == 2 ? MISGRID_CORNER : sides == 1 ? MISGRID_FACE : MISGRID_INTERIOR;
        }
    TRY(misgrid_graph_set_coordinates(ctx, g, 2, nn, xy));
    TRY(misgrid_graph_set_classes(ctx, g, nn, cls));
    free(xy);
    return cls;
}

/* check_mis checks the set (flags in) and its aggregates here, with the
 * graph's adjacency, independently of the library: no two members within
 * distance 2, every vertex within distance 2 of one, each aggregate's
 * root a member, all 4 corners in the set. Prints the set's and the
 * aggregates' sizes; returns 1 when all holds. */
static int check_mis(misgrid_context ctx, misgrid_graph g, const int32_t *cls, const int32_t *in, const int64_t *agg,
                     const int64_t *roots, int64_t size, int64_t nagg) {
    int64_t nv = 0, ne = 0;
    TRY(misgrid_graph_size(ctx, g, &nv, &ne));
    int64_t *off = malloc((size_t)(nv + 1) * sizeof *off), *adj = malloc((size_t)(2 * ne) * sizeof *adj);
    TRY(misgrid_graph_adjacency(ctx, g, MISGRID_INT64, 0, off, nv + 1, adj, 2 * ne));
    int ok = 1;
    int64_t *near = calloc((size_t)nv, sizeof *near), *count = calloc((size_t)nagg, sizeof *count);
    for (int64_t v = 0; v < nv; v++) {
        if (!in[v]) continue;
        near[v] = 1;
        for (int64_t k = off[v]; k < off[v + 1]; k++) {
            int64_t u = adj[k];
            near[u] = 1;
            for (int64_t q = off[u]; q < off[u + 1]; q++) {
                if (adj[q] != v && in[adj[q]]) ok = 0; /* two members within distance 2 */
                near[adj[q]] = 1;
            }
            if (in[u]) ok = 0;
        }
    }
    for (int64_t v = 0; v < nv; v++) {
        if (!near[v]) ok = 0; /* not maximal */
        if (agg[v] < 0 || agg[v] >= nagg) ok = 0;
        else count[agg[v]]++;
    }
    int64_t smin = nv, smax = 0, corners = 0;
    for (int64_t i = 0; i < nagg; i++) {
        if (!in[roots[i]] || agg[roots[i]] != i) ok = 0;
        if (count[i] < smin) smin = count[i];
        if (count[i] > smax) smax = count[i];
    }
    for (int64_t v = 0; v < nv; v++)
        if (cls[v] == MISGRID_CORNER) corners += in[v];
    if (corners != 4 || nagg != size) ok = 0;
    int32_t valid = 0;
    char why[256];
    TRY(misgrid_verify(ctx, g, nv, in, 2, &valid, why, sizeof why));
    if (!valid) ok = 0;

    printf("MIS-2 (boundary priority): %lld vertices, %lld of 4 corners\n", (long long)size, (long long)corners);
    printf("aggregates: %lld, sizes %lld..%lld, mean %.2f\n", (long long)nagg, (long long)smin, (long long)smax,
           (double)nv / (double)nagg);
    free(off); free(adj); free(near); free(count);
    return ok;
}

/* coarse_grid builds the graph of a (n x n nodes), computes its MIS-2
 * with boundary priority and its aggregates, checks them and writes them
 * to vtu when asked. Returns 1 when the checks pass. */
static int coarse_grid(misgrid_context ctx, const struct csr *a, int n, const char *vtu) {
    /* The graph. The library copies what it needs from the arrays. */
    misgrid_graph g = NULL;
    TRY(misgrid_graph_from_csr(ctx, a->n, a->n, a->nnz, MISGRID_INT64, 0, a->rowptr, a->col, MISGRID_FLOAT64, a->val,
                               "theta=0", &g));
    int32_t *cls = set_geometry(ctx, g, n);

    int64_t nv = 0, ne = 0;
    TRY(misgrid_graph_size(ctx, g, &nv, &ne));
    int32_t *dir = malloc((size_t)nv * sizeof *dir);
    TRY(misgrid_graph_get_dirichlet(ctx, g, nv, dir));
    int64_t isolated = 0;
    for (int64_t v = 0; v < nv; v++) isolated += dir[v];
    printf("graph: %lld vertices, %lld edges, %lld isolated Dirichlet vertices\n", (long long)nv, (long long)ne,
           (long long)isolated);

    misgrid_result r = NULL;
    TRY(misgrid_mis(ctx, g, "distance=2, priority=boundary", &r));
    int64_t size = 0, nagg = 0;
    TRY(misgrid_result_level_info(ctx, r, 0, NULL, &size, &nagg, NULL, NULL));
    int32_t *in = malloc((size_t)nv * sizeof *in);
    int64_t *agg = malloc((size_t)nv * sizeof *agg);
    int64_t *roots = malloc((size_t)nagg * sizeof *roots);
    TRY(misgrid_result_set_flags(ctx, r, 0, nv, in));
    TRY(misgrid_result_aggregates(ctx, r, 0, MISGRID_INT64, 0, nv, agg));
    TRY(misgrid_result_aggregate_roots(ctx, r, 0, MISGRID_INT64, 0, nagg, roots, NULL));
    int ok = check_mis(ctx, g, cls, in, agg, roots, size, nagg);

    if (vtu) {
        TRY(misgrid_write_vtu(ctx, g, r, vtu, NULL));
        fprintf(stderr, "wrote %s\n", vtu);
    }
    TRY(misgrid_result_destroy(ctx, r));
    TRY(misgrid_graph_destroy(ctx, g));
    free(cls); free(dir); free(in); free(agg); free(roots);
    return ok;
}

/* solve solves -Laplace(u) = 1, u = 0 on x = 0 (natural conditions
 * elsewhere), whose solution is u = x - x^2/2, at most 1/2: AMG setup,
 * then PCG; then again with a coefficient doubled, which halves u. The
 * load is lumped: h^2 times the share of the node's four cells that lie
 * in the square. Returns 1 when both solves converge to what they must. */
static int solve(misgrid_context ctx, struct csr *a, int n) {
    int ok = 1;
    double h = 1.0 / (n - 1), *b = malloc((size_t)a->n * sizeof *b), *u = calloc((size_t)a->n, sizeof *u);
    for (int64_t v = 0; v < a->n; v++) {
        int64_t i = v % n, j = v / n;
        b[v] = i == 0 ? 0 : h * h * (i == n - 1 ? 0.5 : 1) * (j == 0 || j == n - 1 ? 0.5 : 1);
    }
    misgrid_solver s = NULL;
    TRY(misgrid_solver_create(ctx, "smoother=chebyshev, tol=1e-8", &s));
    TRY(misgrid_solver_setup(ctx, s, a->n, a->n, a->nnz, MISGRID_INT64, 0, a->rowptr, a->col, MISGRID_FLOAT64, a->val));
    int64_t levels = 0, its = 0, its2 = 0;
    double opc = 0, res = 1;
    int32_t conv = 0, conv2 = 0;
    TRY(misgrid_solver_info(ctx, s, &levels, &opc, NULL, NULL));
    TRY(misgrid_solver_solve(ctx, s, a->n, b, u, &conv, &its, &res));
    double umax = 0;
    for (int64_t v = 0; v < a->n; v++) umax = u[v] > umax ? u[v] : umax;
    printf("AMG: %lld levels, operator complexity %.2f\n", (long long)levels, opc);
    printf("PCG: %s in %lld iterations, max u = %.6f\n", conv ? "converged" : "NOT converged", (long long)its, umax);
    if (!conv || res > 1e-8 || umax < 0.5 - 1e-6 || umax > 0.5 + 1e-6) ok = 0;

    /* New values, same pattern: only the numeric setup is redone, as in
     * the loops of Newton's method or of time stepping. */
    for (int64_t k = 0; k < a->nnz; k++)
        if (a->val[k] != 1 || a->col[k] % n != 0) a->val[k] *= 2;
    TRY(misgrid_solver_update_values(ctx, s, a->nnz, MISGRID_FLOAT64, a->val));
    double umax2 = 0;
    for (int64_t v = 0; v < a->n; v++) u[v] = 0;
    TRY(misgrid_solver_solve(ctx, s, a->n, b, u, &conv2, &its2, &res));
    for (int64_t v = 0; v < a->n; v++) umax2 = u[v] > umax2 ? u[v] : umax2;
    printf("PCG after new values: %s in %lld iterations, max u = %.6f\n", conv2 ? "converged" : "NOT converged",
           (long long)its2, umax2);
    if (!conv2 || umax2 < 0.49 * umax || umax2 > 0.51 * umax) ok = 0;
    TRY(misgrid_solver_destroy(ctx, s));
    free(b);
    free(u);
    return ok;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 33;
    const char *vtu = argc > 2 ? argv[2] : NULL;
    if (n < 3 || n > 3000) {
        fprintf(stderr, "usage: poisson [n >= 3] [out.vtu]\n");
        return 2;
    }
    misgrid_context ctx = NULL;
    if (misgrid_context_create(&ctx) != MISGRID_OK) return 1;
    TRY(misgrid_context_set_option(ctx, "threads=2"));

    struct csr a = assemble(n);
    int64_t dirichlet_rows = n;
    printf("misgrid %s: 2D Poisson, Q1 elements, %d x %d nodes\n", misgrid_version(), n, n);
    printf("matrix: %lld rows, %lld nonzeros, %lld Dirichlet rows\n", (long long)a.n, (long long)a.nnz,
           (long long)dirichlet_rows);
    int ok = coarse_grid(ctx, &a, n, vtu);
    ok &= solve(ctx, &a, n);
    free(a.rowptr);
    free(a.col);
    free(a.val);

    TRY(misgrid_context_destroy(ctx));
    int64_t live = -1;
    misgrid_handle_count(&live);
    if (live != 0) ok = 0;
    printf("check: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
