/* The ABI returns what the Go API returns. The file written by
 * cabi/internal/goref holds inputs in the forms C passes them (index
 * types, bases, value types, options) and the Go API's results for them;
 * this test makes the same calls through libmisgrid and compares
 * everything: sets, aggregates, colorings, hierarchy sizes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static FILE *in;
static char word[256];

static const char *next(void) {
    if (fscanf(in, "%255s", word) != 1) word[0] = 0;
    return word;
}

static int64_t next_int(void) {
    long long x = 0;
    if (fscanf(in, "%lld", &x) != 1) {
        fprintf(stderr, "goref: expected an integer\n");
        exit(2);
    }
    return (int64_t)x;
}

static void expect(const char *w) {
    if (strcmp(next(), w) != 0) {
        fprintf(stderr, "goref: expected \"%s\", found \"%s\"\n", w, word);
        exit(2);
    }
}

/* read_index reads n ids into an array of the given index type. */
static void *read_index(int itype, int64_t n) {
    if (itype == MISGRID_INT64) {
        int64_t *p = malloc((size_t)(n ? n : 1) * 8);
        for (int64_t i = 0; i < n; i++) p[i] = next_int();
        return p;
    }
    int32_t *p = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++) p[i] = (int32_t)next_int();
    return p;
}

static void *read_values(int vtype, int64_t n) {
    if (vtype == MISGRID_FLOAT32) {
        float *p = malloc((size_t)(n ? n : 1) * 4);
        for (int64_t i = 0; i < n; i++) p[i] = strtof(next(), NULL);
        return p;
    }
    double *p = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++) p[i] = strtod(next(), NULL);
    return p;
}

/* The current case's matrix, kept for solver operations. */
static int64_t cur_nnz;
static int cur_itype, cur_base, cur_vtype;
static void *cur_rowptr, *cur_col, *cur_val;

static const char *opt(const char *w) { return strcmp(w, "-") == 0 ? "" : w; }

/* compare reads n expected values and compares them with got. */
static void compare(const char *what, const char *cname, const int64_t *got, int64_t n) {
    int64_t bad = -1, want_bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t w = next_int();
        if (bad < 0 && got[i] != w) {
            bad = i;
            want_bad = w;
        }
    }
    CHECK(bad < 0, "%s %s: entry %lld is %lld through the ABI, %lld through Go", cname, what, (long long)bad,
          (long long)(bad >= 0 ? got[bad] : 0), (long long)want_bad);
}

/* read_graph reads a case's input, a matrix (kept for the solver
 * operations) or elements, and gives it to the library. */
static misgrid_graph read_graph(misgrid_context ctx) {
    misgrid_graph g = 0;
    char gopts[256];
    const char *kind = next();
    if (strcmp(kind, "csr") == 0) {
        int64_t n = next_int(), nnz = next_int();
        int itype = (int)next_int(), base = (int)next_int(), vtype = (int)next_int();
        snprintf(gopts, sizeof gopts, "%s", opt(next()));
        expect("rowptr");
        void *rp = read_index(itype, n + 1);
        expect("colind");
        void *ci = read_index(itype, nnz);
        void *val = NULL;
        if (vtype != MISGRID_PATTERN) {
            expect("values");
            val = read_values(vtype, nnz);
        }
        CHECK_OK(ctx, misgrid_graph_from_csr(ctx, n, n, nnz, itype, base, rp, ci, vtype, val, gopts, &g));
        cur_nnz = nnz, cur_itype = itype, cur_base = base, cur_vtype = vtype;
        cur_rowptr = rp, cur_col = ci, cur_val = val;
    } else if (strcmp(kind, "elements") == 0) {
        int64_t nn = next_int();
        int etype = (int)next_int(), npe = (int)next_int();
        int64_t ne = next_int();
        int itype = (int)next_int(), base = (int)next_int(), dim = (int)next_int();
        snprintf(gopts, sizeof gopts, "%s", opt(next()));
        expect("conn");
        void *conn = read_index(itype, ne * npe);
        expect("coords");
        double *xyz = read_values(MISGRID_FLOAT64, nn * dim);
        CHECK_OK(ctx, misgrid_graph_from_elements(ctx, nn, etype, npe, ne, itype, base, conn, dim, xyz, gopts, &g));
        free(conn); free(xyz);
    } else {
        fprintf(stderr, "goref: unknown input kind \"%s\"\n", kind);
        exit(2);
    }
    return g;
}

/* compare_solver sets up a solver on the case's matrix (nv rows) and
 * compares its iterations and residual history with Go's. */
static void compare_solver(misgrid_context ctx, const char *cname, const char *what, const char *opts, int64_t nv) {
    int64_t n = next_int();
    double *b = read_values(MISGRID_FLOAT64, n), *x = calloc((size_t)n, 8);
    int64_t its = next_int(), got = -1, count = 0;
    double *want = read_values(MISGRID_FLOAT64, its + 1), *have = calloc((size_t)(its + 1), 8);
    misgrid_solver s = 0;
    int32_t conv = 0;
    CHECK_OK(ctx, misgrid_solver_create(ctx, opts, &s));
    CHECK_OK(ctx, misgrid_solver_setup(ctx, s, nv, nv, cur_nnz, cur_itype, cur_base, cur_rowptr, cur_col,
                                       cur_vtype, cur_val));
    CHECK_OK(ctx, misgrid_solver_solve(ctx, s, n, b, x, &conv, &got, NULL));
    CHECK(conv == 1 && got == its, "%s %s: %lld iterations through the ABI, %lld through Go", cname, what,
          (long long)got, (long long)its);
    misgrid_solver_residuals(ctx, s, its + 1, have, &count);
    double worst = 0;
    for (int64_t k = 0; k < its + 1 && k < count; k++) {
        double d = fabs(have[k] - want[k]) / want[k];
        if (d > worst) worst = d;
    }
    CHECK(count == its + 1 && worst < 1e-9, "%s %s: residual histories differ by %g (relative)", cname, what, worst);
    misgrid_solver_destroy(ctx, s);
    free(b); free(x); free(want); free(have);
}

static void run_case(misgrid_context ctx, const char *cname) {
    misgrid_graph g = read_graph(ctx);
    int64_t nv = 0;
    CHECK_OK(ctx, misgrid_graph_size(ctx, g, &nv, NULL));
    int64_t *buf = malloc((size_t)(nv ? nv : 1) * 8);
    int32_t *buf32 = malloc((size_t)(nv ? nv : 1) * 4);
    int ops = 0;
    for (;;) {
        const char *w = next();
        char opts[256];
        misgrid_result r = 0;
        if (strcmp(w, "end") == 0 || w[0] == 0) break;
        if (strcmp(w, "priority") == 0) {
            int64_t n = next_int();
            double *p = read_values(MISGRID_FLOAT64, n);
            CHECK_OK(ctx, misgrid_graph_set_priority(ctx, g, n, p));
            free(p);
            continue;
        }
        ops++;
        char op[32];
        snprintf(op, sizeof op, "%s", w);
        snprintf(opts, sizeof opts, "%s", opt(next()));
        char what[320];
        snprintf(what, sizeof what, "%s(%s)", op, opts);
        if (strcmp(op, "mis") == 0) {
            int64_t n = next_int();
            CHECK(n == nv, "%s %s: Go graph has %lld vertices, ABI graph %lld", cname, what, (long long)n, (long long)nv);
            CHECK_OK(ctx, misgrid_mis(ctx, g, opts, &r));
            CHECK_OK(ctx, misgrid_result_set_flags(ctx, r, 0, nv, buf32));
            for (int64_t i = 0; i < nv; i++) buf[i] = buf32[i];
            compare("set", cname, buf, nv);
            int64_t nagg = next_int(), got = -1;
            CHECK_OK(ctx, misgrid_result_level_info(ctx, r, 0, NULL, NULL, &got, NULL, NULL));
            CHECK(got == nagg, "%s %s: %lld aggregates through the ABI, %lld through Go", cname, what, (long long)got, (long long)nagg);
            if (nagg > 0) {
                CHECK_OK(ctx, misgrid_result_aggregates(ctx, r, 0, MISGRID_INT64, 0, nv, buf));
                compare("aggregates", cname, buf, nv);
            }
        } else if (strcmp(op, "color") == 0) {
            int64_t n = next_int(), nc = next_int(), got = -1;
            CHECK(n == nv, "%s: vertex count", cname);
            CHECK_OK(ctx, misgrid_color(ctx, g, opts, &r));
            CHECK_OK(ctx, misgrid_result_level_info(ctx, r, 0, NULL, NULL, NULL, &got, NULL));
            CHECK(got == nc, "%s %s: %lld colors through the ABI, %lld through Go", cname, what, (long long)got, (long long)nc);
            CHECK_OK(ctx, misgrid_result_colors(ctx, r, 0, 0, nv, buf32));
            for (int64_t i = 0; i < nv; i++) buf[i] = buf32[i];
            compare("colors", cname, buf, nv);
        } else if (strcmp(op, "hierarchy") == 0) {
            int64_t nl = next_int(), got = -1;
            CHECK_OK(ctx, misgrid_hierarchy(ctx, g, opts, &r));
            CHECK_OK(ctx, misgrid_result_num_levels(ctx, r, &got));
            CHECK(got == nl, "%s %s: %lld levels through the ABI, %lld through Go", cname, what, (long long)got, (long long)nl);
            for (int64_t l = 0; l < nl; l++) {
                int64_t want[3] = {next_int(), next_int(), next_int()}, have[3] = {-1, -1, -1};
                if (l < got) misgrid_result_level_info(ctx, r, l, &have[0], &have[1], &have[2], NULL, NULL);
                CHECK(memcmp(want, have, sizeof want) == 0,
                      "%s %s level %lld: (vertices, set, aggregates) = (%lld %lld %lld) through the ABI, (%lld %lld %lld) through Go",
                      cname, what, (long long)l, (long long)have[0], (long long)have[1], (long long)have[2],
                      (long long)want[0], (long long)want[1], (long long)want[2]);
            }
        } else if (strcmp(op, "solver") == 0) {
            compare_solver(ctx, cname, what, opts, nv);
        } else {
            fprintf(stderr, "goref: unknown operation \"%s\"\n", op);
            exit(2);
        }
        misgrid_result_destroy(ctx, r);
    }
    printf("goref %s: %lld vertices, %d operations compared\n", cname, (long long)nv, ops);
    free(cur_rowptr); free(cur_col); free(cur_val);
    cur_rowptr = cur_col = cur_val = NULL;
    free(buf); free(buf32);
    CHECK_OK(ctx, misgrid_graph_destroy(ctx, g));
}

int main(int argc, char **argv) {
    if (argc != 2 || !(in = fopen(argv[1], "r"))) {
        fprintf(stderr, "usage: test_goref goref.txt\n");
        return 2;
    }
    misgrid_context ctx;
    CHECK_OK(NULL, misgrid_context_create(&ctx));
    int cases = 0;
    while (strcmp(next(), "case") == 0) {
        char cname[128];
        snprintf(cname, sizeof cname, "%s", next());
        run_case(ctx, cname);
        cases++;
    }
    CHECK(cases >= 6, "only %d cases in %s", cases, argv[1]);
    misgrid_context_destroy(ctx);
    fclose(in);
    return check_report("test_goref");
}
