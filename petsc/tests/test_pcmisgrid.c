/*
 * test_pcmisgrid.c - PCMISGRID through PETSc's KSP, linked (the program
 * registers the PC itself). Each check prints "ok - ..." or fails with a
 * message; run.sh runs it, and the cases that need a command line of
 * their own (-help, several MPI ranks, -dll_append).
 *
 *   ./test_pcmisgrid            the checks below
 *   ./test_pcmisgrid -mpi       one solve on PETSC_COMM_WORLD (run.sh: mpiexec -n 1 and 2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <petscksp.h>

#include "fem.h"
#include "pcmisgrid.h"

/* solve runs CG with PCMISGRID on p to rtol 1e-8, checks the true
 * residual, and returns the KSP (for reuse checks) and the iterations. */
static PetscErrorCode solve(Problem *p, const char *prefix, PetscBool coords, KSP *out, PetscInt *its)
{
    KSP                ksp;
    PC                 pc;
    Vec                x, r;
    PetscReal          rn, bn;
    KSPConvergedReason reason;
    PetscFunctionBeginUser;
    PetscCall(KSPCreate(PetscObjectComm((PetscObject)p->A), &ksp));
    PetscCall(KSPSetOptionsPrefix(ksp, prefix));
    PetscCall(KSPSetOperators(ksp, p->A, p->A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, 1e-8, 1e-50, PETSC_DEFAULT, 300));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCMISGRID));
    if (coords) PetscCall(PCSetCoordinates(pc, 3, p->nnodes, p->coords));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(MatCreateVecs(p->A, &x, &r));
    PetscCall(KSPSolve(ksp, p->b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetIterationNumber(ksp, its));
    PetscCheck(reason > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: CG with misgrid did not converge (%s, %" PetscInt_FMT " its)", prefix, KSPConvergedReasons[reason], *its);
    PetscCall(MatMult(p->A, x, r));
    PetscCall(VecAYPX(r, -1, p->b));
    PetscCall(VecNorm(r, NORM_2, &rn));
    PetscCall(VecNorm(p->b, NORM_2, &bn));
    PetscCheck(rn <= 1.01e-8 * bn, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: true residual %g > 1e-8 |b|", prefix, (double)(rn / bn));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&r));
    if (out) *out = ksp;
    else PetscCall(KSPDestroy(&ksp));
    PetscFunctionReturn(0);
}

/* Poisson as AIJ, BAIJ, SBAIJ and MPIAIJ on one rank: the same iterations. */
static PetscErrorCode test_poisson(void)
{
    const char *types[] = {MATSEQAIJ, MATSEQBAIJ, MATSEQSBAIJ, MATMPIAIJ};
    PetscInt    its[4];
    PetscFunctionBeginUser;
    for (int t = 0; t < 4; t++) {
        Problem p;
        PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_POISSON, 12, 12, 12, MATSEQAIJ, &p));
        if (t) PetscCall(MatConvert(p.A, types[t], MAT_INPLACE_MATRIX, &p.A));
        PetscCall(solve(&p, "pois_", PETSC_FALSE, NULL, &its[t]));
        PetscCheck(its[t] <= 25, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Poisson %s: %" PetscInt_FMT " iterations, want <= 25", types[t], its[t]);
        PetscCheck(its[t] == its[0], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Poisson %s: %" PetscInt_FMT " iterations, AIJ took %" PetscInt_FMT " (same matrix)", types[t], its[t], its[0]);
        PetscCall(FEMDestroy(&p));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok - Poisson 13^3: %" PetscInt_FMT " iterations as AIJ, BAIJ, SBAIJ and MPIAIJ on one rank\n", its[0]));
    PetscFunctionReturn(0);
}

/* Elasticity: rigid-body modes from PCSetCoordinates and from
 * MatSetNearNullSpace give the same iterations, fewer than the constants. */
static PetscErrorCode test_elasticity(void)
{
    Problem      p;
    PetscInt     rbm, vec, cst;
    MatNullSpace sp;
    Vec          xyz;
    PetscFunctionBeginUser;
    PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_ELASTIC, 16, 4, 4, MATSEQBAIJ, &p));
    PetscCall(solve(&p, "elas_", PETSC_TRUE, NULL, &rbm));
    PetscCall(solve(&p, "elas_", PETSC_FALSE, NULL, &cst));
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, 3 * p.nnodes, p.coords, &xyz));
    PetscCall(MatNullSpaceCreateRigidBody(xyz, &sp));
    PetscCall(MatSetNearNullSpace(p.A, sp));
    PetscCall(solve(&p, "elas_", PETSC_FALSE, NULL, &vec));
    PetscCall(MatNullSpaceDestroy(&sp));
    PetscCall(VecDestroy(&xyz));
    PetscCall(FEMDestroy(&p));
    PetscCheck(rbm < cst, PETSC_COMM_SELF, PETSC_ERR_PLIB, "elasticity: rigid-body modes took %" PetscInt_FMT " iterations, constants %" PetscInt_FMT, rbm, cst);
    PetscCheck(vec <= rbm + 2 && rbm <= vec + 2, PETSC_COMM_SELF, PETSC_ERR_PLIB, "elasticity: rbm from coordinates %" PetscInt_FMT " its, from MatNullSpace %" PetscInt_FMT, rbm, vec);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok - elasticity 17x5x5 BAIJ bs=3: %" PetscInt_FMT " its (PCSetCoordinates), %" PetscInt_FMT " (MatSetNearNullSpace), %" PetscInt_FMT " (constants)\n", rbm, vec, cst));
    PetscFunctionReturn(0);
}

/* New values with the same pattern keep the aggregates (a numeric setup);
 * a new pattern redoes the setup. */
static PetscErrorCode test_reuse(void)
{
    Problem  p;
    KSP      ksp;
    PC       pc;
    PetscInt its, its2, full, numeric, levels;
    PetscFunctionBeginUser;
    PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_POISSON, 10, 10, 10, MATAIJ, &p));
    PetscCall(solve(&p, "reuse_", PETSC_FALSE, &ksp, &its));
    PetscCall(MatScale(p.A, 3));
    PetscCall(KSPSetOperators(ksp, p.A, p.A));
    {
        Vec x;
        PetscCall(MatCreateVecs(p.A, &x, NULL));
        PetscCall(KSPSolve(ksp, p.b, x));
        PetscCall(VecDestroy(&x));
    }
    PetscCall(KSPGetIterationNumber(ksp, &its2));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCMISGRIDGetInfo(pc, &levels, NULL, &full, &numeric));
    PetscCheck(full == 1 && numeric == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "same pattern: %" PetscInt_FMT " full and %" PetscInt_FMT " numeric setups, want 1 and 1", full, numeric);
    PetscCheck(its2 == its, PETSC_COMM_SELF, PETSC_ERR_PLIB, "3A: %" PetscInt_FMT " iterations, A took %" PetscInt_FMT, its2, its);
    /* A near-nullspace attached since: a full setup, though the pattern is the same. */
    {
        MatNullSpace sp;
        PetscCall(MatNullSpaceCreate(PETSC_COMM_SELF, PETSC_TRUE, 0, NULL, &sp));
        PetscCall(MatSetNearNullSpace(p.A, sp));
        PetscCall(MatNullSpaceDestroy(&sp));
        PetscCall(MatScale(p.A, 0.5));
        PetscCall(KSPSetOperators(ksp, p.A, p.A));
        PetscCall(KSPSetUp(ksp));
        PetscCall(PCMISGRIDGetInfo(pc, NULL, NULL, &full, &numeric));
        PetscCheck(full == 2 && numeric == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "new near-nullspace: %" PetscInt_FMT " full and %" PetscInt_FMT " numeric setups, want 2 and 1", full, numeric);
    }
    /* A new coupling between two far nodes (a spring: e (e_i - e_j)(e_i - e_j)^T keeps A SPD). */
    {
        PetscInt    n, ij[2];
        PetscScalar e[4] = {1e-3, -1e-3, -1e-3, 1e-3};
        PetscCall(MatGetSize(p.A, &n, NULL));
        ij[0] = 5, ij[1] = n - 5;
        PetscCall(MatSetOption(p.A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        PetscCall(MatSetValues(p.A, 2, ij, 2, ij, e, ADD_VALUES));
        PetscCall(MatAssemblyBegin(p.A, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(p.A, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(KSPSetOperators(ksp, p.A, p.A));
    PetscCall(KSPSetUp(ksp));
    PetscCall(PCMISGRIDGetInfo(pc, NULL, NULL, &full, &numeric));
    PetscCheck(full == 3 && numeric == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "new pattern: %" PetscInt_FMT " full and %" PetscInt_FMT " numeric setups, want 3 and 1", full, numeric);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(FEMDestroy(&p));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok - reuse: same pattern is a numeric setup (%" PetscInt_FMT " its before and after); a new near-nullspace or pattern a full one\n", its));
    PetscFunctionReturn(0);
}

/* expect_error checks that ierr is an error whose message contains want. */
static PetscErrorCode expect_error(PetscErrorCode ierr, const char *what, const char *want)
{
    const char *text;
    char       *msg;
    PetscFunctionBeginUser;
    PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: no error", what);
    PetscCall(PetscErrorMessage(ierr, &text, &msg));
    PetscCheck(msg && strstr(msg, want), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: message \"%s\" lacks \"%s\"", what, msg ? msg : "(none)", want);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok - %s: error %d \"%s\"\n", what, (int)ierr, msg));
    PetscFunctionReturn(0);
}

/* Bad options and matrices are PETSc errors with misgrid's message. */
static PetscErrorCode test_errors(void)
{
    Problem p;
    KSP     ksp;
    PC      pc;
    PetscFunctionBeginUser;
    PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_POISSON, 6, 6, 6, MATAIJ, &p));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, p.A, p.A));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCMISGRID));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    PetscErrorCode e1 = PCMISGRIDSetOption(pc, "smoother", "bogus");
    PetscCall(PetscPopErrorHandler());
    PetscCall(expect_error(e1, "smoother=bogus", "smoother=\"bogus\""));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    PetscErrorCode e2 = PCMISGRIDSetOption(pc, "no_such_key", "1");
    PetscCall(PetscPopErrorHandler());
    PetscCall(expect_error(e2, "unknown key", "unknown option \"no_such_key\""));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    PetscErrorCode e4 = PCMISGRIDSetOption(pc, "distance", "2");
    PetscCall(PetscPopErrorHandler());
    PetscCall(expect_error(e4, "a key of misgrid_mis", "not to the preconditioner"));
    /* A negative diagonal: not SPD, refused by misgrid's setup. */
    PetscCall(MatShift(p.A, -100));
    PetscCall(KSPSetOperators(ksp, p.A, p.A));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    PetscErrorCode e3 = KSPSetUp(ksp);
    PetscCall(PetscPopErrorHandler());
    PetscCall(expect_error(e3, "negative diagonal", "misgrid"));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(FEMDestroy(&p));
    PetscFunctionReturn(0);
}

/* PCView prints the hierarchy. */
static PetscErrorCode test_view(void)
{
    Problem     p;
    KSP         ksp;
    PC          pc;
    PetscInt    its;
    PetscViewer v;
    char        path[] = "/tmp/pcmisgrid-view-XXXXXX", out[8192];
    FILE       *f;
    size_t      len;
    int         fd;
    PetscFunctionBeginUser;
    PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_ELASTIC, 24, 6, 6, MATAIJ, &p));
    PetscCall(solve(&p, "view_", PETSC_TRUE, &ksp, &its));
    PetscCall(KSPGetPC(ksp, &pc));
    fd = mkstemp(path);
    PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "mkstemp failed");
    close(fd);
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, path, &v));
    PetscCall(PCView(pc, v));
    PetscCall(PetscViewerDestroy(&v));
    f = fopen(path, "r");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read %s", path);
    len = fread(out, 1, sizeof out - 1, f);
    out[len] = 0;
    fclose(f);
    remove(path);
    for (const char *w = "operator complexity\0rigid-body modes\0kernel: none given\0nonzeros\0block_size=3 nullspace=rbm\0"; *w; w += strlen(w) + 1)
        PetscCheck(strstr(out, w), PETSC_COMM_SELF, PETSC_ERR_PLIB, "PCView lacks \"%s\":\n%s", w, out);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok - PCView:\n%s", out));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(FEMDestroy(&p));
    PetscFunctionReturn(0);
}

/* singular solves a problem with no Dirichlet condition and a consistent
 * right-hand side (projected): with attach, its nullspace (constants, or
 * the rigid-body modes) attached by MatSetNullSpace, which the plugin
 * passes to misgrid_solver_set_kernel; without, only as near-nullspace,
 * and misgrid's setup finds the kernel from the singular coarsest
 * operator. Passes when CG with misgrid converges to 1e-8 in the true
 * residual. */
static PetscErrorCode singular(const char *name, int kind, PetscInt nx, PetscInt ny, PetscInt nz, PetscBool attach)
{
    Problem            p;
    MatNullSpace       sp;
    KSP                ksp;
    PC                 pc;
    Vec                x, r;
    PetscInt           its;
    PetscReal          rn, bn;
    KSPConvergedReason reason;
    PetscFunctionBeginUser;
    PetscCall(FEMAssemble(PETSC_COMM_SELF, kind | FEM_FREE, nx, ny, nz, MATAIJ, &p));
    if (kind & FEM_ELASTIC) {
        Vec xyz;
        PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, 3 * p.nnodes, p.coords, &xyz));
        PetscCall(MatNullSpaceCreateRigidBody(xyz, &sp));
        PetscCall(VecDestroy(&xyz));
    } else PetscCall(MatNullSpaceCreate(PETSC_COMM_SELF, PETSC_TRUE, 0, NULL, &sp));
    if (attach) PetscCall(MatSetNullSpace(p.A, sp));
    PetscCall(MatSetNearNullSpace(p.A, sp));
    PetscCall(MatNullSpaceRemove(sp, p.b)); /* gravity has a net force: project it out */
    PetscCall(MatCreateVecs(p.A, &x, NULL));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, p.A, p.A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, 1e-8, 1e-50, PETSC_DEFAULT, 300));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCMISGRID));
    PetscCall(KSPSolve(ksp, p.b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCheck(reason > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %s after %" PetscInt_FMT " iterations", name, KSPConvergedReasons[reason], its);
    PetscCall(VecDuplicate(p.b, &r));
    PetscCall(MatMult(p.A, x, r));
    PetscCall(VecAYPX(r, -1, p.b));
    PetscCall(VecNorm(r, NORM_2, &rn));
    PetscCall(VecNorm(p.b, NORM_2, &bn));
    PetscCheck(rn <= 1e-7 * bn, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: true residual %g", name, (double)(rn / bn));
    PetscCall(VecDestroy(&r));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ok - %s, %s: %" PetscInt_FMT " iterations, true residual %.2e\n", name,
                          attach ? "MatSetNullSpace -> misgrid_solver_set_kernel" : "kernel found by misgrid's setup", its, (double)(rn / bn)));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatNullSpaceDestroy(&sp));
    PetscCall(VecDestroy(&x));
    PetscCall(FEMDestroy(&p));
    PetscFunctionReturn(0);
}

/* -mpi: one Poisson solve on PETSC_COMM_WORLD (MPIAIJ on several ranks). */
static PetscErrorCode test_mpi(void)
{
    Problem     p;
    PetscMPIInt size;
    PetscInt    its;
    Vec         x;
    KSP         ksp;
    PC          pc;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_POISSON, 7, 7, 7, MATAIJ, &p));
    /* The same operator spread over the ranks, rows in blocks. */
    Mat      A;
    PetscInt N, rs, re;
    PetscCall(MatGetSize(p.A, &N, NULL));
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 27, NULL, 27, NULL, &A));
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    for (PetscInt r = rs; r < re; r++) {
        PetscInt           nc;
        const PetscInt    *cols;
        const PetscScalar *vals;
        PetscCall(MatGetRow(p.A, r, &nc, &cols, &vals));
        PetscCall(MatSetValues(A, 1, &r, nc, cols, vals, INSERT_VALUES));
        PetscCall(MatRestoreRow(p.A, r, &nc, &cols, &vals));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCMISGRID));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(MatCreateVecs(A, &x, NULL));
    PetscCall(VecSet(x, 1));
    PetscCall(KSPSolve(ksp, x, x));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ok - %d rank(s): %" PetscInt_FMT " iterations\n", (int)size, its));
    PetscCall(VecDestroy(&x));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(MatDestroy(&A));
    PetscCall(FEMDestroy(&p));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    PetscBool mpi = PETSC_FALSE;
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(PCMISGRIDRegister());
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-mpi", &mpi, NULL));
    if (mpi) PetscCall(test_mpi());
    else {
        PetscCall(test_poisson());
        PetscCall(test_elasticity());
        PetscCall(test_reuse());
        PetscCall(test_errors());
        PetscCall(test_view());
        for (int attach = 1; attach >= 0; attach--) {
            PetscCall(singular("pure-Neumann Poisson 13^3", FEM_POISSON, 12, 12, 12, (PetscBool)attach));
            PetscCall(singular("free-floating elasticity 17x5x5", FEM_ELASTIC, 16, 4, 4, (PetscBool)attach));
        }
    }
    PetscCall(PetscFinalize());
    return 0;
}
