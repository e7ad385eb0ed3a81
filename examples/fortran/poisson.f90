! poisson.f90 - coarse grids for a 2D Poisson problem through libmisgrid,
! from Fortran with 1-based arrays: the same problem and the same output
! as examples/c/poisson.c.
!
! Assembles the Q1 finite-element Laplacian on the unit square (n x n
! nodes, u = 0 on x = 0 by symmetric elimination) as a 1-based CSR matrix,
! builds the graph, attaches coordinates and boundary classes, computes a
! distance-2 maximal independent set with boundary priority and its
! aggregates (all ids 1-based), checks them, solves -Laplace(u) = 1 with
! the AMG-preconditioned CG solver, again after new matrix values, and
! prints a summary.
!
! Build against an installed libmisgrid:
!   gfortran -c $(pkg-config --variable=fortrandir misgrid)/misgrid.f90
!   gfortran poisson.f90 misgrid.o $(pkg-config --libs misgrid) -o poisson
program poisson
  use, intrinsic :: iso_c_binding
  use misgrid
  implicit none

  integer, parameter :: n = 33, nn = n * n
  type(misgrid_context) :: ctx
  type(misgrid_graph) :: g
  integer(c_int32_t), allocatable :: rowptr(:), colind(:), cls(:), inset(:)
  real(c_double), allocatable :: val(:)
  integer(c_int64_t) :: nv, ne, live
  integer :: nnz
  logical :: ok

  call try(misgrid_context_create(ctx))
  call try(misgrid_context_set_option(ctx, 'threads=2'))
  call assemble()
  print '(a, a, a, i0, a, i0, a)', 'misgrid ', misgrid_version(), ': 2D Poisson, Q1 elements, ', n, ' x ', n, ' nodes'
  print '(a, i0, a, i0, a, i0, a)', 'matrix: ', nn, ' rows, ', nnz, ' nonzeros, ', n, ' Dirichlet rows'
  ok = .true.
  call coarse_grid()
  call solve()
  call try(misgrid_context_destroy(ctx))
  call try(misgrid_handle_count(live))
  ok = ok .and. live == 0
  deallocate(rowptr, colind, val)
  if (ok) then
     print '(a)', 'check: ok'
  else
     print '(a)', 'check: FAILED'
     error stop 1
  end if

contains

  !> The Q1 stiffness matrix as a 1-based CSR matrix (rowptr, colind,
  !> val, nnz entries): each node's 3 x 3 neighbourhood, columns
  !> increasing, values the sum of the element matrices.
  subroutine assemble()
    real(c_double), parameter :: ke(4, 4) = reshape([4, -1, -2, -1, -1, 4, -1, -2, &
         -2, -1, 4, -1, -1, -2, -1, 4], [4, 4]) / 6d0
    integer :: i, j, di, dj, p, q, k, v
    integer :: node(4)
    allocate(rowptr(nn + 1), colind(9 * nn), val(9 * nn))
    val = 0
    nnz = 0
    rowptr(1) = 1
    do j = 1, n
       do i = 1, n
          do dj = -1, 1
             do di = -1, 1
                if (i + di >= 1 .and. i + di <= n .and. j + dj >= 1 .and. j + dj <= n) then
                   nnz = nnz + 1
                   colind(nnz) = id(i + di, j + dj)
                end if
             end do
          end do
          rowptr(id(i, j) + 1) = nnz + 1
       end do
    end do
    do j = 1, n - 1
       do i = 1, n - 1
          node = [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]
          do p = 1, 4
             do q = 1, 4
                do k = rowptr(node(p)), rowptr(node(p) + 1) - 1
                   if (colind(k) == node(q)) val(k) = val(k) + ke(p, q)
                end do
             end do
          end do
       end do
    end do
    ! u = 0 on x = 0, eliminated symmetrically: identity rows, zeroed
    ! columns (explicit zeros, so the pattern stays).
    do v = 1, nn
       do k = rowptr(v), rowptr(v + 1) - 1
          if (mod(v - 1, n) == 0 .or. mod(colind(k) - 1, n) == 0) val(k) = merge(1d0, 0d0, colind(k) == v)
       end do
    end do
  end subroutine assemble

  !> The graph, its MIS-2 with boundary priority and its aggregates, all
  !> 1-based, checked here and by the library's verifier.
  subroutine coarse_grid()
    integer(c_int32_t), parameter :: class_of(3) = [MISGRID_INTERIOR, MISGRID_FACE, MISGRID_CORNER]
    type(misgrid_result) :: r
    integer(c_int32_t), allocatable :: agg(:), roots(:), sizes(:), dir(:)
    real(c_double), allocatable :: xy(:, :)
    integer(c_int64_t) :: setsize, nagg, nroots
    integer :: i, j, e, v, corners, sides, smin, smax
    logical :: valid
    character(len=200) :: why

    ! The graph from the 1-based CSR arrays (the library copies them).
    call try(misgrid_graph_from_csr(ctx, rowptr, colind(1:nnz), val(1:nnz), g, options='theta=0'))
    allocate(xy(2, nn), cls(nn))
    do j = 1, n
       do i = 1, n
          xy(:, id(i, j)) = [real(i - 1, c_double), real(j - 1, c_double)] / (n - 1)
          sides = merge(1, 0, i == 1 .or. i == n) + merge(1, 0, j == 1 .or. j == n)
          cls(id(i, j)) = class_of(sides + 1)
       end do
    end do
    call try(misgrid_graph_set_coordinates(ctx, g, xy))
    call try(misgrid_graph_set_classes(ctx, g, cls))
    call try(misgrid_graph_size(ctx, g, nv, ne))
    allocate(dir(nv))
    call try(misgrid_graph_get_dirichlet(ctx, g, dir))
    print '(a, i0, a, i0, a, i0, a)', 'graph: ', nv, ' vertices, ', ne, ' edges, ', count(dir == 1), &
         ' isolated Dirichlet vertices'

    call try(misgrid_mis(ctx, g, 'distance=2, priority=boundary', r))
    call try(misgrid_result_level_info(ctx, r, 1, set_size=setsize, naggregates=nagg))
    allocate(inset(nn), agg(nn), roots(nagg), sizes(nagg))
    call try(misgrid_result_set_flags(ctx, r, 1, inset))
    call try(misgrid_result_aggregates(ctx, r, 1, agg))
    call try(misgrid_result_aggregate_roots(ctx, r, 1, roots, nroots))

    ! Checks: every vertex in one aggregate, aggregate i founded by root i,
    ! the four corners kept, and the library's verifier agrees.
    ok = ok .and. nagg == setsize .and. nroots == nagg .and. minval(agg) >= 1 .and. maxval(agg) <= nagg
    sizes = 0
    do v = 1, nn
       sizes(agg(v)) = sizes(agg(v)) + 1
    end do
    do e = 1, int(nagg)
       ok = ok .and. inset(roots(e)) == 1 .and. agg(roots(e)) == e
    end do
    smin = minval(sizes)
    smax = maxval(sizes)
    corners = count_corners()
    ok = ok .and. corners == 4 .and. is_mis2()
    call try(misgrid_verify(ctx, g, inset, 2, valid, why))
    ok = ok .and. valid
    print '(a, i0, a, i0, a)', 'MIS-2 (boundary priority): ', setsize, ' vertices, ', corners, ' of 4 corners'
    print '(a, i0, a, i0, a, i0, a, f0.2)', 'aggregates: ', nagg, ', sizes ', smin, '..', smax, ', mean ', &
         real(nn, c_double) / real(nagg, c_double)

    call try(misgrid_result_destroy(ctx, r))
    call try(misgrid_graph_destroy(ctx, g))
    deallocate(xy, cls, dir, inset, agg, roots, sizes)
  end subroutine coarse_grid

  !> Solves -Laplace(u) = 1, u = 0 on x = 0: u = x - x^2/2, at most 1/2;
  !> then again with a coefficient doubled, which halves u.
  subroutine solve()
    type(misgrid_solver) :: s
    real(c_double), allocatable :: b(:), u(:)
    real(c_double) :: h, opc, res, umax
    integer :: levels, its, i, j
    logical :: conv

    ! Lumped load: h^2 times the share of the node's cells in the square.
    allocate(b(nn), u(nn))
    h = 1d0 / (n - 1)
    do j = 1, n
       do i = 1, n
          b(id(i, j)) = h * h * merge(0.5d0, 1d0, i == n) * merge(0.5d0, 1d0, j == 1 .or. j == n)
          if (i == 1) b(id(i, j)) = 0
       end do
    end do
    u = 0
    call try(misgrid_solver_create(ctx, 'smoother=chebyshev, tol=1e-8', s))
    call try(misgrid_solver_setup(ctx, s, rowptr, colind(1:nnz), val(1:nnz)))
    call try(misgrid_solver_info(ctx, s, nlevels=levels, operator_complexity=opc))
    call try(misgrid_solver_solve(ctx, s, b, u, conv, its, res))
    umax = maxval(u)
    print '(a, i0, a, f0.2)', 'AMG: ', levels, ' levels, operator complexity ', opc
    print '(a, a, a, i0, a, f8.6)', 'PCG: ', trim(merge('converged    ', 'NOT converged', conv)), ' in ', its, &
         ' iterations, max u = ', umax
    ok = ok .and. conv .and. res <= 1d-8 .and. abs(umax - 0.5d0) < 1d-6

    ! New values, same pattern: only the numeric setup is redone, as in
    ! the loops of Newton's method or of time stepping.
    where (.not. (val(1:nnz) == 1 .and. mod(colind(1:nnz) - 1, n) == 0)) val(1:nnz) = 2 * val(1:nnz)
    call try(misgrid_solver_update_values(ctx, s, val(1:nnz)))
    u = 0
    call try(misgrid_solver_solve(ctx, s, b, u, conv, its, res))
    print '(a, a, a, i0, a, f8.6)', 'PCG after new values: ', trim(merge('converged    ', 'NOT converged', conv)), &
         ' in ', its, ' iterations, max u = ', maxval(u)
    ok = ok .and. conv .and. abs(maxval(u) - umax / 2) < 0.01d0 * umax
    call try(misgrid_solver_destroy(ctx, s))
    deallocate(b, u)
  end subroutine solve

  !> The 1-based node number of grid point (i, j).
  pure integer function id(i, j)
    integer, intent(in) :: i, j
    id = i + n * (j - 1)
  end function id

  integer function count_corners()
    count_corners = count(cls == MISGRID_CORNER .and. inset == 1)
  end function count_corners

  !> Independent check of the set with the graph's own adjacency (1-based
  !> CSR from misgrid_graph_adjacency): no two members within distance 2,
  !> and every vertex within distance 2 of a member.
  logical function is_mis2()
    integer(c_int64_t), allocatable :: off(:), adj(:)
    logical, allocatable :: near(:)
    integer(c_int64_t) :: kk, qq, u, w
    integer :: x
    allocate(off(nv + 1), adj(2 * ne), near(nv))
    call try(misgrid_graph_adjacency(ctx, g, off, adj))
    near = .false.
    is_mis2 = .true.
    do x = 1, int(nv)
       if (inset(x) == 0) cycle
       near(x) = .true.
       do kk = off(x), off(x + 1) - 1
          u = adj(kk)
          near(u) = .true.
          if (inset(u) == 1) is_mis2 = .false.
          do qq = off(u), off(u + 1) - 1
             w = adj(qq)
             near(w) = .true.
             if (w /= x .and. inset(w) == 1) is_mis2 = .false.
          end do
       end do
    end do
    is_mis2 = is_mis2 .and. all(near)
  end function is_mis2

  !> Stops with the library's message when a call fails.
  subroutine try(st)
    integer(c_int), intent(in) :: st
    if (st /= MISGRID_OK) then
       write (*, '(a, i0, a, a)') 'misgrid error ', st, ': ', misgrid_error_message(ctx)
       error stop 1
    end if
  end subroutine try

end program poisson
