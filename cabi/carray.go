package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// checkIndexType checks an index_type and base argument pair of a call
// whose index arrays share one type.
func checkIndexType(itype C.int32_t, base C.int32_t) error {
	if itype == C.MISGRID_INT64_INT32 {
		return errorf(statusArg, "index_type = MISGRID_INT64_INT32 (int64 row pointers, int32 ids) applies to CSR arrays only "+
			"(misgrid_graph_from_csr, misgrid_graph_adjacency, misgrid_solver_setup, misgrid_mis_distributed); here pass MISGRID_INT32 or MISGRID_INT64")
	}
	if itype != C.MISGRID_INT32 && itype != C.MISGRID_INT64 {
		return errorf(statusArg, "index_type = %d, want MISGRID_INT32 (%d) or MISGRID_INT64 (%d)", int32(itype), C.MISGRID_INT32, C.MISGRID_INT64)
	}
	if base != 0 && base != 1 {
		return errorf(statusArg, "base = %d, want 0 (C) or 1 (Fortran)", int32(base))
	}
	return nil
}

// csrIndexTypes checks the index_type and base of a CSR call and returns
// the type of its row pointers and that of its column ids:
// MISGRID_INT64_INT32 is int64 row pointers with int32 column ids (the
// layout of mesh.CSR, and of codes whose nonzero count passes 2^31 while
// their row count does not).
func csrIndexTypes(itype C.int32_t, base C.int32_t) (rowT, colT C.int32_t, err error) {
	if itype == C.MISGRID_INT64_INT32 {
		return C.MISGRID_INT64, C.MISGRID_INT32, checkIndexType(C.MISGRID_INT64, base)
	}
	if itype != C.MISGRID_INT32 && itype != C.MISGRID_INT64 {
		return 0, 0, errorf(statusArg, "index_type = %d, want MISGRID_INT32 (%d), MISGRID_INT64 (%d) or MISGRID_INT64_INT32 (%d)",
			int32(itype), C.MISGRID_INT32, C.MISGRID_INT64, C.MISGRID_INT64_INT32)
	}
	return itype, itype, checkIndexType(itype, base)
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

// withFaults runs f, which reads the caller's array name at p, converting
// a memory fault into an error naming the array.
func withFaults(name string, p unsafe.Pointer, n int64, f func()) error {
	return faultGuard("reading", name, p, n, f)
}

// withWriteFaults is withFaults for f writing n entries of size bytes
// to the caller's memory at p. Every page of the range is probed first,
// with a write that changes nothing, so that a range that faults part of
// the way (a capacity larger than the array) is left untouched.
func withWriteFaults(name string, p unsafe.Pointer, n, size int64, f func()) error {
	return faultGuard("writing", name, p, n, func() {
		probeWritable(p, n*size)
		f()
	})
}

// probeWritable ORs zero into an aligned word of each page of the n
// bytes at p, and of its last byte: an atomic read-modify-write that
// faults where a write would and never loses a concurrent write (a plain
// *q = *q is removed by the compiler).
func probeWritable(p unsafe.Pointer, n int64) {
	eachPage(p, n, func(w *uint32) { atomic.OrUint32(w, 0) })
}

// eachPage calls f with the aligned word of each page of the n bytes at
// p that holds the page's first byte of the range, and with that of
// its last byte.
func eachPage(p unsafe.Pointer, n int64, f func(*uint32)) {
	const page = 4096
	for off := int64(0); off < n; {
		q := unsafe.Add(p, off)
		f((*uint32)(unsafe.Add(q, -int(uintptr(q)&3))))
		if off == n-1 {
			break
		}
		next := off + int64(page-uintptr(q)%page) // the next page's first byte
		off = min(next, n-1)
	}
}

func faultGuard(verb, name string, p unsafe.Pointer, n int64, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok && isFault(re) {
				hint := "is the pointer or the length wrong?"
				if verb == "writing" {
					hint = "is the pointer or the capacity wrong, or the memory read-only?"
				}
				err = errorf(statusArg, "%s %s (%d entries at %p) faulted: %s (%v)", verb, name, n, p, hint, re)
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

// readChunk is the number of entries read from a caller's array at a
// time. The arrays are read chunk by chunk, and the copy grows with what
// was read, so that a count larger than the array (a caller's mistake)
// ends in an error at the first fault or bad value instead of an
// allocation of the count's size.
const readChunk = 1 << 16

// readArray converts the n entries of type T at p with conv, in order,
// chunk by chunk; or, where conv depends on its entry alone (pure) and
// the array is long, in pieces side by side (inPieces), the error the
// one of the first bad entry as in order.
func readArray[T, U any](name string, p unsafe.Pointer, n int64, pure bool, conv func(i int64, v T) (U, error)) ([]U, error) {
	if err := needPtr(name, p, n); err != nil {
		return nil, err
	}
	size := int64(unsafe.Sizeof(*new(T)))
	if pure && parallelRead(n, size) {
		out := make([]U, n)
		err := inPieces(name, p, n, size, func(lo, hi int64) error {
			for j, v := range unsafe.Slice((*T)(unsafe.Add(p, lo*size)), hi-lo) {
				u, err := conv(lo+int64(j), v)
				if err != nil {
					return err
				}
				out[lo+int64(j)] = u
			}
			return nil
		})
		return out, err
	}
	out := make([]U, 0, min(n, readChunk))
	var cerr error
	for i0 := int64(0); i0 < n && cerr == nil; i0 += readChunk {
		src := unsafe.Slice((*T)(unsafe.Add(p, i0*size)), min(readChunk, n-i0))
		if err := withFaults(name, p, n, func() {
			for j, v := range src {
				u, err := conv(i0+int64(j), v)
				if err != nil {
					cerr = err
					return
				}
				out = append(out, u)
			}
		}); err != nil {
			return nil, err
		}
	}
	return out, cerr
}

// copyArray copies the n entries of type T at p and returns the index of
// the first entry bad rejects (-1 when none). It reads chunk by chunk,
// the copy growing with what was read, and stops at the first bad entry;
// a long array (a matrix's values at every update) goes in pieces side
// by side (inPieces).
func copyArray[T any](name string, p unsafe.Pointer, n int64, bad func(T) bool) ([]T, int64, error) {
	if err := needPtr(name, p, n); err != nil {
		return nil, -1, err
	}
	size := int64(unsafe.Sizeof(*new(T)))
	if parallelRead(n, size) {
		out := make([]T, n)
		err := inPieces(name, p, n, size, func(lo, hi int64) error {
			copy(out[lo:hi], unsafe.Slice((*T)(unsafe.Add(p, lo*size)), hi-lo))
			if bad != nil {
				if j := slices.IndexFunc(out[lo:hi], bad); j >= 0 {
					return badEntry(lo + int64(j))
				}
			}
			return nil
		})
		if b, ok := err.(badEntry); ok {
			return out, int64(b), nil
		}
		if err != nil {
			return nil, -1, err
		}
		return out, -1, nil
	}
	out := make([]T, 0, min(n, readChunk))
	for i0 := int64(0); i0 < n; i0 += readChunk {
		src := unsafe.Slice((*T)(unsafe.Add(p, i0*size)), min(readChunk, n-i0))
		if err := withFaults(name, p, n, func() { out = append(out, src...) }); err != nil {
			return nil, -1, err
		}
		if bad != nil {
			for j, x := range out[i0:] {
				if bad(x) {
					return out, i0 + int64(j), nil
				}
			}
		}
	}
	return out, -1, nil
}

// badEntry is the index of copyArray's first bad entry, as inPieces'
// error.
type badEntry int64

func (b badEntry) Error() string { return fmt.Sprintf("entry %d", int64(b)) }

// parallelRead says whether n entries of size bytes are read in pieces:
// from 16 MB, on more than one core.
func parallelRead(n, size int64) bool {
	return n >= (16<<20)/size && runtime.GOMAXPROCS(0) > 1
}

// inPieces runs f on the pieces [lo, hi) of the n entries of size bytes
// at p, 1M entries each, side by side: a core's memory copy carries a
// fraction of what the host's memory does. The array is first read a
// word a page, so that a count larger than the array faults before
// anything of its size is allocated; every goroutine turns its faults
// into errors as guard does the caller's. The error is f's of the first
// piece that returned one, as a reading in order would have met it.
func inPieces(name string, p unsafe.Pointer, n, size int64, f func(lo, hi int64) error) error {
	if err := withFaults(name, p, n, func() { probeReadable(p, n*size) }); err != nil {
		return err
	}
	const piece = 1 << 20
	errs := make([]error, (n+piece-1)/piece)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(errs)) {
		wg.Go(func() {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			for k := next.Add(1) - 1; k < int64(len(errs)); k = next.Add(1) - 1 {
				lo, hi := k*piece, min(n, (k+1)*piece)
				if err := withFaults(name, p, n, func() { errs[k] = f(lo, hi) }); err != nil {
					errs[k] = err
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// probeReadable reads a word of each page of the n bytes at p, and the
// one of its last byte, so that a range that does not exist faults
// before anything of its size is allocated.
func probeReadable(p unsafe.Pointer, n int64) {
	eachPage(p, n, func(w *uint32) { atomic.LoadUint32(w) })
}

// indexInt32 is MISGRID_INT32 for the package's tests, which cannot use
// cgo.
const indexInt32 C.int32_t = C.MISGRID_INT32

// readIndex converts the n index values at p, of the caller's type,
// with conv (base not yet removed), pure as readArray's.
func readIndex[U any](name string, p unsafe.Pointer, itype C.int32_t, n int64, pure bool, conv func(i int64, v int64) (U, error)) ([]U, error) {
	if itype == C.MISGRID_INT64 {
		return readArray(name, p, n, pure, conv)
	}
	return readArray(name, p, n, pure, func(i int64, v int32) (U, error) { return conv(i, int64(v)) })
}

// readIDs copies n ids in [base, base+limit) into 0-based int32, naming
// the first one out of range in the caller's terms.
func readIDs(name string, p unsafe.Pointer, itype, base C.int32_t, n, limit int64) ([]int32, error) {
	b := int64(base)
	return readIndex(name, p, itype, n, true, func(i, v int64) (int32, error) {
		x := v - b
		if x < 0 || x >= limit {
			hint := ""
			if x == -1 && b == 1 {
				hint = " (0 with base 1: are the ids 0-based?)"
			} else if x == limit && b == 0 {
				hint = " (one past the end with base 0: are the ids 1-based?)"
			}
			return 0, errorf(statusRange, "%s[%d] = %d is out of range [%d, %d]%s", name, i, v, b, limit-1+b, hint)
		}
		return int32(x), nil
	})
}

// readOffsets copies n+1 CSR row pointers, 0-based, checking that they
// start at base, never decrease and never pass nnz.
func readOffsets(name string, p unsafe.Pointer, itype, base C.int32_t, n, nnz int64) ([]int64, error) {
	b := int64(base)
	prev := int64(0)
	return readIndex(name, p, itype, n+1, false, func(i, v int64) (int64, error) {
		x := v - b
		switch {
		case i == 0 && x != 0:
			return 0, errorf(statusArg, "%s[0] = %d, want the base %d", name, v, b)
		case x < prev:
			return 0, errorf(statusArg, "%s[%d] = %d is less than %s[%d] = %d: row pointers must not decrease", name, i, v, name, i-1, prev+b)
		case x > nnz:
			return 0, errorf(statusArg, "%s[%d] - base = %d, but nnz = %d", name, i, x, nnz)
		}
		prev = x
		return x, nil
	})
}

func notFinite[T mesh.Float](x T) bool {
	f := float64(x)
	return math.IsNaN(f) || math.IsInf(f, 0)
}

// readValues copies n matrix values of type T.
func readValues[T mesh.Float](name string, p unsafe.Pointer, n int64) ([]T, error) {
	out, bad, err := copyArray(name, p, n, notFinite[T])
	if err == nil && bad >= 0 {
		return nil, errorf(statusArg, "%s[%d] = %v is not finite", name, bad, out[bad])
	}
	return out, err
}

// readInt32s copies n int32 values.
func readInt32s(name string, p *C.misgrid_cint32, n int64) ([]int32, error) {
	out, _, err := copyArray[int32](name, unsafe.Pointer(p), n, nil)
	return out, err
}

// readFloat64s copies n doubles, rejecting NaN (and, unless inf, ±Inf).
func readFloat64s(name string, p *C.misgrid_cdouble, n int64, inf bool) ([]float64, error) {
	if !inf {
		return readValues[float64](name, unsafe.Pointer(p), n)
	}
	out, bad, err := copyArray(name, unsafe.Pointer(p), n, math.IsNaN)
	if err == nil && bad >= 0 {
		return nil, errorf(statusArg, "%s[%d] = %v is not finite", name, bad, out[bad])
	}
	return out, err
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
	return withWriteFaults(name, p, n, indexSize(itype), func() {
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

// writeArray copies vals to the caller's array at p.
func writeArray[T any](name string, p unsafe.Pointer, vals []T) error {
	if len(vals) == 0 {
		return nil
	}
	n := int64(len(vals))
	return withWriteFaults(name, p, n, int64(unsafe.Sizeof(vals[0])), func() { copy(unsafe.Slice((*T)(p), n), vals) })
}

// writeInt32s writes values to an int32_t array.
func writeInt32s(name string, p *C.int32_t, vals []int32) error {
	return writeArray(name, unsafe.Pointer(p), vals)
}

// store writes v to the caller's output *p; a pointer that faults (0x8,
// read-only memory) is MISGRID_ERR_ARG naming the output. A NULL p is
// an optional output not asked for.
func store[T any](name string, p *T, v T) error {
	if p == nil {
		return nil
	}
	return withWriteFaults(name, unsafe.Pointer(p), 1, int64(unsafe.Sizeof(v)), func() { *p = v })
}

// publishHandle enters obj in the handle table and stores its handle in
// *out, which the caller has checked is not NULL. A fault storing it
// removes the handle again: a failed call leaves nothing behind.
func publishHandle[H ~uint64 | ~uintptr](name string, out *H, k kind, obj any) error {
	h := handles.put(k, obj)
	if err := store(name+" (output)", out, H(h)); err != nil {
		handles.remove(h, k, name)
		return err
	}
	return nil
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

// resolveC is resolve for a call's options as the caller passed them: a
// C string, or NULL for none.
func resolveC(c *context, o op, options *C.misgrid_cchar) (settings, error) {
	call, err := optString(options)
	if err != nil {
		return settings{}, err
	}
	return resolve(c, o, call)
}
