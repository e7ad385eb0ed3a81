!> The work of a Fortran FEM code, sized as one, for valgrind memcheck
!> (make check-memory): the Laplacian of an m^dim grid (5-point in 2D,
!> 7-point in 3D) with int64 row pointers and int32 column ids, through a
!> distance-2 MIS, a hierarchy and an AMG-preconditioned CG solve; every
!> handle destroyed. Usage: memcheck_f DIM M. Stops non-zero on failure.
program memcheck_f
  use misgrid
  use, intrinsic :: iso_c_binding
  implicit none
  type(misgrid_context) :: ctx
  type(misgrid_graph) :: g
  type(misgrid_result) :: set, hier
  type(misgrid_solver) :: s
  integer(c_int64_t), allocatable :: rowptr(:)
  integer(c_int32_t), allocatable :: col(:)
  real(c_double), allocatable :: val(:), b(:), x(:)
  integer(c_int64_t) :: n, v, k, m, nz, i, j, l, setsize, live
  integer :: dim, levels, its
  logical :: conv
  character(len=16) :: arg

  dim = 2
  m = 317
  if (command_argument_count() >= 2) then
     call get_command_argument(1, arg)
     read (arg, *) dim
     call get_command_argument(2, arg)
     read (arg, *) m
  end if
  nz = 1
  if (dim == 3) nz = m
  n = m * m * nz
  allocate(rowptr(n + 1), col(7 * n), val(7 * n), b(n), x(n))
  k = 0
  rowptr(1) = 1
  do v = 1, n
     i = mod(v - 1, m)
     j = mod((v - 1) / m, m)
     l = (v - 1) / (m * m)
     call put(v, 2.0_c_double * dim)
     if (i > 0) call put(v - 1, -1.0_c_double)
     if (i < m - 1) call put(v + 1, -1.0_c_double)
     if (j > 0) call put(v - m, -1.0_c_double)
     if (j < m - 1) call put(v + m, -1.0_c_double)
     if (l > 0) call put(v - m * m, -1.0_c_double)
     if (l < nz - 1) call put(v + m * m, -1.0_c_double)
     rowptr(v + 1) = k + 1
  end do
  b = 1
  x = 0

  call try(misgrid_context_create(ctx))
  call try(misgrid_graph_from_csr(ctx, rowptr, col(1:k), val(1:k), g))
  call try(misgrid_mis(ctx, g, 'distance=2, priority=boundary', set))
  call try(misgrid_result_level_info(ctx, set, 1, set_size=setsize))
  call try(misgrid_hierarchy(ctx, g, '', hier))
  call try(misgrid_result_num_levels(ctx, hier, levels))
  call try(misgrid_solver_create(ctx, 'tol=1e-8', s))
  call try(misgrid_solver_setup(ctx, s, rowptr, col(1:k), val(1:k)))
  call try(misgrid_solver_solve(ctx, s, b, x, conv, iterations=its))
  call try(misgrid_solver_destroy(ctx, s))
  call try(misgrid_result_destroy(ctx, hier))
  call try(misgrid_result_destroy(ctx, set))
  call try(misgrid_graph_destroy(ctx, g))
  call try(misgrid_context_destroy(ctx))
  call try(misgrid_handle_count(live))
  print '(a, i0, a, i0, a, i0, a, i0, a, l1, a, i0, a, i0, a)', 'memcheck_f ', dim, 'D: ', n, ' unknowns, MIS-2 ', &
       setsize, ', ', levels, ' hierarchy levels, CG converged ', conv, ' in ', its, ' iterations, ', live, &
       ' handles left'
  deallocate(rowptr, col, val, b, x)
  if (.not. conv .or. live /= 0) error stop 1

contains

  subroutine put(c, a)
    integer(c_int64_t), intent(in) :: c
    real(c_double), intent(in) :: a
    k = k + 1
    col(k) = int(c, c_int32_t)
    val(k) = a
  end subroutine put

  subroutine try(st)
    integer(c_int), intent(in) :: st
    if (st /= MISGRID_OK) then
       print '(a)', 'memcheck_f: ' // misgrid_error_message(ctx)
       error stop 1
    end if
  end subroutine try

end program memcheck_f
