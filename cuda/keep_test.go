package cuda

import (
	"errors"
	"testing"
)

func TestRoundAlloc(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{1, 512}, {512, 512}, {513, 1024}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20},
		{2 << 20, 2 << 20}, {2<<20 + 1, 4 << 20}, {5 << 20, 6 << 20}, {6 << 20, 6 << 20}, {1<<30 + 1, 1<<30 + 2<<20},
	} {
		if got := roundAlloc(c.n); got != c.want {
			t.Errorf("roundAlloc(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestGPUKeepFreed checks that freed memory comes back to an Alloc of the
// same rounded size, within the limit, counts as free in MemInfo, and
// goes back to the driver with ReleaseFreed.
func TestGPUKeepFreed(t *testing.T) {
	ctx := primaryForTest(t)
	if err := ctx.KeepFreed(8 << 20); err != nil {
		t.Fatal(err)
	}
	a, err := ctx.Alloc(3 << 20)
	if err != nil {
		t.Fatal(err)
	}
	p := a.Ptr()
	free0, _, _ := ctx.MemInfo()
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	if idle := ctx.cache.idle; idle != 4<<20 {
		t.Fatalf("%d bytes kept, want %d", idle, 4<<20)
	}
	if free1, _, _ := ctx.MemInfo(); free1 < free0+4<<20 {
		t.Errorf("MemInfo: %d free after a kept Free, %d before", free1, free0)
	}
	b, err := ctx.Alloc(4<<20 - 100)
	if err != nil {
		t.Fatal(err)
	}
	if b.Ptr() != p || b.Size() != 4<<20-100 || ctx.cache.idle != 0 {
		t.Errorf("Alloc after Free: %#x (%d bytes), want %#x; %d bytes still kept", b.Ptr(), b.Size(), p, ctx.cache.idle)
	}
	// Beyond the limit, Free gives memory back.
	c, err := ctx.Alloc(16 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(b.Free(), c.Free()); err != nil {
		t.Fatal(err)
	}
	if ctx.cache.idle != 4<<20 {
		t.Errorf("%d bytes kept, want only the 4 MiB within the limit", ctx.cache.idle)
	}
	// Small pinned host buffers come back the same way.
	hb, err := ctx.AllocHost(100)
	if err != nil {
		t.Fatal(err)
	}
	hp := hb.p
	if err := hb.Free(); err != nil {
		t.Fatal(err)
	}
	hb2, err := ctx.AllocHost(300)
	if err != nil {
		t.Fatal(err)
	}
	if hb2.p != hp || len(hb2.Bytes()) != 300 {
		t.Errorf("AllocHost after Free: %p (%d bytes), want %p", hb2.p, len(hb2.Bytes()), hp)
	}
	if err := hb2.Free(); err != nil || ctx.cache.hostIdle != 512 {
		t.Errorf("Free: %v, %d bytes of pinned memory kept, want 512", err, ctx.cache.hostIdle)
	}
	if err := ctx.ReleaseFreed(); err != nil || ctx.cache.hostIdle != 0 || ctx.cache.idle != 0 || len(ctx.cache.free[4<<20]) != 0 {
		t.Errorf("ReleaseFreed: %v, %d bytes still kept", err, ctx.cache.idle)
	}
	if err := ctx.KeepFreed(0); err != nil {
		t.Fatal(err)
	}
}

// primaryForTest returns device 0's primary context, closed when the test
// ends, or skips the test with the reason no GPU can be used.
func primaryForTest(tb testing.TB) *Context {
	tb.Helper()
	if err := Available(); err != nil {
		tb.Skip(err.Error())
	}
	dev, err := GetDevice(0)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ctx.Close() })
	return ctx
}
