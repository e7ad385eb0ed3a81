package cuda

import (
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkGPUHostRegister times the other way to the bus's speed than
// staging: page-locking the caller's Go memory in place
// (cuMemHostRegister, with the pages pinned for the runtime) and copying
// from it directly, for a CSR the size of hex27 160³'s (453 MB).
func BenchmarkGPUHostRegister(b *testing.B) {
	ctx := primaryForTest(b)
	s, err := ctx.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 453 << 20
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	d, err := ctx.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free()
	var reg, cp, unreg time.Duration
	for range b.N {
		var pin runtime.Pinner
		p := unsafe.Pointer(&src[0])
		t0 := time.Now()
		pin.Pin(p)
		if r := drvMemHostRegister(ctx.h, p, n); r != Success {
			b.Fatal(check("cuMemHostRegister", r))
		}
		t1 := time.Now()
		hb := &HostBuffer{ctx: ctx, p: p, size: n}
		if err := d.CopyFromHostAsync(0, hb, 0, n, s); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if r := drvMemHostUnregister(ctx.h, p); r != Success {
			b.Fatal(check("cuMemHostUnregister", r))
		}
		pin.Unpin()
		t3 := time.Now()
		reg, cp, unreg = reg+t1.Sub(t0), cp+t2.Sub(t1), unreg+t3.Sub(t2)
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
	b.ReportMetric(ms(reg), "register_ms")
	b.ReportMetric(ms(cp), "copy_ms")
	b.ReportMetric(ms(unreg), "unregister_ms")
	b.ReportMetric(n/1e9/(cp.Seconds()/float64(b.N)), "copy_GB/s")
}
