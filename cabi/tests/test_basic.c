/* The normal path through the C ABI: contexts and options, graphs from
 * CSR, COO and elements in every index type and base, MIS, aggregates,
 * colorings, hierarchies, VTU output, and that nothing leaks a handle. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* is_mis checks independence and maximality at distance dist with the
 * graph's own adjacency, independently of misgrid_verify. */
static int is_mis(int64_t n, const int64_t *off, const int64_t *adj, const int32_t *in, int dist) {
    int32_t *near = calloc((size_t)n, sizeof *near);
    for (int64_t v = 0; v < n; v++) {
        if (!in[v]) continue;
        near[v] = 1;
        for (int64_t k = off[v]; k < off[v + 1]; k++) {
            int64_t u = adj[k];
            if (in[u]) { free(near); return 0; }
            near[u] = 1;
            if (dist == 2) {
                for (int64_t q = off[u]; q < off[u + 1]; q++) {
                    int64_t w = adj[q];
                    if (w != v && in[w]) { free(near); return 0; }
                    near[w] = 1;
                }
            }
        }
    }
    for (int64_t v = 0; v < n; v++) {
        if (!near[v]) { free(near); return 0; }
    }
    free(near);
    return 1;
}

static void test_version(void) {
    int32_t major = -1, minor = -1, patch = -1;
    CHECK_OK(NULL, misgrid_version_numbers(&major, &minor, &patch));
    CHECK(major == MISGRID_VERSION_MAJOR && minor == MISGRID_VERSION_MINOR && patch == MISGRID_VERSION_PATCH,
          "library %d.%d.%d, header %d.%d.%d", major, minor, patch, MISGRID_VERSION_MAJOR,
          MISGRID_VERSION_MINOR, MISGRID_VERSION_PATCH);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", MISGRID_VERSION_MAJOR, MISGRID_VERSION_MINOR, MISGRID_VERSION_PATCH);
    CHECK(strcmp(misgrid_version(), want) == 0, "misgrid_version() = %s, want %s", misgrid_version(), want);
    CHECK(strcmp(misgrid_status_string(MISGRID_ERR_RANGE), "MISGRID_ERR_RANGE") == 0, "status string");
    CHECK(strcmp(misgrid_status_string((misgrid_status)1234), "MISGRID_STATUS_UNKNOWN") == 0, "unknown status");

    int64_t need = 0;
    CHECK_OK(NULL, misgrid_option_help(NULL, 0, &need));
    CHECK(need > 100, "option help needs %lld bytes", (long long)need);
    char *help = malloc((size_t)need);
    CHECK_OK(NULL, misgrid_option_help(help, need, NULL));
    CHECK(strstr(help, "priority") && strstr(help, "theta") && strlen(help) + 1 == (size_t)need,
          "help text: %s", help);
    char small[8];
    CHECK_OK(NULL, misgrid_option_help(small, sizeof small, NULL));
    CHECK(strlen(small) == 7 && strncmp(small, help, 7) == 0, "truncated help \"%s\"", small);
    free(help);
}

static void test_context(void) {
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    char buf[64];
    CHECK_OK(ctx, misgrid_context_get_option(ctx, "threads", buf, sizeof buf));
    CHECK(strcmp(buf, "0") == 0, "default threads = %s", buf);
    CHECK_OK(ctx, misgrid_context_set_option(ctx, "threads=3, priority=boundary;device=cpu"));
    CHECK_OK(ctx, misgrid_context_get_option(ctx, "threads", buf, sizeof buf));
    CHECK(strcmp(buf, "3") == 0, "threads = %s", buf);
    CHECK_OK(ctx, misgrid_context_get_option(ctx, "device", buf, sizeof buf));
    CHECK(strcmp(buf, "cpu") == 0, "device = %s", buf);
    CHECK(strcmp(misgrid_error_message(ctx), "") == 0, "no error yet: \"%s\"", misgrid_error_message(ctx));

    /* A bad option string changes nothing. */
    CHECK_ERR(ctx, misgrid_context_set_option(ctx, "threads=5 distance=3"), MISGRID_ERR_OPTION, "distance");
    CHECK_OK(ctx, misgrid_context_get_option(ctx, "threads", buf, sizeof buf));
    CHECK(strcmp(buf, "3") == 0, "threads after a failed set = %s", buf);
    CHECK_ERR(ctx, misgrid_context_set_option(ctx, "treads=5"), MISGRID_ERR_OPTION, "unknown option \"treads\"");
    CHECK_ERR(ctx, misgrid_context_set_option(ctx, "threads"), MISGRID_ERR_OPTION, "not key=value");
    CHECK_ERR(ctx, misgrid_context_set_option(ctx, "device=tpu"), MISGRID_ERR_OPTION, "device");
    CHECK_ERR(ctx, misgrid_context_get_option(ctx, "nope", buf, sizeof buf), MISGRID_ERR_OPTION, "nope");

    /* The copy of the message is the same text. */
    int64_t need = 0;
    char msg[512];
    CHECK_OK(ctx, misgrid_error_message_copy(ctx, msg, sizeof msg, &need));
    CHECK(strcmp(msg, misgrid_error_message(ctx)) == 0 && need == (int64_t)strlen(msg) + 1,
          "copy \"%s\" need %lld", msg, (long long)need);
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
}

struct csr {
    int64_t n, nnz;
    int32_t *rowptr, *col;
    double *val;
    int64_t *off64, *adj64; /* the graph's adjacency, as misgrid returns it */
};

static void test_graph_forms(misgrid_context ctx) {
    struct csr a;
    a.n = 12 * 9;
    a.nnz = grid_laplacian(12, 9, &a.rowptr, &a.col, &a.val);

    misgrid_graph g32, g64, g1, gpat, gf32, gcoo, gmess;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rowptr, a.col,
                                         MISGRID_FLOAT64, a.val, NULL, &g32));
    int64_t nv = 0, ne = 0;
    CHECK_OK(ctx, misgrid_graph_size(ctx, g32, &nv, &ne));
    CHECK(nv == a.n && ne == 11 * 9 + 12 * 8, "grid graph %lld vertices %lld edges", (long long)nv, (long long)ne);

    /* int64, 1-based copies of the same matrix. */
    int64_t *rp64 = malloc((size_t)(a.n + 1) * 8), *c64 = malloc((size_t)a.nnz * 8);
    int32_t *rp1 = malloc((size_t)(a.n + 1) * 4), *c1 = malloc((size_t)a.nnz * 4);
    float *v32 = malloc((size_t)a.nnz * 4);
    for (int64_t i = 0; i <= a.n; i++) { rp64[i] = a.rowptr[i]; rp1[i] = a.rowptr[i] + 1; }
    for (int64_t k = 0; k < a.nnz; k++) { c64[k] = a.col[k]; c1[k] = a.col[k] + 1; v32[k] = (float)a.val[k]; }
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, a.n, a.n, a.nnz, MISGRID_INT64, 0, rp64, c64,
                                         MISGRID_FLOAT64, a.val, "", &g64));
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, a.n, a.n, a.nnz, MISGRID_INT32, 1, rp1, c1,
                                         MISGRID_FLOAT64, a.val, NULL, &g1));
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rowptr, a.col,
                                         MISGRID_PATTERN, NULL, NULL, &gpat));
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, a.n, a.n, a.nnz, MISGRID_INT32, 0, a.rowptr, a.col,
                                         MISGRID_FLOAT32, v32, NULL, &gf32));

    /* COO in reverse order with every entry split in two halves. */
    int64_t m = 2 * a.nnz, k2 = 0;
    int64_t *ri = malloc((size_t)m * 8), *ci = malloc((size_t)m * 8);
    double *vv = malloc((size_t)m * 8);
    for (int64_t r = a.n - 1; r >= 0; r--) {
        for (int64_t k = a.rowptr[r + 1] - 1; k >= a.rowptr[r]; k--) {
            for (int h = 0; h < 2; h++) { ri[k2] = r + 1; ci[k2] = a.col[k] + 1; vv[k2++] = a.val[k] / 2; }
        }
    }
    CHECK_OK(ctx, misgrid_graph_from_coo(ctx, a.n, a.n, m, MISGRID_INT64, 1, ri, ci, MISGRID_FLOAT64, vv, NULL, &gcoo));

    /* CSR with rows reversed and a duplicated entry per row: accepted and
     * normalized to the same graph. */
    int32_t *rpm = malloc((size_t)(a.n + 1) * 4), *cm = malloc((size_t)(a.nnz + a.n) * 4);
    double *vm = malloc((size_t)(a.nnz + a.n) * 8);
    int64_t q = 0;
    rpm[0] = 0;
    for (int64_t r = 0; r < a.n; r++) {
        for (int64_t k = a.rowptr[r + 1] - 1; k >= a.rowptr[r]; k--) { cm[q] = a.col[k]; vm[q++] = a.val[k]; }
        cm[q] = a.col[a.rowptr[r]];
        vm[q++] = 0; /* a repeat that adds nothing */
        rpm[r + 1] = (int32_t)q;
    }
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, a.n, a.n, q, MISGRID_INT32, 0, rpm, cm, MISGRID_FLOAT64, vm, NULL, &gmess));

    /* Every form has the same adjacency, read back in int64, base 1. */
    misgrid_graph all[] = {g32, g64, g1, gpat, gf32, gcoo, gmess};
    const char *names[] = {"int32", "int64", "base1", "pattern", "float32", "coo", "unsorted+dups"};
    int64_t *off0 = NULL, *adj0 = NULL;
    for (int i = 0; i < 7; i++) {
        int64_t *off = malloc((size_t)(a.n + 1) * 8), *adj = malloc((size_t)(2 * ne) * 8);
        CHECK_OK(ctx, misgrid_graph_adjacency(ctx, all[i], MISGRID_INT64, 1, off, a.n + 1, adj, 2 * ne));
        if (i == 0) {
            off0 = off;
            adj0 = adj;
            CHECK(off[0] == 1 && off[a.n] == 2 * ne + 1, "1-based offsets %lld..%lld", (long long)off[0], (long long)off[a.n]);
            continue;
        }
        CHECK(memcmp(off, off0, (size_t)(a.n + 1) * 8) == 0 && memcmp(adj, adj0, (size_t)(2 * ne) * 8) == 0,
              "graph from %s differs from int32 CSR", names[i]);
        free(off);
        free(adj);
    }

    /* The MIS of each is the same, and is an MIS (checked here, in C). */
    int32_t *flags0 = malloc((size_t)a.n * 4), *flags = malloc((size_t)a.n * 4);
    int64_t *off = malloc((size_t)(a.n + 1) * 8), *adj = malloc((size_t)(2 * ne) * 8);
    CHECK_OK(ctx, misgrid_graph_adjacency(ctx, g32, MISGRID_INT64, 0, off, a.n + 1, adj, 2 * ne));
    for (int dist = 1; dist <= 2; dist++) {
        char opts[64];
        snprintf(opts, sizeof opts, "distance=%d priority=boundary seed=5", dist);
        for (int i = 0; i < 7; i++) {
            misgrid_result r;
            CHECK_OK(ctx, misgrid_mis(ctx, all[i], opts, &r));
            CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, a.n, i == 0 ? flags0 : flags));
            if (i == 0) {
                CHECK(is_mis(a.n, off, adj, flags0, dist), "not a distance-%d MIS", dist);
                /* Boundary priority keeps the four grid corners. */
                CHECK(flags0[0] && flags0[11] && flags0[a.n - 12] && flags0[a.n - 1], "a corner is missing");
            } else {
                CHECK(memcmp(flags, flags0, (size_t)a.n * 4) == 0, "MIS of %s differs", names[i]);
            }
            misgrid_result_destroy(ctx, r);
        }
    }
    free(off0); free(adj0); free(off); free(adj); free(flags0); free(flags);
    for (int i = 0; i < 7; i++) CHECK_OK(ctx, misgrid_graph_destroy(ctx, all[i]));
    free(rp64); free(c64); free(rp1); free(c1); free(v32); free(ri); free(ci); free(vv);
    free(rpm); free(cm); free(vm);
    free(a.rowptr); free(a.col); free(a.val);
}

/* A strength threshold drops weak couplings: with theta the anisotropic
 * operator keeps only its strong direction. */
static void test_theta(misgrid_context ctx) {
    int32_t *rp, *col;
    double *val;
    int64_t n = 10 * 10, nnz = grid_laplacian(10, 10, &rp, &col, &val);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t k = rp[r]; k < rp[r + 1]; k++) {
            int64_t d = col[k] - r;
            if (d == 10 || d == -10) val[k] = -0.001; /* weak in y */
            if (d == 0) val[k] = 2.002;
        }
    }
    misgrid_graph g;
    CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, MISGRID_INT32, 0, rp, col, MISGRID_FLOAT64, val, "theta=0.25", &g));
    int64_t ne = -1;
    CHECK_OK(ctx, misgrid_graph_size(ctx, g, NULL, &ne));
    CHECK(ne == 9 * 10, "theta=0.25 keeps %lld edges, want the 90 x-couplings", (long long)ne);
    misgrid_graph_destroy(ctx, g);
    free(rp); free(col); free(val);
}

/* The operations run on a Q1 mesh of the unit square, from elements, with
 * coordinates. */
enum { NX = 17, NY = 13, NN = NX * NY, NE = (NX - 1) * (NY - 1) };

static misgrid_graph q1_graph(misgrid_context ctx, double *xy, int64_t *nedge) {
    int32_t *conn = malloc((size_t)NE * 4 * 4);
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            xy[2 * (i + NX * j)] = (double)i / (NX - 1);
            xy[2 * (i + NX * j) + 1] = (double)j / (NY - 1);
        }
    int64_t e = 0;
    for (int j = 0; j < NY - 1; j++)
        for (int i = 0; i < NX - 1; i++, e++) {
            int32_t a = i + NX * j;
            conn[4 * e] = a; conn[4 * e + 1] = a + 1; conn[4 * e + 2] = a + 1 + NX; conn[4 * e + 3] = a + NX;
        }
    misgrid_graph g;
    CHECK_OK(ctx, misgrid_graph_from_elements(ctx, NN, MISGRID_QUAD4, 4, NE, MISGRID_INT32, 0, conn, 2, xy, NULL, &g));
    free(conn);
    int64_t nv;
    CHECK_OK(ctx, misgrid_graph_size(ctx, g, &nv, nedge));
    /* Q1: horizontal, vertical and both diagonals of every cell. */
    CHECK(nv == NN && *nedge == (NX - 1) * NY + NX * (NY - 1) + 2 * NE, "Q1 graph %lld %lld", (long long)nv,
          (long long)*nedge);

    /* Geometric classes: 4 corners, the rest of the perimeter faces. */
    int32_t *cls = malloc((size_t)NN * 4);
    CHECK_OK(ctx, misgrid_graph_get_classes(ctx, g, NN, cls));
    int count[4] = {0, 0, 0, 0};
    for (int64_t v = 0; v < NN; v++) count[cls[v]]++;
    CHECK(count[MISGRID_CORNER] == 4 && count[MISGRID_FACE] == 2 * (NX - 2) + 2 * (NY - 2) && count[MISGRID_EDGE] == 0,
          "classes: %d corners %d faces %d edges", count[3], count[1], count[2]);
    free(cls);
    return g;
}

/* MIS-2 with boundary priority, its aggregates and roots; misgrid_verify
 * agrees and catches a broken set, and misgrid_aggregate of the caller's
 * copy of the set gives the same aggregates. Leaves the set in flags. */
static void check_mis(misgrid_context ctx, misgrid_graph g, misgrid_result r, int32_t *flags) {
    int64_t nlev = 0, nv = 0, size = 0, nagg = 0, ncol = -1, rounds = 0;
    CHECK_OK(ctx, misgrid_result_num_levels(ctx, r, &nlev));
    CHECK_OK(ctx, misgrid_result_level_info(ctx, r, 0, &nv, &size, &nagg, &ncol, &rounds));
    CHECK(nlev == 1 && nv == NN && size > 0 && nagg == size && ncol == 0 && rounds >= 1,
          "info: %lld levels, %lld vertices, set %lld, %lld aggregates, %lld colors, %lld rounds",
          (long long)nlev, (long long)nv, (long long)size, (long long)nagg, (long long)ncol, (long long)rounds);
    int64_t *verts = malloc((size_t)size * 8), *roots = malloc((size_t)size * 8), count64 = 0;
    int64_t *agg = malloc((size_t)NN * 8);
    CHECK_OK(ctx, misgrid_result_set_vertices(ctx, r, 0, MISGRID_INT64, 1, size, verts, &count64));
    CHECK_OK(ctx, misgrid_result_aggregate_roots(ctx, r, 0, MISGRID_INT64, 1, size, roots, NULL));
    CHECK_OK(ctx, misgrid_result_aggregates(ctx, r, 0, MISGRID_INT64, 1, NN, agg));
    CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, NN, flags));
    CHECK(count64 == size, "count %lld", (long long)count64);
    int64_t members = 0;
    for (int64_t i = 0; i < size; i++) {
        CHECK(verts[i] == roots[i], "root %lld = %lld, set vertex %lld", (long long)i, (long long)roots[i], (long long)verts[i]);
        CHECK(i == 0 || verts[i] > verts[i - 1], "set vertices not increasing");
        CHECK(agg[verts[i] - 1] == i + 1, "root %lld is in aggregate %lld, want %lld", (long long)verts[i], (long long)agg[verts[i] - 1], (long long)(i + 1));
    }
    for (int64_t v = 0; v < NN; v++) {
        members += flags[v];
        CHECK(agg[v] >= 1 && agg[v] <= nagg, "vertex %lld in aggregate %lld", (long long)v, (long long)agg[v]);
    }
    CHECK(members == size, "%lld flags set, set size %lld", (long long)members, (long long)size);
    CHECK(flags[0] && flags[NX - 1] && flags[NN - NX] && flags[NN - 1], "corners not all in the MIS-2");

    int32_t valid = -1;
    char why[256];
    CHECK_OK(ctx, misgrid_verify(ctx, g, NN, flags, 2, &valid, why, sizeof why));
    CHECK(valid == 1 && why[0] == 0, "verify: %d \"%s\"", valid, why);
    flags[1] = 1; /* next to corner 0 */
    CHECK_OK(ctx, misgrid_verify(ctx, g, NN, flags, 2, &valid, why, sizeof why));
    CHECK(valid == 0 && strstr(why, "vertex"), "broken set passes: %d \"%s\"", valid, why);
    flags[1] = 0;

    misgrid_result r2;
    int64_t *agg2 = malloc((size_t)NN * 8);
    CHECK_OK(ctx, misgrid_aggregate(ctx, g, NN, flags, &r2));
    CHECK_OK(ctx, misgrid_result_aggregates(ctx, r2, 0, MISGRID_INT64, 1, NN, agg2));
    CHECK(memcmp(agg, agg2, (size_t)NN * 8) == 0, "misgrid_aggregate differs from the MIS result's aggregates");
    misgrid_result_destroy(ctx, r2);
    free(agg2); free(verts); free(roots); free(agg);
}

/* A coloring: neighbours differ, and it holds no set (flags: the set). */
static void check_coloring(misgrid_context ctx, misgrid_graph g, int64_t nedge, int32_t *flags) {
    misgrid_result rc;
    int64_t ncol = -1;
    int32_t *colors = malloc((size_t)NN * 4);
    int64_t *off = malloc((size_t)(NN + 1) * 8), *adj = malloc((size_t)(2 * nedge) * 8);
    CHECK_OK(ctx, misgrid_graph_adjacency(ctx, g, MISGRID_INT64, 0, off, NN + 1, adj, 2 * nedge));
    CHECK_OK(ctx, misgrid_color(ctx, g, "priority=degree", &rc));
    CHECK_OK(ctx, misgrid_result_level_info(ctx, rc, 0, NULL, NULL, NULL, &ncol, NULL));
    CHECK_OK(ctx, misgrid_result_colors(ctx, rc, 0, 0, NN, colors));
    CHECK(ncol >= 4 && ncol <= 9, "Q1 mesh needs 4..9 colors, got %lld", (long long)ncol);
    for (int64_t v = 0; v < NN; v++) {
        CHECK(colors[v] >= 0 && colors[v] < ncol, "color %d", colors[v]);
        for (int64_t k = off[v]; k < off[v + 1]; k++)
            CHECK(colors[adj[k]] != colors[v], "vertices %lld and %lld share color %d", (long long)v, (long long)adj[k], colors[v]);
    }
    CHECK_ERR(ctx, misgrid_result_set_flags(ctx, rc, 0, NN, flags), MISGRID_ERR_ARG, "coloring");
    misgrid_result_destroy(ctx, rc);
    free(colors); free(off); free(adj);
}

/* A hierarchy: each level smaller; aggregates map onto the next level.
 * scratch has room for NN ids. */
static void check_hierarchy(misgrid_context ctx, misgrid_graph g, int32_t *scratch) {
    misgrid_result rh;
    int64_t nlev = 0;
    CHECK_OK(ctx, misgrid_hierarchy(ctx, g, "priority=boundary,min_vertices=4", &rh));
    CHECK_OK(ctx, misgrid_result_num_levels(ctx, rh, &nlev));
    CHECK(nlev >= 2, "%lld levels", (long long)nlev);
    int64_t prev = NN;
    for (int64_t l = 0; l < nlev; l++) {
        int64_t lv = 0, ls = 0, la = 0;
        CHECK_OK(ctx, misgrid_result_level_info(ctx, rh, l, &lv, &ls, &la, NULL, NULL));
        CHECK(l == 0 ? lv == NN : lv < prev, "level %lld has %lld vertices after %lld", (long long)l, (long long)lv, (long long)prev);
        if (l + 1 < nlev) {
            int64_t nxt = 0;
            CHECK_OK(ctx, misgrid_result_level_info(ctx, rh, l + 1, &nxt, NULL, NULL, NULL, NULL));
            CHECK(la == nxt, "level %lld: %lld aggregates, next level %lld vertices", (long long)l, (long long)la, (long long)nxt);
            misgrid_graph lg;
            int64_t lgn = 0;
            CHECK_OK(ctx, misgrid_result_level_graph(ctx, rh, l + 1, &lg));
            CHECK_OK(ctx, misgrid_graph_size(ctx, lg, &lgn, NULL));
            CHECK(lgn == nxt, "level graph %lld vertices", (long long)lgn);
            misgrid_graph_destroy(ctx, lg);
        } else {
            CHECK(la == 0, "coarsest level has %lld aggregates", (long long)la);
            CHECK_ERR(ctx, misgrid_result_aggregates(ctx, rh, l, MISGRID_INT32, 0, lv, scratch), MISGRID_ERR_ARG, "coarsest");
        }
        prev = lv;
    }
    CHECK_ERR(ctx, misgrid_result_level_info(ctx, rh, nlev, NULL, NULL, NULL, NULL, NULL), MISGRID_ERR_RANGE, "level");
    misgrid_result_destroy(ctx, rh);
}

/* User priorities: the highest-valued vertex is always in the set. */
static void check_user_priority(misgrid_context ctx, misgrid_graph g, int32_t *flags) {
    misgrid_result r;
    double *pv = malloc((size_t)NN * 8);
    for (int64_t v = 0; v < NN; v++) pv[v] = (double)((v * 7919) % 101);
    pv[100] = 1000;
    CHECK_ERR(ctx, misgrid_mis(ctx, g, "priority=user", &r), MISGRID_ERR_ARG, "misgrid_graph_set_priority");
    CHECK_OK(ctx, misgrid_graph_set_priority(ctx, g, NN, pv));
    CHECK_OK(ctx, misgrid_mis(ctx, g, "priority=user", &r));
    CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, NN, flags));
    CHECK(flags[100] == 1, "top-priority vertex not in the set");
    misgrid_result_destroy(ctx, r);
    free(pv);
}

/* VTU output with the result's fields. */
static void check_vtu(misgrid_context ctx, misgrid_graph g, misgrid_result r) {
    char path[] = "/tmp/misgrid_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    CHECK_OK(ctx, misgrid_write_vtu(ctx, g, r, path, NULL));
    FILE *f = fopen(path, "r");
    static char text[1 << 20];
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[got] = 0;
    CHECK(got > 100 && strstr(text, "VTKFile") && strstr(text, "Name=\"in_set\"") && strstr(text, "Name=\"aggregate\"") &&
          strstr(text, "Name=\"class\"") && strstr(text, "</VTKFile>"), "VTU file: %.300s", text);
    remove(path);
    CHECK_ERR(ctx, misgrid_write_vtu(ctx, g, r, "/nonexistent-dir/x.vtu", NULL), MISGRID_ERR_IO, "nonexistent-dir");
}

static void test_operations(misgrid_context ctx) {
    double *xy = malloc((size_t)NN * 2 * 8);
    int64_t nedge = 0;
    misgrid_graph g = q1_graph(ctx, xy, &nedge);
    int32_t *flags = malloc((size_t)NN * 4);
    misgrid_result r;
    CHECK_OK(ctx, misgrid_mis(ctx, g, "distance=2,priority=boundary", &r));
    check_mis(ctx, g, r, flags);
    check_coloring(ctx, g, nedge, flags);
    check_hierarchy(ctx, g, flags);
    check_user_priority(ctx, g, flags);
    check_vtu(ctx, g, r);
    misgrid_result_destroy(ctx, r);
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g));
    free(flags); free(xy);
}

int main(void) {
    test_version();
    test_context();
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    test_graph_forms(ctx);
    test_theta(ctx);
    test_operations(ctx);
    CHECK_OK(ctx, misgrid_context_destroy(ctx));
    CHECK_HANDLES(0);
    return check_report("test_basic");
}
