package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Buffer is a range of device memory in a context: either allocated by
// Alloc (and freed by Free) or wrapped from a pointer the caller owns.
type Buffer struct {
	ctx     *Context
	ptr     uint64
	size    int64
	alloc   int64 // the size allocated (Alloc rounds it where the context keeps freed memory)
	owned   bool
	cleanup runtime.Cleanup

	mu    sync.Mutex
	freed bool
}

// Alloc allocates bytes of device memory. When the device lacks the
// memory, the error (matching ErrorOutOfMemory) says how much was asked
// for and how much was free.
func (c *Context) Alloc(bytes int64) (*Buffer, error) {
	h, err := c.handle("cuMemAlloc")
	if err != nil {
		return nil, err
	}
	if bytes < 0 {
		return nil, &Error{Op: "cuMemAlloc", Code: ErrorInvalidValue, Detail: fmt.Sprintf("negative size %d", bytes)}
	}
	if bytes == 0 {
		return &Buffer{ctx: c, owned: true}, nil
	}
	size := c.allocSize(bytes)
	p := c.take(size)
	r := Success
	if p == 0 {
		p, r = drvMemAlloc(h, size)
		if r == ErrorOutOfMemory && c.keeps() != nil {
			// What KeepFreed holds goes back before the device is full.
			_ = c.ReleaseFreed()
			p, r = drvMemAlloc(h, size)
		}
	}
	if r != Success {
		detail := fmt.Sprintf("allocating %s (%d bytes)", FormatBytes(bytes), bytes)
		if free, total, r2 := drvMemInfo(h); r2 == Success {
			detail += fmt.Sprintf(" with %s free of %s on device %d", FormatBytes(free), FormatBytes(total), c.dev.ordinal)
		}
		return nil, &Error{Op: "cuMemAlloc", Code: r, Detail: detail}
	}
	b := &Buffer{ctx: c, ptr: p, size: bytes, alloc: size, owned: true}
	b.cleanup = runtime.AddCleanup(b, func(a allocRef) { a.free() }, allocRef{c, p})
	return b, nil
}

// allocRef is what the safety-net cleanup needs to free an allocation
// whose Buffer was dropped without Free.
type allocRef struct {
	ctx *Context
	ptr uint64
}

func (a allocRef) free() {
	if h, err := a.ctx.handle("cuMemFree"); err == nil {
		drvMemFree(h, a.ptr)
	}
}

// WrapDevicePtr adopts device memory that the caller allocated elsewhere
// (the CUDA runtime, gorgonia.org/cu, a solver library): ptr is the
// device address and bytes the length to use. The memory must belong to
// this context and span [ptr, ptr+bytes). Free on the result does not
// release it.
func (c *Context) WrapDevicePtr(ptr uintptr, bytes int64) (*Buffer, error) {
	h, err := c.handle("WrapDevicePtr")
	if err != nil {
		return nil, err
	}
	if bytes < 0 {
		return nil, &Error{Op: "WrapDevicePtr", Code: ErrorInvalidValue, Detail: fmt.Sprintf("negative length %d", bytes)}
	}
	if bytes == 0 {
		return &Buffer{ctx: c, ptr: uint64(ptr)}, nil
	}
	if ptr == 0 {
		return nil, &Error{Op: "WrapDevicePtr", Code: ErrorInvalidValue, Detail: "nil device pointer"}
	}
	owner, r := drvPointerContext(uint64(ptr))
	if r != Success {
		return nil, checkf("cuPointerGetAttribute", r, "%#x is not a device pointer the driver knows", ptr)
	}
	if owner != h {
		return nil, &Error{Op: "WrapDevicePtr", Code: ErrorInvalidContext,
			Detail: fmt.Sprintf("pointer %#x belongs to context %#x, not to this context %#x", ptr, ctxToRaw(owner), ctxToRaw(h))}
	}
	base, size, r := drvMemRange(h, uint64(ptr))
	if r != Success {
		return nil, checkf("cuMemGetAddressRange", r, "pointer %#x", ptr)
	}
	if end := uint64(ptr) + uint64(bytes); end > base+uint64(size) || end < uint64(ptr) {
		return nil, &Error{Op: "WrapDevicePtr", Code: ErrorInvalidValue,
			Detail: fmt.Sprintf("%d bytes at %#x run past the end of its allocation [%#x, %#x)", bytes, ptr, base, base+uint64(size))}
	}
	return &Buffer{ctx: c, ptr: uint64(ptr), size: bytes}, nil
}

// Ptr returns the device address.
func (b *Buffer) Ptr() uintptr { return uintptr(b.ptr) }

// Size returns the length in bytes.
func (b *Buffer) Size() int64 { return b.size }

// Context returns the buffer's context.
func (b *Buffer) Context() *Context { return b.ctx }

// View returns a buffer for bytes [off, off+n) of b that shares its
// memory; freeing the view frees nothing.
func (b *Buffer) View(off, n int64) (*Buffer, error) {
	if off < 0 || n < 0 || off+n > b.size {
		return nil, &Error{Op: "View", Code: ErrorInvalidValue,
			Detail: fmt.Sprintf("range [%d, %d) outside a buffer of %d bytes", off, off+n, b.size)}
	}
	return &Buffer{ctx: b.ctx, ptr: b.ptr + uint64(off), size: n}, nil
}

// Free releases memory from Alloc; for wrapped memory and views it only
// marks the buffer unusable. Free is idempotent, and a no-op once the
// context is closed (the context's memory went with it).
func (b *Buffer) Free() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return nil
	}
	b.freed = true
	if !b.owned || b.ptr == 0 {
		return nil
	}
	b.cleanup.Stop()
	if b.ctx.Closed() || b.ctx.keep(b.ctx.h, b.ptr, b.alloc) {
		return nil
	}
	return checkf("cuMemFree", drvMemFree(b.ctx.h, b.ptr), "%s at %#x", FormatBytes(b.size), b.ptr)
}

// live returns the context handle of a usable buffer.
func (b *Buffer) live(op string) (ctxHandle, error) {
	b.mu.Lock()
	freed := b.freed
	b.mu.Unlock()
	if freed {
		var zero ctxHandle
		return zero, &Error{Op: op, Code: resultClosed, Detail: "buffer was freed"}
	}
	return b.ctx.handle(op)
}

func (b *Buffer) span(op string, off, n int64) error {
	if off < 0 || n < 0 || off+n > b.size {
		return &Error{Op: op, Code: ErrorInvalidValue,
			Detail: fmt.Sprintf("range [%d, %d) outside a device buffer of %d bytes", off, off+n, b.size)}
	}
	return nil
}

// Word is the set of element types that copy between host and device as
// raw bytes.
type Word interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

func byteLen[T Word](s []T) int64 {
	var z T
	return int64(len(s)) * int64(unsafe.Sizeof(z))
}

// CopyToDevice copies src into dst starting at byte offset off, and waits
// for the copy to finish.
func CopyToDevice[T Word](dst *Buffer, off int64, src []T) error {
	h, err := dst.live("cuMemcpyHtoD")
	if err != nil {
		return err
	}
	n := byteLen(src)
	if err := dst.span("cuMemcpyHtoD", off, n); err != nil || n == 0 {
		return err
	}
	var zero streamHandle
	r := drvMemcpyHtoD(h, dst.ptr+uint64(off), unsafe.Pointer(&src[0]), n, zero, false)
	if r == Success {
		// From pageable memory cuMemcpyHtoD returns once the bytes are in
		// the driver's staging buffer, and the transfer from there runs
		// on the legacy stream, which the package's streams do not wait
		// for: wait for it here, so that a kernel queued next reads them.
		r = drvStreamSynchronize(h, zero)
	}
	return checkf("cuMemcpyHtoD", r, "%s to %#x", FormatBytes(n), dst.ptr+uint64(off))
}

// CopyToHost copies len(dst) elements from src at byte offset off, and
// waits for the copy to finish.
func CopyToHost[T Word](dst []T, src *Buffer, off int64) error {
	h, err := src.live("cuMemcpyDtoH")
	if err != nil {
		return err
	}
	n := byteLen(dst)
	if err := src.span("cuMemcpyDtoH", off, n); err != nil || n == 0 {
		return err
	}
	var zero streamHandle
	r := drvMemcpyDtoH(h, unsafe.Pointer(&dst[0]), src.ptr+uint64(off), n, zero, false)
	return checkf("cuMemcpyDtoH", r, "%s from %#x", FormatBytes(n), src.ptr+uint64(off))
}

// CopyDeviceAsync copies n bytes between device buffers on stream s.
func CopyDeviceAsync(dst *Buffer, dstOff int64, src *Buffer, srcOff, n int64, s *Stream) error {
	h, err := dst.live("cuMemcpyDtoDAsync")
	if err != nil {
		return err
	}
	if _, err := src.live("cuMemcpyDtoDAsync"); err != nil {
		return err
	}
	if err := dst.span("cuMemcpyDtoDAsync", dstOff, n); err != nil {
		return err
	}
	if err := src.span("cuMemcpyDtoDAsync", srcOff, n); err != nil || n == 0 {
		return err
	}
	r := drvMemcpyDtoD(h, dst.ptr+uint64(dstOff), src.ptr+uint64(srcOff), n, s.handle(), true)
	return checkf("cuMemcpyDtoDAsync", r, "%s", FormatBytes(n))
}

// MemsetAsync8 sets every byte of b to v, on stream s.
func (b *Buffer) MemsetAsync8(v uint8, s *Stream) error {
	h, err := b.live("cuMemsetD8Async")
	if err != nil || b.size == 0 {
		return err
	}
	return checkf("cuMemsetD8Async", drvMemsetD8(h, b.ptr, v, b.size, s.handle()), "%s at %#x", FormatBytes(b.size), b.ptr)
}

// MemsetAsync32 sets every 4-byte word of b to v, on stream s. The size
// must be a multiple of 4.
func (b *Buffer) MemsetAsync32(v uint32, s *Stream) error {
	h, err := b.live("cuMemsetD32Async")
	if err != nil || b.size == 0 {
		return err
	}
	if b.size%4 != 0 || b.ptr%4 != 0 {
		return &Error{Op: "cuMemsetD32Async", Code: ErrorInvalidValue, Detail: fmt.Sprintf("%d bytes at %#x is not whole aligned words", b.size, b.ptr)}
	}
	return checkf("cuMemsetD32Async", drvMemsetD32(h, b.ptr, v, b.size/4, s.handle()), "%s at %#x", FormatBytes(b.size), b.ptr)
}

// HostBuffer is page-locked host memory, needed for asynchronous copies:
// the device reads or writes it after the call that queued the copy has
// returned, which Go memory does not allow.
type HostBuffer struct {
	ctx     *Context
	p       unsafe.Pointer
	size    int64
	alloc   int64 // the size allocated (rounded where the context keeps freed memory)
	cleanup runtime.Cleanup

	mu    sync.Mutex
	freed bool
	// reg: the caller's memory, page-locked in place (RegisterHost); it
	// keeps the memory reachable and pinned for the runtime until Free.
	reg *runtime.Pinner
}

// AllocHost allocates bytes of page-locked host memory.
func (c *Context) AllocHost(bytes int64) (*HostBuffer, error) {
	h, err := c.handle("cuMemAllocHost")
	if err != nil {
		return nil, err
	}
	if bytes <= 0 {
		return nil, &Error{Op: "cuMemAllocHost", Code: ErrorInvalidValue, Detail: fmt.Sprintf("size %d", bytes)}
	}
	size := c.hostSize(bytes)
	p, r := c.takeHost(size), Success
	if p == nil {
		p, r = drvMemAllocHost(h, size)
	}
	if r != Success {
		return nil, checkf("cuMemAllocHost", r, "allocating %s of pinned host memory", FormatBytes(bytes))
	}
	hb := &HostBuffer{ctx: c, p: p, size: bytes, alloc: size}
	hb.cleanup = runtime.AddCleanup(hb, func(a hostRef) { a.free() }, hostRef{c, p})
	return hb, nil
}

// RegisterHost page-locks the memory of src in place
// (cuMemHostRegister), so that asynchronous copies read it at the bus's
// speed with nothing staged; the HostBuffer it returns views src (Bytes
// aliases it) and keeps it reachable and pinned for the runtime until
// Free, which unregisters it. Registering costs more than staging the
// same bytes once (on an H200 host, 453 MB took 15.7 ms to register and
// 6.6 ms to unregister against 11 ms to stage: BenchmarkGPUHostRegister,
// BenchmarkGPUStage), so it pays where the same memory goes up again and
// again: a matrix's values re-assembled in place for every Newton step,
// as AmgX's AMGX_pin_memory does. src must not be changed while a copy
// from it is queued.
func RegisterHost[T Word](c *Context, src []T) (*HostBuffer, error) {
	h, err := c.handle("cuMemHostRegister")
	if err != nil {
		return nil, err
	}
	n := byteLen(src)
	if n == 0 {
		return nil, &Error{Op: "cuMemHostRegister", Code: ErrorInvalidValue, Detail: "an empty slice"}
	}
	pin := new(runtime.Pinner)
	p := unsafe.Pointer(unsafe.SliceData(src))
	pin.Pin(p)
	if res := drvMemHostRegister(h, p, n); res != Success {
		pin.Unpin()
		return nil, checkf("cuMemHostRegister", res, "page-locking %s of the caller's memory", FormatBytes(n))
	}
	hb := &HostBuffer{ctx: c, p: p, size: n, reg: pin}
	hb.cleanup = runtime.AddCleanup(hb, func(a regRef) { _ = unregister(a.ctx, a.p, a.pin) }, regRef{c, p, pin})
	return hb, nil
}

// unregister undoes RegisterHost's page-locking of p and unpins it.
func unregister(c *Context, p unsafe.Pointer, pin *runtime.Pinner) error {
	defer pin.Unpin()
	h, err := c.handle("cuMemHostUnregister")
	if err != nil {
		return nil // a closed context took its registrations with it
	}
	return check("cuMemHostUnregister", drvMemHostUnregister(h, p))
}

type regRef struct {
	ctx *Context
	p   unsafe.Pointer
	pin *runtime.Pinner
}

type hostRef struct {
	ctx *Context
	p   unsafe.Pointer
}

func (a hostRef) free() {
	if h, err := a.ctx.handle("cuMemFreeHost"); err == nil {
		drvMemFreeHost(h, a.p)
	}
}

// Bytes returns the memory as a byte slice; it is valid until Free.
func (h *HostBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.size)
}

// HostSlice views a HostBuffer as a slice of T (valid until Free).
func HostSlice[T Word](h *HostBuffer) []T {
	var z T
	b := h.Bytes()
	if b == nil {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), int64(len(b))/int64(unsafe.Sizeof(z)))
}

// Free releases the memory; it is idempotent.
func (h *HostBuffer) Free() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return nil
	}
	h.freed = true
	h.cleanup.Stop()
	if pin := h.reg; pin != nil {
		h.reg = nil
		return unregister(h.ctx, h.p, pin)
	}
	if h.ctx.Closed() || h.ctx.keepHost(h.ctx.h, h.p, h.alloc) {
		return nil
	}
	return check("cuMemFreeHost", drvMemFreeHost(h.ctx.h, h.p))
}

func (h *HostBuffer) span(op string, off, n int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return &Error{Op: op, Code: resultClosed, Detail: "host buffer was freed"}
	}
	if off < 0 || n < 0 || off+n > h.size {
		return &Error{Op: op, Code: ErrorInvalidValue,
			Detail: fmt.Sprintf("range [%d, %d) outside a host buffer of %d bytes", off, off+n, h.size)}
	}
	return nil
}

// CopyFromHostAsync queues a copy of n bytes from src (at srcOff) to b
// (at off) on stream s.
func (b *Buffer) CopyFromHostAsync(off int64, src *HostBuffer, srcOff, n int64, s *Stream) error {
	h, err := b.live("cuMemcpyHtoDAsync")
	if err != nil {
		return err
	}
	if err := b.span("cuMemcpyHtoDAsync", off, n); err != nil {
		return err
	}
	if err := src.span("cuMemcpyHtoDAsync", srcOff, n); err != nil || n == 0 {
		return err
	}
	r := drvMemcpyHtoD(h, b.ptr+uint64(off), unsafe.Add(src.p, srcOff), n, s.handle(), true)
	return checkf("cuMemcpyHtoDAsync", r, "%s", FormatBytes(n))
}

// CopyToHostAsync queues a copy of n bytes from b (at off) to dst (at
// dstOff) on stream s.
func (b *Buffer) CopyToHostAsync(dst *HostBuffer, dstOff int64, off, n int64, s *Stream) error {
	h, err := b.live("cuMemcpyDtoHAsync")
	if err != nil {
		return err
	}
	if err := b.span("cuMemcpyDtoHAsync", off, n); err != nil {
		return err
	}
	if err := dst.span("cuMemcpyDtoHAsync", dstOff, n); err != nil || n == 0 {
		return err
	}
	r := drvMemcpyDtoH(h, unsafe.Add(dst.p, dstOff), b.ptr+uint64(off), n, s.handle(), true)
	return checkf("cuMemcpyDtoHAsync", r, "%s", FormatBytes(n))
}
