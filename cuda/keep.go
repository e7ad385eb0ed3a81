package cuda

import (
	"math/bits"
	"sync"
	"unsafe"
)

// freeCache holds device memory that Free gave back, for the next Alloc
// of the same rounded size: cuMemAlloc and cuMemFree take 0.08 to 0.9 ms
// each on an H100 (BenchmarkGPUAllocFree; cuMemFree also waits for the
// whole device), and a multigrid setup makes a few hundred of them, the
// same sizes again at every setup of a Newton loop.
type freeCache struct {
	mu    sync.Mutex
	limit int64
	idle  int64
	free  map[int64][]uint64 // by rounded size
	// Small pinned host buffers too (the words a setup or an MIS run
	// reads back): cuMemAllocHost pins pages by a system call each time.
	hostIdle int64
	host     map[int64][]unsafe.Pointer
}

// Pinned host buffers up to hostKeepMax bytes are kept, hostKeepLimit
// bytes in all.
const (
	hostKeepMax   = 64 << 10
	hostKeepLimit = 4 << 20
)

// keepGranule is the rounding of sizes above it: the driver maps device
// memory in 2 MiB pages, so rounding to them costs nothing; smaller sizes
// round to a power of two.
const keepGranule = 2 << 20

func roundAlloc(n int64) int64 {
	if n > keepGranule {
		return (n + keepGranule - 1) &^ (keepGranule - 1)
	}
	return max(512, int64(1)<<bits.Len64(uint64(n-1)))
}

// KeepFreed makes Free keep up to limit bytes of the context's device
// memory, at most, for later Allocs of the same rounded size, instead of
// returning it to the driver (limit 0 returns what is kept and stops
// keeping); small pinned host buffers (up to 64 KiB, 4 MiB in all) are
// kept the same way for AllocHost. Alloc rounds sizes up (to 2 MiB pages above 2 MiB, to a power
// of two below) so that sizes that differ a little reuse one another.
// Kept memory counts as used by this process; an Alloc that finds the
// device full returns it to the driver before it fails. Free of a kept
// buffer waits for the context's work first, as cuMemFree does.
func (c *Context) KeepFreed(limit int64) error {
	c.mu.Lock()
	fc := c.cache
	if fc == nil && limit > 0 {
		fc = &freeCache{free: map[int64][]uint64{}, host: map[int64][]unsafe.Pointer{}}
		c.cache = fc
	}
	c.mu.Unlock()
	if fc == nil {
		return nil
	}
	fc.mu.Lock()
	fc.limit = max(limit, 0)
	fc.mu.Unlock()
	if limit <= 0 {
		return c.ReleaseFreed()
	}
	return nil
}

// ReleaseFreed returns the device memory that KeepFreed holds to the
// driver.
func (c *Context) ReleaseFreed() error {
	c.mu.Lock()
	fc, closed, h := c.cache, c.closed, c.h
	c.mu.Unlock()
	if fc == nil {
		return nil
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var err error
	for size, ptrs := range fc.free {
		for _, p := range ptrs {
			if !closed && err == nil {
				err = checkf("cuMemFree", drvMemFree(h, p), "%s at %#x (kept)", FormatBytes(size), p)
			}
		}
		delete(fc.free, size)
	}
	for size, ptrs := range fc.host {
		for _, p := range ptrs {
			if !closed && err == nil {
				err = checkf("cuMemFreeHost", drvMemFreeHost(h, p), "%s of pinned host memory (kept)", FormatBytes(size))
			}
		}
		delete(fc.host, size)
	}
	fc.idle, fc.hostIdle = 0, 0
	return err
}

// hostSize is the size AllocHost asks the driver for.
func (c *Context) hostSize(bytes int64) int64 {
	if c.keeps() == nil || bytes > hostKeepMax {
		return bytes
	}
	return roundAlloc(bytes)
}

// takeHost returns kept pinned memory of the rounded size, or nil.
func (c *Context) takeHost(size int64) unsafe.Pointer {
	fc := c.keeps()
	if fc == nil || size > hostKeepMax {
		return nil
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	ptrs := fc.host[size]
	if len(ptrs) == 0 {
		return nil
	}
	p := ptrs[len(ptrs)-1]
	fc.host[size] = ptrs[:len(ptrs)-1]
	fc.hostIdle -= size
	return p
}

// keepHost holds pinned memory p for a later AllocHost, once the
// context's work (a copy into it, say) is done, and reports whether it
// did.
func (c *Context) keepHost(h ctxHandle, p unsafe.Pointer, size int64) bool {
	fc := c.keeps()
	if fc == nil || size > hostKeepMax {
		return false
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.limit == 0 || fc.hostIdle+size > hostKeepLimit || drvCtxSynchronize(h) != Success {
		return false
	}
	fc.host[size] = append(fc.host[size], p)
	fc.hostIdle += size
	return true
}

// allocSize is the size Alloc asks the driver for.
func (c *Context) allocSize(bytes int64) int64 {
	if c.keeps() == nil {
		return bytes
	}
	return roundAlloc(bytes)
}

func (c *Context) keeps() *freeCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cache
}

// take returns kept memory of the rounded size, or 0.
func (c *Context) take(size int64) uint64 {
	fc := c.keeps()
	if fc == nil {
		return 0
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	ptrs := fc.free[size]
	if len(ptrs) == 0 {
		return 0
	}
	p := ptrs[len(ptrs)-1]
	fc.free[size] = ptrs[:len(ptrs)-1]
	fc.idle -= size
	return p
}

// keep holds p (of the rounded size) for a later Alloc, once the
// context's work is done, and reports whether it did.
func (c *Context) keep(h ctxHandle, p uint64, size int64) bool {
	fc := c.keeps()
	if fc == nil {
		return false
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.idle+size > fc.limit || drvCtxSynchronize(h) != Success {
		return false
	}
	fc.free[size] = append(fc.free[size], p)
	fc.idle += size
	return true
}
