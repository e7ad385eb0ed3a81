// Declarations of the few CUDA driver API types and entry points the cuda
// package uses. They are written out here, from the driver's documented
// ABI, so that building needs no CUDA headers; the driver library itself
// is opened with dlopen on first use.

#ifndef MISGRID_CUDA_DRIVER_H
#define MISGRID_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

// Result codes this package creates itself (beyond the driver's).
#define MG_ERR_NOT_LOADED 100000

int mg_load(char *msg, int n);

CUresult mg_init(void);
CUresult mg_driver_version(int *v);
CUresult mg_device_count(int *n);
CUresult mg_device_get(CUdevice *d, int ordinal);
CUresult mg_device_name(char *name, int n, CUdevice d);
CUresult mg_device_attribute(int *v, int attr, CUdevice d);
CUresult mg_device_total_mem(size_t *bytes, CUdevice d);
CUresult mg_primary_retain(CUcontext *c, CUdevice d);
CUresult mg_primary_release(CUdevice d);
CUresult mg_primary_reset(CUdevice d);
const char *mg_error_name(CUresult r);
const char *mg_error_string(CUresult r);

// Every call below makes ctx current on the calling OS thread for its own
// duration and restores the previous context before it returns, so a call
// never depends on which thread a goroutine happens to run on.
CUresult mg_ctx_synchronize(CUcontext ctx);
CUresult mg_ctx_device(CUcontext ctx, CUdevice *d);
CUresult mg_mem_info(CUcontext ctx, size_t *free_b, size_t *total_b);
CUresult mg_mem_alloc(CUcontext ctx, CUdeviceptr *p, size_t n);
CUresult mg_mem_free(CUcontext ctx, CUdeviceptr p);
CUresult mg_mem_range(CUcontext ctx, CUdeviceptr p, CUdeviceptr *base, size_t *size);
CUresult mg_pointer_context(CUdeviceptr p, CUcontext *c);
CUresult mg_mem_alloc_host(CUcontext ctx, void **p, size_t n);
CUresult mg_mem_host_register(CUcontext ctx, void *p, size_t n);
CUresult mg_mem_host_unregister(CUcontext ctx, void *p);
CUresult mg_mem_free_host(CUcontext ctx, void *p);
CUresult mg_memcpy_htod(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n, CUstream s, int async);
CUresult mg_memcpy_dtoh(CUcontext ctx, void *dst, CUdeviceptr src, size_t n, CUstream s, int async);
CUresult mg_memcpy_dtod(CUcontext ctx, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, int async);
CUresult mg_memset_d8(CUcontext ctx, CUdeviceptr p, unsigned char v, size_t n, CUstream s);
CUresult mg_memset_d32(CUcontext ctx, CUdeviceptr p, unsigned int v, size_t n, CUstream s);
CUresult mg_stream_create(CUcontext ctx, CUstream *s, unsigned int flags);
CUresult mg_stream_destroy(CUcontext ctx, CUstream s);
CUresult mg_stream_synchronize(CUcontext ctx, CUstream s);
CUresult mg_event_create(CUcontext ctx, CUevent *e, unsigned int flags);
CUresult mg_event_destroy(CUcontext ctx, CUevent e);
CUresult mg_event_record(CUcontext ctx, CUevent e, CUstream s);
CUresult mg_event_synchronize(CUcontext ctx, CUevent e);
CUresult mg_event_query(CUcontext ctx, CUevent e);
CUresult mg_event_elapsed(CUcontext ctx, float *ms, CUevent a, CUevent b);
CUresult mg_module_load(CUcontext ctx, CUmodule *m, const void *image, char *log, int logn);
CUresult mg_module_unload(CUcontext ctx, CUmodule m);
CUresult mg_module_function(CUcontext ctx, CUfunction *f, CUmodule m, const char *name);
CUresult mg_func_attribute(CUcontext ctx, int *v, int attr, CUfunction f);
CUresult mg_occupancy(CUcontext ctx, int *blocks, CUfunction f, int block, size_t shmem);
CUresult mg_launch(CUcontext ctx, CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                   unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                   CUstream s, int nargs, uint64_t *vals, int flags);

// mg_launch's flags.
#define MG_LAUNCH_COOPERATIVE 1 // all blocks resident at once (cuLaunchCooperativeKernel)
#define MG_LAUNCH_OVERLAP 2     // programmatic stream serialization, where the driver has cuLaunchKernelEx

// cuLaunchKernelEx's configuration (CUDA 12.0 and later), as documented:
// an attribute is its 4-byte id padded to 8 bytes, then a 64-byte value.
typedef struct {
	int id;
	char pad[4];
	union {
		char pad[64];
		int programmaticStreamSerializationAllowed;
	} value;
} MGlaunchAttribute;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	MGlaunchAttribute *attrs;
	unsigned int numAttrs;
} MGlaunchConfig;

#define MG_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6

// Peer access between devices (multi-GPU partitioned MIS, cuda/peer.go).
CUresult mg_can_access_peer(int *v, CUdevice d, CUdevice peer);
CUresult mg_ctx_enable_peer(CUcontext ctx, CUcontext peer);
CUresult mg_memcpy_peer_async(CUcontext ctx, CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                              CUcontext sctx, size_t n, CUstream s);
CUresult mg_stream_wait_event(CUcontext ctx, CUstream s, CUevent e);

#endif
