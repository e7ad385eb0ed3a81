package cuda

import (
	"fmt"
	"runtime"
	"sync"
)

var (
	loadOnce sync.Once
	loadErr  error
)

// load opens the driver and initialises it, once per process. It never
// runs at package initialisation, so programs that never touch the GPU
// never open libcuda.
func load() error {
	loadOnce.Do(func() {
		if err := drvLoad(); err != nil {
			loadErr = fmt.Errorf("%w: %v", ErrUnavailable, err)
			return
		}
		if r := drvInit(); r != Success {
			loadErr = fmt.Errorf("%w: %v", ErrUnavailable, &Error{Op: "cuInit", Code: r})
			return
		}
		n, r := drvDeviceCount()
		if r != Success {
			loadErr = fmt.Errorf("%w: %v", ErrUnavailable, &Error{Op: "cuDeviceGetCount", Code: r})
			return
		}
		if n == 0 {
			loadErr = fmt.Errorf("%w: the driver reports no CUDA device", ErrUnavailable)
		}
	})
	return loadErr
}

// Available reports whether a CUDA driver with at least one device can be
// used: nil, or an error wrapping ErrUnavailable that says why not (no
// libcuda.so.1, cuInit failed, no device, built without cgo).
func Available() error { return load() }

// DriverVersion returns the driver's CUDA version as 1000*major +
// 10*minor (12020 is CUDA 12.2).
func DriverVersion() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	v, r := drvDriverVersion()
	return v, check("cuDriverGetVersion", r)
}

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	n, r := drvDeviceCount()
	return n, check("cuDeviceGetCount", r)
}

// DeviceAttribute selects a property for Device.Attribute
// (CUdevice_attribute).
type DeviceAttribute int

// Device attributes used by this project; any other CUdevice_attribute
// value may be passed too.
const (
	AttrMaxThreadsPerBlock       DeviceAttribute = 1
	AttrMultiprocessorCount      DeviceAttribute = 16
	AttrMemoryClockRate          DeviceAttribute = 36 // kHz
	AttrGlobalMemoryBusWidth     DeviceAttribute = 37 // bits
	AttrL2CacheSize              DeviceAttribute = 38 // bytes
	AttrMaxThreadsPerSM          DeviceAttribute = 39
	AttrUnifiedAddressing        DeviceAttribute = 41
	AttrComputeCapabilityMajor   DeviceAttribute = 75
	AttrComputeCapabilityMinor   DeviceAttribute = 76
	AttrCooperativeLaunch        DeviceAttribute = 95
	AttrMaxSharedMemoryPerBlock  DeviceAttribute = 8
	AttrMaxRegistersPerBlock     DeviceAttribute = 12
	AttrMaxBlocksPerMultiprocess DeviceAttribute = 106
)

// Device is a CUDA device, by ordinal.
type Device struct {
	ordinal int
	h       int32
}

// GetDevice returns the device with the given ordinal (0-based).
func GetDevice(ordinal int) (Device, error) {
	if err := load(); err != nil {
		return Device{}, err
	}
	n, r := drvDeviceCount()
	if r != Success {
		return Device{}, check("cuDeviceGetCount", r)
	}
	if ordinal < 0 || ordinal >= n {
		return Device{}, &Error{Op: "cuDeviceGet", Code: ErrorInvalidDevice,
			Detail: fmt.Sprintf("device %d requested, %d present", ordinal, n)}
	}
	h, r := drvDeviceGet(ordinal)
	if r != Success {
		return Device{}, checkf("cuDeviceGet", r, "device %d", ordinal)
	}
	return Device{ordinal: ordinal, h: h}, nil
}

// Ordinal returns the device's index.
func (d Device) Ordinal() int { return d.ordinal }

// Name returns the device's product name, as nvidia-smi shows it.
func (d Device) Name() (string, error) {
	s, r := drvDeviceName(d.h)
	return s, checkf("cuDeviceGetName", r, "device %d", d.ordinal)
}

// Attribute returns a device property.
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	v, r := drvDeviceAttribute(a, d.h)
	return v, checkf("cuDeviceGetAttribute", r, "attribute %d of device %d", int(a), d.ordinal)
}

// ComputeCapability returns the major and minor compute capability (9, 0
// for Hopper).
func (d Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	minor, err = d.Attribute(AttrComputeCapabilityMinor)
	return major, minor, err
}

// TotalMemory returns the device's memory size in bytes.
func (d Device) TotalMemory() (int64, error) {
	b, r := drvDeviceTotalMem(d.h)
	return b, checkf("cuDeviceTotalMem", r, "device %d", d.ordinal)
}

// PrimaryContext retains the device's primary context, the one the CUDA
// runtime API (and most libraries) share. Close releases it.
func (d Device) PrimaryContext() (*Context, error) {
	h, r := drvPrimaryRetain(d.h)
	if r != Success {
		return nil, checkf("cuDevicePrimaryCtxRetain", r, "device %d", d.ordinal)
	}
	c := &Context{h: h, dev: d, primary: true}
	c.cleanup = runtime.AddCleanup(c, func(dev int32) { drvPrimaryRelease(dev) }, d.h)
	return c, nil
}

// ResetPrimaryContext destroys the device's primary context and every
// allocation in it; every Context, Buffer, Module and Stream of it
// becomes invalid. It does not undo a sticky error (an illegal address, a
// trapped kernel): with current drivers (seen with 580) the process's GPU
// state stays broken after one, and only a new process can use the GPU.
func (d Device) ResetPrimaryContext() error {
	return checkf("cuDevicePrimaryCtxReset", drvPrimaryReset(d.h), "device %d", d.ordinal)
}

// Context is a CUDA context. Every call the package makes in a context
// makes it current on the calling OS thread for just that call, so
// goroutines may use a Context from any thread; the context that was
// current on the thread before is restored afterwards.
type Context struct {
	h       ctxHandle
	dev     Device
	primary bool // retained by PrimaryContext; released by Close
	cleanup runtime.Cleanup

	mu     sync.Mutex
	closed bool
	cache  *freeCache // KeepFreed's
}

// WrapContext adopts a context created elsewhere (by the CUDA runtime,
// gorgonia.org/cu or the caller's own code), given as its raw CUcontext
// handle. The caller keeps ownership: Close does not destroy it.
func WrapContext(raw uintptr) (*Context, error) {
	if err := load(); err != nil {
		return nil, err
	}
	if raw == 0 {
		return nil, &Error{Op: "WrapContext", Code: ErrorInvalidContext, Detail: "nil context handle"}
	}
	h := ctxFromRaw(raw)
	dh, r := drvCtxDevice(h)
	if r != Success {
		return nil, checkf("cuCtxGetDevice", r, "wrapping context %#x", raw)
	}
	n, _ := drvDeviceCount()
	for i := 0; i < n; i++ {
		if x, r := drvDeviceGet(i); r == Success && x == dh {
			return &Context{h: h, dev: Device{ordinal: i, h: dh}}, nil
		}
	}
	return &Context{h: h, dev: Device{ordinal: -1, h: dh}}, nil
}

// Raw returns the CUcontext handle, for passing to other CUDA code.
func (c *Context) Raw() uintptr { return ctxToRaw(c.h) }

// Device returns the context's device.
func (c *Context) Device() Device { return c.dev }

// handle returns the context handle, or an error once it is closed.
func (c *Context) handle(op string) (ctxHandle, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		var zero ctxHandle
		return zero, &Error{Op: op, Code: resultClosed, Detail: "context is closed"}
	}
	return c.h, nil
}

// Closed reports whether Close was called: a cache keyed by the raw
// handle must not hand out what it made in this context, whose memory a
// released primary context may have taken with it, to a later Context
// of the same handle.
func (c *Context) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close releases a retained primary context; for a wrapped context it
// only marks it unusable here. Close is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if c.cache != nil {
		c.mu.Unlock()
		_ = c.ReleaseFreed()
		c.mu.Lock()
	}
	c.closed = true
	if !c.primary {
		return nil
	}
	c.cleanup.Stop()
	return checkf("cuDevicePrimaryCtxRelease", drvPrimaryRelease(c.dev.h), "device %d", c.dev.ordinal)
}

// Synchronize waits for all work in the context.
func (c *Context) Synchronize() error {
	h, err := c.handle("cuCtxSynchronize")
	if err != nil {
		return err
	}
	return check("cuCtxSynchronize", drvCtxSynchronize(h))
}

// MemInfo returns the free and total device memory, in bytes; memory that
// KeepFreed holds counts as free.
func (c *Context) MemInfo() (free, total int64, err error) {
	h, err := c.handle("cuMemGetInfo")
	if err != nil {
		return 0, 0, err
	}
	f, t, r := drvMemInfo(h)
	if fc := c.keeps(); fc != nil {
		// Alloc gives kept memory back before the device is full.
		fc.mu.Lock()
		f += fc.dev.idle
		fc.mu.Unlock()
	}
	return f, t, check("cuMemGetInfo", r)
}
