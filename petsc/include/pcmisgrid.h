/*
 * pcmisgrid.h - PCMISGRID, misgrid's smoothed-aggregation AMG as a PETSc
 * preconditioner (libmisgrid-petsc). See docs/petsc.md.
 *
 * Loaded with -dll_append <dir>/libmisgrid-petsc.so, the library registers
 * "misgrid" itself; a program that links it calls PCMISGRIDRegister() once
 * after PetscInitialize.
 */
#ifndef PCMISGRID_H
#define PCMISGRID_H

#include <petscpc.h>

#define PCMISGRID "misgrid"

PETSC_EXTERN PetscErrorCode PCMISGRIDRegister(void);

/* Sets one misgrid option ("smoother", "chebyshev"), as -pc_misgrid_<key>
 * <value> does; options from the database, read by PCSetFromOptions,
 * override it. An unknown key or a bad value is an error with misgrid's
 * message. */
PETSC_EXTERN PetscErrorCode PCMISGRIDSetOption(PC pc, const char key[], const char value[]);

/* The hierarchy of the last setup: levels, operator complexity, and how
 * many full and numeric-only (aggregates kept) setups the PC made. Any
 * pointer may be NULL. */
PETSC_EXTERN PetscErrorCode PCMISGRIDGetInfo(PC pc, PetscInt *levels, PetscReal *operator_complexity,
                                             PetscInt *full_setups, PetscInt *numeric_setups);

#endif
