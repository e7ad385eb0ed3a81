package cuda

import (
	"errors"
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
	dev   kept[uint64]
	// Small pinned host buffers too (the words a setup or an MIS run
	// reads back): cuMemAllocHost pins pages by a system call each time.
	host kept[unsafe.Pointer]
}

// kept holds freed buffers of one kind by rounded size.
type kept[P any] struct {
	idle int64
	by   map[int64][]P
}

func (k *kept[P]) take(size int64) (P, bool) {
	ps := k.by[size]
	if len(ps) == 0 {
		var zero P
		return zero, false
	}
	k.by[size], k.idle = ps[:len(ps)-1], k.idle-size
	return ps[len(ps)-1], true
}

func (k *kept[P]) put(size int64, p P) {
	if k.by == nil {
		k.by = map[int64][]P{}
	}
	k.by[size], k.idle = append(k.by[size], p), k.idle+size
}

// drain frees every buffer with free (none after its first error) and
// empties k.
func (k *kept[P]) drain(free func(size int64, p P) error) error {
	var err error
	for size, ps := range k.by {
		for _, p := range ps {
			if err == nil {
				err = free(size, p)
			}
		}
	}
	k.by, k.idle = nil, 0
	return err
}

// devKept and hostKept pick a cache's set and the bytes it may hold.
func devKept(fc *freeCache) (*kept[uint64], int64) { return &fc.dev, fc.limit }

func hostKept(fc *freeCache) (*kept[unsafe.Pointer], int64) {
	if fc.limit == 0 {
		return &fc.host, 0
	}
	return &fc.host, hostKeepLimit
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
// kept the same way for AllocHost. Alloc rounds sizes up (to 2 MiB pages
// above 2 MiB, to a power of two below) so that sizes that differ a
// little reuse one another.
// Kept memory counts as used by this process; an Alloc that finds the
// device full returns it to the driver before it fails. Free of a kept
// buffer waits for the context's work first, as cuMemFree does.
func (c *Context) KeepFreed(limit int64) error {
	c.mu.Lock()
	fc := c.cache
	if fc == nil && limit > 0 {
		fc = &freeCache{}
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
	if closed {
		// The context's memory went with it.
		fc.dev.by, fc.dev.idle, fc.host.by, fc.host.idle = nil, 0, nil, 0
		return nil
	}
	return errors.Join(
		fc.dev.drain(func(size int64, p uint64) error {
			return checkf("cuMemFree", drvMemFree(h, p), "%s at %#x (kept)", FormatBytes(size), p)
		}),
		fc.host.drain(func(size int64, p unsafe.Pointer) error {
			return checkf("cuMemFreeHost", drvMemFreeHost(h, p), "%s of pinned host memory (kept)", FormatBytes(size))
		}))
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
	if size > hostKeepMax {
		return nil
	}
	p, _ := takeKept(c, size, hostKept)
	return p
}

// keepHost holds pinned memory p for a later AllocHost, once the
// context's work (a copy into it, say) is done, and reports whether it
// did.
func (c *Context) keepHost(h ctxHandle, p unsafe.Pointer, size int64) bool {
	return size <= hostKeepMax && keepKept(c, h, size, p, hostKept)
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
	p, _ := takeKept(c, size, devKept)
	return p
}

// keep holds p (of the rounded size) for a later Alloc, once the
// context's work is done, and reports whether it did.
func (c *Context) keep(h ctxHandle, p uint64, size int64) bool {
	return keepKept(c, h, size, p, devKept)
}

// takeKept takes a buffer of the rounded size from the set pick chooses.
func takeKept[P any](c *Context, size int64, pick func(*freeCache) (*kept[P], int64)) (P, bool) {
	fc := c.keeps()
	if fc == nil {
		var zero P
		return zero, false
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	k, _ := pick(fc)
	return k.take(size)
}

// keepKept puts p into the set pick chooses, within its bytes and once
// the context's work is done, as cuMemFree would wait for it.
func keepKept[P any](c *Context, h ctxHandle, size int64, p P, pick func(*freeCache) (*kept[P], int64)) bool {
	fc := c.keeps()
	if fc == nil {
		return false
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	k, limit := pick(fc)
	if k.idle+size > limit || drvCtxSynchronize(h) != Success {
		return false
	}
	k.put(size, p)
	return true
}
