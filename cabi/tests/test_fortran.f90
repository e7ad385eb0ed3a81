! The Fortran module: 1-based arrays in, 1-based ids out, generic
! interfaces for int32/int64 and real64/real32, size checks in the
! wrappers, errors with messages.
program test_fortran
  use, intrinsic :: iso_c_binding
  use misgrid
  implicit none

  integer :: failed = 0, checks = 0
  type(misgrid_context) :: ctx
  type(misgrid_graph) :: g, g64, gel, gbad, gkeep, gmix
  type(misgrid_result) :: r, r64, rh, rc
  integer, parameter :: nx = 9, ny = 7, n = nx * ny
  integer(c_int32_t), allocatable :: rowptr(:), colind(:), flags(:), flags64(:), agg(:), verts(:), colors(:)
  integer(c_int64_t), allocatable :: rowptr8(:), colind8(:), agg8(:)
  real(c_double), allocatable :: val(:), xy(:, :)
  real(c_float), allocatable :: val4(:)
  integer(c_int32_t) :: conn(4, (nx - 1) * (ny - 1))
  integer(c_int64_t) :: nv, ne, setsize, nagg, ncol, cnt, live, live2, nv2, ne2
  integer :: st, i, j, k, e, nlev, l, its, its2, cnt4
  type(misgrid_solver) :: s
  real(c_double), allocatable :: b(:), x(:), z(:), hist(:)
  real(c_double) :: opc, res
  real(c_double), allocatable :: valn(:), kern(:, :), xs(:)
  logical :: conv
  logical :: valid
  character(len=200) :: why

  call check(misgrid_version() == '0.1.0', 'version ' // misgrid_version())
  st = misgrid_context_create(ctx)
  call check(st == MISGRID_OK, 'context_create')

  ! 5-point Laplacian, 1-based CSR.
  allocate(rowptr(n + 1), colind(5 * n), val(5 * n))
  k = 0
  rowptr(1) = 1
  do j = 1, ny
     do i = 1, nx
        call add(i, j - 1, -1d0)
        call add(i - 1, j, -1d0)
        call add(i, j, 4d0)
        call add(i + 1, j, -1d0)
        call add(i, j + 1, -1d0)
        rowptr(i + nx * (j - 1) + 1) = k + 1
     end do
  end do
  colind = colind(1:k)
  val = val(1:k)

  st = misgrid_graph_from_csr(ctx, rowptr, colind, val, g)
  call check(st == MISGRID_OK, 'from_csr: ' // misgrid_error_message(ctx))
  st = misgrid_graph_size(ctx, g, nv, ne)
  call check(nv == n .and. ne == (nx - 1) * ny + nx * (ny - 1), 'graph size')

  ! int64 and real32 forms give the same set.
  allocate(rowptr8(n + 1), colind8(k), val4(k))
  rowptr8 = rowptr
  colind8 = colind
  val4 = real(val, c_float)
  st = misgrid_graph_from_csr(ctx, rowptr8, colind8, val4, g64)
  call check(st == MISGRID_OK, 'from_csr int64/real32: ' // misgrid_error_message(ctx))
  ! int64 row pointers with int32 column ids: the same graph.
  st = misgrid_graph_from_csr(ctx, rowptr8, colind, val, gmix)
  call check(st == MISGRID_OK, 'from_csr int64 rowptr, int32 colind: ' // misgrid_error_message(ctx))
  st = misgrid_graph_size(ctx, gmix, nv, ne)
  st = misgrid_graph_size(ctx, g, nv2, ne2)
  call check(nv == nv2 .and. ne == ne2, 'mixed index types give another graph')
  st = misgrid_graph_destroy(ctx, gmix)

  allocate(flags(n), flags64(n), agg(n), agg8(n), verts(n), colors(n))
  st = misgrid_mis(ctx, g, 'distance=2, priority=boundary', r)
  call check(st == MISGRID_OK, 'mis')
  st = misgrid_mis(ctx, g64, 'distance=2, priority=boundary', r64)
  st = misgrid_result_set_flags(ctx, r, 1, flags)
  call check(st == MISGRID_OK, 'set_flags')
  st = misgrid_result_set_flags(ctx, r64, 1, flags64)
  call check(all(flags == flags64), 'int64/real32 graph gives another set')
  call check(flags(1) == 1 .and. flags(nx) == 1 .and. flags(n - nx + 1) == 1 .and. flags(n) == 1, 'corners in the set')

  st = misgrid_result_level_info(ctx, r, 1, set_size=setsize, naggregates=nagg)
  call check(setsize == count(flags == 1) .and. nagg == setsize, 'level info')
  st = misgrid_result_set_vertices(ctx, r, 1, verts, cnt)
  call check(st == MISGRID_OK .and. cnt == setsize, 'set_vertices')
  call check(all(flags(verts(1:cnt)) == 1), 'set vertices are 1-based members')
  st = misgrid_result_aggregates(ctx, r, 1, agg)
  st = misgrid_result_aggregates(ctx, r, 1, agg8)
  call check(minval(agg) == 1 .and. maxval(agg) == nagg .and. all(agg == agg8), '1-based aggregates')
  call check(all(agg(verts(1:cnt)) == [(i, i = 1, int(cnt))]), 'root i founds aggregate i')

  st = misgrid_verify(ctx, g, flags, 2, valid, why)
  call check(st == MISGRID_OK .and. valid, 'verify: ' // trim(why))
  flags(2) = 1
  st = misgrid_verify(ctx, g, flags, 2, valid, why)
  call check(st == MISGRID_OK .and. .not. valid .and. index(why, 'numbered from 1') > 0, 'verify catches a bad set: ' // why)

  ! Errors: a short output array, a level that does not exist, arrays
  ! whose sizes disagree (caught in the wrapper), a destroyed handle.
  st = misgrid_result_set_flags(ctx, r, 1, flags(1:n - 1))
  call check(st == MISGRID_ERR_RANGE .and. index(misgrid_error_message(ctx), 'room for 62') > 0, &
       'short array: ' // misgrid_error_message(ctx))
  st = misgrid_result_set_flags(ctx, r, 2, flags)
  call check(st == MISGRID_ERR_RANGE .and. index(misgrid_error_message(ctx), 'level = 2') > 0 .and. &
       index(misgrid_error_message(ctx), 'numbered from 1') > 0, 'level 2 of 1: ' // misgrid_error_message(ctx))
  st = misgrid_graph_from_csr(ctx, rowptr, colind, val(1:k - 1), gbad)
  call check(st == MISGRID_ERR_RANGE .and. index(misgrid_error_message(ctx), 'size(values)') > 0, &
       'values shorter than colind: ' // misgrid_error_message(ctx))
  st = misgrid_graph_from_csr(ctx, rowptr, colind, val, gbad, base=0)
  call check(st == MISGRID_ERR_ARG .and. index(misgrid_error_message(ctx), 'rowptr(1) = 1, want the base 0') > 0, &
       'wrong base: ' // misgrid_error_message(ctx))
  st = misgrid_mis(ctx, g, 'distance=7', rc)
  call check(st == MISGRID_ERR_OPTION, 'bad option')

  ! A failed call leaves a handle variable holding a live handle as it
  ! was: nothing leaks, and the handle still works.
  st = misgrid_handle_count(live)
  gkeep = g
  st = misgrid_graph_from_csr(ctx, rowptr, colind, val(1:k - 1), g)
  call check(st == MISGRID_ERR_RANGE .and. c_associated(g%h, gkeep%h), 'wrapper failure kept the handle')
  st = misgrid_graph_from_csr(ctx, rowptr, colind, val, g, base=0)
  call check(st == MISGRID_ERR_ARG .and. c_associated(g%h, gkeep%h), 'library failure kept the handle')
  st = misgrid_handle_count(live2)
  call check(live2 == live, 'handles leaked by failed calls')
  st = misgrid_graph_size(ctx, g, nv, ne)
  call check(st == MISGRID_OK .and. nv == n, 'the kept handle works')

  ! Elements with coordinates (node ids from 1), hierarchy, coloring.
  allocate(xy(2, n))
  e = 0
  do j = 1, ny
     do i = 1, nx
        xy(:, i + nx * (j - 1)) = [real(i - 1, c_double), real(j - 1, c_double)]
        if (i < nx .and. j < ny) then
           e = e + 1
           conn(:, e) = [i + nx * (j - 1), i + 1 + nx * (j - 1), i + 1 + nx * j, i + nx * j]
        end if
     end do
  end do
  st = misgrid_graph_from_elements(ctx, n, MISGRID_QUAD4, conn, gel, coords=xy)
  call check(st == MISGRID_OK, 'from_elements: ' // misgrid_error_message(ctx))
  st = misgrid_graph_from_elements(ctx, n + 1, MISGRID_QUAD4, conn, gbad, coords=xy)
  call check(st == MISGRID_ERR_RANGE .and. index(misgrid_error_message(ctx), 'coords, 2') > 0, 'coords size')
  st = misgrid_hierarchy(ctx, gel, 'priority=boundary, min_vertices=4', rh)
  st = misgrid_result_num_levels(ctx, rh, nlev)
  call check(st == MISGRID_OK .and. nlev >= 2, 'hierarchy levels')
  do l = 1, nlev - 1
     st = misgrid_result_level_info(ctx, rh, l, naggregates=nagg)
     st = misgrid_result_level_info(ctx, rh, l + 1, nvertices=nv)
     call check(nagg == nv, 'aggregates of a level are the next level')
  end do
  st = misgrid_color(ctx, gel, '', rc)
  st = misgrid_result_colors(ctx, rc, 1, colors)
  st = misgrid_result_level_info(ctx, rc, 1, ncolors=ncol)
  call check(minval(colors) == 1 .and. maxval(colors) == ncol, '1-based colors')
  do e = 1, size(conn, 2)
     call check(colors(conn(1, e)) /= colors(conn(3, e)), 'diagonal neighbours share a color')
  end do

  ! The solver: setup on the 1-based CSR, PCG, residual history, the
  ! preconditioner alone, new values, level numbers from 1.
  allocate(b(n), x(n), z(n), hist(100))
  b = 1
  x = 0
  st = misgrid_solver_create(ctx, 'max_coarse=10, tol=1e-10', s)
  call check(st == MISGRID_OK, 'solver_create: ' // misgrid_error_message(ctx))
  st = misgrid_solver_setup(ctx, s, rowptr, colind, val)
  call check(st == MISGRID_OK, 'solver_setup: ' // misgrid_error_message(ctx))
  st = misgrid_solver_info(ctx, s, nlevels=nlev, operator_complexity=opc)
  call check(st == MISGRID_OK .and. nlev >= 2 .and. opc >= 1, 'solver_info')
  st = misgrid_solver_level_info(ctx, s, 1, rows=nv)
  call check(nv == n, 'level 1 is the matrix')
  st = misgrid_solver_solve(ctx, s, b, x, conv, its, res)
  call check(st == MISGRID_OK .and. conv .and. res <= 1d-10, 'solve')
  st = misgrid_solver_residuals(ctx, s, hist, cnt4)
  call check(cnt4 == its + 1 .and. abs(hist(1) - 1) < 1d-12 .and. hist(cnt4) == res, 'residual history')
  st = misgrid_solver_apply(ctx, s, b, z)
  call check(st == MISGRID_OK .and. dot_product(b, z) > 0, 'apply')
  st = misgrid_solver_update_values(ctx, s, 2 * val)
  x = 0
  st = misgrid_solver_solve(ctx, s, b, x, conv, its2)
  call check(st == MISGRID_OK .and. conv .and. its2 == its, 'solve after update')
  st = misgrid_solver_apply(ctx, s, b, z(1:n - 1))
  call check(st == MISGRID_ERR_RANGE .and. index(misgrid_error_message(ctx), 'size(z)') > 0, 'apply size check')
  st = misgrid_solver_setup(ctx, s, rowptr, colind, val(1:k - 1))
  call check(st == MISGRID_ERR_RANGE, 'setup size check')
  st = misgrid_solver_destroy(ctx, s)
  call check(st == MISGRID_OK, 'solver_destroy')

  ! A singular system: the pure-Neumann Laplacian (diagonal = degree) with
  ! the constants as kernel, given through misgrid_solver_set_kernel.
  valn = val
  do i = 1, n
     do e = rowptr(i), rowptr(i + 1) - 1
        if (colind(e) == i) l = e
     end do
     valn(l) = 0
     valn(l) = -sum(valn(rowptr(i):rowptr(i + 1) - 1))
  end do
  allocate(kern(n, 1), xs(n))
  kern = 1
  do i = 1, n
     xs(i) = sin(0.37d0 * i)
  end do
  do i = 1, n
     b(i) = sum(valn(rowptr(i):rowptr(i + 1) - 1) * xs(colind(rowptr(i):rowptr(i + 1) - 1)))
  end do
  st = misgrid_solver_create(ctx, 'max_coarse=10, tol=1e-10', s)
  st = misgrid_solver_set_kernel(ctx, s, kern)
  call check(st == MISGRID_OK, 'solver_set_kernel: ' // misgrid_error_message(ctx))
  st = misgrid_solver_setup(ctx, s, rowptr, colind, valn)
  call check(st == MISGRID_OK, 'singular setup: ' // misgrid_error_message(ctx))
  x = 0
  st = misgrid_solver_solve(ctx, s, b, x, conv, its, res)
  call check(st == MISGRID_OK .and. conv .and. res <= 1d-10, 'singular solve: ' // misgrid_error_message(ctx))
  call check(abs(sum(x)) < 1d-8 * sqrt(dot_product(x, x)), 'singular solve: x orthogonal to the constants')
  print '(a, i0, a, es9.2)', 'test_fortran: Neumann Poisson with the kernel given: ', its, ' iterations, residual ', res
  b = b + 0.1d0
  x = 7
  st = misgrid_solver_solve(ctx, s, b, x, conv, its, res)
  call check(st == MISGRID_ERR_INCONSISTENT .and. index(misgrid_error_message(ctx), 'inconsistent') > 0 &
       .and. all(x == 7), 'inconsistent b: ' // misgrid_error_message(ctx))
  st = misgrid_solver_set_kernel(ctx, s, kern(1:n, 1:0))
  call check(st == MISGRID_ERR_RANGE, 'set_kernel with no vectors')
  st = misgrid_solver_destroy(ctx, s)

  st = misgrid_result_destroy(ctx, r)
  st = misgrid_result_destroy(ctx, r64)
  st = misgrid_result_destroy(ctx, rh)
  st = misgrid_result_destroy(ctx, rc)
  st = misgrid_graph_destroy(ctx, g64)
  st = misgrid_graph_destroy(ctx, gel)
  gbad = g
  st = misgrid_graph_destroy(ctx, g)
  call check(st == MISGRID_OK, 'destroy')
  st = misgrid_graph_size(ctx, gbad, nv, ne)
  call check(st == MISGRID_ERR_HANDLE .and. index(misgrid_error_message(ctx), 'destroyed') > 0, 'stale handle')
  st = misgrid_context_destroy(ctx)
  st = misgrid_handle_count(live)
  call check(live == 0, 'handles left')

  print '(a, i0, a, i0, a)', 'test_fortran: ', checks, ' checks, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine add(ii, jj, x)
    integer, intent(in) :: ii, jj
    real(c_double), intent(in) :: x
    if (ii < 1 .or. ii > nx .or. jj < 1 .or. jj > ny) return
    k = k + 1
    colind(k) = ii + nx * (jj - 1)
    val(k) = x
  end subroutine add

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok) then
       failed = failed + 1
       print '(a, a)', 'FAIL: ', what
    end if
  end subroutine check

end program test_fortran
