package mpi

import "os"

// Launched reports whether this process was started by an MPI launcher
// (mpirun, mpiexec, srun with PMI), judged by the environment the common
// launchers set. A command built without the mpi tag can use it to say
// that it cannot join the job.
func Launched() bool {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}
