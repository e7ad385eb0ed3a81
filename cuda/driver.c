//go:build cgo

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"

// Function-pointer types of the driver entry points, as documented.
static CUresult (*p_cuInit)(unsigned int);
static CUresult (*p_cuDriverGetVersion)(int *);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*p_cuDeviceTotalMem)(size_t *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRelease)(CUdevice);
static CUresult (*p_cuDevicePrimaryCtxReset)(CUdevice);
static CUresult (*p_cuCtxGetCurrent)(CUcontext *);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuCtxGetDevice)(CUdevice *);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
static CUresult (*p_cuPointerGetAttribute)(void *, int, CUdeviceptr);
static CUresult (*p_cuMemAllocHost)(void **, size_t);
static CUresult (*p_cuMemFreeHost)(void *);
static CUresult (*p_cuMemHostRegister)(void *, size_t, unsigned int);
static CUresult (*p_cuMemHostUnregister)(void *);
static CUresult (*p_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*p_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*p_cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
static CUresult (*p_cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
static CUresult (*p_cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
static CUresult (*p_cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
static CUresult (*p_cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
static CUresult (*p_cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
static CUresult (*p_cuStreamCreate)(CUstream *, unsigned int);
static CUresult (*p_cuStreamDestroy)(CUstream);
static CUresult (*p_cuStreamSynchronize)(CUstream);
static CUresult (*p_cuEventCreate)(CUevent *, unsigned int);
static CUresult (*p_cuEventDestroy)(CUevent);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventSynchronize)(CUevent);
static CUresult (*p_cuEventQuery)(CUevent);
static CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*p_cuModuleLoadDataEx)(CUmodule *, const void *, unsigned int, int *, void **);
static CUresult (*p_cuModuleUnload)(CUmodule);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuFuncGetAttribute)(int *, int, CUfunction);
static CUresult (*p_cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                    unsigned int, unsigned int, unsigned int, unsigned int,
                                    CUstream, void **, void **);
static CUresult (*p_cuLaunchCooperativeKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                               unsigned int, unsigned int, unsigned int,
                                               unsigned int, CUstream, void **);
// cuLaunchKernelEx is optional: drivers before 12.0 lack it, and an
// overlapping launch is then a plain one.
static CUresult (*p_cuLaunchKernelEx)(const MGlaunchConfig *, CUfunction, void **, void **);
static CUresult (*p_cuGetErrorName)(CUresult, const char **);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);

static CUresult (*p_cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
static CUresult (*p_cuCtxEnablePeerAccess)(CUcontext, unsigned int);
static CUresult (*p_cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
static CUresult (*p_cuStreamWaitEvent)(CUstream, CUevent, unsigned int);

static void *lib;

#define SYM(var, name)                                                   \
	do {                                                                 \
		*(void **)(&var) = dlsym(lib, name);                             \
		if (var == NULL) {                                               \
			snprintf(msg, n, "libcuda.so.1 lacks the symbol %s", name); \
			return 0;                                                    \
		}                                                                \
	} while (0)

// mg_load opens the driver and resolves every entry point. It returns 1 on
// success, else 0 with the reason in msg. The Go side calls it once.
int mg_load(char *msg, int n) {
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		snprintf(msg, n, "cannot open libcuda.so.1: %s", e ? e : "unknown error");
		return 0;
	}
	SYM(p_cuInit, "cuInit");
	SYM(p_cuDriverGetVersion, "cuDriverGetVersion");
	SYM(p_cuDeviceGetCount, "cuDeviceGetCount");
	SYM(p_cuDeviceGet, "cuDeviceGet");
	SYM(p_cuDeviceGetName, "cuDeviceGetName");
	SYM(p_cuDeviceGetAttribute, "cuDeviceGetAttribute");
	SYM(p_cuDeviceTotalMem, "cuDeviceTotalMem_v2");
	SYM(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
	SYM(p_cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2");
	SYM(p_cuCtxGetCurrent, "cuCtxGetCurrent");
	SYM(p_cuCtxSetCurrent, "cuCtxSetCurrent");
	SYM(p_cuCtxSynchronize, "cuCtxSynchronize");
	SYM(p_cuCtxGetDevice, "cuCtxGetDevice");
	SYM(p_cuMemGetInfo, "cuMemGetInfo_v2");
	SYM(p_cuMemAlloc, "cuMemAlloc_v2");
	SYM(p_cuMemFree, "cuMemFree_v2");
	SYM(p_cuMemGetAddressRange, "cuMemGetAddressRange_v2");
	SYM(p_cuPointerGetAttribute, "cuPointerGetAttribute");
	SYM(p_cuMemAllocHost, "cuMemAllocHost_v2");
	SYM(p_cuMemFreeHost, "cuMemFreeHost");
	SYM(p_cuMemHostRegister, "cuMemHostRegister_v2");
	SYM(p_cuMemHostUnregister, "cuMemHostUnregister");
	SYM(p_cuMemcpyHtoD, "cuMemcpyHtoD_v2");
	SYM(p_cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(p_cuMemcpyDtoD, "cuMemcpyDtoD_v2");
	SYM(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
	SYM(p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
	SYM(p_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
	SYM(p_cuMemsetD8Async, "cuMemsetD8Async");
	SYM(p_cuMemsetD32Async, "cuMemsetD32Async");
	SYM(p_cuStreamCreate, "cuStreamCreate");
	SYM(p_cuStreamDestroy, "cuStreamDestroy_v2");
	SYM(p_cuStreamSynchronize, "cuStreamSynchronize");
	SYM(p_cuEventCreate, "cuEventCreate");
	SYM(p_cuEventDestroy, "cuEventDestroy_v2");
	SYM(p_cuEventRecord, "cuEventRecord");
	SYM(p_cuEventSynchronize, "cuEventSynchronize");
	SYM(p_cuEventQuery, "cuEventQuery");
	SYM(p_cuEventElapsedTime, "cuEventElapsedTime");
	SYM(p_cuModuleLoadDataEx, "cuModuleLoadDataEx");
	SYM(p_cuModuleUnload, "cuModuleUnload");
	SYM(p_cuModuleGetFunction, "cuModuleGetFunction");
	SYM(p_cuFuncGetAttribute, "cuFuncGetAttribute");
	SYM(p_cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
	SYM(p_cuLaunchKernel, "cuLaunchKernel");
	SYM(p_cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel");
	*(void **)(&p_cuLaunchKernelEx) = dlsym(lib, "cuLaunchKernelEx");
	SYM(p_cuGetErrorName, "cuGetErrorName");
	SYM(p_cuGetErrorString, "cuGetErrorString");
	SYM(p_cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
	SYM(p_cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess");
	SYM(p_cuMemcpyPeerAsync, "cuMemcpyPeerAsync");
	SYM(p_cuStreamWaitEvent, "cuStreamWaitEvent");
	return 1;
}

CUresult mg_init(void) { return p_cuInit(0); }
CUresult mg_driver_version(int *v) { return p_cuDriverGetVersion(v); }
CUresult mg_device_count(int *n) { return p_cuDeviceGetCount(n); }
CUresult mg_device_get(CUdevice *d, int ordinal) { return p_cuDeviceGet(d, ordinal); }
CUresult mg_device_name(char *name, int n, CUdevice d) { return p_cuDeviceGetName(name, n, d); }
CUresult mg_device_attribute(int *v, int attr, CUdevice d) { return p_cuDeviceGetAttribute(v, attr, d); }
CUresult mg_device_total_mem(size_t *b, CUdevice d) { return p_cuDeviceTotalMem(b, d); }
CUresult mg_primary_retain(CUcontext *c, CUdevice d) { return p_cuDevicePrimaryCtxRetain(c, d); }
CUresult mg_primary_release(CUdevice d) { return p_cuDevicePrimaryCtxRelease(d); }
CUresult mg_primary_reset(CUdevice d) { return p_cuDevicePrimaryCtxReset(d); }
CUresult mg_pointer_context(CUdeviceptr p, CUcontext *c) { return p_cuPointerGetAttribute(c, 1, p); }

const char *mg_error_name(CUresult r) {
	const char *s = NULL;
	if (p_cuGetErrorName == NULL || p_cuGetErrorName(r, &s) != 0 || s == NULL) {
		return NULL;
	}
	return s;
}

const char *mg_error_string(CUresult r) {
	const char *s = NULL;
	if (p_cuGetErrorString == NULL || p_cuGetErrorString(r, &s) != 0 || s == NULL) {
		return NULL;
	}
	return s;
}

// BIND makes ctx current for the rest of the function; UNBIND restores the
// context that was current before. Both are cheap thread-local operations
// in the driver.
#define BIND                                      \
	CUcontext prev_ = NULL;                       \
	CUresult r_ = p_cuCtxGetCurrent(&prev_);      \
	if (r_ != 0) return r_;                       \
	if (prev_ != ctx) {                           \
		r_ = p_cuCtxSetCurrent(ctx);              \
		if (r_ != 0) return r_;                   \
	}
#define UNBIND                                    \
	if (prev_ != ctx) p_cuCtxSetCurrent(prev_);

#define BOUND(call)     \
	BIND                \
	CUresult r = call;  \
	UNBIND              \
	return r;

CUresult mg_ctx_synchronize(CUcontext ctx) { BOUND(p_cuCtxSynchronize()) }
CUresult mg_ctx_device(CUcontext ctx, CUdevice *d) { BOUND(p_cuCtxGetDevice(d)) }
CUresult mg_mem_info(CUcontext ctx, size_t *f, size_t *t) { BOUND(p_cuMemGetInfo(f, t)) }
CUresult mg_mem_alloc(CUcontext ctx, CUdeviceptr *p, size_t n) { BOUND(p_cuMemAlloc(p, n)) }
CUresult mg_mem_free(CUcontext ctx, CUdeviceptr p) { BOUND(p_cuMemFree(p)) }
CUresult mg_mem_range(CUcontext ctx, CUdeviceptr p, CUdeviceptr *base, size_t *size) {
	BOUND(p_cuMemGetAddressRange(base, size, p))
}
CUresult mg_mem_alloc_host(CUcontext ctx, void **p, size_t n) { BOUND(p_cuMemAllocHost(p, n)) }
CUresult mg_mem_free_host(CUcontext ctx, void *p) { BOUND(p_cuMemFreeHost(p)) }
CUresult mg_mem_host_register(CUcontext ctx, void *p, size_t n) { BOUND(p_cuMemHostRegister(p, n, 0)) }
CUresult mg_mem_host_unregister(CUcontext ctx, void *p) { BOUND(p_cuMemHostUnregister(p)) }

CUresult mg_memcpy_htod(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n, CUstream s, int async) {
	BOUND(async ? p_cuMemcpyHtoDAsync(dst, src, n, s) : p_cuMemcpyHtoD(dst, src, n))
}
CUresult mg_memcpy_dtoh(CUcontext ctx, void *dst, CUdeviceptr src, size_t n, CUstream s, int async) {
	BOUND(async ? p_cuMemcpyDtoHAsync(dst, src, n, s) : p_cuMemcpyDtoH(dst, src, n))
}
CUresult mg_memcpy_dtod(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, int async) {
	BOUND(async ? p_cuMemcpyDtoDAsync(dst, src, n, s) : p_cuMemcpyDtoD(dst, src, n))
}
CUresult mg_memset_d8(CUcontext ctx, CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
	BOUND(p_cuMemsetD8Async(p, v, n, s))
}
CUresult mg_memset_d32(CUcontext ctx, CUdeviceptr p, unsigned int v, size_t n, CUstream s) {
	BOUND(p_cuMemsetD32Async(p, v, n, s))
}
CUresult mg_stream_create(CUcontext ctx, CUstream *s, unsigned int flags) { BOUND(p_cuStreamCreate(s, flags)) }
CUresult mg_stream_destroy(CUcontext ctx, CUstream s) { BOUND(p_cuStreamDestroy(s)) }
CUresult mg_stream_synchronize(CUcontext ctx, CUstream s) { BOUND(p_cuStreamSynchronize(s)) }
CUresult mg_event_create(CUcontext ctx, CUevent *e, unsigned int flags) { BOUND(p_cuEventCreate(e, flags)) }
CUresult mg_event_destroy(CUcontext ctx, CUevent e) { BOUND(p_cuEventDestroy(e)) }
CUresult mg_event_record(CUcontext ctx, CUevent e, CUstream s) { BOUND(p_cuEventRecord(e, s)) }
CUresult mg_event_synchronize(CUcontext ctx, CUevent e) { BOUND(p_cuEventSynchronize(e)) }
CUresult mg_event_query(CUcontext ctx, CUevent e) { BOUND(p_cuEventQuery(e)) }
CUresult mg_event_elapsed(CUcontext ctx, float *ms, CUevent a, CUevent b) {
	BOUND(p_cuEventElapsedTime(ms, a, b))
}

CUresult mg_module_load(CUcontext ctx, CUmodule *m, const void *image, char *log, int logn) {
	// CU_JIT_ERROR_LOG_BUFFER (5) and CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES (6),
	// so that a PTX the driver cannot compile says why.
	int opts[2] = {5, 6};
	void *vals[2] = {log, (void *)(uintptr_t)logn};
	if (logn > 0) log[0] = 0;
	BOUND(p_cuModuleLoadDataEx(m, image, logn > 0 ? 2 : 0, opts, vals))
}
CUresult mg_module_unload(CUcontext ctx, CUmodule m) { BOUND(p_cuModuleUnload(m)) }
CUresult mg_module_function(CUcontext ctx, CUfunction *f, CUmodule m, const char *name) {
	BOUND(p_cuModuleGetFunction(f, m, name))
}
CUresult mg_func_attribute(CUcontext ctx, int *v, int attr, CUfunction f) {
	BOUND(p_cuFuncGetAttribute(v, attr, f))
}
CUresult mg_occupancy(CUcontext ctx, int *blocks, CUfunction f, int block, size_t shmem) {
	BOUND(p_cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, block, shmem))
}

#define MG_MAX_ARGS 32

CUresult mg_launch(CUcontext ctx, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                   CUstream s, int nargs, uint64_t *vals, int flags) {
	// Each argument sits in its own 8-byte slot; a kernel parameter of 4
	// bytes reads the slot's low half (x86-64 and arm64 are little-endian).
	uint64_t slots[MG_MAX_ARGS];
	void *params[MG_MAX_ARGS];
	if (nargs < 0 || nargs > MG_MAX_ARGS) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < nargs; i++) {
		slots[i] = vals[i];
		params[i] = &slots[i];
	}
	if (flags & MG_LAUNCH_COOPERATIVE) {
		BOUND(p_cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params))
	}
	if ((flags & MG_LAUNCH_OVERLAP) && p_cuLaunchKernelEx != NULL) {
		MGlaunchAttribute a;
		memset(&a, 0, sizeof a);
		a.id = MG_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
		a.value.programmaticStreamSerializationAllowed = 1;
		MGlaunchConfig c = {gx, gy, gz, bx, by, bz, shmem, s, &a, 1};
		BOUND(p_cuLaunchKernelEx(&c, f, params, NULL))
	}
	BOUND(p_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL))
}

CUresult mg_can_access_peer(int *v, CUdevice d, CUdevice peer) { return p_cuDeviceCanAccessPeer(v, d, peer); }
CUresult mg_ctx_enable_peer(CUcontext ctx, CUcontext peer) { BOUND(p_cuCtxEnablePeerAccess(peer, 0)) }
CUresult mg_memcpy_peer_async(CUcontext ctx, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                              CUcontext sctx, size_t n, CUstream s) {
	BOUND(p_cuMemcpyPeerAsync(dst, dctx, src, sctx, n, s))
}
CUresult mg_stream_wait_event(CUcontext ctx, CUstream s, CUevent e) { BOUND(p_cuStreamWaitEvent(s, e, 0)) }
