package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"math"
	"runtime"
	"strings"
	"unsafe"

	"github.com/misgrid/misgrid/mesh"
)

// Reading and writing caller arrays. Every C array is read during the
// call only: the values that are kept are copied into Go memory, so the
// caller may free or reuse its arrays as soon as the call returns. A
// pointer that faults while being read (a wrong pointer or length) is
// reported as MISGRID_ERR_ARG naming the array, where the hardware lets
// us notice; guard has switched faults into recoverable panics.

const maxVertices = math.MaxInt32 // vertex ids are int32 inside misgrid

// checkIndexType checks an index_type and base argument pair.
func checkIndexType(itype C.int32_t, base C.int32_t) error {
	if itype != C.MISGRID_INT32 && itype != C.MISGRID_INT64 {
		return errorf(statusArg, "index_type = %d, want MISGRID_INT32 (%d) or MISGRID_INT64 (%d)", int32(itype), C.MISGRID_INT32, C.MISGRID_INT64)
	}
	if base != 0 && base != 1 {
		return errorf(statusArg, "base = %d, want 0 (C) or 1 (Fortran)", int32(base))
	}
	return nil
}

func indexSize(itype C.int32_t) int64 {
	if itype == C.MISGRID_INT64 {
		return 8
	}
	return 4
}

// checkLen checks that an array length is non-negative and that its byte
// size fits memory.
func checkLen(name string, n int64, elemSize int64) error {
	if n < 0 {
		return errorf(statusRange, "%s = %d is negative", name, n)
	}
	if n > math.MaxInt64/elemSize/2 {
		return errorf(statusRange, "%s = %d is too large", name, n)
	}
	return nil
}

// withFaults runs f, converting a memory fault into an error about array
// name at p.
func withFaults(name string, p unsafe.Pointer, n int64, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok && isFault(re) {
				err = errorf(statusArg, "reading %s (%d entries at %p) faulted: is the pointer or the length wrong? (%v)", name, n, p, re)
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

func isFault(e runtime.Error) bool {
	s := e.Error()
	return strings.Contains(s, "invalid memory address") || strings.Contains(s, "fault address")
}

// needPtr reports a NULL array that must be present (n > 0).
func needPtr(name string, p unsafe.Pointer, n int64) error {
	if p == nil && n > 0 {
		return errorf(statusNull, "%s is NULL", name)
	}
	return nil
}

// readIndex calls f(i, v) for each of the n index values at p, in order,
// converted to int64 (base not yet removed).
func readIndex(name string, p unsafe.Pointer, itype C.int32_t, n int64, f func(i int64, v int64) error) error {
	if err := needPtr(name, p, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	var ferr error
	err := withFaults(name, p, n, func() {
		if itype == C.MISGRID_INT64 {
			for i, v := range unsafe.Slice((*int64)(p), n) {
				if ferr = f(int64(i), v); ferr != nil {
					return
				}
			}
			return
		}
		for i, v := range unsafe.Slice((*int32)(p), n) {
			if ferr = f(int64(i), int64(v)); ferr != nil {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}

// readIDs copies n ids in [base, base+limit) into 0-based int32, naming
// the first one out of range in the caller's terms.
func readIDs(name string, p unsafe.Pointer, itype, base C.int32_t, n, limit int64) ([]int32, error) {
	ids := make([]int32, n)
	b := int64(base)
	err := readIndex(name, p, itype, n, func(i, v int64) error {
		x := v - b
		if x < 0 || x >= limit {
			hint := ""
			if x == -1 && b == 1 {
				hint = " (0 with base 1: are the ids 0-based?)"
			} else if x == limit && b == 0 {
				hint = " (one past the end with base 0: are the ids 1-based?)"
			}
			return errorf(statusRange, "%s[%d] = %d is out of range [%d, %d]%s", name, i, v, b, limit-1+b, hint)
		}
		ids[i] = int32(x)
		return nil
	})
	return ids, err
}

// readOffsets copies n+1 CSR row pointers, 0-based, checking that they
// start at base and never decrease.
func readOffsets(name string, p unsafe.Pointer, itype, base C.int32_t, n int64) ([]int64, error) {
	off := make([]int64, n+1)
	b := int64(base)
	err := readIndex(name, p, itype, n+1, func(i, v int64) error {
		x := v - b
		switch {
		case i == 0 && x != 0:
			return errorf(statusArg, "%s[0] = %d, want the base %d", name, v, b)
		case i > 0 && x < off[i-1]:
			return errorf(statusArg, "%s[%d] = %d is less than %s[%d] = %d: row pointers must not decrease", name, i, v, name, i-1, off[i-1]+b)
		}
		off[i] = x
		return nil
	})
	return off, err
}

// readValues copies n matrix values of type T.
func readValues[T mesh.Float](name string, p unsafe.Pointer, n int64) ([]T, error) {
	if err := needPtr(name, p, n); err != nil {
		return nil, err
	}
	out := make([]T, n)
	if n == 0 {
		return out, nil
	}
	var bad int64 = -1
	err := withFaults(name, p, n, func() {
		copy(out, unsafe.Slice((*T)(p), n))
		for i, x := range out {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				bad = int64(i)
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if bad >= 0 {
		return nil, errorf(statusArg, "%s[%d] = %v is not finite", name, bad, out[bad])
	}
	return out, nil
}

// readInt32s copies n int32 values.
func readInt32s(name string, p *C.misgrid_cint32, n int64) ([]int32, error) {
	if err := needPtr(name, unsafe.Pointer(p), n); err != nil {
		return nil, err
	}
	out := make([]int32, n)
	if n == 0 {
		return out, nil
	}
	err := withFaults(name, unsafe.Pointer(p), n, func() {
		copy(out, unsafe.Slice((*int32)(unsafe.Pointer(p)), n))
	})
	return out, err
}

// readFloat64s copies n doubles, rejecting NaN (and, unless inf, ±Inf).
func readFloat64s(name string, p *C.misgrid_cdouble, n int64, inf bool) ([]float64, error) {
	if err := needPtr(name, unsafe.Pointer(p), n); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	if n == 0 {
		return out, nil
	}
	if err := withFaults(name, unsafe.Pointer(p), n, func() {
		copy(out, unsafe.Slice((*float64)(unsafe.Pointer(p)), n))
	}); err != nil {
		return nil, err
	}
	for i, x := range out {
		if math.IsNaN(x) || (!inf && math.IsInf(x, 0)) {
			return nil, errorf(statusArg, "%s[%d] = %v is not finite", name, i, x)
		}
	}
	return out, nil
}

// outArray checks an output array argument: a non-negative capacity, a
// pointer when anything is to be written, and room for need entries.
func outArray(name string, p unsafe.Pointer, capacity, need int64) error {
	if capacity < 0 {
		return errorf(statusRange, "capacity of %s is %d, negative", name, capacity)
	}
	if capacity < need {
		return errorf(statusRange, "%s has room for %d entries, %d are needed", name, capacity, need)
	}
	if p == nil && need > 0 {
		return errorf(statusNull, "%s is NULL", name)
	}
	return nil
}

// writeIDs writes 0-based ids to the caller's array in its type and base.
func writeIDs(name string, p unsafe.Pointer, itype, base C.int32_t, ids []int32) error {
	if len(ids) == 0 {
		return nil
	}
	n := int64(len(ids))
	return withFaults(name, p, n, func() {
		b := int32(base)
		if itype == C.MISGRID_INT64 {
			dst := unsafe.Slice((*int64)(p), n)
			for i, x := range ids {
				dst[i] = int64(x + b)
			}
			return
		}
		dst := unsafe.Slice((*int32)(p), n)
		for i, x := range ids {
			dst[i] = x + b
		}
	})
}

// writeInt32s writes values to an int32_t array.
func writeInt32s(name string, p *C.int32_t, vals []int32) error {
	if len(vals) == 0 {
		return nil
	}
	n := int64(len(vals))
	return withFaults(name, unsafe.Pointer(p), n, func() {
		copy(unsafe.Slice((*int32)(unsafe.Pointer(p)), n), vals)
	})
}

// maxStringLen bounds the search for the NUL of a C string argument, so
// that an unterminated buffer is an error instead of a long walk.
const maxStringLen = 1 << 20

// cString copies a NUL-terminated C string. It reads byte by byte, never
// past the NUL: the runtime's vectorised search (C.GoString) reads whole
// words beyond it, which memory checkers rightly report as reads outside
// the caller's buffer.
func cString(name string, p unsafe.Pointer) (string, error) {
	n := 0
	if err := withFaults(name, p, 0, func() {
		for n <= maxStringLen && *(*byte)(unsafe.Add(p, n)) != 0 {
			n++
		}
	}); err != nil {
		return "", err
	}
	if n > maxStringLen {
		return "", errorf(statusArg, "%s is not NUL-terminated within %d bytes", name, maxStringLen)
	}
	return string(unsafe.Slice((*byte)(p), n)), nil
}

// goString reads a string argument that must not be NULL.
func goString(name string, p *C.misgrid_cchar) (string, error) {
	if p == nil {
		return "", errorf(statusNull, "%s is NULL", name)
	}
	return cString(name, unsafe.Pointer(p))
}

// optString reads an options argument: NULL means none.
func optString(p *C.misgrid_cchar) (string, error) {
	if p == nil {
		return "", nil
	}
	return cString("options", unsafe.Pointer(p))
}
