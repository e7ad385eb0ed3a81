package cuda

import (
	"errors"
	"testing"
	"time"
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
		t0 := time.Now()
		hb, err := RegisterHost(ctx, src)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := errors.Join(d.CopyFromHostAsync(0, hb, 0, n, s), s.Synchronize()); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := hb.Free(); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		reg, cp, unreg = reg+t1.Sub(t0), cp+t2.Sub(t1), unreg+t3.Sub(t2)
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
	b.ReportMetric(ms(reg), "register_ms")
	b.ReportMetric(ms(cp), "copy_ms")
	b.ReportMetric(ms(unreg), "unregister_ms")
	b.ReportMetric(n/1e9/(cp.Seconds()/float64(b.N)), "copy_GB/s")
}
