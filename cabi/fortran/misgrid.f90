!> Fortran 2008 interface to libmisgrid (see include/misgrid.h and
!> docs/cabi.md).
!>
!> Two layers: c_misgrid_* are ISO_C_BINDING interfaces to the C
!> functions, argument for argument; the misgrid_* functions are thin
!> wrappers that take Fortran arrays (their sizes are passed for you),
!> Fortran strings, and 1-based indices: vertex, node, aggregate, color
!> and level numbers all start at 1. Every wrapper returns the C status
!> (MISGRID_OK = 0 on success); misgrid_error_message(ctx) says what
!> went wrong.
!>
!> Handles are derived types holding the C handle; a default-initialised
!> handle is "none". Arrays passed in are read during the call only: the
!> library copies what it keeps.
!>
!> Compile this file with your compiler (a .mod file is compiler
!> specific), e.g.
!>   gfortran -c $(pkg-config --variable=fortrandir misgrid)/misgrid.f90
module misgrid
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: MISGRID_VERSION_MAJOR = 0
  integer, parameter, public :: MISGRID_VERSION_MINOR = 1
  integer, parameter, public :: MISGRID_VERSION_PATCH = 0

  ! Status codes.
  integer(c_int), parameter, public :: MISGRID_OK = 0, MISGRID_ERR_NULL = 1, &
       MISGRID_ERR_ARG = 2, MISGRID_ERR_RANGE = 3, MISGRID_ERR_HANDLE = 4, &
       MISGRID_ERR_NOMEM = 5, MISGRID_ERR_NOGPU = 6, MISGRID_ERR_IO = 7, &
       MISGRID_ERR_OPTION = 8, MISGRID_ERR_INTERNAL = 9, MISGRID_ERR_INCONSISTENT = 10
  ! Index and value types (used by the c_misgrid_* layer).
  integer(c_int32_t), parameter, public :: MISGRID_INT32 = 1, MISGRID_INT64 = 2, MISGRID_INT64_INT32 = 3
  integer(c_int32_t), parameter, public :: MISGRID_PATTERN = 0, MISGRID_FLOAT64 = 1, &
       MISGRID_FLOAT32 = 2
  ! Element types.
  integer(c_int32_t), parameter, public :: MISGRID_LINE2 = 1, MISGRID_TRI3 = 2, &
       MISGRID_QUAD4 = 3, MISGRID_TET4 = 4, MISGRID_HEX8 = 5, MISGRID_TRI6 = 6, &
       MISGRID_QUAD9 = 7, MISGRID_TET10 = 8, MISGRID_HEX27 = 9, MISGRID_POINT1 = 10, &
       MISGRID_LINE3 = 11, MISGRID_PRISM6 = 12, MISGRID_PYRAMID5 = 13
  ! Boundary classes.
  integer(c_int32_t), parameter, public :: MISGRID_INTERIOR = 0, MISGRID_FACE = 1, &
       MISGRID_EDGE = 2, MISGRID_CORNER = 3

  type, public :: misgrid_context
     type(c_ptr) :: h = c_null_ptr
  end type misgrid_context
  type, public :: misgrid_graph
     type(c_ptr) :: h = c_null_ptr
  end type misgrid_graph
  type, public :: misgrid_result
     type(c_ptr) :: h = c_null_ptr
  end type misgrid_result
  type, public :: misgrid_solver
     type(c_ptr) :: h = c_null_ptr
  end type misgrid_solver

  ! ------------------------------------------------------------ C layer
  public :: c_misgrid_version, c_misgrid_context_create, c_misgrid_context_destroy, &
       c_misgrid_context_set_option, c_misgrid_context_set_error, c_misgrid_error_message_copy, &
       c_misgrid_context_set_index_base, &
       c_misgrid_graph_from_csr, c_misgrid_graph_from_coo, c_misgrid_graph_from_elements, &
       c_misgrid_graph_destroy, c_misgrid_graph_size, c_misgrid_graph_adjacency, &
       c_misgrid_graph_get_dirichlet, c_misgrid_graph_set_coordinates, &
       c_misgrid_graph_set_classes, c_misgrid_graph_get_classes, c_misgrid_graph_set_priority, &
       c_misgrid_mis, c_misgrid_color, c_misgrid_hierarchy, c_misgrid_aggregate, &
       c_misgrid_verify, c_misgrid_write_vtu, c_misgrid_result_destroy, &
       c_misgrid_result_num_levels, c_misgrid_result_level_info, c_misgrid_result_set_flags, &
       c_misgrid_result_set_vertices, c_misgrid_result_aggregates, &
       c_misgrid_result_aggregate_roots, c_misgrid_result_colors, c_misgrid_result_level_graph, &
       c_misgrid_handle_count, c_misgrid_version_numbers, &
       c_misgrid_solver_create, c_misgrid_solver_destroy, c_misgrid_solver_set_coordinates, &
       c_misgrid_solver_set_nullspace, c_misgrid_solver_set_kernel, c_misgrid_solver_setup, c_misgrid_solver_update_values, &
       c_misgrid_solver_apply, c_misgrid_solver_solve, c_misgrid_solver_residuals, &
       c_misgrid_solver_info, c_misgrid_solver_level_info, &
       c_misgrid_mis_distributed, c_misgrid_mis_distributed_f, &
       c_misgrid_device_graph_from_csr, c_misgrid_device_graph_destroy, &
       c_misgrid_release_device_memory, &
       c_misgrid_device_mis, c_misgrid_device_hierarchy, &
       c_misgrid_device_solver_setup, c_misgrid_device_solver_update
  ! Where an output array lives (misgrid_device_mis).
  integer(c_int32_t), parameter, public :: MISGRID_HOST = 0, MISGRID_DEVICE = 1

  interface
     function c_misgrid_version() bind(c, name='misgrid_version') result(s)
       import :: c_ptr
       type(c_ptr) :: s
     end function c_misgrid_version
     function c_misgrid_version_numbers(major, minor, patch) bind(c, name='misgrid_version_numbers') result(st)
       import :: c_int, c_int32_t
       integer(c_int32_t), intent(out) :: major, minor, patch
       integer(c_int) :: st
     end function c_misgrid_version_numbers
     function c_misgrid_handle_count(count) bind(c, name='misgrid_handle_count') result(st)
       import :: c_int, c_int64_t
       integer(c_int64_t), intent(out) :: count
       integer(c_int) :: st
     end function c_misgrid_handle_count
     function c_misgrid_context_create(ctx) bind(c, name='misgrid_context_create') result(st)
       import :: c_ptr, c_int
       type(c_ptr), intent(inout) :: ctx
       integer(c_int) :: st
     end function c_misgrid_context_create
     function c_misgrid_context_destroy(ctx) bind(c, name='misgrid_context_destroy') result(st)
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx
       integer(c_int) :: st
     end function c_misgrid_context_destroy
     function c_misgrid_context_set_option(ctx, options) bind(c, name='misgrid_context_set_option') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: options(*)
       integer(c_int) :: st
     end function c_misgrid_context_set_option
     function c_misgrid_context_set_index_base(ctx, base) bind(c, name='misgrid_context_set_index_base') result(st)
       import :: c_ptr, c_int, c_int32_t
       type(c_ptr), value :: ctx
       integer(c_int32_t), value :: base
       integer(c_int) :: st
     end function c_misgrid_context_set_index_base
     function c_misgrid_context_set_error(ctx, status, message) bind(c, name='misgrid_context_set_error') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx
       integer(c_int), value :: status
       character(kind=c_char), intent(in) :: message(*)
       integer(c_int) :: st
     end function c_misgrid_context_set_error
     function c_misgrid_error_message_copy(ctx, buf, size, needed) bind(c, name='misgrid_error_message_copy') result(st)
       import :: c_ptr, c_int, c_char, c_int64_t
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(out) :: buf(*)
       integer(c_int64_t), value :: size
       integer(c_int64_t), intent(out) :: needed
       integer(c_int) :: st
     end function c_misgrid_error_message_copy
     function c_misgrid_graph_from_csr(ctx, nrows, ncols, nnz, index_type, base, rowptr, colind, &
          value_type, values, options, graph) bind(c, name='misgrid_graph_from_csr') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_char
       type(c_ptr), value :: ctx, rowptr, colind, values
       integer(c_int64_t), value :: nrows, ncols, nnz
       integer(c_int32_t), value :: index_type, base, value_type
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: graph
       integer(c_int) :: st
     end function c_misgrid_graph_from_csr
     function c_misgrid_graph_from_coo(ctx, nrows, ncols, nnz, index_type, base, rows, cols, &
          value_type, values, options, graph) bind(c, name='misgrid_graph_from_coo') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_char
       type(c_ptr), value :: ctx, rows, cols, values
       integer(c_int64_t), value :: nrows, ncols, nnz
       integer(c_int32_t), value :: index_type, base, value_type
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: graph
       integer(c_int) :: st
     end function c_misgrid_graph_from_coo
     function c_misgrid_graph_from_elements(ctx, nnodes, element_type, nodes_per_element, nelements, &
          index_type, base, conn, dim, coords, options, graph) bind(c, name='misgrid_graph_from_elements') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_char
       type(c_ptr), value :: ctx, conn, coords
       integer(c_int64_t), value :: nnodes, nelements
       integer(c_int32_t), value :: element_type, nodes_per_element, index_type, base, dim
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: graph
       integer(c_int) :: st
     end function c_misgrid_graph_from_elements
     function c_misgrid_graph_destroy(ctx, graph) bind(c, name='misgrid_graph_destroy') result(st)
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx, graph
       integer(c_int) :: st
     end function c_misgrid_graph_destroy
     function c_misgrid_graph_size(ctx, graph, nvertices, nedges) bind(c, name='misgrid_graph_size') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), intent(out) :: nvertices, nedges
       integer(c_int) :: st
     end function c_misgrid_graph_size
     function c_misgrid_graph_adjacency(ctx, graph, index_type, base, offsets, noffsets, adj, nadj) &
          bind(c, name='misgrid_graph_adjacency') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, graph, offsets, adj
       integer(c_int32_t), value :: index_type, base
       integer(c_int64_t), value :: noffsets, nadj
       integer(c_int) :: st
     end function c_misgrid_graph_adjacency
     function c_misgrid_graph_get_dirichlet(ctx, graph, n, flags) bind(c, name='misgrid_graph_get_dirichlet') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), value :: n
       integer(c_int32_t), intent(out) :: flags(*)
       integer(c_int) :: st
     end function c_misgrid_graph_get_dirichlet
     function c_misgrid_graph_set_coordinates(ctx, graph, dim, n, coords) &
          bind(c, name='misgrid_graph_set_coordinates') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_double
       type(c_ptr), value :: ctx, graph
       integer(c_int32_t), value :: dim
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: coords(*)
       integer(c_int) :: st
     end function c_misgrid_graph_set_coordinates
     function c_misgrid_graph_set_classes(ctx, graph, n, classes) bind(c, name='misgrid_graph_set_classes') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), value :: n
       integer(c_int32_t), intent(in) :: classes(*)
       integer(c_int) :: st
     end function c_misgrid_graph_set_classes
     function c_misgrid_graph_get_classes(ctx, graph, n, classes) bind(c, name='misgrid_graph_get_classes') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), value :: n
       integer(c_int32_t), intent(out) :: classes(*)
       integer(c_int) :: st
     end function c_misgrid_graph_get_classes
     function c_misgrid_graph_set_priority(ctx, graph, n, values) bind(c, name='misgrid_graph_set_priority') result(st)
       import :: c_ptr, c_int, c_int64_t, c_double
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: values(*)
       integer(c_int) :: st
     end function c_misgrid_graph_set_priority
     function c_misgrid_mis(ctx, graph, options, result) bind(c, name='misgrid_mis') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx, graph
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: result
       integer(c_int) :: st
     end function c_misgrid_mis
     function c_misgrid_color(ctx, graph, options, result) bind(c, name='misgrid_color') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx, graph
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: result
       integer(c_int) :: st
     end function c_misgrid_color
     function c_misgrid_hierarchy(ctx, graph, options, result) bind(c, name='misgrid_hierarchy') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx, graph
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: result
       integer(c_int) :: st
     end function c_misgrid_hierarchy
     function c_misgrid_aggregate(ctx, graph, n, flags, result) bind(c, name='misgrid_aggregate') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), value :: n
       integer(c_int32_t), intent(in) :: flags(*)
       type(c_ptr), intent(inout) :: result
       integer(c_int) :: st
     end function c_misgrid_aggregate
     function c_misgrid_verify(ctx, graph, n, flags, distance, valid, reason, size) &
          bind(c, name='misgrid_verify') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_char
       type(c_ptr), value :: ctx, graph
       integer(c_int64_t), value :: n, size
       integer(c_int32_t), intent(in) :: flags(*)
       integer(c_int32_t), value :: distance
       integer(c_int32_t), intent(out) :: valid
       character(kind=c_char), intent(out) :: reason(*)
       integer(c_int) :: st
     end function c_misgrid_verify
     function c_misgrid_write_vtu(ctx, graph, result, path, options) bind(c, name='misgrid_write_vtu') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx, graph, result
       character(kind=c_char), intent(in) :: path(*), options(*)
       integer(c_int) :: st
     end function c_misgrid_write_vtu
     function c_misgrid_result_destroy(ctx, result) bind(c, name='misgrid_result_destroy') result(st)
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx, result
       integer(c_int) :: st
     end function c_misgrid_result_destroy
     function c_misgrid_result_num_levels(ctx, result, nlevels) bind(c, name='misgrid_result_num_levels') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, result
       integer(c_int64_t), intent(out) :: nlevels
       integer(c_int) :: st
     end function c_misgrid_result_num_levels
     function c_misgrid_result_level_info(ctx, result, level, nvertices, set_size, naggregates, ncolors, rounds) &
          bind(c, name='misgrid_result_level_info') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, result
       integer(c_int64_t), value :: level
       integer(c_int64_t), intent(out) :: nvertices, set_size, naggregates, ncolors, rounds
       integer(c_int) :: st
     end function c_misgrid_result_level_info
     function c_misgrid_result_set_flags(ctx, result, level, n, flags) bind(c, name='misgrid_result_set_flags') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, result
       integer(c_int64_t), value :: level, n
       integer(c_int32_t), intent(out) :: flags(*)
       integer(c_int) :: st
     end function c_misgrid_result_set_flags
     function c_misgrid_result_set_vertices(ctx, result, level, index_type, base, cap, vertices, count) &
          bind(c, name='misgrid_result_set_vertices') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, result, vertices
       integer(c_int64_t), value :: level, cap
       integer(c_int32_t), value :: index_type, base
       integer(c_int64_t), intent(out) :: count
       integer(c_int) :: st
     end function c_misgrid_result_set_vertices
     function c_misgrid_result_aggregates(ctx, result, level, index_type, base, n, aggregate) &
          bind(c, name='misgrid_result_aggregates') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, result, aggregate
       integer(c_int64_t), value :: level, n
       integer(c_int32_t), value :: index_type, base
       integer(c_int) :: st
     end function c_misgrid_result_aggregates
     function c_misgrid_result_aggregate_roots(ctx, result, level, index_type, base, cap, roots, count) &
          bind(c, name='misgrid_result_aggregate_roots') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, result, roots
       integer(c_int64_t), value :: level, cap
       integer(c_int32_t), value :: index_type, base
       integer(c_int64_t), intent(out) :: count
       integer(c_int) :: st
     end function c_misgrid_result_aggregate_roots
     function c_misgrid_result_colors(ctx, result, level, base, n, colors) bind(c, name='misgrid_result_colors') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, result
       integer(c_int64_t), value :: level, n
       integer(c_int32_t), value :: base
       integer(c_int32_t), intent(out) :: colors(*)
       integer(c_int) :: st
     end function c_misgrid_result_colors
     function c_misgrid_result_level_graph(ctx, result, level, graph) bind(c, name='misgrid_result_level_graph') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, result
       integer(c_int64_t), value :: level
       type(c_ptr), intent(inout) :: graph
       integer(c_int) :: st
     end function c_misgrid_result_level_graph
     function c_misgrid_solver_create(ctx, options, solver) bind(c, name='misgrid_solver_create') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: solver
       integer(c_int) :: st
     end function c_misgrid_solver_create
     function c_misgrid_solver_destroy(ctx, solver) bind(c, name='misgrid_solver_destroy') result(st)
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx, solver
       integer(c_int) :: st
     end function c_misgrid_solver_destroy
     function c_misgrid_solver_set_coordinates(ctx, solver, dim, n, coords) &
          bind(c, name='misgrid_solver_set_coordinates') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int32_t), value :: dim
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: coords(*)
       integer(c_int) :: st
     end function c_misgrid_solver_set_coordinates
     function c_misgrid_solver_set_nullspace(ctx, solver, n, nvec, vectors) &
          bind(c, name='misgrid_solver_set_nullspace') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), value :: n
       integer(c_int32_t), value :: nvec
       real(c_double), intent(in) :: vectors(*)
       integer(c_int) :: st
     end function c_misgrid_solver_set_nullspace
     function c_misgrid_solver_set_kernel(ctx, solver, n, nvec, vectors) &
          bind(c, name='misgrid_solver_set_kernel') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), value :: n
       integer(c_int32_t), value :: nvec
       real(c_double), intent(in) :: vectors(*)
       integer(c_int) :: st
     end function c_misgrid_solver_set_kernel
     function c_misgrid_solver_setup(ctx, solver, nrows, ncols, nnz, index_type, base, rowptr, colind, &
          value_type, values) bind(c, name='misgrid_solver_setup') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, solver, rowptr, colind, values
       integer(c_int64_t), value :: nrows, ncols, nnz
       integer(c_int32_t), value :: index_type, base, value_type
       integer(c_int) :: st
     end function c_misgrid_solver_setup
     function c_misgrid_solver_update_values(ctx, solver, nnz, value_type, values) &
          bind(c, name='misgrid_solver_update_values') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, solver, values
       integer(c_int64_t), value :: nnz
       integer(c_int32_t), value :: value_type
       integer(c_int) :: st
     end function c_misgrid_solver_update_values
     function c_misgrid_solver_apply(ctx, solver, n, r, z) bind(c, name='misgrid_solver_apply') result(st)
       import :: c_ptr, c_int, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: r(*)
       real(c_double), intent(out) :: z(*)
       integer(c_int) :: st
     end function c_misgrid_solver_apply
     function c_misgrid_solver_solve(ctx, solver, n, b, x, converged, iterations, residual) &
          bind(c, name='misgrid_solver_solve') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: b(*)
       real(c_double), intent(inout) :: x(*)
       integer(c_int32_t), intent(out) :: converged
       integer(c_int64_t), intent(out) :: iterations
       real(c_double), intent(out) :: residual
       integer(c_int) :: st
     end function c_misgrid_solver_solve
     function c_misgrid_solver_residuals(ctx, solver, cap, residuals, count) &
          bind(c, name='misgrid_solver_residuals') result(st)
       import :: c_ptr, c_int, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), value :: cap
       real(c_double), intent(out) :: residuals(*)
       integer(c_int64_t), intent(out) :: count
       integer(c_int) :: st
     end function c_misgrid_solver_residuals
     function c_misgrid_solver_info(ctx, solver, nlevels, operator_complexity, grid_complexity, setup_seconds) &
          bind(c, name='misgrid_solver_info') result(st)
       import :: c_ptr, c_int, c_int64_t, c_double
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), intent(out) :: nlevels
       real(c_double), intent(out) :: operator_complexity, grid_complexity, setup_seconds
       integer(c_int) :: st
     end function c_misgrid_solver_info
     function c_misgrid_solver_level_info(ctx, solver, level, rows, nonzeros, block_size) &
          bind(c, name='misgrid_solver_level_info') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, solver
       integer(c_int64_t), value :: level
       integer(c_int64_t), intent(out) :: rows, nonzeros, block_size
       integer(c_int) :: st
     end function c_misgrid_solver_level_info
     function c_misgrid_mis_distributed(ctx, comm, nglobal, first, nlocal, nnz, index_type, base, &
          rowptr, colind, classes, options, flags, set_size, rounds) &
          bind(c, name='misgrid_mis_distributed') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_char
       type(c_ptr), value :: ctx, comm, rowptr, colind, classes, flags, set_size, rounds
       integer(c_int64_t), value :: nglobal, first, nlocal, nnz
       integer(c_int32_t), value :: index_type, base
       character(kind=c_char), intent(in) :: options(*)
       integer(c_int) :: st
     end function c_misgrid_mis_distributed
     function c_misgrid_mis_distributed_f(ctx, fcomm, nglobal, first, nlocal, nnz, index_type, base, &
          rowptr, colind, classes, options, flags, set_size, rounds) &
          bind(c, name='misgrid_mis_distributed_f') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t, c_char
       type(c_ptr), value :: ctx, rowptr, colind, classes, flags, set_size, rounds
       integer(c_int32_t), value :: fcomm
       integer(c_int64_t), value :: nglobal, first, nlocal, nnz
       integer(c_int32_t), value :: index_type, base
       character(kind=c_char), intent(in) :: options(*)
       integer(c_int) :: st
     end function c_misgrid_mis_distributed_f
     ! Graphs in GPU memory (misgrid.h, "device graphs"): rowptr, colind
     ! and device flags are device addresses (c_devloc in CUDA Fortran),
     ! cuda_context a CUcontext or c_null_ptr, graph the raw handle.
     function c_misgrid_device_graph_from_csr(ctx, cuda_context, n, nnz, rowptr, colind, graph) &
          bind(c, name='misgrid_device_graph_from_csr') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, cuda_context, rowptr, colind
       integer(c_int64_t), value :: n, nnz
       type(c_ptr), intent(inout) :: graph
       integer(c_int) :: st
     end function c_misgrid_device_graph_from_csr
     function c_misgrid_device_graph_destroy(ctx, graph) bind(c, name='misgrid_device_graph_destroy') result(st)
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx, graph
       integer(c_int) :: st
     end function c_misgrid_device_graph_destroy
     function c_misgrid_release_device_memory(ctx) bind(c, name='misgrid_release_device_memory') result(st)
       import :: c_ptr, c_int
       type(c_ptr), value :: ctx
       integer(c_int) :: st
     end function c_misgrid_release_device_memory
     function c_misgrid_device_mis(ctx, graph, options, where, n, flags, set_size) &
          bind(c, name='misgrid_device_mis') result(st)
       import :: c_ptr, c_int, c_char, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, graph, flags
       character(kind=c_char), intent(in) :: options(*)
       integer(c_int32_t), value :: where
       integer(c_int64_t), value :: n
       integer(c_int64_t), intent(out) :: set_size
       integer(c_int) :: st
     end function c_misgrid_device_mis
     function c_misgrid_device_hierarchy(ctx, graph, options, result) &
          bind(c, name='misgrid_device_hierarchy') result(st)
       import :: c_ptr, c_int, c_char
       type(c_ptr), value :: ctx, graph
       character(kind=c_char), intent(in) :: options(*)
       type(c_ptr), intent(inout) :: result
       integer(c_int) :: st
     end function c_misgrid_device_hierarchy
     ! A matrix in GPU memory (misgrid.h, "device solver"): rowptr, colind
     ! and values are device addresses.
     function c_misgrid_device_solver_setup(ctx, solver, cuda_context, nrows, nnz, index_type, &
          rowptr, colind, values) bind(c, name='misgrid_device_solver_setup') result(st)
       import :: c_ptr, c_int, c_int32_t, c_int64_t
       type(c_ptr), value :: ctx, solver, cuda_context, rowptr, colind, values
       integer(c_int64_t), value :: nrows, nnz
       integer(c_int32_t), value :: index_type
       integer(c_int) :: st
     end function c_misgrid_device_solver_setup
     function c_misgrid_device_solver_update(ctx, solver, nnz, values) &
          bind(c, name='misgrid_device_solver_update') result(st)
       import :: c_ptr, c_int, c_int64_t
       type(c_ptr), value :: ctx, solver, values
       integer(c_int64_t), value :: nnz
       integer(c_int) :: st
     end function c_misgrid_device_solver_update
     function c_strlen(s) bind(c, name='strlen') result(n)
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: n
     end function c_strlen
  end interface

  ! ------------------------------------------------------------ Fortran layer
  public :: misgrid_version, misgrid_error_message, misgrid_handle_count
  public :: misgrid_context_create, misgrid_context_destroy, misgrid_context_set_option
  public :: misgrid_graph_from_csr, misgrid_graph_from_coo, misgrid_graph_from_elements
  public :: misgrid_graph_destroy, misgrid_graph_size, misgrid_graph_adjacency
  public :: misgrid_graph_get_dirichlet, misgrid_graph_set_coordinates
  public :: misgrid_graph_set_classes, misgrid_graph_get_classes, misgrid_graph_set_priority
  public :: misgrid_mis, misgrid_color, misgrid_hierarchy, misgrid_aggregate, misgrid_verify
  public :: misgrid_write_vtu
  public :: misgrid_result_destroy, misgrid_result_num_levels, misgrid_result_level_info
  public :: misgrid_result_set_flags, misgrid_result_set_vertices, misgrid_result_aggregates
  public :: misgrid_result_aggregate_roots, misgrid_result_colors, misgrid_result_level_graph
  public :: misgrid_solver_create, misgrid_solver_destroy, misgrid_solver_set_coordinates
  public :: misgrid_solver_set_nullspace, misgrid_solver_set_kernel, misgrid_solver_setup, misgrid_solver_update_values
  public :: misgrid_solver_apply, misgrid_solver_solve, misgrid_solver_residuals
  public :: misgrid_solver_info, misgrid_solver_level_info
  public :: misgrid_mis_distributed

  !> misgrid_mis_distributed(ctx, comm, nglobal, first, rowptr, colind, flags
  !>   [, options] [, set_size] [, rounds] [, classes] [, base])
  !> Collective over the integer communicator comm (MPI_COMM_WORLD of
  !> "use mpi", or comm%MPI_VAL of mpi_f08). This rank's rows are
  !> first .. first+size(rowptr)-2 (1-based unless base says otherwise) of
  !> an nglobal-vertex graph, with GLOBAL column ids; flags(i) is 1 when
  !> row first+i-1 is in the set misgrid_mis returns for the whole graph.
  interface misgrid_mis_distributed
     module procedure dist_i32, dist_i64
  end interface misgrid_mis_distributed

  !> misgrid_graph_from_csr(ctx, rowptr, colind, [values,] graph [, options] [, base])
  !> rowptr and colind both int32 or both int64; values real64, real32 or
  !> absent (pattern). base defaults to 1.
  interface misgrid_graph_from_csr
     module procedure csr_i32, csr_i32_r64, csr_i32_r32, csr_i64, csr_i64_r64, csr_i64_r32
     module procedure csr_i64i32, csr_i64i32_r64
  end interface misgrid_graph_from_csr
  !> misgrid_graph_from_coo(ctx, n, rows, cols, [values,] graph [, options] [, base])
  interface misgrid_graph_from_coo
     module procedure coo_i32, coo_i32_r64, coo_i64, coo_i64_r64
  end interface misgrid_graph_from_coo
  !> misgrid_graph_from_elements(ctx, nnodes, element_type, conn(npe, nelem), graph
  !>   [, coords(dim, nnodes)] [, options] [, base])
  interface misgrid_graph_from_elements
     module procedure elements_i32, elements_i64
  end interface misgrid_graph_from_elements
  !> misgrid_graph_adjacency(ctx, graph, offsets(nvertices+1), adj(2*nedges)):
  !> 1-based CSR, int32 or int64.
  interface misgrid_graph_adjacency
     module procedure adjacency_i32, adjacency_i64
  end interface misgrid_graph_adjacency
  !> misgrid_solver_setup(ctx, solver, rowptr, colind, values [, base]):
  !> an SPD matrix in CSR form, int32 or int64 indices, real64 values.
  interface misgrid_solver_setup
     module procedure solver_setup_i32, solver_setup_i64, solver_setup_i64i32
  end interface misgrid_solver_setup
  interface misgrid_result_set_vertices
     module procedure set_vertices_i32, set_vertices_i64
  end interface misgrid_result_set_vertices
  interface misgrid_result_aggregates
     module procedure aggregates_i32, aggregates_i64
  end interface misgrid_result_aggregates
  interface misgrid_result_aggregate_roots
     module procedure roots_i32, roots_i64
  end interface misgrid_result_aggregate_roots

contains

  !> A Fortran string as a NUL-terminated C string; absent is "".
  pure function cstr(s) result(c)
    character(len=*), intent(in), optional :: s
    character(kind=c_char, len=:), allocatable :: c
    if (present(s)) then
       c = trim(s) // c_null_char
    else
       c = c_null_char
    end if
  end function cstr

  pure integer(c_int32_t) function base_or_one(base)
    integer, intent(in), optional :: base
    base_or_one = 1
    if (present(base)) base_or_one = int(base, c_int32_t)
  end function base_or_one

  !> Reports arrays whose sizes disagree before the library could read
  !> past the end of one of them.
  integer(c_int) function size_error(ctx, who, what, got, want) result(st)
    type(misgrid_context), intent(in) :: ctx
    character(len=*), intent(in) :: who, what
    integer(c_int64_t), intent(in) :: got, want
    character(len=256) :: msg
    write (msg, '(a, ": size(", a, ") = ", i0, ", want ", i0)') who, what, got, want
    st = c_misgrid_context_set_error(ctx%h, MISGRID_ERR_RANGE, cstr(msg))
  end function size_error

  function misgrid_version() result(v)
    character(len=:), allocatable :: v
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_misgrid_version()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: v)
    do i = 1, n
       v(i:i) = chars(i)
    end do
  end function misgrid_version

  !> The message of the last failed call made with ctx (a copy, so it is
  !> safe while other threads use ctx).
  function misgrid_error_message(ctx) result(msg)
    type(misgrid_context), intent(in) :: ctx
    character(len=:), allocatable :: msg
    character(kind=c_char), allocatable :: buf(:)
    integer(c_int64_t) :: need
    integer(c_int) :: st
    integer :: i, n
    character(kind=c_char) :: none(1)
    st = c_misgrid_error_message_copy(ctx%h, none, 0_c_int64_t, need)
    if (st /= MISGRID_OK) need = 1
    allocate(buf(max(need, 1_c_int64_t)))
    st = c_misgrid_error_message_copy(ctx%h, buf, int(size(buf), c_int64_t), need)
    n = 0
    do while (n < size(buf))
       if (buf(n + 1) == c_null_char) exit
       n = n + 1
    end do
    allocate(character(len=n) :: msg)
    do i = 1, n
       msg(i:i) = buf(i)
    end do
  end function misgrid_error_message

  integer(c_int) function misgrid_handle_count(count) result(st)
    integer(c_int64_t), intent(out) :: count
    st = c_misgrid_handle_count(count)
  end function misgrid_handle_count

  !> The context's messages number array entries, levels and vertices
  !> from 1, as the wrappers do (misgrid_context_set_index_base).
  integer(c_int) function misgrid_context_create(ctx) result(st)
    type(misgrid_context), intent(inout) :: ctx
    type(c_ptr) :: h
    h = c_null_ptr
    st = c_misgrid_context_create(h)
    if (st /= MISGRID_OK) return
    st = c_misgrid_context_set_index_base(h, 1_c_int32_t)
    ctx%h = h
  end function misgrid_context_create

  integer(c_int) function misgrid_context_destroy(ctx) result(st)
    type(misgrid_context), intent(inout) :: ctx
    st = c_misgrid_context_destroy(ctx%h)
    if (st == MISGRID_OK) ctx%h = c_null_ptr
  end function misgrid_context_destroy

  integer(c_int) function misgrid_context_set_option(ctx, options) result(st)
    type(misgrid_context), intent(in) :: ctx
    character(len=*), intent(in) :: options
    st = c_misgrid_context_set_option(ctx%h, cstr(options))
  end function misgrid_context_set_option

  ! ------------------------------------------------------------ graphs

  ! Fortran has no generics over kinds, so each specific of a generic
  ! interface only declares its arrays' kinds and passes their addresses to
  ! one *_call procedure, which holds the size checks and the C call.
  integer(c_int) function csr_i32(ctx, rowptr, colind, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int32_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT32, c_loc(rowptr), c_loc(colind), &
         MISGRID_PATTERN, size(colind, kind=c_int64_t), c_null_ptr, graph, options, base)
  end function csr_i32

  integer(c_int) function csr_i32_r64(ctx, rowptr, colind, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int32_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT32, c_loc(rowptr), c_loc(colind), &
         MISGRID_FLOAT64, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function csr_i32_r64

  integer(c_int) function csr_i32_r32(ctx, rowptr, colind, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int32_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    real(c_float), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT32, c_loc(rowptr), c_loc(colind), &
         MISGRID_FLOAT32, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function csr_i32_r32

  integer(c_int) function csr_i64(ctx, rowptr, colind, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT64, c_loc(rowptr), c_loc(colind), &
         MISGRID_PATTERN, size(colind, kind=c_int64_t), c_null_ptr, graph, options, base)
  end function csr_i64

  integer(c_int) function csr_i64_r64(ctx, rowptr, colind, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT64, c_loc(rowptr), c_loc(colind), &
         MISGRID_FLOAT64, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function csr_i64_r64

  integer(c_int) function csr_i64_r32(ctx, rowptr, colind, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    real(c_float), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT64, c_loc(rowptr), c_loc(colind), &
         MISGRID_FLOAT32, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function csr_i64_r32

  integer(c_int) function csr_i64i32(ctx, rowptr, colind, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:)
    integer(c_int32_t), intent(in), target, contiguous :: colind(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT64_INT32, c_loc(rowptr), c_loc(colind), &
         MISGRID_PATTERN, size(colind, kind=c_int64_t), c_null_ptr, graph, options, base)
  end function csr_i64i32

  integer(c_int) function csr_i64i32_r64(ctx, rowptr, colind, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:)
    integer(c_int32_t), intent(in), target, contiguous :: colind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .false., size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         size(colind, kind=c_int64_t), MISGRID_INT64_INT32, c_loc(rowptr), c_loc(colind), &
         MISGRID_FLOAT64, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function csr_i64i32_r64

  integer(c_int) function coo_i32(ctx, n, rows, cols, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: n
    integer(c_int32_t), intent(in), target, contiguous :: rows(:), cols(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .true., int(n, c_int64_t), size(rows, kind=c_int64_t), size(cols, kind=c_int64_t), &
         MISGRID_INT32, c_loc(rows), c_loc(cols), &
         MISGRID_PATTERN, size(rows, kind=c_int64_t), c_null_ptr, graph, options, base)
  end function coo_i32

  integer(c_int) function coo_i32_r64(ctx, n, rows, cols, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: n
    integer(c_int32_t), intent(in), target, contiguous :: rows(:), cols(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .true., int(n, c_int64_t), size(rows, kind=c_int64_t), size(cols, kind=c_int64_t), &
         MISGRID_INT32, c_loc(rows), c_loc(cols), &
         MISGRID_FLOAT64, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function coo_i32_r64

  integer(c_int) function coo_i64(ctx, n, rows, cols, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: n
    integer(c_int64_t), intent(in), target, contiguous :: rows(:), cols(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .true., int(n, c_int64_t), size(rows, kind=c_int64_t), size(cols, kind=c_int64_t), &
         MISGRID_INT64, c_loc(rows), c_loc(cols), &
         MISGRID_PATTERN, size(rows, kind=c_int64_t), c_null_ptr, graph, options, base)
  end function coo_i64

  integer(c_int) function coo_i64_r64(ctx, n, rows, cols, values, graph, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: n
    integer(c_int64_t), intent(in), target, contiguous :: rows(:), cols(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = matrix_call(ctx, .true., int(n, c_int64_t), size(rows, kind=c_int64_t), size(cols, kind=c_int64_t), &
         MISGRID_INT64, c_loc(rows), c_loc(cols), &
         MISGRID_FLOAT64, size(values, kind=c_int64_t), c_loc(values), graph, options, base)
  end function coo_i64_r64

  !> The body of every misgrid_graph_from_csr and misgrid_graph_from_coo
  !> specific, which differ only in the kinds of their arrays (the two C
  !> entries take the same arguments): idx2 (colind or cols) and values
  !> must pair with the nnz entries.
  integer(c_int) function matrix_call(ctx, coo, n, nnz, nidx2, itype, idx1, idx2, vtype, nvalues, values, graph, &
       options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    logical, intent(in) :: coo
    integer(c_int64_t), intent(in) :: n, nnz, nidx2, nvalues
    integer(c_int32_t), intent(in) :: itype, vtype
    type(c_ptr), intent(in) :: idx1, idx2, values
    type(misgrid_graph), intent(inout) :: graph
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    character(len=22) :: who
    who = merge('misgrid_graph_from_coo', 'misgrid_graph_from_csr', coo)
    if (nidx2 /= nnz) then
       st = size_error(ctx, who, 'cols', nidx2, nnz)
       return
    end if
    if (nvalues /= nnz) then
       st = size_error(ctx, who, 'values', nvalues, nnz)
       return
    end if
    if (coo) then
       st = c_misgrid_graph_from_coo(ctx%h, n, n, nnz, itype, base_or_one(base), idx1, idx2, vtype, values, &
            cstr(options), graph%h)
    else
       st = c_misgrid_graph_from_csr(ctx%h, n, n, nnz, itype, base_or_one(base), idx1, idx2, vtype, values, &
            cstr(options), graph%h)
    end if
  end function matrix_call

  integer(c_int) function elements_i32(ctx, nnodes, element_type, conn, graph, coords, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: nnodes
    integer(c_int32_t), intent(in) :: element_type
    integer(c_int32_t), intent(in), target, contiguous :: conn(:, :)
    type(misgrid_graph), intent(inout) :: graph
    real(c_double), intent(in), target, contiguous, optional :: coords(:, :)
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = elements_call(ctx, nnodes, element_type, int(size(conn, 1), c_int32_t), size(conn, 2, kind=c_int64_t), &
         MISGRID_INT32, c_loc(conn), graph, coords, options, base)
  end function elements_i32

  integer(c_int) function elements_i64(ctx, nnodes, element_type, conn, graph, coords, options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: nnodes
    integer(c_int32_t), intent(in) :: element_type
    integer(c_int64_t), intent(in), target, contiguous :: conn(:, :)
    type(misgrid_graph), intent(inout) :: graph
    real(c_double), intent(in), target, contiguous, optional :: coords(:, :)
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    st = elements_call(ctx, nnodes, element_type, int(size(conn, 1), c_int32_t), size(conn, 2, kind=c_int64_t), &
         MISGRID_INT64, c_loc(conn), graph, coords, options, base)
  end function elements_i64

  !> The body of both misgrid_graph_from_elements specifics: coords, when
  !> given, holds one column per node.
  integer(c_int) function elements_call(ctx, nnodes, element_type, npe, nelem, itype, conn, graph, coords, &
       options, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: nnodes
    integer(c_int32_t), intent(in) :: element_type, npe, itype
    integer(c_int64_t), intent(in) :: nelem
    type(c_ptr), intent(in) :: conn
    type(misgrid_graph), intent(inout) :: graph
    real(c_double), intent(in), target, contiguous, optional :: coords(:, :)
    character(len=*), intent(in), optional :: options
    integer, intent(in), optional :: base
    type(c_ptr) :: xp
    integer(c_int32_t) :: dim
    xp = c_null_ptr
    dim = 0
    if (present(coords)) then
       if (size(coords, 2) /= nnodes) then
          st = size_error(ctx, 'misgrid_graph_from_elements', 'coords, 2', size(coords, 2, kind=c_int64_t), &
               int(nnodes, c_int64_t))
          return
       end if
       xp = c_loc(coords)
       dim = int(size(coords, 1), c_int32_t)
    end if
    st = c_misgrid_graph_from_elements(ctx%h, int(nnodes, c_int64_t), element_type, npe, nelem, itype, &
         base_or_one(base), conn, dim, xp, cstr(options), graph%h)
  end function elements_call

  integer(c_int) function misgrid_graph_destroy(ctx, graph) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(inout) :: graph
    st = c_misgrid_graph_destroy(ctx%h, graph%h)
    if (st == MISGRID_OK) graph%h = c_null_ptr
  end function misgrid_graph_destroy

  integer(c_int) function misgrid_graph_size(ctx, graph, nvertices, nedges) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int64_t), intent(out) :: nvertices, nedges
    st = c_misgrid_graph_size(ctx%h, graph%h, nvertices, nedges)
  end function misgrid_graph_size

  integer(c_int) function adjacency_i32(ctx, graph, offsets, adj) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int32_t), intent(out), target, contiguous :: offsets(:), adj(:)
    st = c_misgrid_graph_adjacency(ctx%h, graph%h, MISGRID_INT32, 1_c_int32_t, c_loc(offsets), &
         size(offsets, kind=c_int64_t), c_loc(adj), size(adj, kind=c_int64_t))
  end function adjacency_i32

  integer(c_int) function adjacency_i64(ctx, graph, offsets, adj) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int64_t), intent(out), target, contiguous :: offsets(:), adj(:)
    st = c_misgrid_graph_adjacency(ctx%h, graph%h, MISGRID_INT64, 1_c_int32_t, c_loc(offsets), &
         size(offsets, kind=c_int64_t), c_loc(adj), size(adj, kind=c_int64_t))
  end function adjacency_i64

  !> 1 for each vertex from a Dirichlet row, else 0.
  integer(c_int) function misgrid_graph_get_dirichlet(ctx, graph, flags) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int32_t), intent(out), contiguous :: flags(:)
    st = c_misgrid_graph_get_dirichlet(ctx%h, graph%h, size(flags, kind=c_int64_t), flags)
  end function misgrid_graph_get_dirichlet

  integer(c_int) function misgrid_graph_set_coordinates(ctx, graph, coords) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    real(c_double), intent(in), contiguous :: coords(:, :)
    st = c_misgrid_graph_set_coordinates(ctx%h, graph%h, int(size(coords, 1), c_int32_t), &
         size(coords, 2, kind=c_int64_t), coords)
  end function misgrid_graph_set_coordinates

  integer(c_int) function misgrid_graph_set_classes(ctx, graph, classes) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int32_t), intent(in), contiguous :: classes(:)
    st = c_misgrid_graph_set_classes(ctx%h, graph%h, size(classes, kind=c_int64_t), classes)
  end function misgrid_graph_set_classes

  integer(c_int) function misgrid_graph_get_classes(ctx, graph, classes) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int32_t), intent(out), contiguous :: classes(:)
    st = c_misgrid_graph_get_classes(ctx%h, graph%h, size(classes, kind=c_int64_t), classes)
  end function misgrid_graph_get_classes

  integer(c_int) function misgrid_graph_set_priority(ctx, graph, values) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    real(c_double), intent(in), contiguous :: values(:)
    st = c_misgrid_graph_set_priority(ctx%h, graph%h, size(values, kind=c_int64_t), values)
  end function misgrid_graph_set_priority

  ! ------------------------------------------------------------ operations

  integer(c_int) function misgrid_mis(ctx, graph, options, result) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    character(len=*), intent(in) :: options
    type(misgrid_result), intent(inout) :: result
    st = c_misgrid_mis(ctx%h, graph%h, cstr(options), result%h)
  end function misgrid_mis

  integer(c_int) function misgrid_color(ctx, graph, options, result) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    character(len=*), intent(in) :: options
    type(misgrid_result), intent(inout) :: result
    st = c_misgrid_color(ctx%h, graph%h, cstr(options), result%h)
  end function misgrid_color

  integer(c_int) function misgrid_hierarchy(ctx, graph, options, result) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    character(len=*), intent(in) :: options
    type(misgrid_result), intent(inout) :: result
    st = c_misgrid_hierarchy(ctx%h, graph%h, cstr(options), result%h)
  end function misgrid_hierarchy

  !> Aggregates of the caller's distance-2 set (flags: nonzero = member).
  integer(c_int) function misgrid_aggregate(ctx, graph, flags, result) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int32_t), intent(in), contiguous :: flags(:)
    type(misgrid_result), intent(inout) :: result
    st = c_misgrid_aggregate(ctx%h, graph%h, size(flags, kind=c_int64_t), flags, result%h)
  end function misgrid_aggregate

  !> valid is .true. when flags mark a maximal independent set at the
  !> distance; reason (optional) names the first offending vertex (0-based
  !> in the library's words).
  integer(c_int) function misgrid_verify(ctx, graph, flags, distance, valid, reason) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    integer(c_int32_t), intent(in), contiguous :: flags(:)
    integer, intent(in) :: distance
    logical, intent(out) :: valid
    character(len=*), intent(out), optional :: reason
    character(kind=c_char) :: buf(512)
    integer(c_int32_t) :: v
    integer :: i
    st = c_misgrid_verify(ctx%h, graph%h, size(flags, kind=c_int64_t), flags, int(distance, c_int32_t), &
         v, buf, int(size(buf), c_int64_t))
    valid = v /= 0
    if (present(reason)) then
       reason = ''
       do i = 1, min(len(reason), size(buf))
          if (buf(i) == c_null_char) exit
          reason(i:i) = buf(i)
       end do
    end if
  end function misgrid_verify

  integer(c_int) function misgrid_write_vtu(ctx, graph, result, path, options) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_graph), intent(in) :: graph
    type(misgrid_result), intent(in) :: result
    character(len=*), intent(in) :: path
    character(len=*), intent(in), optional :: options
    st = c_misgrid_write_vtu(ctx%h, graph%h, result%h, cstr(path), cstr(options))
  end function misgrid_write_vtu

  ! ------------------------------------------------------------ results (levels from 1)

  integer(c_int) function misgrid_result_destroy(ctx, result) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(inout) :: result
    st = c_misgrid_result_destroy(ctx%h, result%h)
    if (st == MISGRID_OK) result%h = c_null_ptr
  end function misgrid_result_destroy

  integer(c_int) function misgrid_result_num_levels(ctx, result, nlevels) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(out) :: nlevels
    integer(c_int64_t) :: n
    st = c_misgrid_result_num_levels(ctx%h, result%h, n)
    nlevels = int(n)
  end function misgrid_result_num_levels

  !> Sizes at level (1 = the input graph); every output is optional.
  integer(c_int) function misgrid_result_level_info(ctx, result, level, nvertices, set_size, naggregates, &
       ncolors, rounds) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int64_t), intent(out), optional :: nvertices, set_size, naggregates, ncolors, rounds
    integer(c_int64_t) :: v(5)
    st = c_misgrid_result_level_info(ctx%h, result%h, int(level - 1, c_int64_t), v(1), v(2), v(3), v(4), v(5))
    if (present(nvertices)) nvertices = v(1)
    if (present(set_size)) set_size = v(2)
    if (present(naggregates)) naggregates = v(3)
    if (present(ncolors)) ncolors = v(4)
    if (present(rounds)) rounds = v(5)
  end function misgrid_result_level_info

  integer(c_int) function misgrid_result_set_flags(ctx, result, level, flags) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int32_t), intent(out), contiguous :: flags(:)
    st = c_misgrid_result_set_flags(ctx%h, result%h, int(level - 1, c_int64_t), size(flags, kind=c_int64_t), flags)
  end function misgrid_result_set_flags

  integer(c_int) function set_vertices_i32(ctx, result, level, vertices, count) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int32_t), intent(out), target, contiguous :: vertices(:)
    integer(c_int64_t), intent(out) :: count
    st = c_misgrid_result_set_vertices(ctx%h, result%h, int(level - 1, c_int64_t), MISGRID_INT32, 1_c_int32_t, &
         size(vertices, kind=c_int64_t), c_loc(vertices), count)
  end function set_vertices_i32

  integer(c_int) function set_vertices_i64(ctx, result, level, vertices, count) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int64_t), intent(out), target, contiguous :: vertices(:)
    integer(c_int64_t), intent(out) :: count
    st = c_misgrid_result_set_vertices(ctx%h, result%h, int(level - 1, c_int64_t), MISGRID_INT64, 1_c_int32_t, &
         size(vertices, kind=c_int64_t), c_loc(vertices), count)
  end function set_vertices_i64

  integer(c_int) function aggregates_i32(ctx, result, level, aggregate) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int32_t), intent(out), target, contiguous :: aggregate(:)
    st = c_misgrid_result_aggregates(ctx%h, result%h, int(level - 1, c_int64_t), MISGRID_INT32, 1_c_int32_t, &
         size(aggregate, kind=c_int64_t), c_loc(aggregate))
  end function aggregates_i32

  integer(c_int) function aggregates_i64(ctx, result, level, aggregate) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int64_t), intent(out), target, contiguous :: aggregate(:)
    st = c_misgrid_result_aggregates(ctx%h, result%h, int(level - 1, c_int64_t), MISGRID_INT64, 1_c_int32_t, &
         size(aggregate, kind=c_int64_t), c_loc(aggregate))
  end function aggregates_i64

  integer(c_int) function roots_i32(ctx, result, level, roots, count) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int32_t), intent(out), target, contiguous :: roots(:)
    integer(c_int64_t), intent(out) :: count
    st = c_misgrid_result_aggregate_roots(ctx%h, result%h, int(level - 1, c_int64_t), MISGRID_INT32, 1_c_int32_t, &
         size(roots, kind=c_int64_t), c_loc(roots), count)
  end function roots_i32

  integer(c_int) function roots_i64(ctx, result, level, roots, count) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int64_t), intent(out), target, contiguous :: roots(:)
    integer(c_int64_t), intent(out) :: count
    st = c_misgrid_result_aggregate_roots(ctx%h, result%h, int(level - 1, c_int64_t), MISGRID_INT64, 1_c_int32_t, &
         size(roots, kind=c_int64_t), c_loc(roots), count)
  end function roots_i64

  !> Colors numbered from 1.
  integer(c_int) function misgrid_result_colors(ctx, result, level, colors) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    integer(c_int32_t), intent(out), contiguous :: colors(:)
    st = c_misgrid_result_colors(ctx%h, result%h, int(level - 1, c_int64_t), 1_c_int32_t, &
         size(colors, kind=c_int64_t), colors)
  end function misgrid_result_colors

  integer(c_int) function misgrid_result_level_graph(ctx, result, level, graph) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_result), intent(in) :: result
    integer, intent(in) :: level
    type(misgrid_graph), intent(inout) :: graph
    st = c_misgrid_result_level_graph(ctx%h, result%h, int(level - 1, c_int64_t), graph%h)
  end function misgrid_result_level_graph

  ! ------------------------------------------------------------ solver

  integer(c_int) function misgrid_solver_create(ctx, options, solver) result(st)
    type(misgrid_context), intent(in) :: ctx
    character(len=*), intent(in) :: options
    type(misgrid_solver), intent(inout) :: solver
    st = c_misgrid_solver_create(ctx%h, cstr(options), solver%h)
  end function misgrid_solver_create

  integer(c_int) function misgrid_solver_destroy(ctx, solver) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(inout) :: solver
    st = c_misgrid_solver_destroy(ctx%h, solver%h)
    if (st == MISGRID_OK) solver%h = c_null_ptr
  end function misgrid_solver_destroy

  !> Node coordinates coords(dim, nnodes) for nullspace=rbm.
  integer(c_int) function misgrid_solver_set_coordinates(ctx, solver, coords) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(in), contiguous :: coords(:, :)
    st = c_misgrid_solver_set_coordinates(ctx%h, solver%h, int(size(coords, 1), c_int32_t), &
         size(coords, 2, kind=c_int64_t), coords)
  end function misgrid_solver_set_coordinates

  !> Near-nullspace vectors(nrows, nvec), one vector per column, for
  !> nullspace=vectors.
  integer(c_int) function misgrid_solver_set_nullspace(ctx, solver, vectors) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(in), contiguous :: vectors(:, :)
    st = c_misgrid_solver_set_nullspace(ctx%h, solver%h, size(vectors, 1, kind=c_int64_t), &
         int(size(vectors, 2), c_int32_t), vectors)
  end function misgrid_solver_set_nullspace

  !> The exact kernel vectors(nrows, nvec) of a singular matrix, one vector
  !> per column (constants for pure Neumann, rigid-body modes for a
  !> free-floating body): misgrid_solver_solve projects it out, and a b
  !> with a part in it returns MISGRID_ERR_INCONSISTENT.
  integer(c_int) function misgrid_solver_set_kernel(ctx, solver, vectors) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(in), contiguous :: vectors(:, :)
    st = c_misgrid_solver_set_kernel(ctx%h, solver%h, size(vectors, 1, kind=c_int64_t), &
         int(size(vectors, 2), c_int32_t), vectors)
  end function misgrid_solver_set_kernel

  integer(c_int) function solver_setup_i32(ctx, solver, rowptr, colind, values, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    integer(c_int32_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer, intent(in), optional :: base
    st = setup_call(ctx, solver, size(rowptr, kind=c_int64_t), size(colind, kind=c_int64_t), MISGRID_INT32, &
         c_loc(rowptr), c_loc(colind), size(values, kind=c_int64_t), c_loc(values), base)
  end function solver_setup_i32

  integer(c_int) function solver_setup_i64(ctx, solver, rowptr, colind, values, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer, intent(in), optional :: base
    st = setup_call(ctx, solver, size(rowptr, kind=c_int64_t), size(colind, kind=c_int64_t), MISGRID_INT64, &
         c_loc(rowptr), c_loc(colind), size(values, kind=c_int64_t), c_loc(values), base)
  end function solver_setup_i64

  integer(c_int) function solver_setup_i64i32(ctx, solver, rowptr, colind, values, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:)
    integer(c_int32_t), intent(in), target, contiguous :: colind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer, intent(in), optional :: base
    st = setup_call(ctx, solver, size(rowptr, kind=c_int64_t), size(colind, kind=c_int64_t), MISGRID_INT64_INT32, &
         c_loc(rowptr), c_loc(colind), size(values, kind=c_int64_t), c_loc(values), base)
  end function solver_setup_i64i32

  !> The body of every misgrid_solver_setup specific: values must pair
  !> with colind.
  integer(c_int) function setup_call(ctx, solver, nrowptr, nnz, itype, rowptr, colind, nvalues, values, base) &
       result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    integer(c_int64_t), intent(in) :: nrowptr, nnz, nvalues
    integer(c_int32_t), intent(in) :: itype
    type(c_ptr), intent(in) :: rowptr, colind, values
    integer, intent(in), optional :: base
    if (nvalues /= nnz) then
       st = size_error(ctx, 'misgrid_solver_setup', 'values', nvalues, nnz)
       return
    end if
    st = c_misgrid_solver_setup(ctx%h, solver%h, nrowptr - 1, nrowptr - 1, nnz, itype, base_or_one(base), &
         rowptr, colind, MISGRID_FLOAT64, values)
  end function setup_call

  !> New values for the pattern given to misgrid_solver_setup.
  integer(c_int) function misgrid_solver_update_values(ctx, solver, values) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(in), target, contiguous :: values(:)
    st = c_misgrid_solver_update_values(ctx%h, solver%h, size(values, kind=c_int64_t), MISGRID_FLOAT64, &
         c_loc(values))
  end function misgrid_solver_update_values

  !> z = M^-1 r, one multigrid cycle.
  integer(c_int) function misgrid_solver_apply(ctx, solver, r, z) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(in), contiguous :: r(:)
    real(c_double), intent(out), contiguous :: z(:)
    if (size(z) /= size(r)) then
       st = size_error(ctx, 'misgrid_solver_apply', 'z', size(z, kind=c_int64_t), size(r, kind=c_int64_t))
       return
    end if
    st = c_misgrid_solver_apply(ctx%h, solver%h, size(r, kind=c_int64_t), r, z)
  end function misgrid_solver_apply

  !> PCG from the initial guess in x. Not converging is not an error:
  !> check converged.
  integer(c_int) function misgrid_solver_solve(ctx, solver, b, x, converged, iterations, residual) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(in), contiguous :: b(:)
    real(c_double), intent(inout), contiguous :: x(:)
    logical, intent(out) :: converged
    integer, intent(out), optional :: iterations
    real(c_double), intent(out), optional :: residual
    integer(c_int32_t) :: conv
    integer(c_int64_t) :: its
    real(c_double) :: res
    converged = .false.
    if (size(x) /= size(b)) then
       st = size_error(ctx, 'misgrid_solver_solve', 'x', size(x, kind=c_int64_t), size(b, kind=c_int64_t))
       return
    end if
    conv = 0
    its = 0
    res = 0
    st = c_misgrid_solver_solve(ctx%h, solver%h, size(b, kind=c_int64_t), b, x, conv, its, res)
    converged = conv /= 0
    if (present(iterations)) iterations = int(its)
    if (present(residual)) residual = res
  end function misgrid_solver_solve

  !> The relative residual history of the last solve into residuals
  !> (capacity size(residuals)); count is its length.
  integer(c_int) function misgrid_solver_residuals(ctx, solver, residuals, count) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    real(c_double), intent(out), contiguous :: residuals(:)
    integer, intent(out) :: count
    integer(c_int64_t) :: n
    n = 0
    st = c_misgrid_solver_residuals(ctx%h, solver%h, size(residuals, kind=c_int64_t), residuals, n)
    count = int(n)
  end function misgrid_solver_residuals

  integer(c_int) function misgrid_solver_info(ctx, solver, nlevels, operator_complexity, grid_complexity, &
       setup_seconds) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    integer, intent(out), optional :: nlevels
    real(c_double), intent(out), optional :: operator_complexity, grid_complexity, setup_seconds
    integer(c_int64_t) :: nl
    real(c_double) :: v(3)
    nl = 0
    v = 0
    st = c_misgrid_solver_info(ctx%h, solver%h, nl, v(1), v(2), v(3))
    if (present(nlevels)) nlevels = int(nl)
    if (present(operator_complexity)) operator_complexity = v(1)
    if (present(grid_complexity)) grid_complexity = v(2)
    if (present(setup_seconds)) setup_seconds = v(3)
  end function misgrid_solver_info

  !> Sizes of level (1 = the matrix).
  integer(c_int) function misgrid_solver_level_info(ctx, solver, level, rows, nonzeros, block_size) result(st)
    type(misgrid_context), intent(in) :: ctx
    type(misgrid_solver), intent(in) :: solver
    integer, intent(in) :: level
    integer(c_int64_t), intent(out), optional :: rows, nonzeros, block_size
    integer(c_int64_t) :: v(3)
    v = 0
    st = c_misgrid_solver_level_info(ctx%h, solver%h, int(level - 1, c_int64_t), v(1), v(2), v(3))
    if (present(rows)) rows = v(1)
    if (present(nonzeros)) nonzeros = v(2)
    if (present(block_size)) block_size = v(3)
  end function misgrid_solver_level_info

  ! ------------------------------------------------------------ MPI

  integer(c_int) function dist_i32(ctx, comm, nglobal, first, rowptr, colind, flags, options, &
       set_size, rounds, classes, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in) :: nglobal, first
    integer(c_int32_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    integer(c_int32_t), intent(out), target, contiguous :: flags(:)
    character(len=*), intent(in), optional :: options
    integer(c_int64_t), intent(out), target, optional :: set_size, rounds
    integer(c_int32_t), intent(in), target, contiguous, optional :: classes(:)
    integer, intent(in), optional :: base
    st = dist_check(ctx, size(rowptr, kind=c_int64_t) - 1, size(flags, kind=c_int64_t), classes)
    if (st /= MISGRID_OK) return
    st = dist_call(ctx, comm, nglobal, first, size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         MISGRID_INT32, base_or_one(base), c_loc(rowptr), c_loc(colind), flags, options, set_size, rounds, classes)
  end function dist_i32

  integer(c_int) function dist_i64(ctx, comm, nglobal, first, rowptr, colind, flags, options, &
       set_size, rounds, classes, base) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in) :: nglobal, first
    integer(c_int64_t), intent(in), target, contiguous :: rowptr(:), colind(:)
    integer(c_int32_t), intent(out), target, contiguous :: flags(:)
    character(len=*), intent(in), optional :: options
    integer(c_int64_t), intent(out), target, optional :: set_size, rounds
    integer(c_int32_t), intent(in), target, contiguous, optional :: classes(:)
    integer, intent(in), optional :: base
    st = dist_check(ctx, size(rowptr, kind=c_int64_t) - 1, size(flags, kind=c_int64_t), classes)
    if (st /= MISGRID_OK) return
    st = dist_call(ctx, comm, nglobal, first, size(rowptr, kind=c_int64_t) - 1, size(colind, kind=c_int64_t), &
         MISGRID_INT64, base_or_one(base), c_loc(rowptr), c_loc(colind), flags, options, set_size, rounds, classes)
  end function dist_i64

  !> Sizes that must agree with nlocal. A mismatch is reported before the
  !> collective call, so it is an error on this rank only: the others then
  !> wait for it until their timeout.
  integer(c_int) function dist_check(ctx, nlocal, nflags, classes) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: nlocal, nflags
    integer(c_int32_t), intent(in), optional :: classes(:)
    st = MISGRID_OK
    if (nflags < nlocal) then
       st = size_error(ctx, 'misgrid_mis_distributed', 'flags', nflags, nlocal)
    else if (present(classes)) then
       if (size(classes, kind=c_int64_t) /= nlocal) &
            st = size_error(ctx, 'misgrid_mis_distributed', 'classes', size(classes, kind=c_int64_t), nlocal)
    end if
  end function dist_check

  integer(c_int) function dist_call(ctx, comm, nglobal, first, nlocal, nnz, itype, base, rowptr, colind, &
       flags, options, set_size, rounds, classes) result(st)
    type(misgrid_context), intent(in) :: ctx
    integer, intent(in) :: comm
    integer(c_int64_t), intent(in) :: nglobal, first, nlocal, nnz
    integer(c_int32_t), intent(in) :: itype, base
    type(c_ptr), intent(in) :: rowptr, colind
    integer(c_int32_t), intent(out), target, contiguous :: flags(:)
    character(len=*), intent(in), optional :: options
    integer(c_int64_t), intent(out), target, optional :: set_size, rounds
    integer(c_int32_t), intent(in), target, contiguous, optional :: classes(:)
    type(c_ptr) :: ps, pr, pc
    ps = c_null_ptr
    pr = c_null_ptr
    pc = c_null_ptr
    if (present(set_size)) ps = c_loc(set_size)
    if (present(rounds)) pr = c_loc(rounds)
    if (present(classes)) pc = c_loc(classes)
    st = c_misgrid_mis_distributed_f(ctx%h, int(comm, c_int32_t), nglobal, first, nlocal, nnz, itype, base, &
         rowptr, colind, pc, cstr(options), c_loc(flags), ps, pr)
  end function dist_call

end module misgrid
