//go:build mpi

package main

import "github.com/misgrid/misgrid/mis/mpi"

func init() {
	mpiStart = func() (mpiJob, error) { return mpi.Start(mpi.Options{}) }
}
