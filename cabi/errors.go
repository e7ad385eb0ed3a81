package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -I${SRCDIR} -DMISGRID_BUILDING_LIBRARY
#include <stdlib.h>
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/misgrid/misgrid/mis"
)

type status int

const (
	statusOK       status = C.MISGRID_OK
	statusNull     status = C.MISGRID_ERR_NULL
	statusArg      status = C.MISGRID_ERR_ARG
	statusRange    status = C.MISGRID_ERR_RANGE
	statusHandle   status = C.MISGRID_ERR_HANDLE
	statusNoMem    status = C.MISGRID_ERR_NOMEM
	statusNoGPU    status = C.MISGRID_ERR_NOGPU
	statusIO       status = C.MISGRID_ERR_IO
	statusOption   status = C.MISGRID_ERR_OPTION
	statusInternal status = C.MISGRID_ERR_INTERNAL
	// statusInconsistent: b has a part in the kernel of a singular A.
	statusInconsistent status = C.MISGRID_ERR_INCONSISTENT
)

var statusNames = map[status]string{
	statusOK:           "MISGRID_OK",
	statusNull:         "MISGRID_ERR_NULL",
	statusArg:          "MISGRID_ERR_ARG",
	statusRange:        "MISGRID_ERR_RANGE",
	statusHandle:       "MISGRID_ERR_HANDLE",
	statusNoMem:        "MISGRID_ERR_NOMEM",
	statusNoGPU:        "MISGRID_ERR_NOGPU",
	statusIO:           "MISGRID_ERR_IO",
	statusOption:       "MISGRID_ERR_OPTION",
	statusInternal:     "MISGRID_ERR_INTERNAL",
	statusInconsistent: "MISGRID_ERR_INCONSISTENT",
}

// apiError is an error with the status it maps to.
type apiError struct {
	st  status
	msg string
}

func (e *apiError) Error() string { return e.msg }

func errorf(st status, format string, args ...any) error {
	return &apiError{st: st, msg: fmt.Sprintf(format, args...)}
}

// statusOf maps an error from this package or the Go libraries to a status.
// Library errors that are not I/O or GPU errors come from bad input.
func statusOf(err error) status {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.st
	}
	if errors.Is(err, mis.ErrNoGPU) {
		return statusNoGPU
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return statusIO
	}
	return statusArg
}

// msgCap is the size of every message buffer. A message buffer is C
// memory so that misgrid_error_message can hand out a pointer to it
// without taking a lock: the buffer is overwritten, never reallocated and
// never freed (a destroyed context's buffer goes to a pool for the next
// context), so a pointer read by one thread while another destroys the
// context stays readable. Its last byte is never written, so a reader
// racing a writer still finds a NUL within the buffer.
const msgCap = 4096

type msgBuf struct {
	mu   sync.Mutex
	buf  *C.char // set once, never freed
	dead bool    // the context is destroyed; the buffer is in the pool
}

// msgPool holds the buffers of destroyed contexts; it never shrinks, so
// it holds as many as contexts were ever alive at once.
var msgPool struct {
	mu   sync.Mutex
	bufs []*C.char
}

// msgQuarantine is how many retired buffers wait before one is reused:
// a reader that fetched a pointer just before its context was destroyed
// keeps reading that context's last message, not a torn rewrite or the
// message of a new context.
const msgQuarantine = 64

func newMsgBuf() *msgBuf {
	msgPool.mu.Lock()
	defer msgPool.mu.Unlock()
	if len(msgPool.bufs) > msgQuarantine {
		b := msgPool.bufs[0] // the longest retired
		msgPool.bufs = msgPool.bufs[1:]
		*b = 0
		return &msgBuf{buf: b}
	}
	b := (*C.char)(C.calloc(msgCap, 1))
	if b == nil {
		return nil
	}
	return &msgBuf{buf: b}
}

func (m *msgBuf) set(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return
	}
	m.write(s)
}

func (m *msgBuf) write(s string) {
	if len(s) >= msgCap {
		cut := msgCap - 1
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = s[:cut]
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(m.buf)), msgCap)
	n := copy(dst, s)
	dst[n] = 0
}

func (m *msgBuf) get() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, _ := cString("message", unsafe.Pointer(m.buf))
	return s
}

// free retires the buffer of a destroyed context: a call still in flight
// with that context records its message nowhere, and a reader still
// holding the pointer reads the context's last message intact, since the
// buffer is neither rewritten nor reused until msgQuarantine others retire.
func (m *msgBuf) free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return
	}
	m.dead = true
	msgPool.mu.Lock()
	msgPool.bufs = append(msgPool.bufs, m.buf)
	msgPool.mu.Unlock()
}

// globalMsg holds the message of calls that had no valid context.
var globalMsg = newMsgBuf()

// guard runs the body of an exported function: it resolves the context,
// turns a Go panic into MISGRID_ERR_INTERNAL (a fault on a bad caller
// pointer into MISGRID_ERR_ARG), and records any error's message in the
// context, or in the global message when the context itself is bad.
// Every exported function that can fail goes through it, so no panic
// crosses into C.
func guard(ctxh C.misgrid_context, fn string, body func(c *context) error) (st C.misgrid_status) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var c *context
	defer func() {
		if r := recover(); r != nil {
			st = report(c, fn, panicError(r))
		}
	}()
	obj, err := handles.lookup(uintptr(ctxh), kindContext, "ctx")
	if err != nil {
		return report(nil, fn, err)
	}
	c = obj.(*context)
	if err := body(c); err != nil {
		return report(c, fn, err)
	}
	return C.MISGRID_OK
}

// guardGlobal is guard for the few functions that take no context.
func guardGlobal(fn string, body func() error) (st C.misgrid_status) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			st = report(nil, fn, panicError(r))
		}
	}()
	if err := body(); err != nil {
		return report(nil, fn, err)
	}
	return C.MISGRID_OK
}

func report(c *context, fn string, err error) C.misgrid_status {
	st := statusOf(err)
	msg := fn + ": " + err.Error()
	if c.indexBase() == 1 {
		msg = fortranPositions(msg)
	}
	if c != nil {
		c.msg.set(msg)
	} else {
		globalMsg.set(msg)
	}
	return C.misgrid_status(st)
}

// arrayPosition is how messages name an entry of a caller's array:
// name[i], with i 0-based.
var arrayPosition = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\[(\d+)\]`)

// fortranPositions rewrites the array positions of a message as a
// Fortran caller writes them: colind[4] becomes colind(5).
func fortranPositions(msg string) string {
	return arrayPosition.ReplaceAllStringFunc(msg, func(m string) string {
		sub := arrayPosition.FindStringSubmatch(m)
		i, err := strconv.ParseInt(sub[2], 10, 64)
		if err != nil {
			return m
		}
		return fmt.Sprintf("%s(%d)", sub[1], i+1)
	})
}

// panicError converts a recovered panic. An allocation size out of range
// is reported as MISGRID_ERR_NOMEM; anything else is a bug, reported with
// the place it happened.
func panicError(r any) error {
	if re, ok := r.(runtime.Error); ok {
		s := re.Error()
		if strings.Contains(s, "makeslice") || strings.Contains(s, "makemap") || strings.Contains(s, "growslice") {
			return errorf(statusNoMem, "a size is too large to allocate (%s)", s)
		}
	}
	return errorf(statusInternal, "internal error: %v at %s (a bug in misgrid: please report this message)", r, panicSite())
}

// panicSite returns file:line of the innermost frame outside the runtime,
// the frame that panicked.
func panicSite() string {
	pc := make([]uintptr, 32)
	n := runtime.Callers(4, pc)
	frames := runtime.CallersFrames(pc[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" && !strings.Contains(f.Function, "panicError") {
			// The package directory and file name are enough to find it.
			file := f.File
			if i := strings.LastIndex(file, "/"); i > 0 {
				if j := strings.LastIndex(file[:i], "/"); j >= 0 {
					file = file[j+1:]
				}
			}
			return fmt.Sprintf("%s:%d (%s)", file, f.Line, f.Function)
		}
		if !more {
			return "unknown place"
		}
	}
}
