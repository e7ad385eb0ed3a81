// Package mpi runs the partitioned MIS of package mis across the ranks of
// an MPI job: Comm is a mis.Exchanger over an MPI communicator, one rank
// per part. It is built with cgo against the MPI C library and only with
// the build tag mpi (go build -tags mpi), so that the module builds and
// tests without MPI installed; without the tag the package holds only
// Launched.
//
// A rank holds only its own rows (a mis.Local: rows with global column
// ids, and the ownership of the other vertices) and calls mis.RunPart:
//
//	mpi.Init()
//	defer mpi.Finalize()
//	c, _ := mpi.World(mpi.Options{})
//	defer c.Close()
//	res, err := mis.RunPart(ctx, c, &local, mis.PartOptions{Distance: 2})
//
// A program that reads the whole graph on every rank (the misgrid command
// under mpirun) calls ComputeWorld instead and gets the whole set on every
// rank.
//
// # Communicators
//
// World uses MPI_COMM_WORLD; FromHandle takes a C MPI_Comm value (what
// the C ABI receives), FromFortran a Fortran integer handle (converted
// with MPI_Comm_f2c). Every constructor duplicates the communicator, so
// the library's messages never meet the caller's, and sets
// MPI_ERRORS_RETURN on the duplicate only: the caller's error handler is
// left alone. Constructors and Close are collective.
//
// # Threads
//
// Init asks for MPI_THREAD_SERIALIZED, and a Comm makes its MPI calls one
// at a time. A program that initialised MPI itself with a lower level
// must call RunPart from the thread that initialised MPI: a C caller's
// thread (a cgo callback stays on it), or a goroutine locked with
// runtime.LockOSThread during init.
//
// # Faults
//
// The library never calls MPI_Abort: killing the job is the program's
// decision, not a library's. Instead every wait polls (MPI_Iprobe,
// MPI_Test) against Options.Timeout, and:
//
//   - A rank whose input is invalid fails setup's agreement (an
//     Allreduce), so every rank returns an error at once.
//   - A rank that fails mid-run sends an abort message (its own tag, with
//     the error text) to its neighbours, which fail and pass it on; then
//     all ranks meet in the final agreement, which tells the rest.
//   - A rank that hangs or dies is noticed by its neighbours after
//     Timeout, which then abort as above. Each rank returns within about
//     three timeouts of the failure (its own wait, the abort, the final
//     agreement).
//
// With MPI_ERRORS_RETURN an MPI call that fails returns its error code,
// which becomes a Go error with MPI_Error_string's text. Whether MPI can
// still be used after a peer died is up to the implementation (Open MPI
// without ULFM cannot, and mpirun usually ends the job when a rank exits
// without MPI_Finalize): the errors above are meant for a clean report
// and shutdown, not for recovery.
//
// Send buffers live in C memory (MPI keeps them until the send
// completes). After a timeout, sends that MPI_Cancel cannot stop and
// collectives, which cannot be cancelled, are kept with their buffers
// until they complete; Close waits for them up to Timeout and frees
// them, and returns an error naming what it had to leave behind.
package mpi
