//go:build !mpi

package main

// Without the build tag mpi the library has no MPI dependency, and the
// distributed entry points only say so.
func distributed(*context, commRef, *distArgs) error {
	return errorf(statusArg, "libmisgrid was built without MPI (rebuild with make MPI=1)")
}
