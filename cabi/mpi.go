package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// The distributed MIS: each MPI rank passes its own contiguous block of
// rows with global column ids, and gets the flags of those rows in the
// set the single-process misgrid_mis returns. The exported functions are
// here, in every build, so that the header's prototypes are checked
// against them whether or not MPI is built in; distributed (mpi_on.go
// with the build tag mpi, mpi_off.go without) does the work.

// opDistributed is the option scope of misgrid_mis_distributed.
const opDistributed op = 1 << 10

// The distributed call takes distance, priority and seed as misgrid_mis
// does, plus two keys of its own. Their values are validated here and read
// back by distKV, because settings has no fields for them.
func init() {
	for _, k := range []string{"distance", "priority", "seed"} {
		lookupOpt(k).ops |= opDistributed
	}
	registry = append(registry,
		optDef{key: "mode", ops: opDistributed, def: "exact",
			help: "misgrid_mis_distributed: exact (the set of misgrid_mis, for any number of ranks) or admma (Adams's partition-based algorithm, distance 1: fewer exchanges, a set that depends on the partition)",
			apply: func(_ *settings, v string) error {
				_, err := mis.ParsePartMode(v)
				if err != nil {
					return fmt.Errorf("want exact or admma")
				}
				return nil
			}},
		optDef{key: "timeout", ops: opDistributed, def: "120",
			help: "misgrid_mis_distributed: seconds (or a duration such as 30s, 2m) any wait for another rank may take before every rank fails",
			apply: func(_ *settings, v string) error {
				_, err := parseTimeout(v)
				return err
			}})
}

func parseTimeout(v string) (time.Duration, error) {
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		if !(x > 0 && x <= 1e6) {
			return 0, fmt.Errorf("timeout = %q: want seconds in (0, 1e6]", v)
		}
		return time.Duration(x * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout = %q: want seconds or a positive duration such as 30s", v)
	}
	return d, nil
}

// distSettings are the values in force for one distributed call.
type distSettings struct {
	opts    mis.PartOptions
	timeout time.Duration
}

func resolveDist(c *context, options *C.misgrid_cchar) (distSettings, error) {
	var d distSettings
	call, err := optString(options)
	if err != nil {
		return d, err
	}
	s, err := resolve(c, opDistributed, call)
	if err != nil {
		return d, err
	}
	if s.mis.Priority.Kind == mis.User {
		return d, errorf(statusOption, "priority=user is not available distributed (the ranks of the values are global); use hash, boundary or degree")
	}
	d.opts = mis.PartOptions{Distance: max(s.mis.Distance, 1), Priority: s.mis.Priority}
	d.timeout = mis.DefaultTimeout
	kv, _ := parseOptions(call, opDistributed) // resolve has checked it
	for _, x := range append(c.options(), kv...) {
		switch x.key {
		case "mode":
			d.opts.Mode, _ = mis.ParsePartMode(x.value)
		case "timeout":
			d.timeout, _ = parseTimeout(x.value)
		}
	}
	return d, nil
}

// distArgs are the arguments of a distributed call after the communicator.
type distArgs struct {
	nglobal, first, nlocal, nnz int64
	itype, base                 C.int32_t
	rowptr, colind              unsafe.Pointer
	classes                     *C.misgrid_cint32
	options                     *C.misgrid_cchar
	flags                       *C.int32_t
	setSize, rounds             *C.int64_t
}

// readLocal checks and copies this rank's rows: ids in range, the diagonal
// dropped, repeats merged, rows sorted, and the pattern symmetric within
// the block (the driver checks the edges between blocks). first0 is the
// 0-based first row. Ranges is left for the caller, which learns the other
// ranks' blocks.
func readLocal(a *distArgs) (*mis.Local, int64, error) {
	rowT, colT, err := csrIndexTypes(a.itype, a.base)
	if err != nil {
		return nil, 0, err
	}
	b := int64(a.base)
	switch {
	case a.nglobal < 0 || a.nglobal > maxVertices:
		return nil, 0, errorf(statusRange, "nglobal = %d is out of range [0, %d]", a.nglobal, int64(maxVertices))
	case a.nlocal < 0:
		return nil, 0, errorf(statusRange, "nlocal = %d is negative", a.nlocal)
	case a.first-b < 0 || a.first-b > a.nglobal:
		return nil, 0, errorf(statusRange, "first = %d is out of range [%d, %d]", a.first, b, a.nglobal+b)
	case a.nlocal > a.nglobal-(a.first-b):
		return nil, 0, errorf(statusRange, "rows first .. first+nlocal-1 = %d .. %d pass the last row %d", a.first, a.first+a.nlocal-1, a.nglobal-1+b)
	}
	if err := checkLen("nnz", a.nnz, 4); err != nil {
		return nil, 0, err
	}
	if err := needMemory(fmt.Sprintf("this rank's %d rows and %d entries", a.nlocal, a.nnz), 24*float64(a.nlocal+1)+12*float64(a.nnz)); err != nil {
		return nil, 0, err
	}
	first0 := a.first - b
	off, err := readOffsets("rowptr", a.rowptr, rowT, a.base, a.nlocal, a.nnz)
	if err != nil {
		return nil, 0, err
	}
	if off[a.nlocal] != a.nnz {
		return nil, 0, errorf(statusArg, "nnz = %d, but rowptr[%d] - base = %d", a.nnz, a.nlocal, off[a.nlocal])
	}
	col, err := readIDs("colind", a.colind, colT, a.base, a.nnz, a.nglobal)
	if err != nil {
		return nil, 0, err
	}
	l := &mis.Local{N: int(a.nglobal), Offsets: make([]int64, a.nlocal+1)}
	adj := make([]int32, 0, len(col))
	for i := range a.nlocal {
		v := int32(first0 + i)
		row := slices.DeleteFunc(col[off[i]:off[i+1]], func(u int32) bool { return u == v })
		slices.Sort(row)
		adj = append(adj, slices.Compact(row)...)
		l.Offsets[i+1] = int64(len(adj))
	}
	l.Adj = adj
	for i := range a.nlocal {
		v := int32(first0 + i)
		for _, u := range adj[l.Offsets[i]:l.Offsets[i+1]] {
			j := int64(u) - first0
			if j < 0 || j >= a.nlocal {
				continue
			}
			if _, ok := slices.BinarySearch(adj[l.Offsets[j]:l.Offsets[j+1]], v); !ok {
				return nil, 0, errorf(statusArg, "the pattern is not symmetric: row %d has column %d, but row %d has no column %d (ids in your base; misgrid_mis_distributed needs a symmetric pattern)",
					int64(v)+b, int64(u)+b, int64(u)+b, int64(v)+b)
			}
		}
	}
	if a.classes != nil {
		raw, err := readInt32s("classes", a.classes, a.nlocal)
		if err != nil {
			return nil, 0, err
		}
		l.Class = make([]mesh.Class, len(raw))
		for i, x := range raw {
			if x < C.MISGRID_INTERIOR || x > C.MISGRID_CORNER {
				return nil, 0, errorf(statusRange, "classes[%d] = %d, want MISGRID_INTERIOR (0) .. MISGRID_CORNER (3)", i, x)
			}
			l.Class[i] = mesh.Class(x)
		}
	}
	if a.flags == nil && a.nlocal > 0 {
		return nil, 0, errorf(statusNull, "flags (output, nlocal = %d entries) is NULL", a.nlocal)
	}
	return l, first0, nil
}

//export misgrid_mis_distributed
func misgrid_mis_distributed(ctx C.misgrid_context, comm *C.misgrid_cvoid, nglobal, first, nlocal, nnz C.int64_t,
	itype, base C.int32_t, rowptr, colind *C.misgrid_cvoid, classes *C.misgrid_cint32, options *C.misgrid_cchar,
	flags *C.int32_t, setSize, rounds *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_mis_distributed", func(c *context) error {
		if comm == nil {
			return errorf(statusNull, "comm is NULL (pass &comm, the address of your MPI_Comm)")
		}
		return distributed(c, commRef{ptr: unsafe.Pointer(comm)}, &distArgs{
			int64(nglobal), int64(first), int64(nlocal), int64(nnz), itype, base,
			unsafe.Pointer(rowptr), unsafe.Pointer(colind), classes, options, flags, setSize, rounds})
	})
}

//export misgrid_mis_distributed_f
func misgrid_mis_distributed_f(ctx C.misgrid_context, fcomm C.int32_t, nglobal, first, nlocal, nnz C.int64_t,
	itype, base C.int32_t, rowptr, colind *C.misgrid_cvoid, classes *C.misgrid_cint32, options *C.misgrid_cchar,
	flags *C.int32_t, setSize, rounds *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_mis_distributed_f", func(c *context) error {
		return distributed(c, commRef{fortran: int32(fcomm), isFortran: true}, &distArgs{
			int64(nglobal), int64(first), int64(nlocal), int64(nnz), itype, base,
			unsafe.Pointer(rowptr), unsafe.Pointer(colind), classes, options, flags, setSize, rounds})
	})
}

// commRef is the caller's communicator: the address of a C MPI_Comm, or
// a Fortran integer handle.
type commRef struct {
	ptr       unsafe.Pointer
	fortran   int32
	isFortran bool
}
