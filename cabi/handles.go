//go:build cgo

package main

import (
	"fmt"
	"sync"
)

// A handle is what C holds for a library object: an id into the handle
// table, never a pointer, so no Go pointer crosses the boundary and a stale
// or forged handle is detected instead of dereferenced. Layout (64 bits):
//
//	bits 56..63  kind tag (0xC1 context, 0xC2 graph, 0xC3 result, ...)
//	bits 32..55  generation of the slot (24 bits)
//	bits  0..31  slot index + 1
//
// The tag in the top byte keeps handles outside every user-space address,
// so a handle passed where a pointer is expected faults at once, and
// random data is unlikely to look like a handle. The generation changes
// each time a slot is freed, and a slot whose 2²⁴ generations are spent
// is never reused (24 bytes per 2²⁴ handles), so a destroyed handle stays
// invalid for good.
type kind uint8

const (
	kindContext kind = 0xC1
	kindGraph   kind = 0xC2
	kindResult  kind = 0xC3
	kindSolver  kind = 0xC4
	// kindDeviceGraph: a graph in the caller's GPU memory (device.go).
	kindDeviceGraph kind = 0xC6
)

func (k kind) String() string {
	switch k {
	case kindContext:
		return "misgrid_context"
	case kindGraph:
		return "misgrid_graph"
	case kindResult:
		return "misgrid_result"
	case kindSolver:
		return "misgrid_solver"
	case kindDeviceGraph:
		return "misgrid_device_graph"
	}
	return fmt.Sprintf("kind(%#x)", uint8(k))
}

const genMask = 1<<24 - 1

type slot struct {
	gen  uint32
	kind kind // 0 when free
	obj  any
}

// handleTable maps handles to objects. One table serves the process: a
// graph made with one context may be used with any other.
type handleTable struct {
	mu    sync.RWMutex
	slots []slot
	free  []uint32 // free slot indices, reused oldest first
	live  int
}

var handles handleTable

func encode(k kind, gen uint32, idx uint32) uintptr {
	return uintptr(uint64(k)<<56 | uint64(gen&genMask)<<32 | uint64(idx+1))
}

func (t *handleTable) put(k kind, obj any) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	var idx uint32
	if len(t.free) > 0 && len(t.free) > len(t.slots)/4 {
		// Reuse only once a quarter of the slots are free, so a freed
		// handle stays detectably stale for a while.
		idx = t.free[0]
		t.free = t.free[1:]
	} else {
		idx = uint32(len(t.slots))
		t.slots = append(t.slots, slot{})
	}
	s := &t.slots[idx]
	s.kind, s.obj = k, obj
	t.live++
	return encode(k, s.gen, idx)
}

// lookup resolves h, which must be of kind want. It never dereferences h.
func (t *handleTable) lookup(h uintptr, want kind, name string) (any, error) {
	if h == 0 {
		return nil, errorf(statusNull, "%s (%s) is NULL", name, want)
	}
	v := uint64(h)
	k := kind(v >> 56)
	gen := uint32(v>>32) & genMask
	idx := uint32(v) - 1
	switch k {
	case kindContext, kindGraph, kindResult, kindSolver, kindDeviceGraph:
	default:
		return nil, errorf(statusHandle, "%s = %#x is not a misgrid handle (uninitialised or overwritten?)", name, v)
	}
	if k != want {
		return nil, errorf(statusHandle, "%s is a %s handle, but a %s is needed here", name, k, want)
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if uint64(idx) >= uint64(len(t.slots)) || uint32(v) == 0 {
		return nil, errorf(statusHandle, "%s = %#x is not a handle this library issued", name, v)
	}
	s := &t.slots[idx]
	if s.gen != gen || s.kind != k {
		return nil, errorf(statusHandle, "%s = %#x was destroyed", name, v)
	}
	return s.obj, nil
}

// remove frees h and returns its object.
func (t *handleTable) remove(h uintptr, want kind, name string) (any, error) {
	if _, err := t.lookup(h, want, name); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := uint32(uint64(h)) - 1
	s := &t.slots[idx]
	if s.gen != uint32(uint64(h)>>32)&genMask || s.kind != want {
		// Another thread destroyed it between lookup and here.
		return nil, errorf(statusHandle, "%s = %#x was destroyed", name, uint64(h))
	}
	obj := s.obj
	s.obj, s.kind = nil, 0
	s.gen = (s.gen + 1) & genMask
	if s.gen != 0 {
		t.free = append(t.free, idx)
	} // else the generations are spent: the slot is retired for good.
	t.live--
	return obj, nil
}

func (t *handleTable) count() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.live
}
