//go:build cgo

package main

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func statusOfErr(err error) status {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.st
	}
	return -1
}

func TestHandleTable(t *testing.T) {
	var tab handleTable
	a := tab.put(kindGraph, "a")
	b := tab.put(kindResult, "b")
	if a == b || a == 0 || b == 0 {
		t.Fatalf("handles %#x %#x", a, b)
	}
	if obj, err := tab.lookup(a, kindGraph, "graph"); err != nil || obj != "a" {
		t.Fatalf("lookup a: %v %v", obj, err)
	}
	tests := []struct {
		name string
		h    uintptr
		want kind
		st   status
		msg  string
	}{
		{"null", 0, kindGraph, statusNull, "is NULL"},
		{"wrong kind", b, kindGraph, statusHandle, "is a misgrid_result handle, but a misgrid_graph is needed"},
		{"not a handle", 0x7fff12345678, kindGraph, statusHandle, "is not a misgrid handle"},
		{"slot never issued", encode(kindGraph, 0, 999), kindGraph, statusHandle, "not a handle this library issued"},
		{"wrong generation", encode(kindGraph, 5, 0), kindGraph, statusHandle, "was destroyed"},
	}
	for _, tc := range tests {
		_, err := tab.lookup(tc.h, tc.want, "graph")
		if err == nil || statusOfErr(err) != tc.st || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v (status %d), want status %d with %q", tc.name, err, statusOfErr(err), tc.st, tc.msg)
		}
	}
	if _, err := tab.remove(a, kindGraph, "graph"); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.lookup(a, kindGraph, "graph"); err == nil || !strings.Contains(err.Error(), "was destroyed") {
		t.Errorf("stale handle: %v", err)
	}
	if _, err := tab.remove(a, kindGraph, "graph"); err == nil {
		t.Error("double remove succeeded")
	}
	if tab.count() != 1 {
		t.Errorf("count %d, want 1", tab.count())
	}
}

// A freed slot is reused only later, and then under a new generation, so
// the old handle stays invalid.
func TestHandleReuseKeepsStaleInvalid(t *testing.T) {
	var tab handleTable
	var old []uintptr
	for i := 0; i < 100; i++ {
		h := tab.put(kindGraph, i)
		old = append(old, h)
		if _, err := tab.remove(h, kindGraph, "g"); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[uintptr]bool{}
	for _, h := range old {
		if seen[h] {
			t.Fatalf("handle %#x issued twice", h)
		}
		seen[h] = true
		if _, err := tab.lookup(h, kindGraph, "g"); err == nil {
			t.Fatalf("stale handle %#x resolves", h)
		}
	}
}

// A slot whose generations are spent is retired, not reused: a handle
// destroyed 2²⁴ reuses ago would resolve again otherwise (the audit's
// handle_wrap case, 2²⁴ context create/destroy cycles).
func TestHandleGenerationsNeverWrap(t *testing.T) {
	var tab handleTable
	first := tab.put(kindContext, 0)
	if _, err := tab.remove(first, kindContext, "ctx"); err != nil {
		t.Fatal(err)
	}
	tab.slots[0].gen = genMask // as after 2²⁴−1 reuses
	last := tab.put(kindContext, 1)
	if uint32(last) != uint32(first) {
		t.Fatalf("the freed slot was not reused: %#x after %#x", last, first)
	}
	if _, err := tab.remove(last, kindContext, "ctx"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		h := tab.put(kindContext, 2+i)
		if h == first || uint32(h) == uint32(first) {
			t.Fatalf("slot reused after its generations wrapped: %#x", h)
		}
	}
	if _, err := tab.lookup(first, kindContext, "ctx"); err == nil {
		t.Fatalf("the first handle of the slot resolves again")
	}
}

func TestHandleTableConcurrent(t *testing.T) {
	var tab handleTable
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				h := tab.put(kindResult, w*10000+i)
				obj, err := tab.lookup(h, kindResult, "r")
				if err != nil || obj != w*10000+i {
					t.Errorf("lookup: %v %v", obj, err)
					return
				}
				if _, err := tab.remove(h, kindResult, "r"); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if tab.count() != 0 {
		t.Errorf("%d live handles after all removed", tab.count())
	}
}

// No panic crosses the boundary: the guard turns it into a status and a
// message saying where it happened.
func TestGuardRecovers(t *testing.T) {
	tests := []struct {
		name string
		body func() error
		st   status
		msg  string
	}{
		{"panic", func() error { panic("boom") }, statusInternal, "internal error: boom at cabi/handles_test.go"},
		{"nil map write", func() error {
			var m map[int]int
			m[1] = 1
			return nil
		}, statusInternal, "assignment to entry in nil map"},
		{"huge allocation", func() error {
			n := -1
			_ = make([]byte, n)
			return nil
		}, statusNoMem, "too large to allocate"},
		{"error", func() error { return errorf(statusRange, "x = %d", 3) }, statusRange, "t: x = 3"},
	}
	for _, tc := range tests {
		st := guardGlobal("t", tc.body)
		if status(st) != tc.st || !strings.Contains(globalMsg.get(), tc.msg) {
			t.Errorf("%s: status %d message %q; want %d with %q", tc.name, st, globalMsg.get(), tc.st, tc.msg)
		}
	}
}
