//go:build mpi

package main

/*
#cgo pkg-config: mpi
#include <mpi.h>
#include <stdint.h>
#include <string.h>

// 0: not initialised, 1: initialised, 2: finalised.
static int mgc_state(void) {
	int a = 0, b = 0;
	MPI_Initialized(&a);
	MPI_Finalized(&b);
	return b ? 2 : a;
}
static size_t mgc_comm_size(void) { return sizeof(MPI_Comm); }
// The MPI_Comm value in bytes (already copied from the caller) as an integer.
static uintptr_t mgc_comm_value(const void *bytes) {
	MPI_Comm c;
	memcpy(&c, bytes, sizeof c);
	return (uintptr_t)c;
}
*/
import "C"

import (
	gocontext "context"
	"errors"
	"unsafe"

	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mpi"
)

// Per rank, the table every rank contributes to once before the run.
const (
	tFirst = iota
	tNLocal
	tNGlobal
	tFailed
	tDistance
	tPriority
	tMode
	tSeedHi
	tSeedLo
	tWidth
)

// distributed runs the partitioned MIS over the caller's communicator. It
// is collective: once the communicator is known, every failure is agreed
// on, so that all ranks return an error together.
func distributed(c *context, cr commRef, a *distArgs) error {
	switch C.mgc_state() {
	case 0:
		return errorf(statusArg, "MPI is not initialised: call MPI_Init (or MPI_Init_thread) before misgrid_mis_distributed; MPI_Initialized says no")
	case 2:
		return errorf(statusArg, "MPI has been finalised (MPI_Finalized says so)")
	}
	ds, optErr := resolveDist(c, a.options)
	mo := mpi.Options{Timeout: ds.timeout}
	if optErr != nil {
		mo.Timeout = mis.DefaultTimeout
	}
	var comm *mpi.Comm
	var err error
	if cr.isFortran {
		comm, err = mpi.FromFortran(cr.fortran, mo)
	} else {
		var raw [16]byte
		n := int(C.mgc_comm_size())
		if err := withFaults("comm", cr.ptr, 1, func() {
			copy(raw[:n], unsafe.Slice((*byte)(cr.ptr), n))
		}); err != nil {
			return err
		}
		comm, err = mpi.FromHandle(uintptr(C.mgc_comm_value(unsafe.Pointer(&raw[0]))), mo)
	}
	if errors.Is(err, mis.ErrTimeout) {
		return errorf(statusArg, "no answer from the other ranks within %v (option timeout) while duplicating the communicator: did every rank call misgrid_mis_distributed? A rank that returned early (a NULL communicator, a bad context) or never called leaves the communicator with a duplication it has not joined. (%v)", mo.Timeout, err)
	}
	if err != nil {
		return errorf(statusArg, "the communicator: %v", err)
	}
	err = runDistributed(comm, ds, optErr, a)
	if cerr := comm.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

func runDistributed(comm *mpi.Comm, ds distSettings, localErr error, a *distArgs) error {
	ctx := gocontext.Background()
	var local *mis.Local
	if localErr == nil {
		local, _, localErr = readLocal(a)
	}
	me, parts := comm.Part(), comm.Parts()
	// One agreement: every rank's block, sizes, options and whether its
	// input was valid.
	tab := make([]int64, parts*tWidth)
	row := tab[me*tWidth : (me+1)*tWidth]
	row[tFirst], row[tNLocal], row[tNGlobal] = a.first-int64(a.base), a.nlocal, a.nglobal
	row[tDistance], row[tPriority], row[tMode] = int64(ds.opts.Distance), int64(ds.opts.Priority.Kind), int64(ds.opts.Mode)
	row[tSeedHi], row[tSeedLo] = int64(ds.opts.Priority.Seed>>32), int64(ds.opts.Priority.Seed&0xffffffff)
	if localErr != nil {
		row[tFailed] = 1
	}
	if err := comm.Allreduce(ctx, mis.Sum, tab); err != nil {
		if localErr != nil {
			return localErr
		}
		if errors.Is(err, mis.ErrTimeout) {
			return errorf(statusArg, "no answer from the other ranks within %v (option timeout) while agreeing on the input: did every rank call misgrid_mis_distributed? (%v)", ds.timeout, err)
		}
		return errorf(statusArg, "agreeing on the input with the other ranks: %v", err)
	}
	if localErr != nil {
		return localErr
	}
	var bad []int
	for q := range parts {
		if tab[q*tWidth+tFailed] != 0 {
			bad = append(bad, q)
		}
	}
	if len(bad) > 0 {
		return errorf(statusArg, "rank %d: the input of rank(s) %v is invalid (their own message says why)", me, bad)
	}
	if err := checkBlocks(tab, parts); err != nil {
		return err
	}
	local.Ranges = make([]int32, parts+1)
	for q := range parts {
		local.Ranges[q] = int32(tab[q*tWidth+tFirst])
	}
	local.Ranges[parts] = int32(a.nglobal)
	res, err := mis.RunPart(ctx, comm, local, ds.opts)
	if err != nil {
		if errors.Is(err, mis.ErrTimeout) {
			return errorf(statusArg, "rank %d: %v (option timeout=%v)", me, err, ds.timeout)
		}
		return errorf(statusArg, "rank %d: %v", me, err)
	}
	out := make([]int32, len(res.In))
	for i, in := range res.In {
		if in {
			out[i] = 1
		}
	}
	if err := writeInt32s("flags", a.flags, out); err != nil {
		return err
	}
	if err := store("set_size", a.setSize, C.int64_t(res.Size)); err != nil {
		return err
	}
	r := res.Rounds
	if ds.opts.Mode == mis.ADMMA {
		r = res.OuterIterations
	}
	return store("rounds", a.rounds, C.int64_t(r))
}

// checkBlocks checks that the ranks agree on the graph and the options and
// that their blocks tile the rows in rank order. Every rank sees the same
// table, so every rank returns the same verdict.
func checkBlocks(tab []int64, parts int) error {
	at := func(q, f int) int64 { return tab[q*tWidth+f] }
	for q := 1; q < parts; q++ {
		for _, f := range []struct {
			i    int
			name string
		}{{tNGlobal, "nglobal"}, {tDistance, "distance"}, {tPriority, "priority"}, {tMode, "mode"}, {tSeedHi, "seed"}, {tSeedLo, "seed"}} {
			if at(q, f.i) != at(0, f.i) {
				return errorf(statusArg, "the ranks disagree on %s: rank 0 has %d, rank %d has %d (pass the same on every rank)",
					f.name, at(0, f.i), q, at(q, f.i))
			}
		}
	}
	next := int64(0)
	for q := range parts {
		if at(q, tFirst) != next {
			return errorf(statusArg, "rank %d starts at row %d (0-based), want %d: each rank passes the next contiguous block of rows, in rank order",
				q, at(q, tFirst), next)
		}
		next += at(q, tNLocal)
	}
	if next != at(0, tNGlobal) {
		return errorf(statusArg, "the ranks' blocks end at row %d (0-based), but nglobal = %d", next, at(0, tNGlobal))
	}
	return nil
}
