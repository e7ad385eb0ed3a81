/* The C ABI under a hostile caller: counts larger than their arrays or
 * than the machine, output pointers that fault, handle variables reused
 * after a failed call, a message read while its context is destroyed, a
 * VTU write that fails half way. Nothing may abort the process, leak a
 * handle, or destroy what the caller had. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, usleep */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"

static long maxrss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* len bytes that end where an inaccessible page begins. */
static void *edge_buffer(size_t len) {
    long pg = sysconf(_SC_PAGESIZE);
    size_t npages = (len + (size_t)pg - 1) / (size_t)pg + 1;
    char *m = mmap(NULL, npages * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    mprotect(m + (npages - 1) * (size_t)pg, (size_t)pg, PROT_NONE);
    return m + (npages - 1) * (size_t)pg - len;
}

/* Issue 24: a failing call leaves its output handle untouched, so a
 * variable holding a live handle can be reused without leaking it. */
static void test_outputs_untouched(misgrid_context ctx, int32_t *rp, int32_t *col, double *val, int64_t n, int64_t nnz) {
    misgrid_graph g = 0;
    misgrid_result r = 0;
    misgrid_solver s = 0;
    int64_t before = live_handles();
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &g));
    CHECK_OK(ctx, misgrid_mis(ctx, g, NULL, &r));
    CHECK_OK(ctx, misgrid_solver_create(ctx, NULL, &s));
    misgrid_graph g0 = g;
    misgrid_result r0 = r;
    misgrid_solver s0 = s;
    int64_t held = live_handles();
    CHECK(held == before + 3, "%lld handles, want %lld", (long long)held, (long long)before + 3);

    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 1, rp, col, MISGRID_FLOAT64, val, NULL, &g),
              MISGRID_ERR_ARG, "rowptr[0]");
    CHECK_ERR(ctx, misgrid_graph_from_coo(ctx, n, n + 1, 0, MISGRID_INT32, 0, NULL, NULL, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_ARG, "square");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TET4, 3, 1, MISGRID_INT32, 0, col, 0, NULL, NULL, &g),
              MISGRID_ERR_ARG, "nodes_per_element");
    CHECK_ERR(ctx, misgrid_result_level_graph(ctx, r, 7, &g), MISGRID_ERR_RANGE, "level = 7");
    CHECK(g == g0, "a failed call changed the graph variable");
    CHECK_ERR(ctx, misgrid_mis(ctx, g, "distance=3", &r), MISGRID_ERR_OPTION, "distance");
    CHECK_ERR(ctx, misgrid_hierarchy(ctx, 0, NULL, &r), MISGRID_ERR_NULL, "graph");
    CHECK_ERR(ctx, misgrid_aggregate(ctx, g, n - 1, NULL, &r), MISGRID_ERR_RANGE, "flags");
    CHECK(r == r0, "a failed call changed the result variable");
    CHECK_ERR(ctx, misgrid_solver_create(ctx, "smoother=bogus", &s), MISGRID_ERR_OPTION, "smoother");
    CHECK(s == s0, "a failed call changed the solver variable");
    int32_t valid = 7;
    CHECK_ERR(ctx, misgrid_verify(ctx, g, n, NULL, 1, &valid, NULL, 0), MISGRID_ERR_NULL, "flags");
    CHECK(valid == 7, "a failed verify wrote *valid = %d", valid);

    /* The variables still hold the live handles: using and destroying
     * them works, and nothing leaked. */
    int64_t nv = 0;
    CHECK_OK(ctx, misgrid_graph_size(ctx, g, &nv, NULL));
    CHECK(nv == n, "graph has %lld vertices", (long long)nv);
    CHECK(live_handles() == held, "%lld handles after the failed calls, want %lld", (long long)live_handles(), (long long)held);
    CHECK_OK(ctx, misgrid_result_destroy(ctx, r));
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g));
    CHECK_OK(ctx, misgrid_solver_destroy(ctx, s));
    CHECK(live_handles() == before, "%lld handles after destroying, want %lld", (long long)live_handles(), (long long)before);
}

/* Output pointers that fault are the caller's error (MISGRID_ERR_ARG,
 * "writing"), never MISGRID_ERR_INTERNAL, and a range that faults part
 * of the way is left untouched. */
static void test_bad_outputs(misgrid_context ctx, int32_t *rp, int32_t *col, double *val, int64_t n, int64_t nnz) {
    misgrid_graph g = 0;
    misgrid_result r = 0;
    int64_t before = live_handles();
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, (misgrid_graph *)0x8),
              MISGRID_ERR_ARG, "writing graph (output)");
    CHECK(live_handles() == before, "a graph whose handle could not be stored stays live");
    CHECK_ERR(NULL, misgrid_context_create((misgrid_context *)(uintptr_t)0xdead00000000ull), MISGRID_ERR_ARG, "writing ctx");
    CHECK(live_handles() == before, "a context whose handle could not be stored stays live");
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &g));
    CHECK_ERR(ctx, misgrid_graph_size(ctx, g, (int64_t *)0x8, NULL), MISGRID_ERR_ARG, "writing nvertices");
    CHECK_OK(ctx, misgrid_mis(ctx, g, NULL, &r));

    int32_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED, "mmap");
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, r, 0, n, ro), MISGRID_ERR_ARG, "writing flags");
    CHECK(strstr(misgrid_error_message(ctx), "read-only") != NULL, "hint: %s", misgrid_error_message(ctx));
    CHECK_ERR(ctx, misgrid_result_set_vertices(ctx, r, 0, MISGRID_INT32, 0, n, ro + 64, (int64_t *)ro), MISGRID_ERR_ARG, "writing count");
    CHECK_ERR(NULL, misgrid_handle_count((int64_t *)ro), MISGRID_ERR_ARG, "writing count");
    CHECK_ERR(ctx, misgrid_context_get_option(ctx, "threads", (char *)ro, 8), MISGRID_ERR_ARG, "writing buf");
    CHECK_ERR(NULL, misgrid_option_help((char *)ro, 100, NULL), MISGRID_ERR_ARG, "writing buf");

    /* A capacity that lies: 10 entries before a guard page, n claimed. */
    int32_t *edge = edge_buffer(10 * sizeof *edge);
    CHECK(edge != NULL, "edge buffer");
    for (int i = 0; i < 10; i++) edge[i] = 0x7f7f7f7f;
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, r, 0, n, edge), MISGRID_ERR_ARG, "writing flags");
    int touched = 0;
    for (int i = 0; i < 10; i++) touched += edge[i] != 0x7f7f7f7f;
    CHECK(touched == 0, "%d entries written by a call that failed", touched);
    munmap(ro, 4096);
    misgrid_result_destroy(ctx, r);
    misgrid_graph_destroy(ctx, g);
}

/* Counts that no array backs, or too large for the machine, are refused
 * with MISGRID_ERR_NOMEM and the bytes needed, before any allocation.
 * The address space is limited meanwhile, so that a failure of the check
 * makes this test fail instead of the machine swap. */
static void test_huge_counts(misgrid_context ctx) {
    struct rlimit old;
    getrlimit(RLIMIT_AS, &old);
    long vm_kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &vm_kb) == 1) break;
    if (f) fclose(f);
    struct rlimit lim = old;
    lim.rlim_cur = (rlim_t)vm_kb * 1024 + ((rlim_t)2 << 30);
    if (vm_kb <= 0 || setrlimit(RLIMIT_AS, &lim) != 0) {
        printf("test_huge_counts: SKIP (cannot limit the address space)\n");
        return;
    }
    misgrid_graph g = 0;
    misgrid_solver s = 0;
    int64_t rp[2] = {0, INT64_C(100000000000)};
    int64_t col[1] = {0};
    double xyz[3] = {0, 0, 0};
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, INT32_MAX, MISGRID_TET4, 4, 0, MISGRID_INT32, 0, NULL, 0, NULL, NULL, &g),
              MISGRID_ERR_NOMEM, "bytes)");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, INT32_MAX, MISGRID_TET4, 4, 0, MISGRID_INT32, 0, NULL, 3, xyz, NULL, &g),
              MISGRID_ERR_NOMEM, "needs about");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TET4, 4, INT64_C(1) << 40, MISGRID_INT32, 0, col, 0, NULL, NULL, &g),
              MISGRID_ERR_NOMEM, "needs about");
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, 1, 1, rp[1], MISGRID_INT64, 0, rp, col, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_NOMEM, "100000000000 entries");
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, INT32_MAX, INT32_MAX, 0, MISGRID_INT64, 0, rp, NULL, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_NOMEM, "address-space limit");
    CHECK_ERR(ctx, misgrid_graph_from_coo(ctx, 2, 2, rp[1], MISGRID_INT64, 0, col, col, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_NOMEM, "needs about");
    CHECK_OK(ctx, misgrid_solver_create(ctx, NULL, &s));
    CHECK_ERR(ctx, misgrid_solver_set_nullspace(ctx, s, INT64_C(10000000000), 64, xyz), MISGRID_ERR_NOMEM, "bytes)");
    CHECK_ERR(ctx, misgrid_solver_set_coordinates(ctx, s, 3, 1000000000, xyz), MISGRID_ERR_NOMEM, "bytes)");
    CHECK_ERR(ctx, misgrid_solver_setup(ctx, s, INT32_MAX, INT32_MAX, rp[1], MISGRID_INT64, 0, rp, col, MISGRID_FLOAT64, xyz),
              MISGRID_ERR_NOMEM, "needs about");
    CHECK(g == 0, "graph variable written");
    misgrid_solver_destroy(ctx, s);
    setrlimit(RLIMIT_AS, &old);
}

/* Counts within the machine but larger than their arrays: the arrays are
 * read chunk by chunk, so the call fails where the array ends, having
 * allocated about what it read, not what the count claims. */
static void test_short_arrays(misgrid_context ctx) {
    long rss0 = maxrss_kb();
    misgrid_graph g = 0;
    misgrid_solver s = 0;
    int64_t big = 40000000; /* 40M entries: 160-480 MB if allocated up front */
    int64_t rp[2] = {0, big};
    int32_t *col1 = edge_buffer(sizeof(int32_t));
    double *xyz = edge_buffer(3 * sizeof(double));
    col1[0] = 0;
    xyz[0] = xyz[1] = xyz[2] = 0;
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, 1, 1, big, MISGRID_INT64, 0, rp, col1, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_ARG, "reading colind");
    CHECK_OK(ctx, misgrid_solver_create(ctx, NULL, &s));
    CHECK_ERR(ctx, misgrid_solver_set_coordinates(ctx, s, 3, big / 3, xyz), MISGRID_ERR_ARG, "reading coords");
    CHECK_ERR(ctx, misgrid_solver_set_nullspace(ctx, s, big, 1, xyz), MISGRID_ERR_ARG, "reading vectors");
    misgrid_solver_destroy(ctx, s);
    long grown = maxrss_kb() - rss0;
    CHECK(grown < 64 * 1024, "peak RSS grew by %ld kB reading short arrays", grown);

    /* Elements without coordinates: nothing in proportion to dim*nnodes
     * (the old path allocated 3 zero coordinates per node, twice). */
    int32_t tet[4] = {0, 1, 2, 19999999};
    int64_t nn = 20000000, nv = 0, ne = 0;
    rss0 = maxrss_kb();
    CHECK_OK(ctx, misgrid_graph_from_elements(ctx, nn, MISGRID_TET4, 4, 1, MISGRID_INT32, 0, tet, 0, NULL, NULL, &g));
    grown = maxrss_kb() - rss0;
    CHECK_OK(ctx, misgrid_graph_size(ctx, g, &nv, &ne));
    CHECK(nv == nn && ne == 6, "graph of %lld vertices, %lld edges; want %lld, 6", (long long)nv, (long long)ne, (long long)nn);
    int64_t *off = malloc((size_t)(nn + 1) * sizeof *off);
    int64_t adj[12];
    CHECK_OK(ctx, misgrid_graph_adjacency(ctx, g, MISGRID_INT64, 0, off, nn + 1, adj, 12));
    CHECK(off[nn] == 12 && off[3] - off[2] == 3 && off[19999999] == 9 && adj[9] == 0 && adj[11] == 2,
          "adjacency of the spread graph: off[nn] %lld, last row starts %lld", (long long)off[nn], (long long)off[19999999]);
    free(off);
    CHECK(grown < 400 * 1024, "peak RSS grew by %ld kB for %lld nodes without coordinates", grown, (long long)nn);
    misgrid_graph_destroy(ctx, g);
}

/* Reading the message of a destroyed context gives the message of the
 * call that failed on it, and does not replace it. */
static void test_dead_context_message(misgrid_graph unused) {
    misgrid_context dead;
    int64_t nv;
    CHECK_OK(NULL, misgrid_context_create(&dead));
    CHECK_OK(NULL, misgrid_context_destroy(dead));
    CHECK_ERR(NULL, misgrid_graph_size(dead, unused, &nv, NULL), MISGRID_ERR_HANDLE, "was destroyed");
    const char *m = misgrid_error_message(dead);
    CHECK(strncmp(m, "misgrid_graph_size: ", 20) == 0, "message of the dead context: %s", m);
    CHECK(strncmp(misgrid_error_message(NULL), "misgrid_graph_size: ", 20) == 0, "global message now: %s", misgrid_error_message(NULL));
}

/* Issue 24: a context set to base 1 (the Fortran module's) numbers array
 * entries, levels and verify's vertices from 1; base 0 as C does. */
static void test_index_base(int32_t *rp, int32_t *col, double *val, int64_t n, int64_t nnz) {
    misgrid_context f;
    misgrid_graph g = 0;
    misgrid_result r = 0;
    CHECK_OK(NULL, misgrid_context_create(&f));
    CHECK_ERR(f, misgrid_context_set_index_base(f, 2), MISGRID_ERR_ARG, "base = 2");
    CHECK_ERR(f, misgrid_graph_from_csr(f, n, n, nnz, MISGRID_INT32, 1, rp, col, MISGRID_FLOAT64, val, NULL, &g),
              MISGRID_ERR_ARG, "rowptr[0] = 0, want the base 1");
    CHECK_OK(f, misgrid_context_set_index_base(f, 1));
    CHECK_ERR(f, misgrid_graph_from_csr(f, n, n, nnz, MISGRID_INT32, 1, rp, col, MISGRID_FLOAT64, val, NULL, &g),
              MISGRID_ERR_ARG, "rowptr(1) = 0, want the base 1");
    CHECK_OK(f, misgrid_graph_from_csr(f, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &g));
    CHECK_OK(f, misgrid_mis(f, g, NULL, &r));
    CHECK_ERR(f, misgrid_result_level_info(f, r, 1, NULL, NULL, NULL, NULL, NULL), MISGRID_ERR_RANGE,
              "level = 2, but the result has 1 level(s), numbered from 1");
    int32_t *flags = calloc((size_t)n, sizeof *flags), valid = 1;
    char why[256];
    flags[0] = flags[1] = 1; /* adjacent members */
    CHECK_OK(f, misgrid_verify(f, g, n, flags, 1, &valid, why, sizeof why));
    CHECK(!valid && strstr(why, "vertex 1:") && strstr(why, "(vertex 2;"), "reason in base 1: %s", why);
    CHECK_OK(f, misgrid_context_set_index_base(f, 0));
    CHECK_OK(f, misgrid_verify(f, g, n, flags, 1, &valid, why, sizeof why));
    CHECK(!valid && strstr(why, "vertex 0:") && strstr(why, "(vertex 1;"), "reason in base 0: %s", why);
    free(flags);
    misgrid_result_destroy(f, r);
    misgrid_graph_destroy(f, g);
    misgrid_context_destroy(f);
}

/* Issue 24: int64 row pointers with int32 column ids (mesh.CSR's layout)
 * in the CSR calls, without converting; other calls refuse the pair. */
static void test_mixed_index_types(misgrid_context ctx, int32_t *rp, int32_t *col, double *val, int64_t n, int64_t nnz) {
    int64_t *rp64 = malloc((size_t)(n + 1) * sizeof *rp64);
    for (int64_t i = 0; i <= n; i++) rp64[i] = rp[i];
    misgrid_graph a = 0, b = 0;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &a));
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT64_INT32, 0, rp64, col, MISGRID_FLOAT64, val, NULL, &b));
    int64_t ne = 0;
    CHECK_OK(ctx, misgrid_graph_size(ctx, a, NULL, &ne));
    int32_t *offa = malloc((size_t)(n + 1) * 4), *adja = malloc((size_t)(2 * ne) * 4), *adjb = malloc((size_t)(2 * ne) * 4);
    int64_t *offb = malloc((size_t)(n + 1) * 8);
    CHECK_OK(ctx, misgrid_graph_adjacency(ctx, a, MISGRID_INT32, 1, offa, n + 1, adja, 2 * ne));
    CHECK_OK(ctx, misgrid_graph_adjacency(ctx, b, MISGRID_INT64_INT32, 1, offb, n + 1, adjb, 2 * ne));
    int same = 1;
    for (int64_t i = 0; i <= n; i++) same &= offa[i] == offb[i];
    for (int64_t k = 0; k < 2 * ne; k++) same &= adja[k] == adjb[k];
    CHECK(same, "the graph from int64 row pointers and int32 ids differs");
    /* The row pointers are read as int64: an int32 rowptr passed as the
     * pair is caught by its first entries, not read as garbage ids. */
    rp64[n] = nnz + 1;
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT64_INT32, 0, rp64, col, MISGRID_FLOAT64, val, NULL, &b),
              MISGRID_ERR_ARG, "but nnz");
    rp64[n] = nnz;
    CHECK_ERR(ctx, misgrid_graph_from_coo(ctx, n, n, nnz, MISGRID_INT64_INT32, 0, col, col, MISGRID_PATTERN, NULL, NULL, &b),
              MISGRID_ERR_ARG, "CSR arrays only");
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, 4, 0, rp64, col, MISGRID_PATTERN, NULL, NULL, &b),
              MISGRID_ERR_ARG, "MISGRID_INT64_INT32 (3)");
    misgrid_solver s = 0;
    int32_t conv = 0;
    double *x = calloc((size_t)n, sizeof *x), *rhs = malloc((size_t)n * sizeof *rhs);
    for (int64_t i = 0; i < n; i++) rhs[i] = 1;
    CHECK_OK(ctx, misgrid_solver_create(ctx, "tol=1e-8", &s));
    CHECK_OK(ctx, misgrid_solver_setup(ctx, s, n, n, nnz, MISGRID_INT64_INT32, 0, rp64, col, MISGRID_FLOAT64, val));
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s, n, rhs, x, &conv, NULL, NULL));
    CHECK(conv == 1, "solve with int64 row pointers and int32 ids did not converge");
    misgrid_solver_destroy(ctx, s);
    misgrid_graph_destroy(ctx, a);
    misgrid_graph_destroy(ctx, b);
    free(rp64); free(offa); free(offb); free(adja); free(adjb); free(x); free(rhs);
}

static misgrid_context race_ctx;
static volatile int race_stop;
static volatile long race_null;

static void *message_reader(void *p) {
    (void)p;
    while (!race_stop) {
        const char *m = misgrid_error_message(race_ctx);
        if (m == NULL) { race_null++; continue; }
        if (strlen(m) > 4095) race_null++;
    }
    return NULL;
}

/* misgrid_error_message(ctx) while another thread destroys ctx: never
 * NULL, always a readable NUL-terminated string. */
static void test_message_race(void) {
    for (int round = 0; round < 50; round++) {
        pthread_t th[3];
        CHECK_OK(NULL, misgrid_context_create(&race_ctx));
        misgrid_context_set_error(race_ctx, MISGRID_ERR_ARG, "a message long enough to be read while it changes");
        race_stop = 0;
        for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, message_reader, NULL);
        usleep(200);
        CHECK_OK(NULL, misgrid_context_destroy(race_ctx));
        usleep(200);
        race_stop = 1;
        for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    }
    CHECK(race_null == 0, "%ld NULL or unterminated messages", race_null);
}

/* A VTU write that fails half way (the file-size limit stands in for a
 * full disk) leaves the previous file whole and no temporary file. */
static void test_vtu_atomic(misgrid_context ctx) {
    int32_t *rp, *col;
    double *val;
    int nx = 40;
    int64_t n = (int64_t)nx * nx, nnz = grid_laplacian(nx, nx, &rp, &col, &val);
    double *xy = malloc((size_t)(2 * n) * sizeof *xy);
    for (int64_t v = 0; v < n; v++) xy[2 * v] = (double)(v % nx), xy[2 * v + 1] = (double)(v / nx);
    misgrid_graph g = 0;
    misgrid_result r = 0;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &g));
    CHECK_OK(ctx, misgrid_graph_set_coordinates(ctx, g, 2, n, xy));
    CHECK_OK(ctx, misgrid_mis(ctx, g, NULL, &r));
    char dir[] = "/tmp/misgrid_vtu_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/out.vtu", dir);
    CHECK_OK(ctx, misgrid_write_vtu(ctx, g, 0, path, NULL));
    FILE *f = fopen(path, "rb");
    static char good[1 << 20], after[1 << 20];
    size_t ngood = f ? fread(good, 1, sizeof good, f) : 0;
    if (f) fclose(f);
    CHECK(ngood > 1000, "first file %zu bytes", ngood);

    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = ngood + 100; /* the second file, with the set, is larger */
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    CHECK_ERR(ctx, misgrid_write_vtu(ctx, g, r, path, NULL), MISGRID_ERR_IO, "out.vtu");
    setrlimit(RLIMIT_FSIZE, &old);
    f = fopen(path, "rb");
    size_t nafter = f ? fread(after, 1, sizeof after, f) : 0;
    if (f) fclose(f);
    CHECK(nafter == ngood && memcmp(good, after, ngood) == 0, "previous file now %zu bytes (was %zu)", nafter, ngood);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", dir);
    CHECK(system(cmd) == 0, "temporary file left in %s", dir);
    CHECK_OK(ctx, misgrid_write_vtu(ctx, g, r, path, NULL));
    remove(path);
    rmdir(dir);
    misgrid_result_destroy(ctx, r);
    misgrid_graph_destroy(ctx, g);
    free(rp); free(col); free(val); free(xy);
}

int main(void) {
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    int32_t *rp, *col;
    double *val;
    int64_t n = 6 * 5, nnz = grid_laplacian(6, 5, &rp, &col, &val);
    misgrid_graph g = 0;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, &g));
    test_outputs_untouched(ctx, rp, col, val, n, nnz);
    test_bad_outputs(ctx, rp, col, val, n, nnz);
    test_huge_counts(ctx);
    test_short_arrays(ctx);
    test_dead_context_message(g);
    test_index_base(rp, col, val, n, nnz);
    test_mixed_index_types(ctx, rp, col, val, n, nnz);
    test_message_race();
    test_vtu_atomic(ctx);
    misgrid_graph_destroy(ctx, g);
    free(rp); free(col); free(val);
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
    CHECK_HANDLES(0);
    return check_report("test_hardening");
}
