/*
 * fem.h - Q1 hexahedral assembly of two model problems on a box of
 * nx x ny x nz elements, for examples/petsc/solvers.c and the plugin
 * tests: the 3D Poisson equation (one dof per node) and 3D linear
 * elasticity (three dofs per node, interleaved), each clamped on x = 0
 * by symmetric elimination (MatZeroRowsColumns) or free, with node
 * coordinates for PCSetCoordinates.
 */
#ifndef MISGRID_EXAMPLES_FEM_H
#define MISGRID_EXAMPLES_FEM_H

#include <petscmat.h>

typedef struct {
    Mat        A;
    Vec        b;
    PetscInt   bs, nnodes;
    PetscReal *coords; /* 3 per node; PetscFree it */
} Problem;

/* What FEMAssemble builds: Poisson (f = 1) or elasticity (E = 1, nu = 0.3,
 * gravity along -z), clamped on x = 0 unless FEM_FREE is or-ed in (then A
 * is singular: constants, or the rigid-body modes, are its nullspace). */
enum { FEM_POISSON = 0, FEM_ELASTIC = 1, FEM_FREE = 2 };

/* FEMAssemble builds the problem of kind on the box [0, nx/ny] x [0, 1] x
 * [0, nz/ny]. mattype is an AIJ or BAIJ type. */
PetscErrorCode FEMAssemble(MPI_Comm comm, int kind, PetscInt nx, PetscInt ny, PetscInt nz, const char *mattype, Problem *p);

/* FEMDestroy frees what FEMAssemble made. */
PetscErrorCode FEMDestroy(Problem *p);

#endif
