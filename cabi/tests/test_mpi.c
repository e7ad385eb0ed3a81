/* misgrid_mis_distributed under mpirun: each rank passes its block of a
 * grid graph's rows; the gathered flags must be the set misgrid_mis
 * returns for the whole graph, for any number of ranks; bad input on one
 * rank is an error on every rank. Run with mpirun -n 1, 2, 4. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, nranks;

/* A grid graph: nx*ny*nz points, each adjacent to the points within one
 * step in every coordinate (box stencil: 9-point in 2D, 27 in 3D) or only
 * along the axes (5/7-point). CSR, 0-based, int64, with the diagonal. */
typedef struct {
    int64_t n, nnz;
    int64_t *rowptr, *col;
} csr;

static csr grid(int nx, int ny, int nz, int box) {
    csr g;
    g.n = (int64_t)nx * ny * nz;
    g.rowptr = malloc((size_t)(g.n + 1) * sizeof *g.rowptr);
    g.col = malloc((size_t)(27 * g.n) * sizeof *g.col);
    int64_t k = 0, v = 0;
    g.rowptr[0] = 0;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++, v++) {
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int X = x + dx, Y = y + dy, Z = z + dz;
                            if (X < 0 || Y < 0 || Z < 0 || X >= nx || Y >= ny || Z >= nz) continue;
                            if (!box && abs(dx) + abs(dy) + abs(dz) > 1) continue;
                            g.col[k++] = ((int64_t)Z * ny + Y) * nx + X;
                        }
                g.rowptr[v + 1] = k;
            }
    g.nnz = k;
    return g;
}

/* The block of rank r of n rows: uneven on purpose (the last rank gets
 * nothing when there are several), so empty ranks are covered. */
static void block(int64_t n, int r, int size, int uneven, int64_t *first, int64_t *count) {
    int parts = (uneven && size > 1) ? size - 1 : size;
    if (r >= parts) { *first = n; *count = 0; return; }
    *first = n * r / parts;
    *count = n * (r + 1) / parts - *first;
}

/* Runs the distributed MIS on comm and returns the whole set's flags
 * (gathered), or NULL on error (the status in *st). */
static int32_t *run(misgrid_context ctx, MPI_Comm comm, const csr *g, int base, int itype,
                    int uneven, const char *opts, misgrid_status *st, int64_t *size) {
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int64_t first, cnt;
    block(g->n, r, p, uneven, &first, &cnt);
    int64_t k0 = g->rowptr[first], nnz = g->rowptr[first + cnt] - k0;
    void *rp, *ci;
    if (itype == MISGRID_INT64) {
        int64_t *a = malloc((size_t)(cnt + 1) * sizeof *a), *b = malloc((size_t)(nnz + 1) * sizeof *b);
        for (int64_t i = 0; i <= cnt; i++) a[i] = g->rowptr[first + i] - k0 + base;
        for (int64_t i = 0; i < nnz; i++) b[i] = g->col[k0 + i] + base;
        rp = a, ci = b;
    } else {
        int32_t *a = malloc((size_t)(cnt + 1) * sizeof *a), *b = malloc((size_t)(nnz + 1) * sizeof *b);
        for (int64_t i = 0; i <= cnt; i++) a[i] = (int32_t)(g->rowptr[first + i] - k0 + base);
        for (int64_t i = 0; i < nnz; i++) b[i] = (int32_t)(g->col[k0 + i] + base);
        rp = a, ci = b;
    }
    int32_t *mine = malloc((size_t)(cnt + 1) * sizeof *mine);
    int64_t rounds = -1;
    *st = misgrid_mis_distributed(ctx, &comm, g->n, first + base, cnt, nnz, itype, base, rp, ci,
                                  NULL, opts, mine, size, &rounds);
    free(rp);
    free(ci);
    if (*st != MISGRID_OK) { free(mine); return NULL; }
    CHECK(rounds > 0 || g->n == 0, "rounds = %lld", (long long)rounds);
    int *counts = malloc((size_t)p * sizeof *counts), *displs = malloc((size_t)p * sizeof *displs);
    for (int q = 0; q < p; q++) {
        int64_t f, c;
        block(g->n, q, p, uneven, &f, &c);
        counts[q] = (int)c;
        displs[q] = (int)f;
    }
    int32_t *all = malloc((size_t)g->n * sizeof *all);
    MPI_Allgatherv(mine, (int)cnt, MPI_INT32_T, all, counts, displs, MPI_INT32_T, comm);
    free(counts);
    free(displs);
    free(mine);
    return all;
}

/* The set misgrid_mis returns for the whole graph. */
static int32_t *serial(misgrid_context ctx, const csr *g, const char *opts, misgrid_graph *out) {
    misgrid_graph gr = 0;
    misgrid_result res = 0;
    int32_t *flags = malloc((size_t)g->n * sizeof *flags);
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, g->n, g->n, g->nnz, MISGRID_INT64, 0, g->rowptr, g->col,
                                         MISGRID_PATTERN, NULL, NULL, &gr));
    CHECK_OK(ctx, misgrid_mis(ctx, gr, opts, &res));
    CHECK_OK(ctx, misgrid_result_set_flags(ctx, res, 0, g->n, flags));
    misgrid_result_destroy(ctx, res);
    if (out) *out = gr; else misgrid_graph_destroy(ctx, gr);
    return flags;
}

static void identical(misgrid_context ctx, MPI_Comm comm, const char *name, const csr *g,
                      const char *opts, int base, int itype, int uneven) {
    misgrid_status st;
    int64_t size = -1;
    int32_t *all = run(ctx, comm, g, base, itype, uneven, opts, &st, &size);
    CHECK(st == MISGRID_OK, "%s \"%s\": %s: %s", name, opts, misgrid_status_string(st),
          misgrid_error_message(ctx));
    if (!all) return;
    int32_t *want = serial(ctx, g, opts, NULL);
    int64_t diff = -1, count = 0;
    for (int64_t v = 0; v < g->n; v++) {
        count += all[v];
        if (all[v] != want[v] && diff < 0) diff = v;
    }
    CHECK(diff < 0, "%s \"%s\" on %d ranks: vertex %lld differs from misgrid_mis", name, opts, nranks,
          (long long)diff);
    CHECK(size == count, "%s: set_size %lld, flags count %lld", name, (long long)size, (long long)count);
    free(all);
    free(want);
}

/* Every rank gets an error status; the bad rank's message contains
 * fragment, the others' "invalid". */
static void all_fail(misgrid_context ctx, const char *name, misgrid_status st, int bad_rank,
                     const char *fragment) {
    const char *m = misgrid_error_message(ctx);
    int ok = st != MISGRID_OK && (rank != bad_rank || strstr(m, fragment) != NULL);
    CHECK(ok, "%s: rank %d got %s \"%s\" (want an error%s%s)", name, rank, misgrid_status_string(st), m,
          rank == bad_rank ? " with " : "", rank == bad_rank ? fragment : "");
}

static void test_errors(misgrid_context ctx, const csr *g) {
    int bad = nranks - 1;
    int64_t first, cnt;
    block(g->n, rank, nranks, 0, &first, &cnt);
    int64_t k0 = g->rowptr[first], nnz = g->rowptr[first + cnt] - k0;
    int64_t *rp = malloc((size_t)(cnt + 1) * sizeof *rp), *ci = malloc((size_t)(nnz + 1) * sizeof *ci);
    for (int64_t i = 0; i <= cnt; i++) rp[i] = g->rowptr[first + i] - k0;
    for (int64_t i = 0; i < nnz; i++) ci[i] = g->col[k0 + i];
    int32_t *flags = malloc((size_t)(cnt + 1) * sizeof *flags);
    MPI_Comm comm = MPI_COMM_WORLD;
    misgrid_status st;

    /* A column id out of range on the last rank. */
    int64_t keep = ci[nnz / 2];
    if (rank == bad) ci[nnz / 2] = g->n;
    st = misgrid_mis_distributed(ctx, &comm, g->n, first, cnt, nnz, MISGRID_INT64, 0, rp, ci, NULL,
                                 "distance=2", flags, NULL, NULL);
    all_fail(ctx, "bad column id", st, bad, "colind[");
    if (rank != bad) CHECK(strstr(misgrid_error_message(ctx), "invalid") != NULL, "%s", misgrid_error_message(ctx));
    ci[nnz / 2] = keep;

    /* Blocks that do not tile the rows. */
    st = misgrid_mis_distributed(ctx, &comm, g->n, rank == 0 ? 1 : first, rank == 0 ? cnt - 1 : cnt,
                                 rank == 0 ? nnz - (rp[1] - rp[0]) : nnz, MISGRID_INT64, 0,
                                 rank == 0 ? rp + 1 : rp, ci, NULL, "", flags, NULL, NULL);
    /* rank 0's rowptr no longer starts at 0: its own error comes first. */
    all_fail(ctx, "shifted block", st, 0, "rowptr[0]");

    /* Blocks that end short of nglobal: the same verdict on every rank. */
    st = misgrid_mis_distributed(ctx, &comm, g->n + 1, first, cnt, nnz, MISGRID_INT64, 0, rp, ci, NULL, "",
                                 flags, NULL, NULL);
    all_fail(ctx, "blocks short of nglobal", st, rank, "end at row");

    /* A row count so large that first + nlocal overflows: a range error,
     * not an allocation of its size. */
    st = misgrid_mis_distributed(ctx, &comm, g->n, first, INT64_MAX - first, nnz, MISGRID_INT64, 0, rp, ci, NULL,
                                 "", flags, NULL, NULL);
    all_fail(ctx, "nlocal overflowing", st, rank, "pass the last row");

    /* A bad option on one rank. */
    st = misgrid_mis_distributed(ctx, &comm, g->n, first, cnt, nnz, MISGRID_INT64, 0, rp, ci, NULL,
                                 rank == bad ? "timeout=-1" : "timeout=30", flags, NULL, NULL);
    all_fail(ctx, "bad option", st, bad, "timeout");

    if (nranks > 1) {
        /* Ranks that disagree on the distance. */
        st = misgrid_mis_distributed(ctx, &comm, g->n, first, cnt, nnz, MISGRID_INT64, 0, rp, ci, NULL,
                                     rank == 1 ? "distance=2" : "distance=1", flags, NULL, NULL);
        all_fail(ctx, "disagreeing options", st, 0, "disagree on distance");
        /* Blocks out of rank order. */
        int64_t f2 = rank == 0 ? g->n - cnt : first;
        st = misgrid_mis_distributed(ctx, &comm, g->n, f2, cnt, nnz, MISGRID_INT64, 0, rp, ci, NULL, "",
                                     flags, NULL, NULL);
        CHECK(st != MISGRID_OK, "blocks out of order: %s", misgrid_status_string(st));
    }
    /* No MPI communicator. */
    CHECK_ERR(ctx, misgrid_mis_distributed(ctx, NULL, g->n, first, cnt, nnz, MISGRID_INT64, 0, rp, ci,
                                           NULL, "", flags, NULL, NULL), MISGRID_ERR_NULL, "&comm");
    /* The caller's communicator still works after all that. */
    int one = 1, sum = 0;
    CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && sum == nranks,
          "MPI_COMM_WORLD after the errors: sum %d", sum);
    free(rp);
    free(ci);
    free(flags);
}

/* One rank returns early (no communicator: it cannot take part in
 * anything); the others must fail within their timeout instead of
 * blocking in the communicator's duplication. On a communicator of its
 * own, which the early rank then joins with MPI_Comm_dup, so that the
 * others' abandoned duplication completes and nothing hangs at exit. */
static void test_early_return(misgrid_context ctx, const csr *g) {
    if (nranks < 2) return;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int early = nranks - 1;
    int64_t first, cnt;
    block(g->n, rank, nranks, 0, &first, &cnt);
    int64_t k0 = g->rowptr[first], nnz = g->rowptr[first + cnt] - k0;
    int64_t *rp = malloc((size_t)(cnt + 1) * sizeof *rp);
    for (int64_t i = 0; i <= cnt; i++) rp[i] = g->rowptr[first + i] - k0;
    int32_t *flags = malloc((size_t)(cnt + 1) * sizeof *flags);
    double t0 = MPI_Wtime();
    misgrid_status st = misgrid_mis_distributed(ctx, rank == early ? NULL : &comm, g->n, first, cnt, nnz,
                                                MISGRID_INT64, 0, rp, g->col + k0, NULL, "timeout=2", flags,
                                                NULL, NULL);
    double dt = MPI_Wtime() - t0;
    if (rank == early) {
        CHECK(st == MISGRID_ERR_NULL, "early rank: %s", misgrid_error_message(ctx));
        /* Join the duplication only once the others gave up on it. */
        for (int q = 0; q < nranks - 1; q++)
            MPI_Recv(NULL, 0, MPI_BYTE, q, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm joined;
        MPI_Comm_dup(comm, &joined);
        MPI_Comm_free(&joined);
    } else {
        CHECK(st == MISGRID_ERR_ARG && strstr(misgrid_error_message(ctx), "did every rank call") != NULL,
              "rank %d, a rank returned early: %s \"%s\"", rank, misgrid_status_string(st), misgrid_error_message(ctx));
        CHECK(dt >= 1.5 && dt < 5, "rank %d returned after %.2fs with timeout=2", rank, dt);
        MPI_Send(NULL, 0, MPI_BYTE, early, 99, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(rp);
    free(flags);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    misgrid_context ctx = 0;
    CHECK_OK(ctx, misgrid_context_create(&ctx));
    int64_t handles0 = live_handles();

    csr g2 = grid(37, 23, 1, 0), g2b = grid(29, 31, 1, 1), g3 = grid(9, 8, 7, 1), g3s = grid(11, 10, 9, 0);
    const char *opts[] = {"distance=1", "distance=2", "distance=1, seed=7", "distance=2, priority=boundary",
                          "distance=1, priority=degree", "distance=2, priority=degree, seed=3"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        identical(ctx, MPI_COMM_WORLD, "2D 5-point", &g2, opts[i], 0, MISGRID_INT64, 0);
        identical(ctx, MPI_COMM_WORLD, "2D 9-point", &g2b, opts[i], 1, MISGRID_INT32, 1);
        identical(ctx, MPI_COMM_WORLD, "3D 27-point", &g3, opts[i], 0, MISGRID_INT32, i % 2);
        identical(ctx, MPI_COMM_WORLD, "3D 7-point", &g3s, opts[i], 1, MISGRID_INT64, 0);
    }

    /* A communicator of the caller's own: half the ranks each. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    identical(ctx, half, "3D 27-point on a split communicator", &g3, "distance=2, seed=11", 0, MISGRID_INT64, 0);
    MPI_Comm_free(&half);

    /* ADMMA: a valid MIS, not necessarily the greedy one. */
    {
        misgrid_status st;
        int64_t size = 0;
        int32_t *all = run(ctx, MPI_COMM_WORLD, &g3, 0, MISGRID_INT64, 0, "mode=admma", &st, &size);
        CHECK(st == MISGRID_OK, "admma: %s", misgrid_error_message(ctx));
        if (all) {
            misgrid_graph gr;
            int32_t valid = 0;
            char why[256];
            free(serial(ctx, &g3, "", &gr));
            CHECK_OK(ctx, misgrid_verify(ctx, gr, g3.n, all, 1, &valid, why, sizeof why));
            CHECK(valid, "admma set: %s", why);
            misgrid_graph_destroy(ctx, gr);
            free(all);
        }
    }

    test_errors(ctx, &g3);
    test_early_return(ctx, &g3);

    CHECK_HANDLES(handles0);
    misgrid_context_destroy(ctx);

    /* Every rank's failures count: the job fails when any rank's does. */
    int failed = check_failed, anyfail = 0, checks = check_count, allchecks = 0;
    MPI_Allreduce(&failed, &anyfail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &allchecks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_mpi (%d ranks): %d checks, %d failed\n", nranks, allchecks, anyfail);
    MPI_Finalize();
    return anyfail ? 1 : 0;
}
