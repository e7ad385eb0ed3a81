package gpu

import (
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/misgrid/misgrid/cuda"
)

// StagerOptions are those of the contexts' Stagers: a ring of six 16 MiB
// chunks packed by up to 16 goroutines. On a 32-core H200 host, where the
// bus carries 55 GB/s from pinned memory, mis.Compute's upload of hex27
// 160³'s 453 MB CSR with the device check took 11.5-12.5 ms (37-39
// GB/s) against 14.3-16.8 ms for the former Stager, chunk by chunk with
// three 64 MiB chunks and 32 goroutines (BenchmarkGPUComputeFromHost in
// package mis, same runs); 453 MiB from a Go slice staged in 11.0 ms
// (43 GB/s, floor 8.6 ms; BenchmarkGPUStage in package cuda). The
// transfers' reads share the host's memory with the packing, which alone
// reaches 72 GB/s into this ring: 4×8 MiB with 8 goroutines does as
// well (10.6 ms, 11.0-12.7 ms with the check), rings of 128 MiB and more
// pack slower (12×16 MiB: 12.1 ms; 3×64 MiB with 32 goroutines: 13.6
// ms), and rings less than about four times what the goroutines pack at
// once (a megabyte each) stall them (4×8 MiB with 16 goroutines: 14.0
// ms; 2×8 MiB: 20.8 ms). Page-locking the caller's memory in place
// instead (cuMemHostRegister) copies at the bus's speed but costs more
// than it saves: 15.7 ms to register those bytes and 6.6 ms to
// unregister them (BenchmarkGPUHostRegister in package cuda).
var StagerOptions = cuda.StagerOptions{ChunkBytes: 16 << 20, Chunks: 6, Workers: 16}

// stagers holds one Stager per context, made on first use and shared by
// every loader of the context (the MIS engine, the AMG setup, the
// hierarchy): its 96 MiB of pinned ring cost tens of milliseconds to
// allocate, more than most of a setup, and copies from the host share one
// bus anyway, so users take turns with one Stager rather than each
// pinning its own. The pinned memory stays until Release.
var stagers = struct {
	sync.Mutex
	m map[uintptr]*stagerSlot
}{m: map[uintptr]*stagerSlot{}}

type stagerSlot struct {
	mu sync.Mutex // held by the user staging now
	st *cuda.Stager
}

// Stage runs f with the Stager of l's context, its transfers queued on
// stream s (nil: l's stream), so that what is queued on s after them reads
// the copies. Users of one context take turns. f's transfers complete in
// s's order: Stage does not wait for them (the Stager's chunks are reused
// only after their transfers are done). A caller that holds l.Mu takes it
// before Stage, never inside f. f's errors go through l.Fail.
func (l *Loader) Stage(s *cuda.Stream, f func(*cuda.Stager) error) error {
	if s == nil {
		s = l.Stream
	}
	stagers.Lock()
	slot := stagers.m[l.Ctx.Raw()]
	if slot == nil {
		slot = &stagerSlot{}
		stagers.m[l.Ctx.Raw()] = slot
	}
	stagers.Unlock()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.st == nil {
		st, err := l.Ctx.NewStager(s, StagerOptions)
		if err != nil {
			return Unavailable(l.Fail(err))
		}
		slot.st = st
	}
	slot.st.SetStream(s)
	err := l.Fail(f(slot.st))
	if err != nil && l.Usable() != nil {
		// A sticky fault took the context with it: the next user of a
		// fresh context must not inherit chunks and events of this one.
		_ = slot.st.Close()
		slot.st = nil
	}
	return err
}

// Release gives back what the package keeps between calls: the device
// memory that the shared primary contexts hold for reuse and the pinned
// chunks of every context's Stager. Later calls allocate them again.
func Release() error {
	mu.Lock()
	ctxs := slices.Collect(maps.Values(primaries))
	mu.Unlock()
	var errs []error
	for _, c := range ctxs {
		errs = append(errs, c.ReleaseFreed())
	}
	stagers.Lock()
	slots := slices.Collect(maps.Values(stagers.m))
	stagers.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		if s.st != nil {
			errs = append(errs, s.st.Close())
			s.st = nil
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}
