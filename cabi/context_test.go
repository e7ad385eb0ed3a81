//go:build cgo

package main

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// newTestContext makes a context as misgrid_context_create does.
func newTestContext(t *testing.T) uintptr {
	t.Helper()
	m := newMsgBuf()
	if m == nil {
		t.Fatal("no message buffer")
	}
	return handles.put(kindContext, &context{msg: m})
}

// Readers of a context's message race a thread that destroys it (run
// with -race): the pointer they get is never NULL and stays readable, and
// they read either the message or that the context was destroyed.
func TestErrorMessageRacesDestroy(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	for range rounds {
		h := newTestContext(t)
		obj, _ := handles.lookup(h, kindContext, "ctx")
		obj.(*context).msg.set("misgrid_mis: some message")
		var wg sync.WaitGroup
		var stop atomic.Bool
		var bad atomic.Value
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					p := messageFor(h)
					if p == nil {
						bad.Store("NULL message pointer")
						return
					}
					s, err := cString("message", unsafe.Pointer(p))
					if err != nil {
						bad.Store(err.Error())
						return
					}
					if s != "misgrid_mis: some message" && s != "" { // "": the process-wide message, once destroyed
						bad.Store("unexpected message " + s)
						return
					}
				}
			}()
		}
		if err := destroyContext(h); err != nil {
			t.Fatal(err)
		}
		stop.Store(true)
		wg.Wait()
		if b := bad.Load(); b != nil {
			t.Fatal(b)
		}
	}
}

// A destroyed context's buffer is reused, not freed: creating and
// destroying contexts does not grow the pool beyond the quarantine.
func TestMessageBuffersReused(t *testing.T) {
	h := newTestContext(t)
	if err := destroyContext(h); err != nil {
		t.Fatal(err)
	}
	msgPool.mu.Lock()
	before := len(msgPool.bufs)
	msgPool.mu.Unlock()
	for range 100 {
		h := newTestContext(t)
		if got := cStringOf(messageFor(h)); got != "" {
			t.Fatalf("a new context starts with message %q", got)
		}
		if err := destroyContext(h); err != nil {
			t.Fatal(err)
		}
	}
	msgPool.mu.Lock()
	after := len(msgPool.bufs)
	msgPool.mu.Unlock()
	if after > max(before, msgQuarantine+1) {
		t.Errorf("pool grew from %d to %d buffers with one context alive at a time", before, after)
	}
}

// Reading the message of a destroyed context returns the process-wide
// message (that of the call that failed on the handle) unchanged.
func TestDestroyedContextMessage(t *testing.T) {
	h := newTestContext(t)
	if err := destroyContext(h); err != nil {
		t.Fatal(err)
	}
	_, err := handles.lookup(h, kindContext, "ctx")
	report(nil, "misgrid_graph_size", err)
	want := globalMsg.get()
	if !strings.HasPrefix(want, "misgrid_graph_size: ") {
		t.Fatalf("global message %q", want)
	}
	if got := cStringOf(messageFor(h)); got != want {
		t.Errorf("message of the destroyed context %q, want the failed call's %q", got, want)
	}
	if got := globalMsg.get(); got != want {
		t.Errorf("reading it changed the global message to %q", got)
	}
}

func cStringOf[P any](p *P) string {
	s, _ := cString("message", unsafe.Pointer(p))
	return s
}
