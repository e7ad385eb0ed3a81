/*
 * misgrid.h - C interface of libmisgrid: mesh graphs, maximal independent
 * sets, aggregates, colorings and coarse-grid hierarchies for algebraic
 * multigrid.
 *
 * This header is written by hand and is the stable interface; it is C99
 * and usable from C++. docs/cabi.md explains the conventions in full; in
 * short:
 *
 *  - Every function returns a misgrid_status. MISGRID_OK (zero) is
 *    success; anything else is an error whose explanation in words is
 *    misgrid_error_message(ctx). Nothing aborts the process on bad input.
 *  - Handles (misgrid_context, misgrid_graph, misgrid_result,
 *    misgrid_solver) are opaque ids, never pointers to library memory: a
 *    destroyed, uninitialised or mixed-up handle is detected and reported
 *    as MISGRID_ERR_HANDLE. A call that fails leaves every output as it
 *    was: a handle variable it would have set keeps its old value.
 *  - Sizes are checked against the memory the process may still take
 *    before anything is allocated: a count too large for the machine is
 *    MISGRID_ERR_NOMEM with the bytes it would need, never an abort.
 *  - Input arrays are read during the call only and copied where needed;
 *    the caller keeps ownership of every pointer it passes. Output arrays
 *    are allocated by the caller; their capacity is passed and checked.
 *  - Sizes and counts are int64_t. Index arrays are int32_t or int64_t
 *    (MISGRID_INT32, MISGRID_INT64), 0- or 1-based (the base argument).
 *  - Options are "key=value" strings, several separated by commas or
 *    spaces; misgrid_option_help lists every key.
 */
#ifndef MISGRID_H
#define MISGRID_H

#include <stdint.h>

#define MISGRID_VERSION_MAJOR 0
#define MISGRID_VERSION_MINOR 1
#define MISGRID_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Opaque handles. The values are ids into a table inside the library; the
 * structs are never defined. A zero handle is "no object" (MISGRID_ERR_NULL
 * where one is required).
 */
#ifdef MISGRID_BUILDING_LIBRARY
/* Inside the library the ids are plain integers of the same size. */
typedef uintptr_t misgrid_context;
typedef uintptr_t misgrid_graph;
typedef uintptr_t misgrid_result;
typedef uintptr_t misgrid_solver;
typedef uintptr_t misgrid_device_graph;
#else
typedef struct misgrid_context_s *misgrid_context;
typedef struct misgrid_graph_s *misgrid_graph;
typedef struct misgrid_result_s *misgrid_result;
typedef struct misgrid_solver_s *misgrid_solver;
typedef struct misgrid_device_graph_s *misgrid_device_graph;
#endif

typedef enum misgrid_status {
    MISGRID_OK = 0,
    MISGRID_ERR_NULL = 1,     /* a required pointer or handle is NULL */
    MISGRID_ERR_ARG = 2,      /* an argument or an input value is invalid */
    MISGRID_ERR_RANGE = 3,    /* a size, count or index is out of range */
    MISGRID_ERR_HANDLE = 4,   /* a handle is destroyed, of another kind, or not a handle */
    MISGRID_ERR_NOMEM = 5,    /* a size is too large to allocate */
    MISGRID_ERR_NOGPU = 6,    /* a GPU was required and none can be used */
    MISGRID_ERR_IO = 7,       /* a file could not be written */
    MISGRID_ERR_OPTION = 8,   /* an option string is malformed or names an unknown key */
    MISGRID_ERR_INTERNAL = 9, /* a bug inside misgrid (please report the message) */
    MISGRID_ERR_INCONSISTENT = 10 /* A is singular and b has a part in its kernel: no x solves A x = b */
} misgrid_status;

/* Index array types (the index_type arguments). Every index array of a
 * call has the type given, except with MISGRID_INT64_INT32, for the CSR
 * calls only (misgrid_graph_from_csr, misgrid_graph_adjacency,
 * misgrid_solver_setup, misgrid_mis_distributed): int64_t row pointers
 * with int32_t column ids, the layout of codes whose nonzero count may
 * pass 2^31 while their row count does not. */
enum {
    MISGRID_INT32 = 1,
    MISGRID_INT64 = 2,
    MISGRID_INT64_INT32 = 3
};

/* Matrix value types (the value_type arguments). */
enum {
    MISGRID_PATTERN = 0, /* no values: values must be NULL */
    MISGRID_FLOAT64 = 1,
    MISGRID_FLOAT32 = 2
};

/* Element types, with their node counts (Gmsh and VTK corner order). */
enum {
    MISGRID_LINE2 = 1,     /* 2 nodes */
    MISGRID_TRI3 = 2,      /* 3 */
    MISGRID_QUAD4 = 3,     /* 4 */
    MISGRID_TET4 = 4,      /* 4 */
    MISGRID_HEX8 = 5,      /* 8 */
    MISGRID_TRI6 = 6,      /* 6 */
    MISGRID_QUAD9 = 7,     /* 9 */
    MISGRID_TET10 = 8,     /* 10 */
    MISGRID_HEX27 = 9,     /* 27 */
    MISGRID_POINT1 = 10,   /* 1 */
    MISGRID_LINE3 = 11,    /* 3 */
    MISGRID_PRISM6 = 12,   /* 6 */
    MISGRID_PYRAMID5 = 13  /* 5 */
};

/* Boundary classes of a vertex; higher is "more boundary". */
enum {
    MISGRID_INTERIOR = 0,
    MISGRID_FACE = 1,
    MISGRID_EDGE = 2,
    MISGRID_CORNER = 3
};

/* ---------------------------------------------------------------- library */

/* "MAJOR.MINOR.PATCH"; a static string, never freed. */
const char *misgrid_version(void);

/* Major, minor and patch of the loaded library (compare with the macros
 * above to detect a header/library mismatch). Any pointer may be NULL. */
misgrid_status misgrid_version_numbers(int32_t *major, int32_t *minor, int32_t *patch);

/* The name of a status code ("MISGRID_ERR_ARG"); a static string. */
const char *misgrid_status_string(misgrid_status status);

/* Copies the description of every option key into buf (NUL-terminated,
 * truncated to size bytes); *needed (may be NULL) receives the full length
 * including the NUL. buf may be NULL when size is 0. */
misgrid_status misgrid_option_help(char *buf, int64_t size, int64_t *needed);

/* The number of live handles of all kinds in the process: a leak check. */
misgrid_status misgrid_handle_count(int64_t *count);

/* ---------------------------------------------------------------- context */

/* A context holds option defaults (device, threads, ...) and the message
 * of the last failed call made with it. Create one per thread, or share
 * one and accept that its message is that of whichever call failed last. */
misgrid_status misgrid_context_create(misgrid_context *ctx);
misgrid_status misgrid_context_destroy(misgrid_context ctx);

/* Sets defaults for later calls with this context: "threads=4",
 * "device=cpu", "priority=boundary,distance=2". Per-call option strings
 * override them. An unknown key or a bad value is MISGRID_ERR_OPTION and
 * changes nothing. */
misgrid_status misgrid_context_set_option(misgrid_context ctx, const char *options);

/* Copies the value in force for key ("threads") into buf (NUL-terminated). */
misgrid_status misgrid_context_get_option(misgrid_context ctx, const char *key,
                                          char *buf, int64_t size);

/* The message of the last failed call made with ctx ("" if none). The
 * string belongs to the context: it stays valid until the next failed
 * call with ctx or misgrid_context_destroy. With a NULL or invalid ctx it
 * is the process-wide message of calls that had no valid context. */
const char *misgrid_error_message(misgrid_context ctx);

/* The same message copied into buf under the context's lock: safe while
 * other threads use ctx. *needed (may be NULL) gets the full length
 * including the NUL. */
misgrid_status misgrid_error_message_copy(misgrid_context ctx, char *buf, int64_t size,
                                          int64_t *needed);

/* How this context's messages number array entries, levels and the
 * vertices of misgrid_verify's reason: base 0 (the default: colind[4],
 * level 0) or 1 (colind(5), level 1, as a Fortran caller counts). Ids
 * that a call takes with a base argument are always in that base. The
 * Fortran module's misgrid_context_create sets 1. */
misgrid_status misgrid_context_set_index_base(misgrid_context ctx, int32_t base);

/* Records message as the context's error message, as if a call had
 * failed, and returns status. For wrapper layers that detect errors
 * before calling the library (the Fortran module uses it when the sizes
 * of arrays that belong together disagree). */
misgrid_status misgrid_context_set_error(misgrid_context ctx, misgrid_status status,
                                         const char *message);

/* ---------------------------------------------------------------- graph */

/*
 * A graph from a square sparse matrix in CSR form: nrows == ncols, rowptr
 * has nrows+1 entries, colind (and values) nnz = rowptr[nrows]-base
 * entries. Rows need not be sorted and may repeat columns: repeats are
 * summed, the graph is symmetrised (an entry in either triangle makes an
 * edge) and the diagonal is dropped. With values (MISGRID_FLOAT64 or
 * MISGRID_FLOAT32) the options "theta=" (strength threshold, default 0:
 * every nonzero is an edge) and "block_size=" (dofs per vertex, default 1)
 * apply; rows with only a diagonal become isolated Dirichlet vertices.
 * All arrays are read during the call only.
 */
misgrid_status misgrid_graph_from_csr(misgrid_context ctx, int64_t nrows, int64_t ncols,
                                      int64_t nnz, int32_t index_type, int32_t base,
                                      const void *rowptr, const void *colind,
                                      int32_t value_type, const void *values,
                                      const char *options, misgrid_graph *graph);

/* The same from coordinate (triplet) form: nnz entries rows[k], cols[k],
 * values[k], in any order, repeats summed. */
misgrid_status misgrid_graph_from_coo(misgrid_context ctx, int64_t nrows, int64_t ncols,
                                      int64_t nnz, int32_t index_type, int32_t base,
                                      const void *rows, const void *cols, int32_t value_type,
                                      const void *values, const char *options,
                                      misgrid_graph *graph);

/*
 * A node graph from element connectivity: nelements elements of one type,
 * nodes_per_element node ids each (checked against the type), in conn
 * (element e at conn[e*nodes_per_element ...]). Two nodes are adjacent
 * when they share an element. coords (dim*nnodes doubles, node i at
 * coords[dim*i ...]) may be NULL with dim 0; with coordinates the boundary
 * classes come from the geometry (option "feature_angle=", degrees,
 * default 30), otherwise from vertex degrees. Option "vertex_only=true"
 * connects only the corner nodes of second-order elements.
 */
misgrid_status misgrid_graph_from_elements(misgrid_context ctx, int64_t nnodes,
                                           int32_t element_type, int32_t nodes_per_element,
                                           int64_t nelements, int32_t index_type, int32_t base,
                                           const void *conn, int32_t dim, const double *coords,
                                           const char *options, misgrid_graph *graph);

misgrid_status misgrid_graph_destroy(misgrid_context ctx, misgrid_graph graph);

/* Vertex count and undirected edge count; either pointer may be NULL. */
misgrid_status misgrid_graph_size(misgrid_context ctx, misgrid_graph graph,
                                  int64_t *nvertices, int64_t *nedges);

/* Copies the adjacency in CSR form: offsets (nvertices+1 entries, capacity
 * noffsets) and adj (2*nedges entries, capacity nadj), each row sorted,
 * in the given index type and base. */
misgrid_status misgrid_graph_adjacency(misgrid_context ctx, misgrid_graph graph,
                                       int32_t index_type, int32_t base, void *offsets,
                                       int64_t noffsets, void *adj, int64_t nadj);

/* Attaches vertex coordinates (n == nvertices points of dim 1..3 doubles),
 * used by the VTU writer. Copied. Replaces earlier coordinates. */
misgrid_status misgrid_graph_set_coordinates(misgrid_context ctx, misgrid_graph graph,
                                             int32_t dim, int64_t n, const double *coords);

/* Attaches user boundary classes (n == nvertices values MISGRID_INTERIOR
 * .. MISGRID_CORNER), which priority=boundary then uses. Copied. */
misgrid_status misgrid_graph_set_classes(misgrid_context ctx, misgrid_graph graph, int64_t n,
                                         const int32_t *classes);

/* Copies the boundary classes priority=boundary uses: the attached ones,
 * or those derived from vertex degrees. n is the capacity of classes. */
misgrid_status misgrid_graph_get_classes(misgrid_context ctx, misgrid_graph graph, int64_t n,
                                         int32_t *classes);

/* Attaches user priority values (n == nvertices doubles, higher first, no
 * NaN), used by priority=user. Copied. */
misgrid_status misgrid_graph_set_priority(misgrid_context ctx, misgrid_graph graph, int64_t n,
                                          const double *values);

/* Copies 1 for each vertex that came from a Dirichlet row (a matrix row
 * holding only its diagonal), else 0. n is the capacity of flags. */
misgrid_status misgrid_graph_get_dirichlet(misgrid_context ctx, misgrid_graph graph, int64_t n,
                                           int32_t *flags);

/* ---------------------------------------------------------------- operations */

/* A maximal independent set. Options: distance (1 or 2, default 1),
 * priority (boundary, hash, degree, user; default boundary), seed. The set is
 * the same for every device and thread count. The result has one level. */
misgrid_status misgrid_mis(misgrid_context ctx, misgrid_graph graph, const char *options,
                           misgrid_result *result);

/* A coloring by repeated MIS (options as misgrid_mis). One level. */
misgrid_status misgrid_color(misgrid_context ctx, misgrid_graph graph, const char *options,
                             misgrid_result *result);

/* A coarse-grid hierarchy: MIS, aggregates, coarse graph, repeated.
 * Options: distance (default 2), priority, seed, min_vertices (default
 * 64), max_levels (default 20). Level 0 is the graph itself. */
misgrid_status misgrid_hierarchy(misgrid_context ctx, misgrid_graph graph,
                                 const char *options, misgrid_result *result);

/* Aggregates from a caller's distance-2 independent set (flags: n ==
 * nvertices values, nonzero = in the set). One level holding that set. */
misgrid_status misgrid_aggregate(misgrid_context ctx, misgrid_graph graph, int64_t n,
                                 const int32_t *flags, misgrid_result *result);

/* Checks that flags (n == nvertices, nonzero = member) mark a maximal
 * independent set at distance 1 or 2. The call succeeds whether or not
 * the set is valid: *valid is 1 or 0, and reason (may be NULL; size
 * bytes, NUL-terminated) names the first offending vertex. */
misgrid_status misgrid_verify(misgrid_context ctx, misgrid_graph graph, int64_t n,
                              const int32_t *flags, int32_t distance, int32_t *valid,
                              char *reason, int64_t size);

/* Writes the graph (it needs coordinates) as a VTK unstructured grid
 * (.vtu), with point fields from result level 0 where given (result may
 * be 0): "in_set" (the name misgrid coarsen writes too), "aggregate",
 * "color", and always "class". The file is replaced atomically: on any
 * failure (a full disk) the previous file is left as it was. */
misgrid_status misgrid_write_vtu(misgrid_context ctx, misgrid_graph graph,
                                 misgrid_result result, const char *path, const char *options);

/* ---------------------------------------------------------------- MPI */

/*
 * A maximal independent set of a graph distributed over the ranks of an
 * MPI communicator: the flags of this rank's rows in the SAME set that
 * misgrid_mis returns for the whole graph with the same options, for any
 * number of ranks. Collective: every rank of the communicator calls it.
 *
 * comm is the ADDRESS of your communicator (MPI_Comm comm; pass &comm):
 * MPI_Comm is an int in MPICH and a pointer in Open MPI, and this header
 * does not include mpi.h. The library duplicates it for its own messages
 * and never finalises MPI; the caller must have called MPI_Init (or
 * MPI_Init_thread) and calls this from the thread that did unless it asked
 * for MPI_THREAD_SERIALIZED or more.
 *
 * Each rank passes the next contiguous block of rows, in rank order: rows
 * first .. first+nlocal-1 (in the given base) of an nglobal-vertex graph,
 * as CSR with GLOBAL column ids: rowptr (nlocal+1 entries), colind (nnz =
 * rowptr[nlocal]-base entries), index_type and base as misgrid_graph_from_csr.
 * A rank may have nlocal = 0. The diagonal is dropped and repeats merged,
 * but the pattern must be symmetric (an edge in both rows; checked, also
 * across ranks). classes (nlocal values MISGRID_INTERIOR..MISGRID_CORNER,
 * or NULL) are this rank's rows' boundary classes for priority=boundary,
 * as misgrid_graph_set_classes. Options: distance, priority (hash,
 * boundary, degree), seed, mode (exact, or admma: Adams's algorithm,
 * distance 1, a valid MIS that depends on the partition) and timeout
 * (seconds any wait for another rank may take; default 120).
 *
 * Out: flags (nlocal entries, 1 = in the set), *set_size (the size of the
 * whole set) and *rounds (exchange rounds; outer iterations with admma);
 * set_size and rounds may be NULL. Invalid input on any rank (an id out of
 * range, blocks that do not tile the rows, ranks that disagree on nglobal
 * or options) is an error on every rank, with the reason on the rank that
 * has it; a rank that fails or stops answering mid-run makes the others
 * fail within a few timeouts. A library built without MPI (the default;
 * make MPI=1 builds it in) returns MISGRID_ERR_ARG saying so.
 */
misgrid_status misgrid_mis_distributed(misgrid_context ctx, const void *comm, int64_t nglobal,
                                       int64_t first, int64_t nlocal, int64_t nnz,
                                       int32_t index_type, int32_t base, const void *rowptr,
                                       const void *colind, const int32_t *classes,
                                       const char *options, int32_t *flags, int64_t *set_size,
                                       int64_t *rounds);

/* The same with a Fortran communicator handle (MPI_Comm_c2f(comm), or
 * MPI_COMM_WORLD of "use mpi"): what the Fortran module calls. */
misgrid_status misgrid_mis_distributed_f(misgrid_context ctx, int32_t fcomm, int64_t nglobal,
                                         int64_t first, int64_t nlocal, int64_t nnz,
                                         int32_t index_type, int32_t base, const void *rowptr,
                                         const void *colind, const int32_t *classes,
                                         const char *options, int32_t *flags,
                                         int64_t *set_size, int64_t *rounds);

/* ---------------------------------------------------------------- result */

misgrid_status misgrid_result_destroy(misgrid_context ctx, misgrid_result result);

/* Number of levels: 1 for misgrid_mis, misgrid_color, misgrid_aggregate. */
misgrid_status misgrid_result_num_levels(misgrid_context ctx, misgrid_result result,
                                         int64_t *nlevels);

/* Sizes at a level (0-based); any pointer may be NULL. naggregates is 0
 * on the coarsest hierarchy level and for distance-1 sets; ncolors is 0
 * unless the result is a coloring; rounds is the parallel round count. */
misgrid_status misgrid_result_level_info(misgrid_context ctx, misgrid_result result,
                                         int64_t level, int64_t *nvertices, int64_t *set_size,
                                         int64_t *naggregates, int64_t *ncolors,
                                         int64_t *rounds);

/* 1 for each member of the set, 0 otherwise; n is the capacity of flags
 * (at least nvertices). */
misgrid_status misgrid_result_set_flags(misgrid_context ctx, misgrid_result result,
                                        int64_t level, int64_t n, int32_t *flags);

/* The members in increasing order, as ids in the given base; cap is the
 * capacity of vertices, *count (may be NULL) receives set_size. */
misgrid_status misgrid_result_set_vertices(misgrid_context ctx, misgrid_result result,
                                           int64_t level, int32_t index_type, int32_t base,
                                           int64_t cap, void *vertices, int64_t *count);

/* The aggregate of every vertex (ids base .. base+naggregates-1, which
 * are the vertex ids of the next level), n the capacity of aggregate. */
misgrid_status misgrid_result_aggregates(misgrid_context ctx, misgrid_result result,
                                         int64_t level, int32_t index_type, int32_t base,
                                         int64_t n, void *aggregate);

/* The root vertex of every aggregate (increasing); cap the capacity. */
misgrid_status misgrid_result_aggregate_roots(misgrid_context ctx, misgrid_result result,
                                              int64_t level, int32_t index_type,
                                              int32_t base, int64_t cap, void *roots,
                                              int64_t *count);

/* The color of every vertex, base .. base+ncolors-1. */
misgrid_status misgrid_result_colors(misgrid_context ctx, misgrid_result result,
                                     int64_t level, int32_t base, int64_t n, int32_t *colors);

/* A new graph handle for the graph of a level (level 0 is the input
 * graph); destroy it with misgrid_graph_destroy. */
misgrid_status misgrid_result_level_graph(misgrid_context ctx, misgrid_result result,
                                          int64_t level, misgrid_graph *graph);

/* ---------------------------------------------------------------- device graphs */

/*
 * Graphs whose CSR already lives in GPU memory (cudaMalloc, cuMemAlloc, the
 * arrays of a CUDA FEM code), used in place: no entry is copied to the host.
 *
 * Arrays: rowptr holds n+1 int64_t offsets (base 0: rowptr[0] = 0,
 * rowptr[n] = nnz) and colind nnz int32_t vertex ids, both device pointers
 * of one CUDA context. The rows are a graph's, as misgrid_graph_adjacency
 * returns them: symmetric, sorted, without the diagonal and without
 * repeats. misgrid checks on the device that every offset and id is in
 * range and that no row holds its own vertex, and fails as
 * misgrid_graph_from_csr does, naming the entry (colind[k] out of range:
 * MISGRID_ERR_RANGE; rowptr decreasing or not ending at nnz, a diagonal
 * entry: MISGRID_ERR_ARG); it cannot afford to check symmetry. A failed
 * call leaves no fault on the device and writes no output.
 *
 * Ownership: the caller keeps the arrays; they must stay allocated and
 * unchanged until misgrid_device_graph_destroy, which does not free them.
 *
 * Context: cuda_context is the CUcontext the arrays belong to; NULL means
 * the primary context of the GPU that holds rowptr, which is the context
 * the CUDA runtime API allocates in (cudaMalloc after cudaSetDevice).
 * misgrid leaves the calling thread's current context as it was.
 *
 * Streams: misgrid works on a stream of its own in that context. Every
 * call below first waits for the work already queued in the context
 * (cuCtxSynchronize), so arrays written on any stream are complete, and
 * returns once its outputs, on the host or on the device, are complete.
 *
 * Matrices already on the device: misgrid_device_solver_setup (section
 * "device solver").
 */
misgrid_status misgrid_device_graph_from_csr(misgrid_context ctx, void *cuda_context, int64_t n,
                                             int64_t nnz, const int64_t *rowptr,
                                             const int32_t *colind, misgrid_device_graph *graph);
misgrid_status misgrid_device_graph_destroy(misgrid_context ctx, misgrid_device_graph graph);

/*
 * Gives back to the driver what misgrid keeps between calls on every GPU
 * it has used: device memory its setups and runs freed, kept for the next
 * ones (up to 1/8 of each device, in the device's primary context), and
 * the pinned host buffers it stages copies through. misgrid returns kept
 * device memory by itself before any of its own allocations would fail,
 * but not before yours: a code that shares the GPU calls this once
 * misgrid's work is done for a while. Solvers and device graphs keep the
 * memory they use. Without a GPU it does nothing and returns MISGRID_OK.
 */
misgrid_status misgrid_release_device_memory(misgrid_context ctx);

/* Where an output array lives (the where arguments). */
enum {
    MISGRID_HOST = 0,  /* host memory */
    MISGRID_DEVICE = 1 /* device memory of the graph's CUDA context */
};

/* The MIS of a device graph: the set misgrid_mis returns for the same graph
 * given on the host, with the same options (distance, priority, seed;
 * priority=boundary ranks by the classes by degree, as for a graph from
 * misgrid_graph_from_csr; priority=user is refused: a device graph has no
 * values; device is ignored). flags (room for n >= the vertex count
 * entries) receives one byte per vertex, 1 for members and 0 otherwise,
 * in host memory (where = MISGRID_HOST) or in device memory
 * (MISGRID_DEVICE); *set_size (may be NULL) the number of members. */
misgrid_status misgrid_device_mis(misgrid_context ctx, misgrid_device_graph graph,
                                  const char *options, int32_t where, int64_t n,
                                  uint8_t *flags, int64_t *set_size);

/* The coarse-grid hierarchy of a device graph, every level built on its
 * GPU: the levels misgrid_hierarchy returns for the same graph given on
 * the host (options as there; priority=user refused; device ignored), as
 * a result on the host. Level 0's graph is copied to the host once, at
 * the end, for misgrid_result_level_graph. */
misgrid_status misgrid_device_hierarchy(misgrid_context ctx, misgrid_device_graph graph,
                                        const char *options, misgrid_result *result);

/* ---------------------------------------------------------------- solver */

/*
 * A smoothed-aggregation AMG preconditioner for symmetric positive
 * definite matrices, with PCG. The life cycle, as in AmgX:
 *   misgrid_solver_create(ctx, "smoother=chebyshev tol=1e-10", &s);
 *   [misgrid_solver_set_coordinates / _set_nullspace]   (nullspace=rbm / vectors)
 *   [misgrid_solver_set_kernel]                         (a singular A's null space)
 *   misgrid_solver_setup(ctx, s, <CSR matrix>);          (full setup)
 *   misgrid_solver_solve(ctx, s, n, b, x, &converged, &its, &res);   (any number)
 *   misgrid_solver_update_values(ctx, s, nnz, ..., values);   (new values, same
 *                                   pattern: keeps the aggregates, redoes the numbers)
 *   misgrid_solver_destroy(ctx, s);
 * The options are the solver keys of misgrid_option_help (theta, block_size,
 * aggregation, nullspace, smoother, sweeps, cycle, tol, maxit, ...), also
 * as context defaults. Calls on one solver are serialised (it holds work
 * vectors); separate solvers run in parallel.
 */
misgrid_status misgrid_solver_create(misgrid_context ctx, const char *options,
                                     misgrid_solver *solver);
misgrid_status misgrid_solver_destroy(misgrid_context ctx, misgrid_solver solver);

/* Node coordinates for nullspace=rbm (rigid-body modes): n nodes (rows /
 * block size) of dim doubles. Copied; used by the next setup. */
misgrid_status misgrid_solver_set_coordinates(misgrid_context ctx, misgrid_solver solver,
                                              int32_t dim, int64_t n, const double *coords);

/* Near-nullspace vectors for nullspace=vectors: nvec vectors of n (rows)
 * doubles, vector j at vectors[j*n ...]. Copied; used by the next setup. */
misgrid_status misgrid_solver_set_nullspace(misgrid_context ctx, misgrid_solver solver,
                                            int64_t n, int32_t nvec, const double *vectors);

/* The exact kernel (null space) of a singular A: nvec (1 to 64) vectors
 * of n (rows) doubles with A v = 0, vector j at vectors[j*n ...]; for
 * example the constant vector of a pure-Neumann Poisson problem, or the
 * rigid-body modes of a free-floating body. Copied; used by the next
 * setup, which orthonormalizes them (dependent vectors are
 * MISGRID_ERR_ARG) but takes A v = 0 on trust: a vector outside the
 * kernel is projected out all the same and gives a wrong x. Unlike the near-nullspace (set_nullspace), which
 * only shapes the coarse spaces of a nonsingular A, the kernel is
 * projected out: misgrid_solver_solve removes it from b and from every
 * iterate and returns the x orthogonal to it (misgrid_solver_apply is the
 * cycle alone and does not project). Without this call the setup
 * finds the kernel itself when the coarsest operator is singular (its
 * null vectors interpolated to the matrix, kept where A v vanishes); call
 * it when the kernel is known, or when A is singular and the coarsest
 * operator is not. A b with a part in the kernel above tol makes
 * misgrid_solver_solve return MISGRID_ERR_INCONSISTENT. */
misgrid_status misgrid_solver_set_kernel(misgrid_context ctx, misgrid_solver solver, int64_t n,
                                         int32_t nvec, const double *vectors);

/* Builds the hierarchy of a square SPD matrix in CSR form (arguments as
 * misgrid_graph_from_csr; values required). The matrix is copied. A
 * non-symmetric matrix, a zero or negative diagonal or a bad near-null
 * space is MISGRID_ERR_ARG. */
misgrid_status misgrid_solver_setup(misgrid_context ctx, misgrid_solver solver, int64_t nrows,
                                    int64_t ncols, int64_t nnz, int32_t index_type, int32_t base,
                                    const void *rowptr, const void *colind, int32_t value_type,
                                    const void *values);

/* New matrix values with the pattern given to misgrid_solver_setup (nnz
 * values in the order of its colind): redoes only the numeric setup and
 * keeps the aggregates. */
misgrid_status misgrid_solver_update_values(misgrid_context ctx, misgrid_solver solver,
                                            int64_t nnz, int32_t value_type, const void *values);

/* z = M^-1 r: one multigrid cycle, for a Krylov method of the caller's. */
misgrid_status misgrid_solver_apply(misgrid_context ctx, misgrid_solver solver, int64_t n,
                                    const double *r, double *z);

/* Preconditioned CG on A x = b from the initial guess in x (n == rows).
 * Not converging is not an error: the call succeeds and *converged is 0.
 * Any of converged, iterations, residual may be NULL; *residual is the
 * true relative residual ||b - A x|| / ||b|| of the x returned, computed
 * afresh (not CG's updated one). A breakdown is MISGRID_ERR_ARG.
 * For a singular A (a kernel set with misgrid_solver_set_kernel or found
 * by the setup), x is the solution orthogonal to the kernel. A b whose
 * kernel part ||N^T b|| / ||b|| exceeds tol (no x solves A x = b) is
 * MISGRID_ERR_INCONSISTENT, with that part and the residual the
 * least-squares x would leave in the message; as on every failure, x and
 * the other outputs are left as they were (remove the kernel part of b
 * and solve again for the least-squares x). misgrid_solver_residuals then
 * gives the history of that solve. */
misgrid_status misgrid_solver_solve(misgrid_context ctx, misgrid_solver solver, int64_t n,
                                    const double *b, double *x, int32_t *converged,
                                    int64_t *iterations, double *residual);

/* The relative residuals of the last solve, ||b - A x_k|| / ||b|| for k =
 * 0 .. iterations; cap is the capacity, *count (may be NULL) the length. */
misgrid_status misgrid_solver_residuals(misgrid_context ctx, misgrid_solver solver, int64_t cap,
                                        double *residuals, int64_t *count);

/* The hierarchy: levels, operator and grid complexity, setup seconds (of
 * the last setup or update). Any pointer may be NULL. */
misgrid_status misgrid_solver_info(misgrid_context ctx, misgrid_solver solver, int64_t *nlevels,
                                   double *operator_complexity, double *grid_complexity,
                                   double *setup_seconds);

/* Rows, nonzeros and dofs per node of a level (0 = the matrix). */
misgrid_status misgrid_solver_level_info(misgrid_context ctx, misgrid_solver solver,
                                         int64_t level, int64_t *rows, int64_t *nonzeros,
                                         int64_t *block_size);

/* ---------------------------------------------------------------- device solver */

/*
 * The AMG setup of a matrix that already lives in GPU memory (a CUDA FEM
 * assembly, PETSc's MATAIJCUSPARSE arrays), used in place: the hierarchy
 * is built on the device and no entry goes to the host.
 *
 * Arrays (device pointers of one CUDA context, base 0): rowptr holds
 * nrows+1 offsets of index_type MISGRID_INT32 (as cuSPARSE and
 * aijcusparse keep them) or MISGRID_INT64, rowptr[nrows] = nnz; colind nnz
 * int32_t column ids, sorted without repeats in every row; values nnz
 * doubles. The matrix must be symmetric positive definite, as for
 * misgrid_solver_setup, and is checked on the device with its errors
 * (an entry out of range, NaN/Inf or a diagonal that is not positive,
 * named; not symmetric): MISGRID_ERR_ARG. Rows out of order are refused
 * (misgrid_solver_setup sorts them). A failed call leaves the solver as
 * it was and the device usable.
 *
 * Ownership: the caller keeps the arrays and must leave them allocated
 * and unchanged until the next misgrid_device_solver_update, the next
 * setup or misgrid_solver_destroy (values at a new address after an
 * update: from then on those). misgrid frees none of them.
 *
 * Context and streams: as for device graphs. cuda_context NULL means the
 * primary context of the GPU that holds rowptr (the runtime API's); the
 * setup runs there on a stream of its own, after waiting for the work
 * queued in the context, and returns with its work done. Only primary
 * contexts are taken.
 *
 * The solver's options apply (device= is the matrix's GPU), within what
 * the device setup does: aggregation=mis2, smoother chebyshev or
 * jacobi, up to 8 dofs per node and near-nullspace vectors. The
 * hierarchy is built in the matrix's own numbering (ordering=auto keeps
 * it; ordering=rcm is refused: MISGRID_ERR_ARG); misgrid_solver_setup
 * renumbers a scattered matrix, on the GPU too.
 * misgrid_solver_apply and misgrid_solver_solve then take host vectors as
 * for any solver.
 */
misgrid_status misgrid_device_solver_setup(misgrid_context ctx, misgrid_solver solver,
                                           void *cuda_context, int64_t nrows, int64_t nnz,
                                           int32_t index_type, const void *rowptr,
                                           const int32_t *colind, const double *values);

/* New values (nnz device doubles, in colind's order) for the pattern of
 * misgrid_device_solver_setup. Rewritten in the array the solver reads
 * (the setup's, or the last update's) and with reuse=true: the numeric
 * re-setup on the device (aggregates kept); in another array, or without
 * reuse: a new setup, which replaces the solver's once it succeeded.
 * Checked as the setup's; on failure the hierarchy is left as it was
 * (the operator is the caller's array as it now is). */
misgrid_status misgrid_device_solver_update(misgrid_context ctx, misgrid_solver solver,
                                            int64_t nnz, const double *values);

#ifdef __cplusplus
}
#endif

#endif /* MISGRID_H */
