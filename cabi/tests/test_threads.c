/* Thread safety: 8 pthreads call the library at once, each with its own
 * context, first on graphs of their own and then on one shared read-only
 * graph; every result equals the single-threaded one. Then threads
 * compute on a graph another thread is changing. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { NTHREADS = 8, ROUNDS = 3, NX = 120, NY = 100 };

static int64_t n, nnz;
static int32_t *rowptr, *col;
static double *val;
static int64_t *rowptr1, *col1; /* int64, 1-based copies */
static misgrid_graph shared;
static pthread_barrier_t start;
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

/* What one run computes, compared between threads. */
struct outcome {
    int32_t *mis1, *mis2, *agg2, *colors;
    int64_t nlevels, level_sizes[32], level_sets[32];
};

static void outcome_free(struct outcome *o) {
    free(o->mis1); free(o->mis2); free(o->agg2); free(o->colors);
}

/* run computes everything on g with ctx; returns 0 on any failure. */
static int run(misgrid_context ctx, misgrid_graph g, struct outcome *o) {
    misgrid_result r;
    memset(o, 0, sizeof *o);
    o->mis1 = malloc((size_t)n * 4);
    o->mis2 = malloc((size_t)n * 4);
    o->agg2 = malloc((size_t)n * 4);
    o->colors = malloc((size_t)n * 4);
    if (misgrid_mis(ctx, g, "distance=1 priority=hash seed=3", &r)) return 0;
    if (misgrid_result_set_flags(ctx, r, 0, n, o->mis1)) return 0;
    misgrid_result_destroy(ctx, r);
    if (misgrid_mis(ctx, g, "distance=2 priority=boundary", &r)) return 0;
    if (misgrid_result_set_flags(ctx, r, 0, n, o->mis2)) return 0;
    if (misgrid_result_aggregates(ctx, r, 0, MISGRID_INT32, 0, n, o->agg2)) return 0;
    misgrid_result_destroy(ctx, r);
    if (misgrid_color(ctx, g, "priority=degree", &r)) return 0;
    if (misgrid_result_colors(ctx, r, 0, 0, n, o->colors)) return 0;
    misgrid_result_destroy(ctx, r);
    if (misgrid_hierarchy(ctx, g, "priority=boundary min_vertices=10", &r)) return 0;
    if (misgrid_result_num_levels(ctx, r, &o->nlevels) || o->nlevels > 32) return 0;
    for (int64_t l = 0; l < o->nlevels; l++)
        if (misgrid_result_level_info(ctx, r, l, &o->level_sizes[l], &o->level_sets[l], NULL, NULL, NULL)) return 0;
    misgrid_result_destroy(ctx, r);
    return 1;
}

static int same(const struct outcome *a, const struct outcome *b) {
    size_t sz = (size_t)n * 4;
    return memcmp(a->mis1, b->mis1, sz) == 0 && memcmp(a->mis2, b->mis2, sz) == 0 &&
           memcmp(a->agg2, b->agg2, sz) == 0 && memcmp(a->colors, b->colors, sz) == 0 &&
           a->nlevels == b->nlevels &&
           memcmp(a->level_sizes, b->level_sizes, sizeof a->level_sizes) == 0 &&
           memcmp(a->level_sets, b->level_sets, sizeof a->level_sets) == 0;
}

static struct outcome reference;

struct job {
    int id;
    int failures;
    char why[512];
};

static void fail(struct job *j, const char *what, misgrid_context ctx) {
    pthread_mutex_lock(&fail_mu);
    if (!j->failures++) snprintf(j->why, sizeof j->why, "%s: %s", what, ctx ? misgrid_error_message(ctx) : "");
    pthread_mutex_unlock(&fail_mu);
}

/* thread_context gives a thread its own context, 0 when it cannot be
 * made (a failure of j), and waits for the others: the threads of a test
 * start their calls together, so that they overlap. */
static misgrid_context thread_context(struct job *j) {
    misgrid_context ctx = 0;
    if (misgrid_context_create(&ctx)) fail(j, "context_create", NULL);
    pthread_barrier_wait(&start);
    return ctx;
}

static void *worker(void *arg) {
    struct job *j = arg;
    misgrid_context ctx;
    if (misgrid_context_create(&ctx)) {
        fail(j, "context_create", NULL);
        return NULL;
    }
    char opt[64];
    snprintf(opt, sizeof opt, "threads=%d", 1 + j->id % 4);
    if (misgrid_context_set_option(ctx, opt)) fail(j, "set_option", ctx);
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        /* Own graph, built from a different index form on odd threads. */
        misgrid_graph g;
        misgrid_status st = j->id % 2
            ? misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT64, 1, rowptr1, col1, MISGRID_FLOAT64, val, NULL, &g)
            : misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rowptr, col, MISGRID_FLOAT64, val, NULL, &g);
        if (st) {
            fail(j, "graph_from_csr", ctx);
            break;
        }
        struct outcome o;
        if (!run(ctx, g, &o)) fail(j, "run on own graph", ctx);
        else if (!same(&o, &reference)) fail(j, "own graph: result differs from single-threaded", NULL);
        outcome_free(&o);
        misgrid_graph_destroy(ctx, g);

        /* The shared graph. */
        if (!run(ctx, shared, &o)) fail(j, "run on shared graph", ctx);
        else if (!same(&o, &reference)) fail(j, "shared graph: result differs from single-threaded", NULL);
        outcome_free(&o);

        /* Each context keeps its own message while others fail too. */
        char bad[64], want[64];
        snprintf(bad, sizeof bad, "thread%d_round%d=1", j->id, round);
        snprintf(want, sizeof want, "\"thread%d_round%d\"", j->id, round);
        if (misgrid_context_set_option(ctx, bad) != MISGRID_ERR_OPTION) fail(j, "bad option accepted", ctx);
        char msg[512];
        misgrid_error_message_copy(ctx, msg, sizeof msg, NULL);
        if (!strstr(msg, want)) fail(j, "message of another thread", ctx);
    }
    misgrid_context_destroy(ctx);
    return NULL;
}

/* spawn starts count threads, fn on jobs 0..count-2 and last (fn when
 * NULL) on the last, all waiting at the start barrier, which extra more
 * threads (the caller) pass too; reap joins them and checks their jobs. */
static void spawn(pthread_t *th, struct job *jobs, int count, int extra, void *(*fn)(void *), void *(*last)(void *)) {
    pthread_barrier_init(&start, NULL, (unsigned)(count + extra));
    for (int i = 0; i < count; i++) {
        jobs[i].id = i;
        jobs[i].failures = 0;
        jobs[i].why[0] = 0;
        CHECK(pthread_create(&th[i], NULL, i == count - 1 && last ? last : fn, &jobs[i]) == 0, "pthread_create %d", i);
    }
}

static void reap(pthread_t *th, struct job *jobs, int count, const char *what) {
    for (int i = 0; i < count; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < count; i++)
        CHECK(jobs[i].failures == 0, "%s, thread %d: %d failures, first: %s", what, i, jobs[i].failures, jobs[i].why);
    pthread_barrier_destroy(&start);
}

/* The audit's threads_mutate_graph case: one thread switches a shared
 * graph's classes between two arrays while others compute its MIS with
 * boundary priority. A call works on the graph as it was when it started
 * (the handle holds a snapshot), so every set is the set of one of the
 * two class arrays, never a mix, and nothing races. */
enum { SETS = 15, READERS = 3 };
static int32_t *classes[2], *want[2];
static misgrid_graph mutated;
static int readers_done; /* under fail_mu */

static int all_read(void) {
    pthread_mutex_lock(&fail_mu);
    int done = readers_done == READERS;
    pthread_mutex_unlock(&fail_mu);
    return done;
}

/* Switches the classes until every reader is done. */
static void *mutator(void *arg) {
    struct job *j = arg;
    misgrid_context ctx = thread_context(j);
    for (int i = 0; ctx && !all_read(); i++)
        if (misgrid_graph_set_classes(ctx, mutated, n, classes[i % 2])) fail(j, "set_classes", ctx);
    if (ctx) misgrid_context_destroy(ctx);
    return NULL;
}

static void *reader(void *arg) {
    struct job *j = arg;
    int32_t *got = malloc((size_t)n * 4);
    misgrid_context ctx = thread_context(j);
    for (int i = 0; ctx && i < SETS; i++) {
        misgrid_result r;
        if (misgrid_mis(ctx, mutated, "distance=2 priority=boundary", &r) ||
            misgrid_result_set_flags(ctx, r, 0, n, got)) {
            fail(j, "mis on the mutated graph", ctx);
            break;
        }
        misgrid_result_destroy(ctx, r);
        if (memcmp(got, want[0], (size_t)n * 4) && memcmp(got, want[1], (size_t)n * 4))
            fail(j, "a set of neither class array", NULL);
    }
    free(got);
    if (ctx) misgrid_context_destroy(ctx);
    pthread_mutex_lock(&fail_mu);
    readers_done++;
    pthread_mutex_unlock(&fail_mu);
    return NULL;
}

static void test_mutation(misgrid_context ctx) {
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rowptr, col, MISGRID_FLOAT64, val, NULL,
                                         &mutated));
    for (int k = 0; k < 2; k++) {
        classes[k] = malloc((size_t)n * 4);
        want[k] = malloc((size_t)n * 4);
        for (int64_t v = 0; v < n; v++) classes[k][v] = (int32_t)((v * (k + 3) / 7) % 4);
        misgrid_result r;
        CHECK_OK(ctx, misgrid_graph_set_classes(ctx, mutated, n, classes[k]));
        CHECK_OK(ctx, misgrid_mis(ctx, mutated, "distance=2 priority=boundary", &r));
        CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, n, want[k]));
        misgrid_result_destroy(ctx, r);
    }
    CHECK(memcmp(want[0], want[1], (size_t)n * 4) != 0, "the two class arrays give one set");
    pthread_t th[READERS + 1];
    struct job jobs[READERS + 1];
    spawn(th, jobs, READERS + 1, 0, reader, mutator);
    reap(th, jobs, READERS + 1, "classes changed mid-run");
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, mutated));
    for (int k = 0; k < 2; k++) {
        free(classes[k]);
        free(want[k]);
    }
}

/* The audit's threads_destroy_graph and threads_destroy_ctx cases: a
 * graph, or a context, is destroyed while other threads compute with it.
 * Every call either gives the set it gives alone or fails with
 * MISGRID_ERR_HANDLE, and each thread sees the failure once the handle
 * is gone; the results go through each thread's own context. */
static misgrid_graph doomed_graph;
static misgrid_context doomed_ctx;

static void *doomed_user(void *arg) {
    struct job *j = arg;
    int32_t *got = malloc((size_t)n * 4);
    misgrid_context own = thread_context(j);
    int ended = 0;
    for (int i = 0; own && i < 100000 && !ended; i++) {
        misgrid_result r;
        misgrid_status st = misgrid_mis(doomed_ctx ? doomed_ctx : own, doomed_ctx ? shared : doomed_graph,
                                        "distance=2 priority=boundary", &r);
        if (st == MISGRID_ERR_HANDLE) {
            ended = 1;
        } else if (st != MISGRID_OK) {
            fail(j, "mis while a handle is destroyed", own);
            break;
        } else {
            if (misgrid_result_set_flags(own, r, 0, n, got)) fail(j, "set_flags", own);
            else if (memcmp(got, reference.mis2, (size_t)n * 4)) fail(j, "a set unlike the single-threaded one", NULL);
            misgrid_result_destroy(own, r);
        }
    }
    if (own && !ended) fail(j, "the destroyed handle kept working", NULL);
    free(got);
    if (own) misgrid_context_destroy(own);
    return NULL;
}

static void test_destroy_midway(int context) {
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    doomed_ctx = 0;
    if (context) CHECK_OK(NULL, misgrid_context_create(&doomed_ctx));
    else CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rowptr, col, MISGRID_FLOAT64, val,
                                              NULL, &doomed_graph));
    pthread_t th[READERS];
    struct job jobs[READERS];
    spawn(th, jobs, READERS, 1, doomed_user, NULL);
    pthread_barrier_wait(&start);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    if (context) CHECK_OK(NULL, misgrid_context_destroy(doomed_ctx));
    else CHECK_OK(ctx, misgrid_graph_destroy(ctx, doomed_graph));
    reap(th, jobs, READERS, context ? "context destroyed mid-run" : "graph destroyed mid-run");
    CHECK_OK(NULL, misgrid_context_destroy(ctx));
}

/* The audit's threads_solver case: threads solve with one solver, whose
 * calls take turns, while it is destroyed: each solve converges in the
 * iterations of a solve alone, or fails with MISGRID_ERR_HANDLE. */
static misgrid_solver doomed_solver;
static int64_t solo_its;

static void *solver_user(void *arg) {
    struct job *j = arg;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int64_t v = 0; v < n; v++) b[v] = 1;
    misgrid_context own = thread_context(j);
    int ended = 0;
    for (int i = 0; own && i < 100000 && !ended; i++) {
        int32_t conv = 0;
        int64_t its = 0;
        double res = 0;
        memset(x, 0, (size_t)n * sizeof *x);
        misgrid_status st = misgrid_solver_solve(own, doomed_solver, n, b, x, &conv, &its, &res);
        if (st == MISGRID_ERR_HANDLE) ended = 1;
        else if (st != MISGRID_OK || !conv || its != solo_its) {
            fail(j, "solve while the solver is destroyed", own);
            break;
        }
    }
    if (own && !ended) fail(j, "the destroyed solver kept working", NULL);
    free(b);
    free(x);
    if (own) misgrid_context_destroy(own);
    return NULL;
}

static void test_solver_destroyed(misgrid_context ctx) {
    CHECK_OK(ctx, misgrid_solver_create(ctx, "tol=1e-8", &doomed_solver));
    CHECK_OK(ctx, misgrid_solver_setup(ctx, doomed_solver, n, n, nnz, MISGRID_INT32, 0, rowptr, col, MISGRID_FLOAT64, val));
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (int64_t v = 0; v < n; v++) b[v] = 1;
    int32_t conv = 0;
    double res = 0;
    CHECK_OK(ctx, misgrid_solver_solve(ctx, doomed_solver, n, b, x, &conv, &solo_its, &res));
    CHECK(conv, "the solve alone did not converge");
    free(b);
    free(x);
    pthread_t th[READERS];
    struct job jobs[READERS];
    spawn(th, jobs, READERS, 1, solver_user, NULL);
    pthread_barrier_wait(&start);
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, doomed_solver));
    reap(th, jobs, READERS, "solver destroyed mid-run");
}

int main(void) {
    n = (int64_t)NX * NY;
    nnz = grid_laplacian(NX, NY, &rowptr, &col, &val);
    rowptr1 = malloc((size_t)(n + 1) * 8);
    col1 = malloc((size_t)nnz * 8);
    for (int64_t i = 0; i <= n; i++) rowptr1[i] = rowptr[i] + 1;
    for (int64_t k = 0; k < nnz; k++) col1[k] = col[k] + 1;

    /* The single-threaded reference: one thread, one goroutine. */
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    CHECK_OK(ctx, misgrid_context_set_option(ctx, "threads=1"));
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rowptr, col, MISGRID_FLOAT64, val, NULL, &shared));
    CHECK(run(ctx, shared, &reference), "reference run: %s", misgrid_error_message(ctx));
    CHECK(reference.nlevels >= 3, "reference hierarchy has %lld levels", (long long)reference.nlevels);

    pthread_t th[NTHREADS];
    struct job jobs[NTHREADS];
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i].id = i;
        jobs[i].failures = 0;
        jobs[i].why[0] = 0;
        CHECK(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0, "pthread_create %d", i);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++)
        CHECK(jobs[i].failures == 0, "thread %d: %d failures, first: %s", i, jobs[i].failures, jobs[i].why);
    pthread_barrier_destroy(&start);
    test_mutation(ctx);
    test_destroy_midway(0);
    test_destroy_midway(1);
    test_solver_destroyed(ctx);

    CHECK_OK(ctx, misgrid_graph_destroy(ctx, shared));
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
    CHECK_HANDLES(0);
    outcome_free(&reference);
    free(rowptr); free(col); free(val); free(rowptr1); free(col1);
    printf("test_threads: %d threads x %d rounds on %lld vertices\n", NTHREADS, ROUNDS, (long long)n);
    return check_report("test_threads");
}
