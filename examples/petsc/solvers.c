/*
 * solvers.c - GAMG, hypre BoomerAMG and misgrid on the same PETSc problems,
 * in one run: a 3D Poisson problem and 3D linear elasticity (Q1 hexahedra,
 * clamped on x = 0; see fem.h), each solved with CG and each
 * preconditioner in turn. Prints iterations, setup and solve seconds, the
 * setup after new values with the same pattern (a time step or Newton
 * step), and the difference of each solution from the first solver's.
 *
 * An ordinary PETSc program: it does not link the plugin. Run it with
 *   ./solvers -dll_append <dir>/libmisgrid-petsc.so [-n 32] [-ne 16] [-pcs gamg,hypre,misgrid] [-repeat 3]
 * -repeat k runs each solver k times and prints the least times (on a
 * shared machine the least is the one least disturbed).
 * Every solver's options carry its prefix: -gamg_pc_gamg_threshold 0.02,
 * -hypre_pc_hypre_boomeramg_strong_threshold 0.5, -misgrid_pc_misgrid_smoother jacobi,
 * -misgrid_ksp_view. Elasticity gets the rigid-body modes two ways, as a
 * user would give them: MatSetNearNullSpace (GAMG, misgrid) and
 * PCSetCoordinates (hypre's nodal coarsening ignores them; GAMG and
 * misgrid use the near-nullspace first).
 */
#include <petscksp.h>

#include "fem.h"

typedef struct {
    const char *problem, *pc;
    PetscInt    dofs, its, its2;
    PetscReal   setup, solve, resetup, diff;
    KSPConvergedReason reason;
} Row;

/* run solves p with one preconditioner type, twice: the second time
 * after A and b were scaled by 2 (same pattern, new values), into a
 * scratch vector. xref (NULL for the first solver, which solves into it)
 * is the reference solution. */
static PetscErrorCode run(Problem *p, const char *problem, const char *pc, PetscReal rtol, Vec xref, Vec x, Row *row)
{
    KSP           ksp;
    PC            prec;
    char          prefix[64];
    PetscLogDouble t0, t1, t2;
    PetscFunctionBeginUser;
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(PetscSNPrintf(prefix, sizeof prefix, "%s_", pc));
    PetscCall(KSPSetOptionsPrefix(ksp, prefix));
    PetscCall(KSPSetOperators(ksp, p->A, p->A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, rtol, 1e-50, PETSC_DEFAULT, 1000));
    PetscCall(KSPGetPC(ksp, &prec));
    PetscCall(PCSetType(prec, pc));
    if (p->bs > 1) PetscCall(PCSetCoordinates(prec, 3, p->nnodes, p->coords));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(VecSet(x, 0));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSetUp(ksp));
    PetscCall(PetscTime(&t1));
    PetscCall(KSPSolve(ksp, p->b, x));
    PetscCall(PetscTime(&t2));
    PetscCall(KSPGetIterationNumber(ksp, &row->its));
    PetscCall(KSPGetConvergedReason(ksp, &row->reason));
    row->problem = problem, row->pc = pc;
    row->setup = t1 - t0, row->solve = t2 - t1;
    PetscCall(VecGetSize(x, &row->dofs));
    row->diff = 0;
    if (xref) {
        PetscReal d, r;
        Vec       e;
        PetscCall(VecDuplicate(x, &e));
        PetscCall(VecWAXPY(e, -1, xref, x));
        PetscCall(VecNorm(e, NORM_2, &d));
        PetscCall(VecNorm(xref, NORM_2, &r));
        row->diff = d / r;
        PetscCall(VecDestroy(&e));
    }
    /* New values, same pattern: the re-setup a time-stepping code pays. */
    PetscCall(MatScale(p->A, 2));
    PetscCall(VecScale(p->b, 2));
    PetscCall(KSPSetOperators(ksp, p->A, p->A));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSetUp(ksp));
    PetscCall(PetscTime(&t1));
    {
        Vec y;
        PetscCall(VecDuplicate(x, &y));
        PetscCall(KSPSolve(ksp, p->b, y));
        PetscCall(VecDestroy(&y));
    }
    PetscCall(KSPGetIterationNumber(ksp, &row->its2));
    row->resetup = t1 - t0;
    PetscCall(MatScale(p->A, 0.5));
    PetscCall(VecScale(p->b, 0.5));
    PetscCall(KSPDestroy(&ksp));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    PetscInt  n = 24, ne = 12, npcs = 8, nrows = 0, repeat = 1;
    char     *pcs[8];
    PetscBool set, pois = PETSC_TRUE, elas = PETSC_TRUE;
    PetscReal rtol = 1e-8;
    Row       rows[16];
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-ne", &ne, NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-repeat", &repeat, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-poisson", &pois, NULL));
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-elasticity", &elas, NULL));
    PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-pcs", pcs, &npcs, &set));
    if (!set) {
        PetscCall(PetscStrallocpy("gamg", &pcs[0]));
        PetscCall(PetscStrallocpy("hypre", &pcs[1]));
        PetscCall(PetscStrallocpy("misgrid", &pcs[2]));
        npcs = 3;
    }
    for (int e = 0; e < 2; e++) {
        PetscBool   elastic = (PetscBool)(e == 1);
        const char *name = elastic ? "elasticity 3D" : "Poisson 3D";
        Problem     p;
        Vec         x, xref;
        if (!(elastic ? elas : pois)) continue;
        /* Poisson: a cube of n^3 elements; elasticity: a 4:1:1 beam of 4ne x ne x ne. */
        if (elastic) PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_ELASTIC, 4 * ne, ne, ne, MATAIJ, &p));
        else PetscCall(FEMAssemble(PETSC_COMM_SELF, FEM_POISSON, n, n, n, MATAIJ, &p));
        if (elastic) {
            MatNullSpace sp;
            Vec          xyz;
            PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, 3 * p.nnodes, p.coords, &xyz));
            PetscCall(MatNullSpaceCreateRigidBody(xyz, &sp));
            PetscCall(MatSetNearNullSpace(p.A, sp));
            PetscCall(MatNullSpaceDestroy(&sp));
            PetscCall(VecDestroy(&xyz));
        }
        PetscCall(MatCreateVecs(p.A, &x, &xref));
        for (PetscInt k = 0; k < npcs; k++) {
            Row *w = &rows[nrows++];
            for (PetscInt r = 0; r < repeat; r++) {
                Row t;
                PetscCall(run(&p, name, pcs[k], rtol, k ? xref : NULL, k ? x : xref, &t));
                if (r == 0) *w = t;
                w->setup = PetscMin(w->setup, t.setup), w->solve = PetscMin(w->solve, t.solve), w->resetup = PetscMin(w->resetup, t.resetup);
            }
        }
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&xref));
        PetscCall(FEMDestroy(&p));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n| problem | dofs | solver | its | setup s | solve s | re-setup s (same pattern) | its after | |x - x_%s|/|x_%s| |\n|---|---|---|---|---|---|---|---|---|\n", pcs[0], pcs[0]));
    for (PetscInt r = 0; r < nrows; r++) {
        Row *w = &rows[r];
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "| %s | %" PetscInt_FMT " | %s | %" PetscInt_FMT "%s | %.3f | %.3f | %.3f | %" PetscInt_FMT " | %.1e |\n", w->problem, w->dofs, w->pc, w->its,
                              w->reason > 0 ? "" : " (not converged)", w->setup, w->solve, w->resetup, w->its2, w->diff));
    }
    for (PetscInt k = 0; k < npcs; k++) PetscCall(PetscFree(pcs[k]));
    PetscCall(PetscFinalize());
    return 0;
}
