package amg

import (
	"testing"
	"time"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mis"
)

// BenchmarkGPUUpload times the copy of a host setup's hierarchy to the
// device, as New does where the setup ran on the host and the solve runs
// on the GPU, until the copies have completed (freeing the copy is not
// timed); beside the floor of its bytes at the pinned bus's rate of the
// same run. Q1 Poisson 101³, about a million rows.
func BenchmarkGPUUpload(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skipf("no usable GPU: %v", err)
	}
	bus := pinnedRate(b)
	e, err := engineOn(0)
	if err != nil {
		b.Fatal(err)
	}
	pc, err := New(fem.Poisson(3, 101).A, Options{Device: mis.CPU})
	if err != nil {
		b.Fatal(err)
	}
	mat := func(a *csr) float64 { return float64(4*(a.rows+1) + 12*a.nnz()) }
	bytes := float64(8 * pc.coarse.n * pc.coarse.n)
	if pc.fine != pc.levels[0].a {
		bytes += mat(pc.fine) // the PCG operator, where the hierarchy's first differs
	}
	for i, l := range pc.levels {
		bytes += mat(l.a)
		if l.p != nil {
			bytes += 2*mat(l.p) + float64(4*(pc.levels[i+1].a.rows-l.p.rows)) + float64(8*l.a.rows)
		}
	}
	var el time.Duration
	up := func() {
		t0 := time.Now()
		g, err := pc.upload(e)
		if err == nil {
			err = g.stream.Synchronize()
		}
		if err != nil {
			b.Fatal(err)
		}
		el += time.Since(t0)
		if err := g.free(); err != nil {
			b.Fatal(err)
		}
	}
	up() // pins the context's Stager, fills the free device memory
	el = 0
	b.ResetTimer()
	for range b.N {
		up()
	}
	per := el.Seconds() / float64(b.N)
	b.ReportMetric(per*1e3, "upload_ms")
	b.ReportMetric(bytes/bus*1e3, "floor_ms")
	b.ReportMetric(bytes/per/1e9, "GB/s")
	b.ReportMetric(bus/1e9, "bus_GB/s")
}
