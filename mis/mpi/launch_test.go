package mpi

import "testing"

func TestLaunched(t *testing.T) {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"} {
		t.Setenv(k, "")
	}
	if Launched() {
		t.Fatal("Launched with no launcher variables set")
	}
	t.Setenv("PMI_SIZE", "4")
	if !Launched() {
		t.Fatal("not Launched with PMI_SIZE set")
	}
}
