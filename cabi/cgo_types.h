/* Types for the cgo side of libmisgrid only (never installed). cgo cannot
 * write const, so the exported functions use these typedefs where the
 * public header has const pointers; _cgo_export.c then checks every
 * exported prototype against include/misgrid.h at build time. */
#ifndef MISGRID_CGO_TYPES_H
#define MISGRID_CGO_TYPES_H
#include <stdint.h>
typedef const char misgrid_cchar;
typedef const void misgrid_cvoid;
typedef const double misgrid_cdouble;
typedef const int32_t misgrid_cint32;
typedef const int64_t misgrid_cint64;
#endif
