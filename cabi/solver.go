package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mesh"
)

// solverObj is what a misgrid_solver handle names: the amg options, the
// data set before setup, and after setup the preconditioner with the
// matrix pattern it was built on (for value updates). amg.Preconditioner
// is not safe for concurrent use, so every call on one solver holds mu:
// threads sharing a solver take turns; separate solvers run in parallel.
type solverObj struct {
	mu      sync.Mutex
	opts    amg.Options
	pc      *amg.Preconditioner
	rowptr  []int64 // the setup matrix's pattern, 0-based
	col     []int32
	last    *amg.Result // the last solve
	history []float64

	// The matrix of misgrid_device_solver_setup (rowptr and col are
	// then nil; device_solver.go).
	devMatrix amg.DeviceMatrix
}

func lookupSolver(h C.misgrid_solver) (*solverObj, error) {
	obj, err := handles.lookup(uintptr(h), kindSolver, "solver")
	if err != nil {
		return nil, err
	}
	return obj.(*solverObj), nil
}

// withSolver runs f with the solver locked.
func withSolver(h C.misgrid_solver, f func(s *solverObj) error) error {
	s, err := lookupSolver(h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s)
}

func (s *solverObj) needSetup() error {
	if s.pc == nil {
		return errorf(statusArg, "the solver has no matrix yet (call misgrid_solver_setup)")
	}
	return nil
}

//export misgrid_solver_create
func misgrid_solver_create(ctx C.misgrid_context, options *C.misgrid_cchar, out *C.misgrid_solver) C.misgrid_status {
	return guard(ctx, "misgrid_solver_create", func(c *context) error {
		if out == nil {
			return errorf(statusNull, "solver (output) is NULL")
		}
		set, err := resolveC(c, opSolver, options)
		if err != nil {
			return err
		}
		return publishHandle("solver", out, kindSolver, &solverObj{opts: set.amg})
	})
}

//export misgrid_solver_destroy
func misgrid_solver_destroy(ctx C.misgrid_context, solver C.misgrid_solver) C.misgrid_status {
	return guard(ctx, "misgrid_solver_destroy", func(*context) error {
		_, err := handles.remove(uintptr(solver), kindSolver, "solver")
		return err
	})
}

//export misgrid_solver_set_coordinates
func misgrid_solver_set_coordinates(ctx C.misgrid_context, solver C.misgrid_solver, dim C.int32_t, n C.int64_t, coords *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_solver_set_coordinates", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if dim < 1 || dim > 3 {
				return errorf(statusArg, "dim = %d, want 1, 2 or 3", int32(dim))
			}
			if err := checkLen("n", int64(n), 8*int64(dim)); err != nil {
				return err
			}
			if err := needMemory(fmt.Sprintf("%d coordinates of dim %d", int64(n), int32(dim)), 8*float64(dim)*float64(n)); err != nil {
				return err
			}
			x, err := readFloat64s("coords", coords, int64(dim)*int64(n), false)
			if err != nil {
				return err
			}
			s.opts.Dim, s.opts.Coords = int(dim), x
			return nil
		})
	})
}

//export misgrid_solver_set_nullspace
func misgrid_solver_set_nullspace(ctx C.misgrid_context, solver C.misgrid_solver, n C.int64_t, nvec C.int32_t, vectors *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_solver_set_nullspace", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			v, err := readVectors("near-nullspace", n, nvec, 64, vectors)
			if err == nil {
				s.opts.Vectors = v
			}
			return err
		})
	})
}

// maxKernel bounds the vectors of misgrid_solver_set_kernel: rigid-body
// modes are 6 and 3 per node in 3D; a larger exact null space is beyond
// what projecting it out of every iterate is meant for.
const maxKernel = 64

//export misgrid_solver_set_kernel
func misgrid_solver_set_kernel(ctx C.misgrid_context, solver C.misgrid_solver, n C.int64_t, nvec C.int32_t, vectors *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_solver_set_kernel", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			v, err := readVectors("kernel", n, nvec, maxKernel, vectors)
			if err == nil {
				s.opts.Kernel = v
			}
			return err
		})
	})
}

// readVectors reads nvec (1 to max) vectors of n doubles, vector j at
// vectors[j*n ...], checked against the memory they take.
func readVectors(what string, n C.int64_t, nvec C.int32_t, max int32, vectors *C.misgrid_cdouble) ([][]float64, error) {
	if nvec < 1 || int32(nvec) > max {
		return nil, errorf(statusRange, "nvec = %d, want 1 to %d vectors", int32(nvec), max)
	}
	if err := checkLen("n", int64(n), 8*int64(nvec)); err != nil {
		return nil, err
	}
	if err := needMemory(fmt.Sprintf("%d %s vectors of %d entries", int32(nvec), what, int64(n)), 8*float64(nvec)*float64(n)); err != nil {
		return nil, err
	}
	all, err := readFloat64s("vectors", vectors, int64(n)*int64(nvec), false)
	if err != nil {
		return nil, err
	}
	v := make([][]float64, nvec)
	for j := range v {
		v[j] = all[int64(j)*int64(n) : int64(j+1)*int64(n) : int64(j+1)*int64(n)]
	}
	return v, nil
}

// readMatrix reads a CSR matrix with values as float64, checked in the
// caller's terms.
func readMatrix(nrows, ncols, nnz C.int64_t, itype, base C.int32_t, rowptr, colind unsafe.Pointer, vtype C.int32_t, values unsafe.Pointer) (*mesh.CSR[float64], error) {
	n, nz := int64(nrows), int64(nnz)
	if err := checkSquare(n, int64(ncols)); err != nil {
		return nil, err
	}
	rowT, colT, err := csrIndexTypes(itype, base)
	if err != nil {
		return nil, err
	}
	if err := checkLen("nnz", nz, 8); err != nil {
		return nil, err
	}
	if vtype == C.MISGRID_PATTERN {
		return nil, errorf(statusArg, "a solver needs matrix values (value_type MISGRID_FLOAT64 or MISGRID_FLOAT32)")
	}
	if err := checkValueType(vtype, values); err != nil {
		return nil, err
	}
	if err := needMemory(fmt.Sprintf("a matrix of %d rows and %d entries", n, nz), float64(n+1)*16+float64(nz)*24); err != nil {
		return nil, err
	}
	off, err := readOffsets("rowptr", rowptr, rowT, base, n, nz)
	if err != nil {
		return nil, err
	}
	if off[n] != nz {
		return nil, errorf(statusArg, "rowptr[%d] - base = %d, but nnz = %d", n, off[n], nz)
	}
	col, err := readIDs("colind", colind, colT, base, nz, n)
	if err != nil {
		return nil, err
	}
	val, err := readValuesAs64(values, vtype, nz)
	if err != nil {
		return nil, err
	}
	return &mesh.CSR[float64]{Rows: int(n), Cols: int(n), RowPtr: off, Col: col, Val: val}, nil
}

func readValuesAs64(values unsafe.Pointer, vtype C.int32_t, nz int64) ([]float64, error) {
	if vtype == C.MISGRID_FLOAT32 {
		v32, err := readValues[float32]("values", values, nz)
		if err != nil {
			return nil, err
		}
		val := make([]float64, nz)
		for i, x := range v32 {
			val[i] = float64(x)
		}
		return val, nil
	}
	return readValues[float64]("values", values, nz)
}

//export misgrid_solver_setup
func misgrid_solver_setup(ctx C.misgrid_context, solver C.misgrid_solver, nrows, ncols, nnz C.int64_t, itype, base C.int32_t,
	rowptr, colind *C.misgrid_cvoid, vtype C.int32_t, values *C.misgrid_cvoid) C.misgrid_status {
	return guard(ctx, "misgrid_solver_setup", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			a, err := readMatrix(nrows, ncols, nnz, itype, base, unsafe.Pointer(rowptr), unsafe.Pointer(colind), vtype, unsafe.Pointer(values))
			if err != nil {
				return err
			}
			switch {
			case s.opts.Nullspace == amg.RigidBody && s.opts.Coords == nil:
				return errorf(statusArg, "nullspace=rbm needs node coordinates: call misgrid_solver_set_coordinates first")
			case s.opts.Nullspace == amg.Vectors && s.opts.Vectors == nil:
				return errorf(statusArg, "nullspace=vectors needs vectors: call misgrid_solver_set_nullspace first")
			}
			pc, err := amg.New(a, s.opts)
			if err != nil {
				return err
			}
			s.pc, s.rowptr, s.col, s.last, s.history = pc, a.RowPtr, a.Col, nil, nil
			return nil
		})
	})
}

//export misgrid_solver_update_values
func misgrid_solver_update_values(ctx C.misgrid_context, solver C.misgrid_solver, nnz C.int64_t, vtype C.int32_t, values *C.misgrid_cvoid) C.misgrid_status {
	return guard(ctx, "misgrid_solver_update_values", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if err := s.needSetup(); err != nil {
				return err
			}
			if s.rowptr == nil {
				return errorf(statusArg, "the solver was set up from device memory: use misgrid_device_solver_update")
			}
			if int64(nnz) != int64(len(s.col)) {
				return errorf(statusRange, "nnz = %d, but the matrix given to misgrid_solver_setup has %d entries", int64(nnz), len(s.col))
			}
			if vtype != C.MISGRID_FLOAT64 && vtype != C.MISGRID_FLOAT32 {
				return errorf(statusArg, "value_type = %d, want MISGRID_FLOAT64 or MISGRID_FLOAT32", int32(vtype))
			}
			val, err := readValuesAs64(unsafe.Pointer(values), vtype, int64(nnz))
			if err != nil {
				return err
			}
			n := len(s.rowptr) - 1
			return s.pc.Update(&mesh.CSR[float64]{Rows: n, Cols: n, RowPtr: s.rowptr, Col: s.col, Val: val})
		})
	})
}

// vectorArgs checks the vectors of apply and solve: n == rows, pointers
// present.
func (s *solverObj) vectorArgs(n C.int64_t) error {
	if err := s.needSetup(); err != nil {
		return err
	}
	if int64(n) != int64(s.pc.Rows()) {
		return errorf(statusRange, "n = %d, but the matrix has %d rows", int64(n), s.pc.Rows())
	}
	return nil
}

func writeFloat64s(name string, p *C.double, vals []float64) error {
	if len(vals) == 0 {
		return nil
	}
	return writeArray(name, unsafe.Pointer(p), vals)
}

//export misgrid_solver_apply
func misgrid_solver_apply(ctx C.misgrid_context, solver C.misgrid_solver, n C.int64_t, r *C.misgrid_cdouble, z *C.double) C.misgrid_status {
	return guard(ctx, "misgrid_solver_apply", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if err := s.vectorArgs(n); err != nil {
				return err
			}
			if z == nil {
				return errorf(statusNull, "z is NULL")
			}
			rv, err := readFloat64s("r", r, int64(n), false)
			if err != nil {
				return err
			}
			zv := make([]float64, n)
			if err := s.pc.Apply(rv, zv); err != nil {
				return err
			}
			return writeFloat64s("z", z, zv)
		})
	})
}

//export misgrid_solver_solve
func misgrid_solver_solve(ctx C.misgrid_context, solver C.misgrid_solver, n C.int64_t, b *C.misgrid_cdouble, x *C.double,
	converged *C.int32_t, iterations *C.int64_t, residual *C.double) C.misgrid_status {
	return guard(ctx, "misgrid_solver_solve", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if err := s.vectorArgs(n); err != nil {
				return err
			}
			if x == nil {
				return errorf(statusNull, "x is NULL")
			}
			bv, err := readFloat64s("b", b, int64(n), false)
			if err != nil {
				return err
			}
			xv, err := readFloat64s("x", (*C.misgrid_cdouble)(x), int64(n), false)
			if err != nil {
				return errorf(statusArg, "initial guess: %v", err)
			}
			res, err := s.pc.Solve(bv, xv)
			if errors.Is(err, amg.ErrInconsistent) {
				// Recorded for misgrid_solver_residuals; x stays as it was
				// (outputs are untouched on failure).
				s.last, s.history = res, res.Residuals
				tol := s.opts.Tol
				if tol == 0 {
					tol = amg.DefaultTol
				}
				return errorf(statusInconsistent, "the right-hand side is inconsistent with the kernel of A: ||N^T b||/||b|| = %.3g for the %d kernel vectors N exceeds tol = %g, "+
					"so no x solves A x = b (the least-squares x leaves ||b - A x||/||b|| = %.3g); x is left as it was: remove the kernel part of b and solve again for the least-squares x",
					res.KernelPart, len(s.pc.Kernel()), tol, res.TrueResidual)
			}
			if err != nil {
				return err
			}
			s.last, s.history = res, res.Residuals
			if err := writeFloat64s("x", x, xv); err != nil {
				return err
			}
			conv := C.int32_t(0)
			if res.Converged {
				conv = 1
			}
			if err := store("converged", converged, conv); err != nil {
				return err
			}
			if err := store("iterations", iterations, C.int64_t(res.Iterations)); err != nil {
				return err
			}
			return store("residual", residual, C.double(res.TrueResidual))
		})
	})
}

//export misgrid_solver_residuals
func misgrid_solver_residuals(ctx C.misgrid_context, solver C.misgrid_solver, capacity C.int64_t, out *C.double, count *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_solver_residuals", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if s.last == nil {
				return errorf(statusArg, "no solve yet (call misgrid_solver_solve)")
			}
			if err := store("count", count, C.int64_t(len(s.history))); err != nil {
				return err
			}
			if err := outArray("residuals", unsafe.Pointer(out), int64(capacity), int64(len(s.history))); err != nil {
				return err
			}
			return writeFloat64s("residuals", out, s.history)
		})
	})
}

//export misgrid_solver_info
func misgrid_solver_info(ctx C.misgrid_context, solver C.misgrid_solver, nlevels *C.int64_t, opc, gc, setup *C.double) C.misgrid_status {
	return guard(ctx, "misgrid_solver_info", func(*context) error {
		return withSolver(solver, func(s *solverObj) error {
			if err := s.needSetup(); err != nil {
				return err
			}
			st := s.pc.Stats()
			if err := store("nlevels", nlevels, C.int64_t(len(st.Levels))); err != nil {
				return err
			}
			for _, p := range []struct {
				name string
				dst  *C.double
				v    float64
			}{{"operator_complexity", opc, st.OperatorComplexity}, {"grid_complexity", gc, st.GridComplexity}, {"setup_seconds", setup, st.Setup.Seconds()}} {
				if err := store(p.name, p.dst, C.double(p.v)); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

//export misgrid_solver_level_info
func misgrid_solver_level_info(ctx C.misgrid_context, solver C.misgrid_solver, lvl C.int64_t, rows, nonzeros, blockSize *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_solver_level_info", func(c *context) error {
		return withSolver(solver, func(s *solverObj) error {
			if err := s.needSetup(); err != nil {
				return err
			}
			st := s.pc.Stats()
			if lvl < 0 || int64(lvl) >= int64(len(st.Levels)) {
				return levelError("hierarchy", int64(lvl), len(st.Levels), c.indexBase())
			}
			l := st.Levels[lvl]
			for _, p := range []struct {
				name string
				dst  *C.int64_t
				v    int
			}{{"rows", rows, l.Rows}, {"nonzeros", nonzeros, l.Nonzeros}, {"block_size", blockSize, l.BlockSize}} {
				if err := store(p.name, p.dst, C.int64_t(p.v)); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
