//go:build cgo

package cuda

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "driver.h"

static CUcontext mg_ctx_from(uintptr_t u) { return (CUcontext)u; }
static CUstream mg_stream_from(uintptr_t u) { return (CUstream)u; }
*/
import "C"

import (
	"unsafe"
)

// Opaque driver handles. In builds without cgo they are plain integers
// that are never non-zero.
type (
	ctxHandle    = C.CUcontext
	modHandle    = C.CUmodule
	fnHandle     = C.CUfunction
	streamHandle = C.CUstream
	eventHandle  = C.CUevent
)

const haveCgo = true

func drvLoad() error {
	var msg [512]C.char
	if C.mg_load(&msg[0], C.int(len(msg))) == 0 {
		return errorString(C.GoString(&msg[0]))
	}
	return nil
}

func drvInit() Result { return Result(C.mg_init()) }

func drvDriverVersion() (int, Result) {
	var v C.int
	r := C.mg_driver_version(&v)
	return int(v), Result(r)
}

func drvDeviceCount() (int, Result) {
	var n C.int
	r := C.mg_device_count(&n)
	return int(n), Result(r)
}

func drvDeviceGet(ordinal int) (int32, Result) {
	var d C.CUdevice
	r := C.mg_device_get(&d, C.int(ordinal))
	return int32(d), Result(r)
}

func drvDeviceName(d int32) (string, Result) {
	var buf [256]C.char
	r := C.mg_device_name(&buf[0], C.int(len(buf)), C.CUdevice(d))
	if r != 0 {
		return "", Result(r)
	}
	return C.GoString(&buf[0]), 0
}

func drvDeviceAttribute(attr DeviceAttribute, d int32) (int, Result) {
	var v C.int
	r := C.mg_device_attribute(&v, C.int(attr), C.CUdevice(d))
	return int(v), Result(r)
}

func drvDeviceTotalMem(d int32) (int64, Result) {
	var b C.size_t
	r := C.mg_device_total_mem(&b, C.CUdevice(d))
	return int64(b), Result(r)
}

func drvPrimaryRetain(d int32) (ctxHandle, Result) {
	var c C.CUcontext
	r := C.mg_primary_retain(&c, C.CUdevice(d))
	return c, Result(r)
}

func drvPrimaryRelease(d int32) Result { return Result(C.mg_primary_release(C.CUdevice(d))) }
func drvPrimaryReset(d int32) Result   { return Result(C.mg_primary_reset(C.CUdevice(d))) }

func drvErrorName(r Result) string {
	if s := C.mg_error_name(C.CUresult(r)); s != nil {
		return C.GoString(s)
	}
	return ""
}

func drvErrorString(r Result) string {
	if s := C.mg_error_string(C.CUresult(r)); s != nil {
		return C.GoString(s)
	}
	return ""
}

func ctxToRaw(c ctxHandle) uintptr   { return uintptr(unsafe.Pointer(c)) }
func ctxFromRaw(u uintptr) ctxHandle { return C.mg_ctx_from(C.uintptr_t(u)) }
func streamToRaw(s streamHandle) uintptr {
	return uintptr(unsafe.Pointer(s))
}
func streamFromRaw(u uintptr) streamHandle { return C.mg_stream_from(C.uintptr_t(u)) }

func drvCtxSynchronize(c ctxHandle) Result { return Result(C.mg_ctx_synchronize(c)) }

func drvCtxDevice(c ctxHandle) (int32, Result) {
	var d C.CUdevice
	r := C.mg_ctx_device(c, &d)
	return int32(d), Result(r)
}

func drvMemInfo(c ctxHandle) (free, total int64, r Result) {
	var f, t C.size_t
	rr := C.mg_mem_info(c, &f, &t)
	return int64(f), int64(t), Result(rr)
}

func drvMemAlloc(c ctxHandle, n int64) (uint64, Result) {
	var p C.CUdeviceptr
	r := C.mg_mem_alloc(c, &p, C.size_t(n))
	return uint64(p), Result(r)
}

func drvMemFree(c ctxHandle, p uint64) Result {
	return Result(C.mg_mem_free(c, C.CUdeviceptr(p)))
}

func drvMemRange(c ctxHandle, p uint64) (base uint64, size int64, r Result) {
	var b C.CUdeviceptr
	var s C.size_t
	rr := C.mg_mem_range(c, C.CUdeviceptr(p), &b, &s)
	return uint64(b), int64(s), Result(rr)
}

func drvPointerContext(p uint64) (ctxHandle, Result) {
	var c C.CUcontext
	r := C.mg_pointer_context(C.CUdeviceptr(p), &c)
	return c, Result(r)
}

func drvMemAllocHost(c ctxHandle, n int64) (unsafe.Pointer, Result) {
	var p unsafe.Pointer
	r := C.mg_mem_alloc_host(c, &p, C.size_t(n))
	return p, Result(r)
}

func drvMemFreeHost(c ctxHandle, p unsafe.Pointer) Result {
	return Result(C.mg_mem_free_host(c, p))
}

func drvMemHostRegister(c ctxHandle, p unsafe.Pointer, n int64) Result {
	return Result(C.mg_mem_host_register(c, p, C.size_t(n)))
}

func drvMemHostUnregister(c ctxHandle, p unsafe.Pointer) Result {
	return Result(C.mg_mem_host_unregister(c, p))
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func drvMemcpyHtoD(c ctxHandle, dst uint64, src unsafe.Pointer, n int64, s streamHandle, async bool) Result {
	return Result(C.mg_memcpy_htod(c, C.CUdeviceptr(dst), src, C.size_t(n), s, boolInt(async)))
}

func drvMemcpyDtoH(c ctxHandle, dst unsafe.Pointer, src uint64, n int64, s streamHandle, async bool) Result {
	return Result(C.mg_memcpy_dtoh(c, dst, C.CUdeviceptr(src), C.size_t(n), s, boolInt(async)))
}

func drvMemcpyDtoD(c ctxHandle, dst, src uint64, n int64, s streamHandle, async bool) Result {
	return Result(C.mg_memcpy_dtod(c, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s, boolInt(async)))
}

func drvMemsetD8(c ctxHandle, p uint64, v uint8, n int64, s streamHandle) Result {
	return Result(C.mg_memset_d8(c, C.CUdeviceptr(p), C.uchar(v), C.size_t(n), s))
}

func drvMemsetD32(c ctxHandle, p uint64, v uint32, n int64, s streamHandle) Result {
	return Result(C.mg_memset_d32(c, C.CUdeviceptr(p), C.uint(v), C.size_t(n), s))
}

func drvStreamCreate(c ctxHandle, flags uint32) (streamHandle, Result) {
	var s C.CUstream
	r := C.mg_stream_create(c, &s, C.uint(flags))
	return s, Result(r)
}

func drvStreamDestroy(c ctxHandle, s streamHandle) Result {
	return Result(C.mg_stream_destroy(c, s))
}

func drvStreamSynchronize(c ctxHandle, s streamHandle) Result {
	return Result(C.mg_stream_synchronize(c, s))
}

func drvEventCreate(c ctxHandle, flags uint32) (eventHandle, Result) {
	var e C.CUevent
	r := C.mg_event_create(c, &e, C.uint(flags))
	return e, Result(r)
}

func drvEventDestroy(c ctxHandle, e eventHandle) Result { return Result(C.mg_event_destroy(c, e)) }
func drvEventRecord(c ctxHandle, e eventHandle, s streamHandle) Result {
	return Result(C.mg_event_record(c, e, s))
}
func drvEventSynchronize(c ctxHandle, e eventHandle) Result {
	return Result(C.mg_event_synchronize(c, e))
}
func drvEventQuery(c ctxHandle, e eventHandle) Result { return Result(C.mg_event_query(c, e)) }

func drvEventElapsed(c ctxHandle, a, b eventHandle) (float32, Result) {
	var ms C.float
	r := C.mg_event_elapsed(c, &ms, a, b)
	return float32(ms), Result(r)
}

func drvModuleLoad(c ctxHandle, image []byte) (modHandle, string, Result) {
	// The driver gets its own copy of the image in C memory: it may read
	// it after this call's Go frame is gone (lazy loading).
	img := C.CBytes(image)
	defer C.free(img)
	var log [4096]C.char
	var m C.CUmodule
	r := C.mg_module_load(c, &m, img, &log[0], C.int(len(log)))
	return m, C.GoString(&log[0]), Result(r)
}

func drvModuleUnload(c ctxHandle, m modHandle) Result { return Result(C.mg_module_unload(c, m)) }

func drvModuleFunction(c ctxHandle, m modHandle, name string) (fnHandle, Result) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	r := C.mg_module_function(c, &f, m, cs)
	return f, Result(r)
}

func drvFuncAttribute(c ctxHandle, attr FuncAttribute, f fnHandle) (int, Result) {
	var v C.int
	r := C.mg_func_attribute(c, &v, C.int(attr), f)
	return int(v), Result(r)
}

func drvOccupancy(c ctxHandle, f fnHandle, block, shmem int) (int, Result) {
	var b C.int
	r := C.mg_occupancy(c, &b, f, C.int(block), C.size_t(shmem))
	return int(b), Result(r)
}

func drvLaunch(c ctxHandle, f fnHandle, grid, block Dim3, shmem int, s streamHandle, args []uint64, coop, overlap bool) Result {
	var p *C.uint64_t
	if len(args) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	return Result(C.mg_launch(c, f, C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
		C.uint(block.X), C.uint(block.Y), C.uint(block.Z), C.uint(shmem), s,
		C.int(len(args)), p, boolInt(coop)*C.MG_LAUNCH_COOPERATIVE|boolInt(overlap)*C.MG_LAUNCH_OVERLAP))
}

func drvCanAccessPeer(d, peer int32) (bool, Result) {
	var v C.int
	r := C.mg_can_access_peer(&v, C.CUdevice(d), C.CUdevice(peer))
	return v != 0, Result(r)
}

func drvCtxEnablePeer(c, peer ctxHandle) Result { return Result(C.mg_ctx_enable_peer(c, peer)) }

func drvMemcpyPeerAsync(c ctxHandle, dst uint64, dctx ctxHandle, src uint64, sctx ctxHandle, n int64, s streamHandle) Result {
	return Result(C.mg_memcpy_peer_async(c, C.CUdeviceptr(dst), dctx, C.CUdeviceptr(src), sctx, C.size_t(n), s))
}

func drvStreamWaitEvent(c ctxHandle, s streamHandle, e eventHandle) Result {
	return Result(C.mg_stream_wait_event(c, s, e))
}
