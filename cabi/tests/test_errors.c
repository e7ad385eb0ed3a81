/* Bad input from C: every call fails with the right status and a message
 * that names the problem, and nothing crashes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static misgrid_graph small_graph(misgrid_context ctx, int32_t **rp, int32_t **col, double **val, int64_t *n, int64_t *nnz) {
    misgrid_graph g = 0;
    *n = 6 * 5;
    *nnz = grid_laplacian(6, 5, rp, col, val);
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, *n, *n, *nnz, MISGRID_INT32, 0, *rp, *col, MISGRID_FLOAT64, *val, NULL, &g));
    return g;
}

static void test_handles(misgrid_context ctx, misgrid_graph g) {
    misgrid_result r = 0;
    int64_t nv;

    CHECK_ERR(NULL, misgrid_graph_size(NULL, g, &nv, NULL), MISGRID_ERR_NULL, "ctx (misgrid_context) is NULL");
    CHECK_ERR(ctx, misgrid_graph_size(ctx, NULL, &nv, NULL), MISGRID_ERR_NULL, "graph (misgrid_graph) is NULL");

    /* A graph where a context belongs, and the other way round. */
    CHECK_ERR(NULL, misgrid_graph_size((misgrid_context)g, g, &nv, NULL), MISGRID_ERR_HANDLE,
              "ctx is a misgrid_graph handle, but a misgrid_context is needed");
    CHECK_ERR(ctx, misgrid_mis(ctx, (misgrid_graph)ctx, NULL, &r), MISGRID_ERR_HANDLE, "is a misgrid_context handle");

    /* Garbage and forged handles are recognised without being touched. */
    CHECK_ERR(ctx, misgrid_graph_size(ctx, (misgrid_graph)(uintptr_t)0x12345678, &nv, NULL), MISGRID_ERR_HANDLE,
              "is not a misgrid handle");
    CHECK_ERR(ctx, misgrid_graph_size(ctx, (misgrid_graph)(uintptr_t)0xC2000000FFFFFFF0ull, &nv, NULL),
              MISGRID_ERR_HANDLE, "not a handle this library issued");

    /* A destroyed graph, and destroying twice. */
    misgrid_graph g2;
    CHECK_OK(ctx, misgrid_result_level_graph(ctx, 0, 0, &g2) == MISGRID_ERR_NULL ? MISGRID_OK : MISGRID_ERR_INTERNAL);
    CHECK_OK(ctx, misgrid_mis(ctx, g, NULL, &r));
    CHECK_OK(ctx, misgrid_result_level_graph(ctx, r, 0, &g2));
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g2));
    CHECK_ERR(ctx, misgrid_graph_size(ctx, g2, &nv, NULL), MISGRID_ERR_HANDLE, "was destroyed");
    CHECK_ERR(ctx, misgrid_graph_destroy(ctx, g2), MISGRID_ERR_HANDLE, "was destroyed");
    CHECK_OK(ctx, misgrid_result_destroy(ctx, r));
    CHECK_ERR(ctx, misgrid_result_num_levels(ctx, r, &nv), MISGRID_ERR_HANDLE, "was destroyed");

    /* A destroyed context: its calls report into the global message. */
    misgrid_context dead;
    CHECK_OK(NULL, misgrid_context_create(&dead));
    CHECK_OK(NULL, misgrid_context_destroy(dead));
    CHECK_ERR(NULL, misgrid_graph_size(dead, g, &nv, NULL), MISGRID_ERR_HANDLE, "ctx = 0xc1");
    CHECK(strstr(misgrid_error_message(dead), "was destroyed") != NULL, "message for a dead context: %s",
          misgrid_error_message(dead));
    CHECK_ERR(NULL, misgrid_context_destroy(dead), MISGRID_ERR_HANDLE, "was destroyed");
    CHECK_ERR(NULL, misgrid_context_create(NULL), MISGRID_ERR_NULL, "ctx (output) is NULL");
}

static void test_messages(misgrid_context ctx) {
    misgrid_context other;
    CHECK_OK(NULL, misgrid_context_create(&other));
    CHECK_ERR(ctx, misgrid_context_set_option(ctx, "bogus=1"), MISGRID_ERR_OPTION, "bogus");
    CHECK_ERR(other, misgrid_context_set_option(other, "threads=-1"), MISGRID_ERR_OPTION, "threads");
    /* Each context keeps its own message. */
    CHECK(strstr(misgrid_error_message(ctx), "bogus") != NULL, "ctx message: %s", misgrid_error_message(ctx));
    CHECK(strstr(misgrid_error_message(ctx), "misgrid_context_set_option: ") == misgrid_error_message(ctx),
          "message starts with the function: %s", misgrid_error_message(ctx));
    /* A successful call leaves the message of the last failure. */
    CHECK_OK(other, misgrid_context_set_option(other, "threads=1"));
    CHECK(strstr(misgrid_error_message(other), "threads") != NULL, "other message: %s", misgrid_error_message(other));
    char tiny[5];
    int64_t need = 0;
    CHECK_OK(other, misgrid_error_message_copy(other, tiny, sizeof tiny, &need));
    CHECK(strlen(tiny) == 4 && need == (int64_t)strlen(misgrid_error_message(other)) + 1, "truncated copy \"%s\"", tiny);
    /* Failures of the copy itself go to the global message, so that the
     * context's message survives. */
    CHECK_ERR(NULL, misgrid_error_message_copy(other, NULL, 10, NULL), MISGRID_ERR_NULL, "buf is NULL");
    CHECK_ERR(NULL, misgrid_error_message_copy(other, tiny, -1, NULL), MISGRID_ERR_RANGE, "negative");
    CHECK(strstr(misgrid_error_message(other), "threads") != NULL, "other message: %s", misgrid_error_message(other));
    misgrid_context_destroy(other);
}

static void test_csr_input(misgrid_context ctx, int32_t *rp, int32_t *col, double *val, int64_t n, int64_t nnz) {
    misgrid_graph g = 0;
#define CSR(nr, nc, nz, it, b, r, c, vt, v, o) misgrid_graph_from_csr(ctx, nr, nc, nz, it, b, r, c, vt, v, o, &g)
    CHECK_ERR(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL, NULL),
              MISGRID_ERR_NULL, "graph (output) is NULL");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, NULL, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_NULL, "rowptr is NULL");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, NULL, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_NULL, "colind is NULL");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, NULL, NULL), MISGRID_ERR_NULL, "values is NULL");
    CHECK(g == 0, "failed call left a handle");
    CHECK_ERR(ctx, CSR(-1, -1, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_RANGE, "negative");
    CHECK_ERR(ctx, CSR(n, n + 1, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_ARG, "square");
    CHECK_ERR(ctx, CSR(INT64_C(1) << 40, INT64_C(1) << 40, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL),
              MISGRID_ERR_RANGE, "exceeds");
    CHECK_ERR(ctx, CSR(n, n, -3, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_RANGE, "nnz = -3 is negative");
    CHECK_ERR(ctx, CSR(n, n, INT64_MAX, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_RANGE, "too large");
    CHECK_ERR(ctx, CSR(n, n, nnz - 1, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_ARG, "but nnz =");
    CHECK_ERR(ctx, CSR(n, n, nnz, 4, 0, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_ARG, "index_type = 4");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 2, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_ARG, "base = 2");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, col, 9, val, NULL), MISGRID_ERR_ARG, "value_type = 9");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_PATTERN, val, NULL), MISGRID_ERR_ARG, "values is not NULL");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, "distance=2"), MISGRID_ERR_OPTION,
              "does not apply here");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, "theta=2"), MISGRID_ERR_OPTION, "theta");

    /* 0-based arrays passed as 1-based: rowptr[0] is 0, not the base. */
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 1, rp, col, MISGRID_FLOAT64, val, NULL), MISGRID_ERR_ARG, "rowptr[0] = 0, want the base 1");

    int32_t *c2 = malloc((size_t)nnz * 4), *r2 = malloc((size_t)(n + 1) * 4);
    double *v2 = malloc((size_t)nnz * 8);
    memcpy(c2, col, (size_t)nnz * 4);
    memcpy(r2, rp, (size_t)(n + 1) * 4);
    memcpy(v2, val, (size_t)nnz * 8);
    c2[7] = (int32_t)n; /* one past the end */
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, r2, c2, MISGRID_FLOAT64, v2, NULL), MISGRID_ERR_RANGE,
              "colind[7] = 30 is out of range [0, 29] (one past the end with base 0: are the ids 1-based?)");
    c2[7] = -4;
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, r2, c2, MISGRID_FLOAT64, v2, NULL), MISGRID_ERR_RANGE, "colind[7] = -4");
    c2[7] = col[7];
    r2[3] = r2[2] - 1;
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, r2, c2, MISGRID_FLOAT64, v2, NULL), MISGRID_ERR_ARG,
              "rowptr[3] = ");
    r2[3] = rp[3];
    v2[11] = 0.0 / 0.0;
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, r2, c2, MISGRID_FLOAT64, v2, NULL), MISGRID_ERR_ARG, "values[11] = NaN is not finite");
    v2[11] = val[11];

    /* 1-based with a 0 id: the hint says so. */
    for (int64_t i = 0; i <= n; i++) r2[i] = rp[i] + 1;
    for (int64_t k = 0; k < nnz; k++) c2[k] = col[k] + 1;
    c2[0] = 0;
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 1, r2, c2, MISGRID_FLOAT64, v2, NULL), MISGRID_ERR_RANGE, "are the ids 0-based?");

    /* A pointer to memory that is not there: an error, not a crash. */
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, (const void *)(uintptr_t)0x10, MISGRID_FLOAT64, val, NULL),
              MISGRID_ERR_ARG, "reading colind");
    CHECK_ERR(ctx, CSR(n, n, nnz, MISGRID_INT32, 0, rp, (const void *)(uintptr_t)0x7ff000001000ull, MISGRID_FLOAT64, val, NULL),
              MISGRID_ERR_ARG, "faulted");
    CHECK(g == 0, "failed calls left a handle");

    /* COO: the same checks name the arrays. */
    int64_t ri[3] = {0, 1, 5}, ci[3] = {1, 0, 2};
    CHECK_ERR(ctx, misgrid_graph_from_coo(ctx, 3, 3, 3, MISGRID_INT64, 0, ri, ci, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_RANGE, "rows[2] = 5");
    ri[2] = 2;
    CHECK_ERR(ctx, misgrid_graph_from_coo(ctx, 3, 3, 3, MISGRID_INT64, 0, ri, NULL, MISGRID_PATTERN, NULL, NULL, &g),
              MISGRID_ERR_NULL, "cols is NULL");
    free(c2); free(r2); free(v2);
#undef CSR
}

static void test_elements_input(misgrid_context ctx) {
    misgrid_graph g = 0;
    int32_t conn[6] = {0, 1, 2, 1, 3, 2};
    double xy[8] = {0, 0, 1, 0, 0, 1, 1, 1};
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TRI3, 4, 2, MISGRID_INT32, 0, conn, 2, xy, NULL, &g),
              MISGRID_ERR_ARG, "nodes_per_element = 4, but tri3 elements have 3 nodes");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, 99, 3, 2, MISGRID_INT32, 0, conn, 2, xy, NULL, &g),
              MISGRID_ERR_ARG, "element_type = 99");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 3, MISGRID_TRI3, 3, 2, MISGRID_INT32, 0, conn, 2, xy, NULL, &g),
              MISGRID_ERR_RANGE, "conn[4] = 3 is out of range [0, 2]");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TRI3, 3, 2, MISGRID_INT32, 0, conn, 2, NULL, NULL, &g),
              MISGRID_ERR_ARG, "pass both or neither");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TET4, 4, 1, MISGRID_INT32, 0, conn, 2, xy, NULL, &g),
              MISGRID_ERR_ARG, "3-dimensional");
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TRI3, 3, 2, MISGRID_INT32, 0, conn, 2, xy, "theta=0.1", &g),
              MISGRID_ERR_OPTION, "theta");
    xy[3] = 1.0 / 0.0;
    CHECK_ERR(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TRI3, 3, 2, MISGRID_INT32, 0, conn, 2, xy, NULL, &g),
              MISGRID_ERR_ARG, "coords[3] = +Inf");
    CHECK(g == 0, "failed calls left a handle");
    /* Without coordinates it works, and classes come from degrees. */
    CHECK_OK(ctx, misgrid_graph_from_elements(ctx, 4, MISGRID_TRI3, 3, 2, MISGRID_INT32, 0, conn, 0, NULL, NULL, &g));
    CHECK_ERR(ctx, misgrid_write_vtu(ctx, g, 0, "/tmp/never.vtu", NULL), MISGRID_ERR_ARG, "no coordinates");
    misgrid_graph_destroy(ctx, g);
}

static void test_graph_data(misgrid_context ctx, misgrid_graph g, int64_t n) {
    int32_t *cls = calloc((size_t)n, 4);
    double *x = calloc((size_t)(2 * n), 8);
    CHECK_ERR(ctx, misgrid_graph_set_classes(ctx, g, n - 1, cls), MISGRID_ERR_RANGE, "classes has 29 entries, but the graph has 30 vertices");
    cls[4] = 7;
    CHECK_ERR(ctx, misgrid_graph_set_classes(ctx, g, n, cls), MISGRID_ERR_RANGE, "classes[4] = 7");
    cls[4] = MISGRID_CORNER;
    CHECK_OK(ctx, misgrid_graph_set_classes(ctx, g, n, cls));
    CHECK_ERR(ctx, misgrid_graph_set_coordinates(ctx, g, 4, n, x), MISGRID_ERR_ARG, "dim = 4");
    CHECK_ERR(ctx, misgrid_graph_set_coordinates(ctx, g, 2, n, NULL), MISGRID_ERR_NULL, "coords is NULL");
    x[5] = 0.0 / 0.0;
    CHECK_ERR(ctx, misgrid_graph_set_coordinates(ctx, g, 2, n, x), MISGRID_ERR_ARG, "coords[5] = NaN");
    double *p = calloc((size_t)n, 8);
    p[2] = 0.0 / 0.0;
    CHECK_ERR(ctx, misgrid_graph_set_priority(ctx, g, n, p), MISGRID_ERR_ARG, "values[2] = NaN");
    free(p);

    /* Classes in force: the vertex made a corner is in a boundary MIS. */
    misgrid_result r;
    int32_t *flags = calloc((size_t)n, 4);
    CHECK_OK(ctx, misgrid_mis(ctx, g, "priority=boundary", &r));
    CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, n, flags));
    CHECK(flags[4] == 1, "user corner 4 not in the set");

    /* Output capacities. */
    int64_t count = -1;
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, r, 0, n - 1, flags), MISGRID_ERR_RANGE, "room for 29 entries, 30 are needed");
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, r, 0, -1, flags), MISGRID_ERR_RANGE, "negative");
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, r, 0, n, NULL), MISGRID_ERR_NULL, "flags is NULL");
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, r, 1, n, flags), MISGRID_ERR_RANGE, "level = 1");
    CHECK_ERR(ctx, misgrid_result_set_vertices(ctx, r, 0, MISGRID_INT32, 0, 1, flags, &count), MISGRID_ERR_RANGE, "room for 1");
    CHECK(count > 1, "count %lld not reported with a short array", (long long)count);
    CHECK_ERR(ctx, misgrid_result_aggregates(ctx, r, 0, MISGRID_INT32, 0, n, flags), MISGRID_ERR_ARG, "distance=2");
    CHECK_ERR(ctx, misgrid_result_colors(ctx, r, 0, 0, n, flags), MISGRID_ERR_ARG, "no coloring");
    misgrid_result_destroy(ctx, r);

    /* Options in the wrong place, devices that are not there. */
    CHECK_ERR(ctx, misgrid_mis(ctx, g, "theta=0.1", &r), MISGRID_ERR_OPTION, "does not apply here");
    CHECK_ERR(ctx, misgrid_mis(ctx, g, "min_vertices=3", &r), MISGRID_ERR_OPTION, "misgrid_hierarchy");
    CHECK_ERR(ctx, misgrid_mis(ctx, g, "device=gpu:3", &r), MISGRID_ERR_NOGPU, "gpu:3");
    CHECK_ERR(ctx, misgrid_mis(ctx, g, NULL, NULL), MISGRID_ERR_NULL, "result (output) is NULL");

    /* A set that is not distance-2 independent cannot be aggregated. */
    memset(flags, 0, (size_t)n * 4);
    flags[0] = flags[2] = 1;
    CHECK_ERR(ctx, misgrid_aggregate(ctx, g, n, flags, &r), MISGRID_ERR_ARG, "vertex 1 is next to roots 0 and 2");
    int32_t valid = 7;
    CHECK_ERR(ctx, misgrid_verify(ctx, g, n, flags, 3, &valid, NULL, 0), MISGRID_ERR_ARG, "distance = 3");
    CHECK_OK(ctx, misgrid_verify(ctx, g, n, flags, 1, &valid, NULL, 0));
    CHECK(valid == 0, "a non-maximal set passes");
    free(cls); free(x); free(flags);
}

int main(void) {
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    int32_t *rp, *col;
    double *val;
    int64_t n, nnz;
    misgrid_graph g = small_graph(ctx, &rp, &col, &val, &n, &nnz);
    test_handles(ctx, g);
    test_messages(ctx);
    test_csr_input(ctx, rp, col, val, n, nnz);
    test_elements_input(ctx);
    test_graph_data(ctx, g, n);
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g));
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
    CHECK_HANDLES(0);
    free(rp); free(col); free(val);
    return check_report("test_errors");
}
