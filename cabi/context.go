package main

/*
#include <stdlib.h>
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// context is what a misgrid_context handle names: option defaults and the
// message of the last failed call.
type context struct {
	mu   sync.Mutex
	opts []keyValue
	msg  *msgBuf
	base int // how messages number array entries and levels: 0 (C) or 1 (Fortran)
}

// indexBase is the base of the numbers in messages (c may be nil).
func (c *context) indexBase() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base
}

//export misgrid_context_set_index_base
func misgrid_context_set_index_base(ctx C.misgrid_context, base C.int32_t) C.misgrid_status {
	return guard(ctx, "misgrid_context_set_index_base", func(c *context) error {
		if base != 0 && base != 1 {
			return errorf(statusArg, "base = %d, want 0 (C) or 1 (Fortran)", int32(base))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.base = int(base)
		return nil
	})
}

func (c *context) options() []keyValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]keyValue(nil), c.opts...)
}

//export misgrid_context_create
func misgrid_context_create(out *C.misgrid_context) C.misgrid_status {
	return guardGlobal("misgrid_context_create", func() error {
		if out == nil {
			return errorf(statusNull, "ctx (output) is NULL")
		}
		m := newMsgBuf()
		if m == nil {
			return errorf(statusNoMem, "cannot allocate the message buffer")
		}
		if err := publishHandle("ctx", out, kindContext, &context{msg: m}); err != nil {
			m.free()
			return err
		}
		return nil
	})
}

//export misgrid_context_destroy
func misgrid_context_destroy(ctx C.misgrid_context) C.misgrid_status {
	return guardGlobal("misgrid_context_destroy", func() error { return destroyContext(uintptr(ctx)) })
}

func destroyContext(h uintptr) error {
	obj, err := handles.remove(h, kindContext, "ctx")
	if err != nil {
		return err
	}
	obj.(*context).msg.free()
	return nil
}

//export misgrid_context_set_option
func misgrid_context_set_option(ctx C.misgrid_context, options *C.misgrid_cchar) C.misgrid_status {
	return guard(ctx, "misgrid_context_set_option", func(c *context) error {
		if options == nil {
			return errorf(statusNull, "options is NULL")
		}
		str, err := cString("options", unsafe.Pointer(options))
		if err != nil {
			return err
		}
		kv, err := parseOptions(str, 0)
		if err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.opts = mergeOptions(c.opts, kv)
		return nil
	})
}

//export misgrid_context_get_option
func misgrid_context_get_option(ctx C.misgrid_context, key *C.misgrid_cchar, buf *C.char, size C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_context_get_option", func(c *context) error {
		if key == nil {
			return errorf(statusNull, "key is NULL")
		}
		k, err := cString("key", unsafe.Pointer(key))
		if err != nil {
			return err
		}
		d := lookupOpt(k)
		if d == nil {
			return unknownOpt(k)
		}
		v := d.def
		for _, kv := range c.options() {
			if kv.key == k {
				v = kv.value
			}
		}
		return copyCString("buf", buf, size, v, nil)
	})
}

//export misgrid_context_set_error
func misgrid_context_set_error(ctx C.misgrid_context, st C.misgrid_status, message *C.misgrid_cchar) C.misgrid_status {
	if got := guardGlobal("misgrid_context_set_error", func() error {
		msg := "(no message)"
		if message != nil {
			var err error
			if msg, err = cString("message", unsafe.Pointer(message)); err != nil {
				return err
			}
		}
		m := globalMsg
		if obj, err := handles.lookup(uintptr(ctx), kindContext, "ctx"); err == nil {
			m = obj.(*context).msg
		}
		m.set(msg)
		return nil
	}); got != C.MISGRID_OK {
		return got
	}
	return st
}

//export misgrid_error_message
func misgrid_error_message(ctx C.misgrid_context) (msg *C.misgrid_cchar) {
	// No status to return: a panic (there should be none) yields the
	// global message rather than crossing into C. A handle that is not a
	// live context also yields the global message, which is then the
	// message of the call that failed because of that handle: reading it
	// must not overwrite it. The buffers are never freed (msgBuf), so the
	// pointer stays readable even when another thread destroys ctx.
	defer func() {
		if recover() != nil {
			msg = (*C.misgrid_cchar)(globalMsg.buf)
		}
	}()
	return (*C.misgrid_cchar)(messageFor(uintptr(ctx)))
}

// messageFor is the buffer misgrid_error_message hands out for handle h.
func messageFor(h uintptr) *C.char {
	obj, err := handles.lookup(h, kindContext, "ctx")
	if err != nil {
		return globalMsg.buf
	}
	return obj.(*context).msg.buf
}

//export misgrid_error_message_copy
func misgrid_error_message_copy(ctx C.misgrid_context, buf *C.char, size C.int64_t, needed *C.int64_t) C.misgrid_status {
	return guardGlobal("misgrid_error_message_copy", func() error {
		m := globalMsg
		if ctx != 0 {
			obj, err := handles.lookup(uintptr(ctx), kindContext, "ctx")
			if err != nil {
				return err
			}
			m = obj.(*context).msg
		}
		return copyCString("buf", buf, size, m.get(), needed)
	})
}

// copyCString copies s into the caller's buffer of size bytes, truncated
// and always NUL-terminated, and stores the full length plus one in
// *needed when needed is not NULL.
func copyCString(name string, buf *C.char, size C.int64_t, s string, needed *C.int64_t) error {
	if size < 0 {
		return errorf(statusRange, "size of %s is %d, negative", name, int64(size))
	}
	if buf == nil && size > 0 {
		return errorf(statusNull, "%s is NULL but its size is %d", name, int64(size))
	}
	if err := store("needed", needed, C.int64_t(len(s)+1)); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	return withWriteFaults(name, unsafe.Pointer(buf), int64(size), 1, func() {
		dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int64(size))
		n := copy(dst[:len(dst)-1], s)
		dst[n] = 0
	})
}

const (
	versionMajor = C.MISGRID_VERSION_MAJOR
	versionMinor = C.MISGRID_VERSION_MINOR
	versionPatch = C.MISGRID_VERSION_PATCH
)

// Static C strings, allocated once and never freed: callers may keep them.
var (
	versionString = (*C.misgrid_cchar)(C.CString(fmt.Sprintf("%d.%d.%d", versionMajor, versionMinor, versionPatch)))
	statusStrings = func() map[status]*C.misgrid_cchar {
		m := make(map[status]*C.misgrid_cchar, len(statusNames)+1)
		for st, name := range statusNames {
			m[st] = (*C.misgrid_cchar)(C.CString(name))
		}
		m[-1] = (*C.misgrid_cchar)(C.CString("MISGRID_STATUS_UNKNOWN"))
		return m
	}()
)

//export misgrid_version
func misgrid_version() *C.misgrid_cchar { return versionString }

//export misgrid_version_numbers
func misgrid_version_numbers(major, minor, patch *C.int32_t) C.misgrid_status {
	return guardGlobal("misgrid_version_numbers", func() error {
		for _, p := range []struct {
			name string
			dst  *C.int32_t
			v    C.int32_t
		}{{"major", major, versionMajor}, {"minor", minor, versionMinor}, {"patch", patch, versionPatch}} {
			if err := store(p.name, p.dst, p.v); err != nil {
				return err
			}
		}
		return nil
	})
}

//export misgrid_status_string
func misgrid_status_string(st C.misgrid_status) *C.misgrid_cchar {
	if s, ok := statusStrings[status(st)]; ok {
		return s
	}
	return statusStrings[-1]
}

//export misgrid_option_help
func misgrid_option_help(buf *C.char, size C.int64_t, needed *C.int64_t) C.misgrid_status {
	return guardGlobal("misgrid_option_help", func() error {
		return copyCString("buf", buf, size, strings.TrimSpace(optionHelp())+"\n", needed)
	})
}

//export misgrid_handle_count
func misgrid_handle_count(count *C.int64_t) C.misgrid_status {
	return guardGlobal("misgrid_handle_count", func() error {
		if count == nil {
			return errorf(statusNull, "count is NULL")
		}
		return store("count", count, C.int64_t(handles.count()))
	})
}
