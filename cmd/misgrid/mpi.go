package main

import (
	"context"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mpi"
)

// mpiJob is a running MPI job, as package mis/mpi's Job gives it: the
// command under mpirun reads its input on every rank, computes the set
// across the ranks, and only rank 0 writes.
type mpiJob interface {
	Rank() int
	Size() int
	Compute(ctx context.Context, g *mesh.Graph, opts mis.PartOptions) (*mis.PartResult, error)
	Close() error
}

// mpiStart is set by coarsen_mpi.go in builds with -tags mpi, and nil
// otherwise. Under mpirun (mpiLaunched), coarsen calls it once, defers
// Close (which finalises MPI: a rank that exits without it makes mpirun
// fail the job), and uses Compute for the one-level MIS.
var mpiStart func() (mpiJob, error)

// mpiLaunched reports whether an MPI launcher started this process; a
// build without -tags mpi should then refuse to run rather than let
// every rank compute and write the same output.
func mpiLaunched() bool { return mpi.Launched() }
