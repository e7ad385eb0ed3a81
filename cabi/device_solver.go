package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"unsafe"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/cuda"
)

// The AMG setup from a matrix in GPU memory (misgrid_device_solver_*):
// the caller's arrays are wrapped in their context as the device graphs'
// are (device.go), checked on the device and used in place by
// amg.NewDevice, which the solver keeps. A solver set up this way takes
// new values through misgrid_device_solver_update only; it has no host
// pattern (rowptr, col nil).

//export misgrid_device_solver_setup
func misgrid_device_solver_setup(ctx C.misgrid_context, solver C.misgrid_solver, cudaContext unsafe.Pointer,
	nrows, nnz C.int64_t, indexType C.int32_t, rowptrC *C.misgrid_cvoid, colind *C.misgrid_cint32,
	values *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_device_solver_setup", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			n, nz, rowptr := int64(nrows), int64(nnz), unsafe.Pointer(rowptrC)
			if err := checkSquare(n, n); err != nil {
				return err
			}
			if err := checkLen("nnz", nz, 12); err != nil {
				return err
			}
			w := int64(4)
			switch indexType {
			case C.MISGRID_INT32:
			case C.MISGRID_INT64:
				w = 8
			default:
				return errorf(statusArg, "index_type = %d, want MISGRID_INT32 or MISGRID_INT64 (the row offsets' type)", int32(indexType))
			}
			if rowptr == nil {
				return errorf(statusNull, "rowptr is NULL")
			}
			if s.opts.Nullspace == amg.RigidBody && s.opts.Coords == nil {
				return errorf(statusArg, "nullspace=rbm needs node coordinates: call misgrid_solver_set_coordinates first")
			}
			if s.opts.Nullspace == amg.Vectors && s.opts.Vectors == nil {
				return errorf(statusArg, "nullspace=vectors needs vectors: call misgrid_solver_set_nullspace first")
			}
			dctx, err := deviceContext(uintptr(cudaContext), uintptr(rowptr))
			if err != nil {
				return err
			}
			a := amg.DeviceMatrix{Rows: int(n), Offsets64: w == 8}
			if a.RowPtr, err = devicePtr(dctx, "rowptr", rowptr, w*(n+1)); err != nil {
				return err
			}
			if a.Col, err = devicePtr(dctx, "colind", unsafe.Pointer(colind), 4*nz); err != nil {
				return err
			}
			if a.Val, err = devicePtr(dctx, "values", unsafe.Pointer(values), 8*nz); err != nil {
				return err
			}
			// The caller's writes, on whatever stream, are complete.
			if err := dctx.Synchronize(); err != nil {
				return err
			}
			if err := checkDeviceEnds(a, nz); err != nil {
				return err
			}
			pc, err := amg.NewDevice(a, s.opts)
			if err != nil {
				return err
			}
			s.pc, s.rowptr, s.col, s.last, s.history = pc, nil, nil, nil, nil
			s.devMatrix = a
			return nil
		})
	})
}

// checkDeviceEnds checks that rowptr[0] = 0 and rowptr[n] = nnz, as
// misgrid_solver_setup does (two words read back).
func checkDeviceEnds(a amg.DeviceMatrix, nz int64) error {
	var ends [2]int64
	for i, k := range []int64{0, int64(a.Rows)} {
		if a.Offsets64 {
			var x [1]int64
			if err := cuda.CopyToHost(x[:], a.RowPtr, 8*k); err != nil {
				return err
			}
			ends[i] = x[0]
		} else {
			var x [1]int32
			if err := cuda.CopyToHost(x[:], a.RowPtr, 4*k); err != nil {
				return err
			}
			ends[i] = int64(x[0])
		}
	}
	if ends[0] != 0 {
		return errorf(statusArg, "rowptr[0] = %d, want the base 0", ends[0])
	}
	if ends[1] != nz {
		return errorf(statusArg, "rowptr[%d] = %d, but nnz = %d", a.Rows, ends[1], nz)
	}
	return nil
}

//export misgrid_device_solver_update
func misgrid_device_solver_update(ctx C.misgrid_context, solver C.misgrid_solver, nnz C.int64_t,
	values *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_device_solver_update", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if err := s.needSetup(); err != nil {
				return err
			}
			a := s.devMatrix
			if a.Val == nil || s.rowptr != nil {
				return errorf(statusArg, "the solver was not set up from device memory (misgrid_device_solver_setup); use misgrid_solver_update_values")
			}
			if nz := a.Val.Size() / 8; int64(nnz) != nz {
				return errorf(statusRange, "nnz = %d, but the matrix given to misgrid_device_solver_setup has %d entries", int64(nnz), nz)
			}
			val, err := devicePtr(a.Val.Context(), "values", unsafe.Pointer(values), 8*int64(nnz))
			if err != nil {
				return err
			}
			if err := val.Context().Synchronize(); err != nil {
				return err
			}
			a.Val = val
			if err := s.pc.UpdateDevice(a); err != nil {
				return err
			}
			s.devMatrix, s.last, s.history = a, nil, nil
			return nil
		})
	})
}
