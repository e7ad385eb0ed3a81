package gpu

import (
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/misgrid/misgrid/cuda"
)

// StagerOptions are those of the contexts' Stagers: a ring of six 8 MiB
// chunks packed by up to 10 goroutines. The transfers' reads share the
// host's memory with the packing, so goroutines beyond those that keep
// ahead of the bus slow the transfers down. On a 16-core H200 host,
// where the bus carries 55 GB/s from pinned memory, mis.Compute's upload
// of hex27 160³'s 453 MB CSR with the device check took, as the median of
// nine rounds in which the shapes took turns (BenchmarkGPUComputeFromHost
// /phases in package mis, four series): 10.6-12.4 ms with this ring;
// 12.0-14.3 ms with six 16 MiB chunks and 16 goroutines; 12.1-12.9 ms
// with 4×8 MiB and 8; 12.8-15.7 ms with 6×8 MiB and 6.
// Rings of 128 MiB and more pack slower, and rings less than about four
// times what the goroutines pack at once (a megabyte each) stall them.
// Page-locking the caller's memory in place instead (cuMemHostRegister)
// copies at the bus's speed but costs more than it saves: 15.7 ms to
// register those bytes and 6.6 ms to unregister them
// (BenchmarkGPUHostRegister in package cuda).
var StagerOptions = cuda.StagerOptions{ChunkBytes: 8 << 20, Chunks: 6, Workers: 10}

// stagers holds one Stager per context, made on first use and shared by
// every loader of the context (the MIS engine, the AMG setup, the
// hierarchy): its 48 MiB of pinned ring cost tens of milliseconds to
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
	if slot.st != nil && slot.st.Context().Closed() {
		// Made in a Context of this handle that was closed since: a
		// primary context released by its last user took the ring's
		// memory with it. Close makes no driver call for a closed
		// Context.
		_ = slot.st.Close()
		slot.st = nil
	}
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

// StageTo copies src into dst from byte offset off through l's
// context's Stager (Stage), in the order of stream s (nil: l's stream).
func StageTo[T cuda.Word](l *Loader, s *cuda.Stream, dst *cuda.Buffer, off int64, src []T) error {
	return l.Stage(s, func(st *cuda.Stager) error { return cuda.StageToDevice(st, dst, off, src) })
}

// StageFrom copies len(dst) elements of src from byte offset off back
// through l's context's Stager once the work queued on s (nil: l's
// stream) is done.
func StageFrom[T cuda.Word](l *Loader, s *cuda.Stream, dst []T, src *cuda.Buffer, off int64) error {
	return l.Stage(s, func(st *cuda.Stager) error { return cuda.StageToHost(st, dst, src, off) })
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
