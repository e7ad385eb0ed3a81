/*
 * The misgrid option keys a PETSc user may set as -pc_misgrid_<key>.
 *
 * They come from libmisgrid's one registry, through misgrid_option_help,
 * so that a key added to the library appears here (and under -help)
 * without touching the plugin. The help text has one entry per key: an
 * unindented line "key (default D; scope, scope)" and indented lines of
 * description. The C ABI has no structured key list yet; parsing the help
 * is the one public way to get it, so the parser accepts any unindented
 * line starting with a key and keeps what it cannot split as description.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <misgrid.h>

#include "keys.h"

static mgkey *keys;
static int nkeys = -1;

/* Keys that mean nothing to a preconditioner: PETSc's KSP owns the
 * iteration, and the plugin sets the block size and near-nullspace from
 * the matrix (they can still be overridden: see wanted below). */
static const char *const skipped[] = {"tol", "maxit", NULL};

static int wanted(const char *key, const char *scope)
{
    for (int i = 0; skipped[i]; i++)
        if (!strcmp(key, skipped[i])) return 0;
    /* Solver keys, and the device (the solve phase follows it). */
    return strstr(scope, "solver") != NULL || !strcmp(key, "device");
}

static char *dup_range(const char *a, const char *b)
{
    size_t n = (size_t)(b - a);
    char  *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, a, n);
    s[n] = 0;
    return s;
}

/* parse fills keys from the help text; returns 0, or -1 when out of memory. */
static int parse(const char *text)
{
    int cap = 64, n = 0;
    mgkey *k = calloc((size_t)cap, sizeof *k);
    if (!k) return -1;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        if (!isspace((unsigned char)*p) && p != eol) {
            if (n == cap) {
                mgkey *g = realloc(k, sizeof *k * (size_t)cap * 2);
                if (!g) goto oom;
                k = g;
                cap *= 2;
            }
            mgkey *e = &k[n];
            memset(e, 0, sizeof *e);
            const char *q = p;
            while (q < eol && (isalnum((unsigned char)*q) || *q == '_')) q++;
            e->key = dup_range(p, q);
            const char *open = strstr(q, "(default ");
            const char *semi = open && open < eol ? memchr(open, ';', (size_t)(eol - open)) : NULL;
            const char *close = eol;
            while (close > q && close[-1] != ')') close--;
            if (open && open < eol && semi && close > semi) {
                e->def = dup_range(open + 9, semi);
                e->scope = dup_range(semi + 1 + (semi[1] == ' '), close - 1);
            } else {
                e->def = dup_range(q, q);
                e->scope = dup_range(q, eol);
            }
            /* The description: the indented lines that follow, joined. */
            const char *d = *eol ? eol + 1 : eol, *dend = d;
            while (*dend && isspace((unsigned char)*dend) && *dend != '\n') {
                const char *l = strchr(dend, '\n');
                dend = l ? l + 1 : dend + strlen(dend);
            }
            e->doc = dup_range(d, dend);
            if (!e->key || !e->def || !e->scope || !e->doc) {
                free(e->key), free(e->def), free(e->scope), free(e->doc);
                goto oom;
            }
            for (char *c = e->doc; *c; c++)
                if (*c == '\n') *c = ' ';
            char *s = e->doc, *t = e->doc; /* squeeze runs of blanks */
            for (; *s; s++)
                if (!(isspace((unsigned char)*s) && (t == e->doc || t[-1] == ' '))) *t++ = isspace((unsigned char)*s) ? ' ' : *s;
            while (t > e->doc && t[-1] == ' ') t--;
            *t = 0;
            if (*e->key) n++;
            else {
                free(e->key), free(e->def), free(e->scope), free(e->doc);
            }
            p = dend;
            continue;
        }
        p = *eol ? eol + 1 : eol;
    }
    /* Keep the keys a PC can use; if the help format changed so that no
     * scope names the solver, keep them all rather than none. */
    int m = 0;
    for (int i = 0; i < n; i++) m += wanted(k[i].key, k[i].scope);
    for (int i = 0; i < n; i++) k[i].pc = m == 0 || wanted(k[i].key, k[i].scope);
    keys = k;
    nkeys = n;
    return 0;
oom:
    for (int i = 0; i < n; i++) free(k[i].key), free(k[i].def), free(k[i].scope), free(k[i].doc);
    free(k);
    return -1;
}

int mgkeys_load(const mgkey **out, int *count, misgrid_status *st)
{
    *st = MISGRID_OK;
    if (nkeys < 0) {
        int64_t need = 0;
        *st = misgrid_option_help(NULL, 0, &need);
        if (*st != MISGRID_OK) return -1;
        char *buf = malloc((size_t)need);
        if (!buf) return -1;
        *st = misgrid_option_help(buf, need, NULL);
        int rc = *st == MISGRID_OK ? parse(buf) : -1;
        free(buf);
        if (rc) return -1;
    }
    *out = keys;
    *count = nkeys;
    return 0;
}
