package cuda

import (
	"errors"
	"slices"
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

// A kept set gives back the last buffer put of a size, counts its idle
// bytes, and drain frees each buffer once, none after the first error.
func TestKeptSet(t *testing.T) {
	var k kept[uint64]
	if _, ok := k.take(512); ok {
		t.Fatal("take from an empty set")
	}
	k.put(512, 1)
	k.put(512, 2)
	k.put(4<<20, 3)
	if p, ok := k.take(512); !ok || p != 2 || k.idle != 512+4<<20 {
		t.Fatalf("take: %d %v, %d bytes idle", p, ok, k.idle)
	}
	if _, ok := k.take(1024); ok {
		t.Fatal("take of a size never put")
	}
	var freed []uint64
	err := k.drain(func(size int64, p uint64) error {
		freed = append(freed, p)
		return nil
	})
	slices.Sort(freed)
	if err != nil || !slices.Equal(freed, []uint64{1, 3}) || k.idle != 0 || len(k.by) != 0 {
		t.Fatalf("drain: %v, freed %v, %d bytes idle", err, freed, k.idle)
	}
	k.put(512, 4)
	k.put(1024, 5)
	calls := 0
	err = k.drain(func(int64, uint64) error {
		calls++
		return errors.New("refused")
	})
	if err == nil || calls != 1 || k.idle != 0 {
		t.Fatalf("drain after an error: %v, %d calls, %d bytes idle", err, calls, k.idle)
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
	if idle := ctx.cache.dev.idle; idle != 4<<20 {
		t.Fatalf("%d bytes kept, want %d", idle, 4<<20)
	}
	if free1, _, _ := ctx.MemInfo(); free1 < free0+4<<20 {
		t.Errorf("MemInfo: %d free after a kept Free, %d before", free1, free0)
	}
	b, err := ctx.Alloc(4<<20 - 100)
	if err != nil {
		t.Fatal(err)
	}
	if b.Ptr() != p || b.Size() != 4<<20-100 || ctx.cache.dev.idle != 0 {
		t.Errorf("Alloc after Free: %#x (%d bytes), want %#x; %d bytes still kept", b.Ptr(), b.Size(), p, ctx.cache.dev.idle)
	}
	// Beyond the limit, Free gives memory back.
	c, err := ctx.Alloc(16 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(b.Free(), c.Free()); err != nil {
		t.Fatal(err)
	}
	if ctx.cache.dev.idle != 4<<20 {
		t.Errorf("%d bytes kept, want only the 4 MiB within the limit", ctx.cache.dev.idle)
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
	if err := hb2.Free(); err != nil || ctx.cache.host.idle != 512 {
		t.Errorf("Free: %v, %d bytes of pinned memory kept, want 512", err, ctx.cache.host.idle)
	}
	if err := ctx.ReleaseFreed(); err != nil || ctx.cache.host.idle != 0 || ctx.cache.dev.idle != 0 || len(ctx.cache.dev.by[4<<20]) != 0 {
		t.Errorf("ReleaseFreed: %v, %d bytes still kept", err, ctx.cache.dev.idle)
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
