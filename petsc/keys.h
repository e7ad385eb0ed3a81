/* The misgrid option keys, parsed from misgrid_option_help (keys.c). */
#ifndef MISGRID_PETSC_KEYS_H
#define MISGRID_PETSC_KEYS_H

#include <misgrid.h>

typedef struct {
    char *key, *def, *scope, *doc;
    int   pc; /* offered as -pc_misgrid_<key> */
} mgkey;

/* The keys of the loaded libmisgrid, parsed once (not thread safe: call
 * it from the thread that runs PETSc). Returns 0, or -1 with *st the
 * failed call's status (MISGRID_OK when memory ran out). */
int mgkeys_load(const mgkey **keys, int *count, misgrid_status *st);

#endif
