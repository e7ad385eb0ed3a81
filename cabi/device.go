package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// The entry points on graphs whose CSR the caller holds in GPU memory
// (misgrid_device_*). A matrix on the device (the device AMG setup) will
// follow the same pattern: resolve the CUDA context of the caller's
// pointers, wrap them as cuda.Buffers of that context, check them on the
// device, and wait for the context's queued work on entry.

// deviceGraphObj is what a misgrid_device_graph names: the caller's
// buffers wrapped in place.
type deviceGraphObj struct {
	mu  sync.Mutex // calls on one graph run one at a time
	dg  *mis.DeviceGraph
	ctx *cuda.Context
	n   int64
}

func lookupDeviceGraph(h C.misgrid_device_graph) (*deviceGraphObj, error) {
	obj, err := handles.lookup(uintptr(h), kindDeviceGraph, "graph")
	if err != nil {
		return nil, err
	}
	return obj.(*deviceGraphObj), nil
}

// wrappedContexts keeps one cuda.Context per CUcontext a caller passed,
// so that the kernel image is loaded once per context, not once per call.
var wrappedContexts = struct {
	sync.Mutex
	m map[uintptr]*cuda.Context
}{m: map[uintptr]*cuda.Context{}}

// deviceContext returns the context of the caller's pointer p: raw when
// it is not 0, else the primary context of the device that holds p.
func deviceContext(raw uintptr, p uintptr) (*cuda.Context, error) {
	if raw != 0 {
		wrappedContexts.Lock()
		defer wrappedContexts.Unlock()
		if c := wrappedContexts.m[raw]; c != nil {
			return c, nil
		}
		c, err := cuda.WrapContext(raw)
		if err != nil {
			return nil, err
		}
		wrappedContexts.m[raw] = c
		return c, nil
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	var errs []error
	for i := range n {
		l, err := misgpu.Open(i)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := l.Ctx.WrapDevicePtr(p, 1); err == nil {
			return l.Ctx, nil
		}
	}
	return nil, errorf(statusArg, "rowptr (%#x) is not device memory of the primary context of any of the %d GPUs (pass the CUcontext it belongs to)%s",
		p, n, joinedReason(errs))
}

func joinedReason(errs []error) string {
	if err := errors.Join(errs...); err != nil {
		return ": " + err.Error()
	}
	return ""
}

// devicePtr wraps the caller's array name of bytes at p in ctx.
func devicePtr(ctx *cuda.Context, name string, p unsafe.Pointer, bytes int64) (*cuda.Buffer, error) {
	if p == nil && bytes > 0 {
		return nil, errorf(statusNull, "%s is NULL", name)
	}
	b, err := ctx.WrapDevicePtr(uintptr(p), bytes)
	if err != nil {
		return nil, errorf(statusArg, "%s: %v", name, err)
	}
	return b, nil
}

//export misgrid_device_graph_from_csr
func misgrid_device_graph_from_csr(ctx C.misgrid_context, cudaContext unsafe.Pointer, nrows, nnz C.int64_t,
	rowptr *C.misgrid_cint64, colind *C.misgrid_cint32, out *C.misgrid_device_graph) C.misgrid_status {
	return guard(ctx, "misgrid_device_graph_from_csr", func(c *context) error {
		if out == nil {
			return errorf(statusNull, "graph (output) is NULL")
		}
		n, nz := int64(nrows), int64(nnz)
		if err := checkSquare(n, n); err != nil {
			return err
		}
		if err := checkLen("nnz", nz, 8); err != nil {
			return err
		}
		if nz > 1<<40 {
			return errorf(statusRange, "nnz = %d is too large", nz)
		}
		if rowptr == nil {
			return errorf(statusNull, "rowptr is NULL")
		}
		dctx, err := deviceContext(uintptr(cudaContext), uintptr(unsafe.Pointer(rowptr)))
		if err != nil {
			return err
		}
		off, err := devicePtr(dctx, "rowptr", unsafe.Pointer(rowptr), 8*(n+1))
		if err != nil {
			return err
		}
		adj, err := devicePtr(dctx, "colind", unsafe.Pointer(colind), 4*nz)
		if err != nil {
			return err
		}
		// The caller's writes, on whatever stream, are complete.
		if err := dctx.Synchronize(); err != nil {
			return err
		}
		if err := checkDeviceCSR(off, adj, n, nz); err != nil {
			return err
		}
		dg, err := mis.NewDeviceGraph(int(n), off, adj)
		if err != nil {
			var ve *mesh.ValidationError
			if errors.As(err, &ve) && ve.Row >= 0 {
				return deviceRowError(off, adj, n, nz, int64(ve.Row))
			}
			return err
		}
		obj := &deviceGraphObj{dg: dg, ctx: dctx, n: n}
		if err := publishHandle("graph", out, kindDeviceGraph, obj); err != nil {
			dg.Close()
			return err
		}
		return nil
	})
}

// checkDeviceCSR checks what misgrid_graph_from_csr checks before reading
// the rows: rowptr[0] = 0 and rowptr[n] = nnz (two words read back).
func checkDeviceCSR(off, adj *cuda.Buffer, n, nz int64) error {
	var ends [1]int64
	if err := cuda.CopyToHost(ends[:], off, 0); err != nil {
		return err
	}
	if ends[0] != 0 {
		return errorf(statusArg, "rowptr[0] = %d, want the base 0", ends[0])
	}
	if err := cuda.CopyToHost(ends[:], off, 8*n); err != nil {
		return err
	}
	if ends[0] != nz {
		return errorf(statusArg, "rowptr[%d] - base = %d, but nnz = %d", n, ends[0], nz)
	}
	return nil
}

// deviceRowError reads row v, which the device check refused, and says
// what is wrong in misgrid_graph_from_csr's words.
func deviceRowError(off, adj *cuda.Buffer, n, nz, v int64) error {
	var o [2]int64
	if err := cuda.CopyToHost(o[:], off, 8*v); err != nil {
		return err
	}
	switch {
	case o[1] < o[0]:
		return errorf(statusArg, "rowptr[%d] = %d is less than rowptr[%d] = %d: row pointers must not decrease", v+1, o[1], v, o[0])
	case o[0] < 0 || o[1] > nz:
		return errorf(statusArg, "rowptr[%d] - base = %d, but nnz = %d", v+1, o[1], nz)
	}
	row := make([]int32, o[1]-o[0])
	if len(row) > 0 {
		if err := cuda.CopyToHost(row, adj, 4*o[0]); err != nil {
			return err
		}
	}
	for i, u := range row {
		k := o[0] + int64(i)
		if u < 0 || int64(u) >= n {
			return errorf(statusRange, "colind[%d] = %d is out of range [0, %d]", k, u, n-1)
		}
		if int64(u) == v {
			return errorf(statusArg, "colind[%d] = %d is the diagonal of row %d: a device graph's rows hold no diagonal", k, u, v)
		}
	}
	return errorf(statusInternal, "the device check refused row %d, which reads well", v)
}

//export misgrid_device_graph_destroy
func misgrid_device_graph_destroy(ctx C.misgrid_context, graph C.misgrid_device_graph) C.misgrid_status {
	return guard(ctx, "misgrid_device_graph_destroy", func(c *context) error {
		obj, err := handles.remove(uintptr(graph), kindDeviceGraph, "graph")
		if err != nil {
			return err
		}
		o := obj.(*deviceGraphObj)
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.dg.Close()
	})
}

//export misgrid_release_device_memory
func misgrid_release_device_memory(ctx C.misgrid_context) C.misgrid_status {
	return guard(ctx, "misgrid_release_device_memory", func(*context) error {
		return mis.ReleaseGPUMemory()
	})
}

// deviceStart resolves the graph and the options of a device operation
// and waits for the work queued in the graph's context.
func deviceStart(c *context, graph C.misgrid_device_graph, o op, options *C.misgrid_cchar) (*deviceGraphObj, settings, error) {
	obj, err := lookupDeviceGraph(graph)
	if err != nil {
		return nil, settings{}, err
	}
	s, err := resolveC(c, o, options)
	if err != nil {
		return nil, s, err
	}
	p := s.mis.Priority.Kind
	if o == opHierarchy {
		p = s.hier.Priority.Kind
	}
	if p == mis.User {
		return nil, s, errorf(statusArg, "priority=user: a device graph has no priority values")
	}
	return obj, s, obj.ctx.Synchronize()
}

//export misgrid_device_mis
func misgrid_device_mis(ctx C.misgrid_context, graph C.misgrid_device_graph, options *C.misgrid_cchar,
	where C.int32_t, n C.int64_t, flags *C.uint8_t, setSize *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_device_mis", func(c *context) error {
		obj, s, err := deviceStart(c, graph, opMIS, options)
		if err != nil {
			return err
		}
		if err := outArray("flags", unsafe.Pointer(flags), int64(n), obj.n); err != nil {
			return err
		}
		obj.mu.Lock()
		defer obj.mu.Unlock()
		o := mis.Options{Distance: s.mis.Distance, Priority: s.mis.Priority}
		switch where {
		case C.MISGRID_HOST:
			res, err := mis.ComputeDevice(obj.dg, o)
			if err != nil {
				return err
			}
			out := unsafe.Slice((*uint8)(unsafe.Pointer(flags)), len(res.In))
			if err := withWriteFaults("flags", unsafe.Pointer(flags), int64(len(out)), 1, func() {
				for v, x := range res.In {
					out[v] = 0
					if x {
						out[v] = 1
					}
				}
			}); err != nil {
				return err
			}
			return store("set_size", setSize, C.int64_t(res.Size))
		case C.MISGRID_DEVICE:
			buf, err := devicePtr(obj.ctx, "flags", unsafe.Pointer(flags), obj.n)
			if err != nil {
				return err
			}
			size, err := mis.ComputeDeviceTo(obj.dg, o, buf)
			if err != nil {
				return err
			}
			return store("set_size", setSize, C.int64_t(size))
		}
		return errorf(statusArg, "where = %d, want MISGRID_HOST (%d) or MISGRID_DEVICE (%d)", int32(where), C.MISGRID_HOST, C.MISGRID_DEVICE)
	})
}

//export misgrid_device_hierarchy
func misgrid_device_hierarchy(ctx C.misgrid_context, graph C.misgrid_device_graph, options *C.misgrid_cchar, out *C.misgrid_result) C.misgrid_status {
	return guard(ctx, "misgrid_device_hierarchy", func(c *context) error {
		if out == nil {
			return errorf(statusNull, "result (output) is NULL")
		}
		obj, s, err := deviceStart(c, graph, opHierarchy, options)
		if err != nil {
			return err
		}
		obj.mu.Lock()
		defer obj.mu.Unlock()
		lv, err := mis.HierarchyDevice(obj.dg, mis.HierarchyOptions{
			Distance: s.hier.Distance, Priority: s.hier.Priority, MinVertices: s.hier.MinVertices, MaxLevels: s.hier.MaxLevels,
		})
		if err != nil {
			return err
		}
		return publishResult(out, hierarchyResult(lv))
	})
}

// hierarchyResult is the result of a hierarchy's levels.
func hierarchyResult(lv []mis.Level) *resultObj {
	r := &resultObj{levels: make([]level, len(lv))}
	for i, l := range lv {
		r.levels[i] = level{g: l.Graph, set: l.Set, agg: l.Agg}
		if l.Agg == nil {
			r.levels[i].aggWhy = "the coarsest level has no aggregates"
		}
	}
	return r
}
