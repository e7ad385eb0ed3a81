/*
 * PCMISGRID: misgrid's smoothed-aggregation AMG (libmisgrid's solver) as
 * a PETSc preconditioner. See docs/petsc.md.
 *
 * The operator is copied into misgrid once per setup (misgrid keeps its
 * own CSR); a setup with the same nonzero pattern only passes the new
 * values (misgrid_solver_update_values keeps the aggregates). PCApply is
 * one misgrid cycle (misgrid_solver_apply).
 */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include <petsc/private/pcimpl.h>
#include <misgrid.h>

#include "keys.h"
#include "pcmisgrid.h"

#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
#error "PCMISGRID needs a PETSc built with real double-precision scalars"
#endif

#define MG_INDEX (sizeof(PetscInt) == 8 ? MISGRID_INT64 : MISGRID_INT32)

typedef struct {
    misgrid_context ctx;    /* options and messages of this PC */
    misgrid_solver  solver; /* 0 before the first setup */
    char          **uval;   /* the user's value of each registry key (PCMISGRIDSetOption, -pc_misgrid_<key>), or NULL */
    PetscInt        cdim, cnodes; /* PCSetCoordinates */
    PetscReal      *coords;
    PetscInt        coordsgen; /* PCSetCoordinates calls so far */
    /* What the last full setup was made for: a numeric setup needs the same. */
    PetscInt        n, nnz, bs, *ia, *ja;
    PetscInt        coordsused; /* coordsgen then */
    MatNullSpace    nearsp;     /* the near-nullspace then (a reference) */
    MatNullSpace    nullsp;     /* the nullspace (kernel) then (a reference) */
    Mat             conv;       /* the operator converted to MATSEQAIJ, when it is not one */
    char            nsp[128];   /* where the near-nullspace came from, for PCView */
    char            ker[128];   /* where the kernel came from, for PCView */
    char            derived[128]; /* the options the plugin set, for PCView */
    PetscInt        full, numeric; /* setups of each kind */
} PC_MISGRID;

/*
 * The Go runtime inside libmisgrid preempts its goroutines with SIGURG.
 * PetscInitialize installs PETSc's error handler for SIGURG too (among
 * the signals it catches), so in a program that links the library at
 * build time, where Go's handler came first, the first preemption would
 * end the run as "Caught signal". The plugin keeps Go's handler, saved
 * when the library loads (Go installs it from libmisgrid's initialiser,
 * which runs before ours), and puts it back when PETSc has replaced it;
 * PETSc's handlers for every other signal stay as they are.
 */
static struct sigaction go_sigurg;
static int              have_go_sigurg;

__attribute__((constructor)) static void save_go_sigurg(void)
{
    Dl_info where;
    /* Only a handler inside libmisgrid is Go's: where libmisgrid was loaded
     * earlier than the plugin, PETSc may have replaced it in between (the
     * Python module puts it back before loading the plugin). */
    have_go_sigurg = sigaction(SIGURG, NULL, &go_sigurg) == 0 && (go_sigurg.sa_flags & SA_SIGINFO) &&
                     dladdr((void *)go_sigurg.sa_sigaction, &where) && where.dli_fname && strstr(where.dli_fname, "libmisgrid.so");
}

static void keep_go_sigurg(void)
{
    struct sigaction now;
    if (have_go_sigurg && sigaction(SIGURG, NULL, &now) == 0 && now.sa_sigaction != go_sigurg.sa_sigaction)
        sigaction(SIGURG, &go_sigurg, NULL);
}

/* -log_view events: the library's share of PCSetUp and PCApply. */
static PetscLogEvent ev_setup, ev_update, ev_apply;

/* misgrid_status to the closest PETSc error code. */
static PetscErrorCode mg_code(misgrid_status s)
{
    switch (s) {
    case MISGRID_ERR_NOMEM: return PETSC_ERR_MEM;
    case MISGRID_ERR_NOGPU: return PETSC_ERR_SUP_SYS;
    case MISGRID_ERR_OPTION:
    case MISGRID_ERR_ARG: return PETSC_ERR_ARG_WRONG;
    case MISGRID_ERR_RANGE: return PETSC_ERR_ARG_OUTOFRANGE;
    case MISGRID_ERR_IO: return PETSC_ERR_FILE_WRITE;
    default: return PETSC_ERR_LIB;
    }
}

/* MGCall turns a failed misgrid call into a PETSc error carrying
 * misgrid's message (never an abort). */
#define MGCall(pc, ctx, call) \
    do { \
        misgrid_status mg_s_ = (call); \
        if (mg_s_ != MISGRID_OK) \
            SETERRQ(PetscObjectComm((PetscObject)(pc)), mg_code(mg_s_), "misgrid: %s [%s]", \
                    misgrid_error_message(ctx), misgrid_status_string(mg_s_)); \
    } while (0)

static PetscErrorCode PCMISGRIDKeys(PC pc, const mgkey **keys, int *n)
{
    misgrid_status st;
    PetscFunctionBegin;
    if (mgkeys_load(keys, n, &st)) {
        PetscCheck(st != MISGRID_OK, PetscObjectComm((PetscObject)pc), PETSC_ERR_MEM, "misgrid: out of memory reading the option keys");
        MGCall(pc, (misgrid_context)0, st);
    }
    PetscFunctionReturn(0);
}

/* haskey says whether libmisgrid's registry has key for solvers. */
static PetscBool haskey(const char *key)
{
    const mgkey   *keys;
    int            n;
    misgrid_status st;
    if (mgkeys_load(&keys, &n, &st)) return PETSC_FALSE;
    for (int i = 0; i < n; i++)
        if (keys[i].pc && !strcmp(keys[i].key, key)) return PETSC_TRUE;
    return PETSC_FALSE;
}

/* append adds " key=value" to *s. */
static PetscErrorCode append(char **s, const char *key, const char *value)
{
    size_t old = *s ? strlen(*s) : 0, add = strlen(key) + strlen(value) + 2;
    char  *t;
    PetscFunctionBegin;
    PetscCall(PetscMalloc1(old + add + 1, &t));
    if (old) PetscCall(PetscMemcpy(t, *s, old));
    snprintf(t + old, add + 1, " %s=%s", key, value);
    PetscCall(PetscFree(*s));
    *s = t;
    PetscFunctionReturn(0);
}

/* ctxwith makes a context holding the options a then b (either may be
 * NULL; the last value of a key wins); a bad option is a PETSc error with
 * misgrid's message. */
static PetscErrorCode ctxwith(PC pc, const char *a, const char *b, misgrid_context *out)
{
    misgrid_context c;
    misgrid_status  st = MISGRID_OK;
    char            msg[2048];
    PetscFunctionBegin;
    MGCall(pc, (misgrid_context)0, misgrid_context_create(&c));
    if (a) st = misgrid_context_set_option(c, a);
    if (st == MISGRID_OK && b) st = misgrid_context_set_option(c, b);
    if (st != MISGRID_OK) {
        misgrid_error_message_copy(c, msg, sizeof msg, NULL);
        misgrid_context_destroy(c);
        SETERRQ(PetscObjectComm((PetscObject)pc), mg_code(st), "misgrid: %s [%s]", msg, misgrid_status_string(st));
    }
    *out = c;
    PetscFunctionReturn(0);
}

PetscErrorCode PCMISGRIDSetOption(PC pc, const char key[], const char value[])
{
    PC_MISGRID     *mg;
    PetscBool       is;
    char           *kv = NULL;
    const mgkey    *keys;
    int             n, k = -1;
    misgrid_context c;
    PetscFunctionBegin;
    PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMISGRID, &is));
    PetscCheck(is, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCMISGRIDSetOption: the PC is not of type misgrid");
    PetscCheck(!strpbrk(value, " ,;=\t\n"), PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG,
               "misgrid option %s: value \"%s\" may not contain blanks, commas, semicolons or '='", key, value);
    mg = (PC_MISGRID *)pc->data;
    /* libmisgrid checks key and value now, so that the error names the
     * option where it was given. */
    PetscCall(append(&kv, key, value));
    PetscErrorCode ierr = ctxwith(pc, kv, NULL, &c);
    PetscCall(PetscFree(kv));
    PetscCall(ierr);
    MGCall(pc, c, misgrid_context_destroy(c));
    PetscCall(PCMISGRIDKeys(pc, &keys, &n));
    for (int i = 0; i < n; i++)
        if (!strcmp(keys[i].key, key)) k = i;
    PetscCheck(k >= 0 && keys[k].pc, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG,
               "misgrid option %s applies to %s, not to the preconditioner", key, k >= 0 ? keys[k].scope : "(unknown)");
    if (!mg->uval) PetscCall(PetscCalloc1(n, &mg->uval));
    PetscCall(PetscFree(mg->uval[k]));
    PetscCall(PetscStrallocpy(value, &mg->uval[k]));
    PetscFunctionReturn(0);
}

static PetscErrorCode PCSetFromOptions_MISGRID(PC pc, PetscOptionItems *PetscOptionsObject)
{
    PC_MISGRID  *mg = (PC_MISGRID *)pc->data;
    const mgkey *keys;
    int          n;
    char         opt[128], value[256];
    PetscBool    set;
    PetscFunctionBegin;
    PetscCall(PCMISGRIDKeys(pc, &keys, &n));
    PetscOptionsHeadBegin(PetscOptionsObject, "misgrid smoothed-aggregation AMG options (libmisgrid's registry)");
    for (int i = 0; i < n; i++) {
        if (!keys[i].pc) continue;
        PetscCall(PetscSNPrintf(opt, sizeof opt, "-pc_misgrid_%s", keys[i].key));
        const char *now = mg->uval && mg->uval[i] ? mg->uval[i] : keys[i].def;
        PetscCall(PetscOptionsString(opt, keys[i].doc, "PCMISGRIDSetOption", now, value, sizeof value, &set));
        if (set) PetscCall(PCMISGRIDSetOption(pc, keys[i].key, value));
    }
    PetscOptionsHeadEnd();
    PetscFunctionReturn(0);
}

static PetscErrorCode PCSetCoordinates_MISGRID(PC pc, PetscInt dim, PetscInt nnodes, PetscReal *coords)
{
    PC_MISGRID *mg = (PC_MISGRID *)pc->data;
    PetscFunctionBegin;
    PetscCheck(dim >= 1 && dim <= 3, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCSetCoordinates: dimension %" PetscInt_FMT " is not 1, 2 or 3", dim);
    PetscCall(PetscFree(mg->coords));
    PetscCall(PetscMalloc1(dim * nnodes, &mg->coords));
    PetscCall(PetscArraycpy(mg->coords, coords, dim * nnodes));
    mg->cdim = dim;
    mg->cnodes = nnodes;
    mg->coordsgen++;
    PetscFunctionReturn(0);
}

/* seqaij returns the operator as a MATSEQAIJ: itself, its diagonal block
 * (MATMPIAIJ on one rank), or a converted copy kept in mg->conv. */
static PetscErrorCode seqaij(PC pc, Mat A, Mat *out)
{
    PC_MISGRID *mg = (PC_MISGRID *)pc->data;
    PetscMPIInt size;
    PetscBool   is;
    PetscFunctionBegin;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    PetscCheck(size == 1, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
               "PCMISGRID runs on one MPI rank, and this operator is distributed over %d: misgrid's AMG setup is sequential. "
               "Use it per rank with -pc_type bjacobi -sub_pc_type misgrid (or -pc_type asm -sub_pc_type misgrid)",
               (int)size);
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATSEQAIJ, &is));
    if (is) {
        *out = A;
        PetscFunctionReturn(0);
    }
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &is));
    if (is) {
        Mat             Ad, Ao;
        const PetscInt *garray;
        PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
        *out = Ad;
        PetscFunctionReturn(0);
    }
    /* BAIJ, SBAIJ (converted to the full matrix), dense, ...: a copy. */
    PetscCall(MatConvert(A, MATSEQAIJ, mg->conv ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &mg->conv));
    *out = mg->conv;
    PetscFunctionReturn(0);
}

/* nsvectors copies a MatNullSpace's vectors (the constant first when it
 * has one) into *v, nvec vectors of n entries. */
static PetscErrorCode nsvectors(PC pc, MatNullSpace sp, PetscInt n, PetscInt *nvec, double **v)
{
    PetscBool  cnst;
    PetscInt   nv, m;
    const Vec *vecs;
    PetscFunctionBegin;
    PetscCall(MatNullSpaceGetVecs(sp, &cnst, &nv, &vecs));
    PetscCall(PetscMalloc1((size_t)(nv + cnst) * n, v));
    if (cnst)
        for (PetscInt i = 0; i < n; i++) (*v)[i] = 1;
    for (PetscInt j = 0; j < nv; j++) {
        const PetscScalar *a;
        PetscCall(VecGetLocalSize(vecs[j], &m));
        PetscCheck(m == n, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_SIZ,
                   "null-space vector %" PetscInt_FMT " has %" PetscInt_FMT " entries, the operator %" PetscInt_FMT " rows", j, m, n);
        PetscCall(VecGetArrayRead(vecs[j], &a));
        PetscCall(PetscArraycpy(*v + (size_t)(j + cnst) * n, a, n));
        PetscCall(VecRestoreArrayRead(vecs[j], &a));
    }
    *nvec = nv + cnst;
    PetscFunctionReturn(0);
}

typedef struct {
    const char *kind; /* nullspace= value, NULL for misgrid's default */
    PetscInt    nvec;
    double     *v;
} nearnull;

/* near picks the near-nullspace: the matrix's (MatGetNearNullSpace), else
 * rigid-body modes from PCSetCoordinates when the block size is above 1,
 * else misgrid's default (the constant of each dof of a block). */
static PetscErrorCode near(PC pc, Mat A, PetscInt n, PetscInt bs, nearnull *nn)
{
    PC_MISGRID  *mg = (PC_MISGRID *)pc->data;
    MatNullSpace sp;
    PetscFunctionBegin;
    PetscCall(PetscMemzero(nn, sizeof *nn));
    PetscCall(MatGetNearNullSpace(A, &sp));
    if (sp) {
        PetscCall(nsvectors(pc, sp, n, &nn->nvec, &nn->v));
        nn->kind = "vectors";
        PetscCall(PetscSNPrintf(mg->nsp, sizeof mg->nsp, "%" PetscInt_FMT " vectors from MatGetNearNullSpace", nn->nvec));
    } else if (mg->coords && bs > 1) {
        PetscCheck(mg->cnodes * bs == n, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_SIZ,
                   "PCSetCoordinates gave %" PetscInt_FMT " nodes, the operator has %" PetscInt_FMT " rows of block size %" PetscInt_FMT, mg->cnodes, n, bs);
        nn->kind = "rbm";
        PetscCall(PetscSNPrintf(mg->nsp, sizeof mg->nsp, "rigid-body modes from PCSetCoordinates (%" PetscInt_FMT "D)", mg->cdim));
    } else {
        PetscCall(PetscSNPrintf(mg->nsp, sizeof mg->nsp, "the constant of each dof in a block (no near-nullspace or coordinates given)"));
    }
    PetscFunctionReturn(0);
}

/* kernel passes the nullspace of the operator itself (pure Neumann,
 * free-floating bodies), from MatGetNullSpace, to misgrid as its kernel:
 * checked and used instead of the one misgrid's setup would look for.
 * PCApply is the cycle alone; the KSP removes the MatNullSpace from each
 * preconditioned residual itself. */
static PetscErrorCode kernel(PC pc, Mat A, PetscInt n)
{
    PC_MISGRID  *mg = (PC_MISGRID *)pc->data;
    MatNullSpace sp;
    PetscInt     nv;
    double      *v;
    PetscFunctionBegin;
    PetscCall(MatGetNullSpace(A, &sp));
    if (!sp) {
        PetscCall(PetscSNPrintf(mg->ker, sizeof mg->ker, "none given (misgrid's setup looks for one if the coarsest operator is singular)"));
        PetscFunctionReturn(0);
    }
    PetscCall(nsvectors(pc, sp, n, &nv, &v));
    misgrid_status st = misgrid_solver_set_kernel(mg->ctx, mg->solver, n, (int32_t)nv, v);
    PetscCall(PetscFree(v));
    MGCall(pc, mg->ctx, st);
    PetscCall(PetscObjectReference((PetscObject)sp));
    mg->nullsp = sp;
    PetscCall(PetscSNPrintf(mg->ker, sizeof mg->ker, "%" PetscInt_FMT " vectors from MatGetNullSpace (the KSP projects them out)", nv));
    PetscFunctionReturn(0);
}

/* dropsolver frees the hierarchy and the pattern it was built for. */
static PetscErrorCode dropsolver(PC pc)
{
    PC_MISGRID *mg = (PC_MISGRID *)pc->data;
    PetscFunctionBegin;
    if (mg->solver) MGCall(pc, mg->ctx, misgrid_solver_destroy(mg->ctx, mg->solver));
    mg->solver = 0;
    PetscCall(PetscFree2(mg->ia, mg->ja));
    PetscCall(MatNullSpaceDestroy(&mg->nearsp));
    PetscCall(MatNullSpaceDestroy(&mg->nullsp));
    mg->n = mg->nnz = 0;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCReset_MISGRID(PC pc)
{
    PC_MISGRID *mg = (PC_MISGRID *)pc->data;
    PetscFunctionBegin;
    PetscCall(dropsolver(pc));
    PetscCall(MatDestroy(&mg->conv));
    PetscFunctionReturn(0);
}

/* newctx replaces the PC's context with one holding opt then the user's
 * options, which the next misgrid_solver_create reads. */
static PetscErrorCode newctx(PC pc, const char *opt)
{
    PC_MISGRID     *mg = (PC_MISGRID *)pc->data;
    misgrid_context fresh;
    char           *user = NULL;
    const mgkey    *keys;
    int             n;
    PetscFunctionBegin;
    PetscCall(PCMISGRIDKeys(pc, &keys, &n));
    for (int i = 0; mg->uval && i < n; i++)
        if (mg->uval[i]) PetscCall(append(&user, keys[i].key, mg->uval[i]));
    PetscErrorCode ierr = ctxwith(pc, opt, user, &fresh);
    PetscCall(PetscFree(user));
    PetscCall(ierr);
    MGCall(pc, mg->ctx, misgrid_context_destroy(mg->ctx));
    mg->ctx = fresh;
    PetscFunctionReturn(0);
}

/* fullsetup builds a new hierarchy: options, near-nullspace, misgrid_solver_setup. */
static PetscErrorCode fullsetup(PC pc, Mat A, PetscInt n, PetscInt bs, const PetscInt *ia, const PetscInt *ja, const PetscScalar *a)
{
    PC_MISGRID *mg = (PC_MISGRID *)pc->data;
    char        opt[128];
    nearnull    nn;
    PetscInt    nnz = ia[n];
    PetscFunctionBegin;
    PetscCall(dropsolver(pc));
    PetscCall(near(pc, A, n, bs, &nn));
    /* block_size is the solver's block in every libmisgrid version; reuse
     * (keep the pattern data for numeric re-setups), where the library
     * has the key, is what SAME_NONZERO_PATTERN asks for. */
    PetscCall(PetscSNPrintf(opt, sizeof opt, "block_size=%" PetscInt_FMT "%s%s%s", bs, nn.kind ? " nullspace=" : "", nn.kind ? nn.kind : "",
                            haskey("reuse") ? " reuse=true" : ""));
    PetscCall(newctx(pc, opt));
    PetscCall(PetscStrncpy(mg->derived, opt, sizeof mg->derived));
    MGCall(pc, mg->ctx, misgrid_solver_create(mg->ctx, "", &mg->solver));
    if (nn.v) {
        misgrid_status st = misgrid_solver_set_nullspace(mg->ctx, mg->solver, n, (int32_t)nn.nvec, nn.v);
        PetscCall(PetscFree(nn.v));
        MGCall(pc, mg->ctx, st);
    } else if (nn.kind) {
        MGCall(pc, mg->ctx, misgrid_solver_set_coordinates(mg->ctx, mg->solver, (int32_t)mg->cdim, mg->cnodes, mg->coords));
    }
    PetscCall(kernel(pc, A, n));
    PetscCall(PetscLogEventBegin(ev_setup, pc, 0, 0, 0));
    misgrid_status st = misgrid_solver_setup(mg->ctx, mg->solver, n, n, nnz, MG_INDEX, 0, ia, ja, MISGRID_FLOAT64, a);
    PetscCall(PetscLogEventEnd(ev_setup, pc, 0, 0, 0));
    MGCall(pc, mg->ctx, st);
    PetscCall(PetscMalloc2(n + 1, &mg->ia, nnz, &mg->ja));
    PetscCall(PetscArraycpy(mg->ia, ia, n + 1));
    PetscCall(PetscArraycpy(mg->ja, ja, nnz));
    mg->n = n, mg->nnz = nnz, mg->bs = bs;
    PetscCall(MatGetNearNullSpace(A, &mg->nearsp));
    if (mg->nearsp) PetscCall(PetscObjectReference((PetscObject)mg->nearsp));
    mg->coordsused = mg->coordsgen;
    mg->full++;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCSetUp_MISGRID(PC pc)
{
    PC_MISGRID        *mg = (PC_MISGRID *)pc->data;
    Mat                A = pc->pmat, S = NULL;
    PetscInt           n, bs;
    const PetscInt    *ia, *ja;
    const PetscScalar *a;
    PetscBool          done, same;
    PetscFunctionBegin;
    keep_go_sigurg(); /* in case PETSc's handlers were pushed again since */
    PetscCall(seqaij(pc, A, &S));
    PetscCall(MatGetBlockSize(A, &bs));
    PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "PCMISGRID: cannot get the rows of the operator");
    PetscCall(MatSeqAIJGetArrayRead(S, &a));
    /* PETSc sets SAME_NONZERO_PATTERN from the matrix's nonzero state; the
     * pattern is compared too (a cheap check against a caller's wrong
     * flag), and the block size, the near-nullspace and nullspace objects
     * and the coordinates must be those of the last full setup. */
    MatNullSpace sp, ker;
    PetscCall(MatGetNearNullSpace(A, &sp));
    PetscCall(MatGetNullSpace(A, &ker));
    same = (PetscBool)(pc->setupcalled && pc->flag == SAME_NONZERO_PATTERN && mg->solver && n == mg->n && ia[n] == mg->nnz && bs == mg->bs &&
                       sp == mg->nearsp && ker == mg->nullsp && mg->coordsgen == mg->coordsused);
    if (same) {
        PetscCall(PetscArraycmp(ia, mg->ia, n + 1, &same));
        if (same) PetscCall(PetscArraycmp(ja, mg->ja, ia[n], &same));
    }
    misgrid_status st = MISGRID_OK;
    PetscErrorCode ierr = 0;
    if (same) {
        PetscCall(PetscLogEventBegin(ev_update, pc, 0, 0, 0));
        st = misgrid_solver_update_values(mg->ctx, mg->solver, ia[n], MISGRID_FLOAT64, a);
        PetscCall(PetscLogEventEnd(ev_update, pc, 0, 0, 0));
    } else ierr = fullsetup(pc, A, n, bs, ia, ja, a);
    PetscCall(MatSeqAIJRestoreArrayRead(S, &a));
    PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCall(ierr);
    MGCall(pc, mg->ctx, st);
    if (same) mg->numeric++;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCApply_MISGRID(PC pc, Vec x, Vec y)
{
    PC_MISGRID        *mg = (PC_MISGRID *)pc->data;
    const PetscScalar *r;
    PetscScalar       *z;
    PetscInt           n;
    PetscFunctionBegin;
    PetscCall(VecGetLocalSize(x, &n));
    PetscCall(VecGetArrayRead(x, &r));
    PetscCall(VecGetArrayWrite(y, &z));
    PetscCall(PetscLogEventBegin(ev_apply, pc, x, y, 0));
    misgrid_status st = misgrid_solver_apply(mg->ctx, mg->solver, n, r, z);
    PetscCall(PetscLogEventEnd(ev_apply, pc, x, y, 0));
    PetscCall(VecRestoreArrayWrite(y, &z));
    PetscCall(VecRestoreArrayRead(x, &r));
    MGCall(pc, mg->ctx, st);
    PetscFunctionReturn(0);
}

PetscErrorCode PCMISGRIDGetInfo(PC pc, PetscInt *levels, PetscReal *opc, PetscInt *full, PetscInt *numeric)
{
    PC_MISGRID *mg;
    PetscBool   is;
    int64_t     nl = 0;
    double      oc = 0;
    PetscFunctionBegin;
    PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMISGRID, &is));
    PetscCheck(is, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCMISGRIDGetInfo: the PC is not of type misgrid");
    mg = (PC_MISGRID *)pc->data;
    if (mg->solver) MGCall(pc, mg->ctx, misgrid_solver_info(mg->ctx, mg->solver, &nl, &oc, NULL, NULL));
    if (levels) *levels = (PetscInt)nl;
    if (opc) *opc = oc;
    if (full) *full = mg->full;
    if (numeric) *numeric = mg->numeric;
    PetscFunctionReturn(0);
}

static PetscErrorCode PCView_MISGRID(PC pc, PetscViewer viewer)
{
    PC_MISGRID  *mg = (PC_MISGRID *)pc->data;
    PetscBool    ascii;
    int64_t      nl, rows, nnz, bs;
    double       oc, gc, secs;
    const mgkey *keys;
    int          nk;
    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
    if (!ascii) PetscFunctionReturn(0);
    PetscCall(PetscViewerASCIIPrintf(viewer, "  misgrid smoothed-aggregation AMG (libmisgrid %s)\n", misgrid_version()));
    if (!mg->solver) {
        PetscCall(PetscViewerASCIIPrintf(viewer, "    not set up yet\n"));
        PetscFunctionReturn(0);
    }
    MGCall(pc, mg->ctx, misgrid_solver_info(mg->ctx, mg->solver, &nl, &oc, &gc, &secs));
    PetscCall(PetscViewerASCIIPrintf(viewer, "    levels=%d  operator complexity=%.3f  grid complexity=%.3f\n", (int)nl, oc, gc));
    PetscCall(PetscViewerASCIIPrintf(viewer, "    setups: %d full, %d numeric (aggregates kept); last %.4f s\n", (int)mg->full, (int)mg->numeric, secs));
    PetscCall(PetscViewerASCIIPrintf(viewer, "    near-nullspace: %s\n", mg->nsp));
    PetscCall(PetscViewerASCIIPrintf(viewer, "    kernel: %s\n", mg->ker));
    /* The options in force beyond libmisgrid's defaults: the plugin's, then the user's. */
    PetscCall(PCMISGRIDKeys(pc, &keys, &nk));
    PetscCall(PetscViewerASCIIPrintf(viewer, "    options: %s", mg->derived));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (int i = 0; mg->uval && i < nk; i++)
        if (mg->uval[i]) PetscCall(PetscViewerASCIIPrintf(viewer, " %s=%s", keys[i].key, mg->uval[i]));
    PetscCall(PetscViewerASCIIPrintf(viewer, " (others: libmisgrid's defaults, see -help)\n"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
    PetscCall(PetscViewerASCIIPrintf(viewer, "    level        rows    nonzeros  block  nnz/row\n"));
    for (int64_t l = 0; l < nl; l++) {
        MGCall(pc, mg->ctx, misgrid_solver_level_info(mg->ctx, mg->solver, l, &rows, &nnz, &bs));
        PetscCall(PetscViewerASCIIPrintf(viewer, "    %5d %11lld %11lld %6d %8.1f%s\n", (int)l, (long long)rows, (long long)nnz, (int)bs,
                                         rows ? (double)nnz / (double)rows : 0.0, l == nl - 1 ? "  (coarsest: dense Cholesky)" : ""));
    }
    PetscFunctionReturn(0);
}

static PetscErrorCode PCDestroy_MISGRID(PC pc)
{
    PC_MISGRID *mg = (PC_MISGRID *)pc->data;
    PetscFunctionBegin;
    PetscCall(PCReset_MISGRID(pc));
    MGCall(pc, mg->ctx, misgrid_context_destroy(mg->ctx));
    PetscCall(PetscFree(mg->coords));
    if (mg->uval) {
        const mgkey *keys;
        int          n;
        PetscCall(PCMISGRIDKeys(pc, &keys, &n));
        for (int i = 0; i < n; i++) PetscCall(PetscFree(mg->uval[i]));
        PetscCall(PetscFree(mg->uval));
    }
    PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCSetCoordinates_C", NULL));
    PetscCall(PetscFree(pc->data));
    PetscFunctionReturn(0);
}

/*MC
   PCMISGRID - misgrid's smoothed-aggregation algebraic multigrid (MIS-2
   aggregates with boundary-first priorities), one cycle per application.

   Options: -pc_misgrid_<key> <value> for every solver key of libmisgrid's
   registry (see -help). Sequential: one MPI rank, or per rank under
   PCBJACOBI/PCASM.
M*/
static PetscErrorCode PCCreate_MISGRID(PC pc)
{
    PC_MISGRID *mg;
    PetscFunctionBegin;
    keep_go_sigurg();
    PetscCall(PetscNew(&mg));
    pc->data = mg;
    MGCall(pc, (misgrid_context)0, misgrid_context_create(&mg->ctx));
    pc->ops->setup = PCSetUp_MISGRID;
    pc->ops->apply = PCApply_MISGRID;
    pc->ops->applytranspose = PCApply_MISGRID; /* the cycle is symmetric */
    pc->ops->reset = PCReset_MISGRID;
    pc->ops->destroy = PCDestroy_MISGRID;
    pc->ops->setfromoptions = PCSetFromOptions_MISGRID;
    pc->ops->view = PCView_MISGRID;
    PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCSetCoordinates_C", PCSetCoordinates_MISGRID));
    PetscFunctionReturn(0);
}

PetscErrorCode PCMISGRIDRegister(void)
{
    PetscFunctionBegin;
    keep_go_sigurg();
    PetscCall(PCRegister(PCMISGRID, PCCreate_MISGRID));
    if (!ev_setup) {
        PetscCall(PetscLogEventRegister("MisgridSetup", PC_CLASSID, &ev_setup));
        PetscCall(PetscLogEventRegister("MisgridUpdate", PC_CLASSID, &ev_update));
        PetscCall(PetscLogEventRegister("MisgridApply", PC_CLASSID, &ev_apply));
    }
    PetscFunctionReturn(0);
}

/* -dll_append <dir>/libmisgrid-petsc.so: PETSc calls
 * PetscDLLibraryRegister_<name> on loading, <name> being the file name
 * less "lib" and the extension, with '-' made '_'. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_misgrid_petsc(void)
{
    return PCMISGRIDRegister();
}
