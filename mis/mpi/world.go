//go:build mpi

package mpi

import (
	"context"
	"errors"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Job is one program's share of an MPI job: MPI initialised and a Comm
// over MPI_COMM_WORLD. It suits a program that every rank runs on the
// whole graph, each having read the same input, as the misgrid command
// does under mpirun.
type Job struct {
	c *Comm
}

// Start initialises MPI (unless the program did) and opens a Comm over
// MPI_COMM_WORLD. It is collective.
func Start(o Options) (*Job, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	c, err := World(o)
	if err != nil {
		return nil, err
	}
	return &Job{c: c}, nil
}

// Rank is this process's rank in MPI_COMM_WORLD.
func (j *Job) Rank() int { return j.c.Part() }

// Size is the number of ranks.
func (j *Job) Size() int { return j.c.Parts() }

// Comm is the job's communicator, for RunPart on distributed input.
func (j *Job) Comm() *Comm { return j.c }

// Compute is the partitioned MIS of g, which every rank holds whole: each
// rank keeps its part (contiguous ranges over the ranks, or
// opts.Partition), runs it, and gets the whole set. Every rank calls it
// with the same graph and options.
func (j *Job) Compute(ctx context.Context, g *mesh.Graph, opts mis.PartOptions) (*mis.PartResult, error) {
	return mis.ComputeReplicated(ctx, j.c, g, opts)
}

// Close frees the communicator and finalises MPI. It is collective.
func (j *Job) Close() error {
	return errors.Join(j.c.Close(), Finalize())
}
