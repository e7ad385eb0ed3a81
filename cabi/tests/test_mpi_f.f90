!> The Fortran module's misgrid_mis_distributed under mpirun: an integer
!> communicator (MPI_COMM_WORLD of "use mpi"), 1-based rows split by
!> rank; the gathered flags equal misgrid_mis on the whole graph; a bad
!> column id on the last rank is an error on every rank.
program test_mpi_f
  use, intrinsic :: iso_c_binding
  use mpi
  use misgrid
  implicit none
  integer, parameter :: nx = 23, ny = 17
  integer(c_int64_t), parameter :: n = nx * ny
  integer(c_int32_t), allocatable :: rowptr(:), col(:), lrow(:), lcol(:), mine(:), got(:), want(:)
  integer, allocatable :: counts(:), displs(:)
  integer :: ierr, rank, nranks, failed, anyfail, x, y, k, d, q, comm2, comm3
  double precision :: t0, dt
  integer(c_int64_t) :: first, cnt, k0, nnz, size_set, rounds
  integer(c_int) :: st
  type(misgrid_context) :: ctx
  type(misgrid_graph) :: g
  type(misgrid_result) :: r
  character(len=24), parameter :: opts(2) = [character(len=24) :: 'distance=1', 'distance=2, seed=5']

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failed = 0
  st = misgrid_context_create(ctx)

  ! The 5-point grid, 1-based CSR with the diagonal.
  allocate(rowptr(n + 1), col(5 * n))
  rowptr(1) = 1
  k = 0
  do y = 0, ny - 1
     do x = 0, nx - 1
        if (y > 0) call add(x + (y - 1) * nx)
        if (x > 0) call add(x - 1 + y * nx)
        call add(x + y * nx)
        if (x < nx - 1) call add(x + 1 + y * nx)
        if (y < ny - 1) call add(x + (y + 1) * nx)
        rowptr(x + y * nx + 2) = k + 1
     end do
  end do

  allocate(counts(nranks), displs(nranks), got(n), want(n))
  do q = 0, nranks - 1
     displs(q + 1) = int(n * q / nranks)
     counts(q + 1) = int(n * (q + 1) / nranks) - displs(q + 1)
  end do
  first = displs(rank + 1) + 1
  cnt = counts(rank + 1)
  k0 = rowptr(first)
  nnz = rowptr(first + cnt) - k0
  lrow = rowptr(first:first + cnt) - int(k0, c_int32_t) + 1
  lcol = col(k0:k0 + nnz - 1)
  allocate(mine(cnt))

  st = misgrid_graph_from_csr(ctx, rowptr, col(1:k), g)
  call expect(st == MISGRID_OK, 'graph_from_csr')
  do d = 1, 2
     st = misgrid_mis_distributed(ctx, MPI_COMM_WORLD, n, first, lrow, lcol, mine, &
          options=trim(opts(d)), set_size=size_set, rounds=rounds)
     call expect(st == MISGRID_OK, 'distributed '//trim(opts(d))//': '//misgrid_error_message(ctx))
     call MPI_Allgatherv(mine, int(cnt), MPI_INTEGER4, got, counts, displs, MPI_INTEGER4, MPI_COMM_WORLD, ierr)
     st = misgrid_mis(ctx, g, trim(opts(d)), r)
     st = misgrid_result_set_flags(ctx, r, 1, want)
     st = misgrid_result_destroy(ctx, r)
     call expect(count(got /= want) == 0, 'identical set, '//trim(opts(d)))
     call expect(size_set == count(want == 1), 'set_size')
     call expect(rounds > 0, 'rounds')
  end do

  ! A column id out of range on the last rank: an error on every rank.
  if (rank == nranks - 1) lcol(1) = int(n + 1, c_int32_t)
  st = misgrid_mis_distributed(ctx, MPI_COMM_WORLD, n, first, lrow, lcol, mine)
  call expect(st /= MISGRID_OK, 'bad column id is an error on rank')
  if (rank == nranks - 1) call expect(index(misgrid_error_message(ctx), 'colind(') > 0, &
       'message names colind: '//misgrid_error_message(ctx))
  ! flags too short: caught by the wrapper on every rank.
  st = misgrid_mis_distributed(ctx, MPI_COMM_WORLD, n, first, lrow, lcol, mine(1:0))
  call expect(cnt == 0 .or. st == MISGRID_ERR_RANGE, 'short flags')

  ! The wrapper's size check fails on rank 0 alone, before any collective:
  ! the others fail within their timeout instead of waiting for good. On a
  ! communicator of its own, whose pending duplication rank 0 joins once
  ! the others gave up.
  if (nranks > 1) then
     call MPI_Comm_dup(MPI_COMM_WORLD, comm2, ierr)
     t0 = MPI_Wtime()
     if (rank == 0) then
        st = misgrid_mis_distributed(ctx, comm2, n, first, lrow, lcol, mine(1:cnt - 1), options='timeout=2')
        call expect(st == MISGRID_ERR_RANGE, 'rank 0 fails in the wrapper')
        do q = 1, nranks - 1
           call MPI_Recv(k, 1, MPI_INTEGER, q, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        end do
        call MPI_Comm_dup(comm2, comm3, ierr)
        call MPI_Comm_free(comm3, ierr)
     else
        st = misgrid_mis_distributed(ctx, comm2, n, first, lrow, lcol, mine, options='timeout=2')
        dt = MPI_Wtime() - t0
        call expect(st == MISGRID_ERR_ARG .and. index(misgrid_error_message(ctx), 'did every rank call') > 0, &
             'rank 0 returned early: '//misgrid_error_message(ctx))
        call expect(dt >= 1.5d0 .and. dt < 5d0, 'returned within the timeout')
        call MPI_Send(k, 1, MPI_INTEGER, 0, 99, MPI_COMM_WORLD, ierr)
     end if
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end if

  st = misgrid_graph_destroy(ctx, g)
  st = misgrid_context_destroy(ctx)
  call MPI_Allreduce(failed, anyfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, i0, a)', 'test_mpi_f (', nranks, ' ranks): ', anyfail, ' failed'
  call MPI_Finalize(ierr)
  if (anyfail /= 0) error stop 1

contains

  subroutine add(v)
    integer, intent(in) :: v
    k = k + 1
    col(k) = v + 1
  end subroutine add

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       failed = failed + 1
       print '(a, i0, 2a)', 'FAIL rank ', rank, ': ', what
    end if
  end subroutine expect

end program test_mpi_f
