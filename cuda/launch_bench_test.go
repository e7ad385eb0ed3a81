package cuda_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// BenchmarkGPULaunchIssue times the host's side of queuing work on a
// stream that a synchronisation left idle: an event, then three
// launches of a small kernel, each call timed on its own (medians over
// the runs). alone: one goroutine; copies: after a copy to the device
// and one back from pageable memory, as a run of the engine starts
// after its preparation and the last run's set; beside and
// beside-peer: the same on every device at once, a goroutine each, with
// and without peer access, as the parts of several GPUs start.
func BenchmarkGPULaunchIssue(b *testing.B) {
	n, err := cuda.DeviceCount()
	if err != nil {
		b.Skip(err)
	}
	b.Run("alone", func(b *testing.B) { benchIssue(b, 1, false, false) })
	b.Run("copies", func(b *testing.B) { benchIssue(b, 1, false, true) })
	if n > 1 {
		b.Run("beside", func(b *testing.B) { benchIssue(b, n, false, false) })
		b.Run("beside-peer", func(b *testing.B) { benchIssue(b, n, true, false) })
	}
}

// issueRig is one device's stream, kernel, buffer and event, and the
// times of its calls.
type issueRig struct {
	ctx *cuda.Context
	s   *cuda.Stream
	f   *cuda.Function
	buf *cuda.Buffer
	ev  *cuda.Event
	d   [][4]time.Duration
}

func newIssueRig(b *testing.B, ordinal int) *issueRig {
	dev, err := cuda.GetDevice(ordinal)
	if err != nil {
		b.Fatal(err)
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ctx.Close() })
	mod, err := ctx.LoadModule(testImage)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mod.Close() })
	r := &issueRig{ctx: ctx}
	if r.f, err = mod.Function("test_add"); err != nil {
		b.Fatal(err)
	}
	if r.s, err = ctx.NewStream(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.s.Close() })
	if r.buf, err = ctx.Alloc(4 << 20); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.buf.Free() })
	if r.ev, err = ctx.NewEvent(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.ev.Close() })
	return r
}

// once synchronises, then times an event and three launches.
func (r *issueRig) once(host []byte) error {
	if host != nil {
		if err := cuda.CopyToDevice(r.buf, 0, host); err != nil {
			return err
		}
		if err := cuda.CopyToHost(host, r.buf, 0); err != nil {
			return err
		}
	}
	if err := r.s.Synchronize(); err != nil {
		return err
	}
	var d [4]time.Duration
	t := time.Now()
	if err := r.ev.Record(r.s); err != nil {
		return err
	}
	d[0] = time.Since(t)
	cfg := cuda.Launch{Grid: cuda.Dim3{X: 4096}, Block: cuda.Dim3{X: 256}, Stream: r.s}
	for k := 1; k < 4; k++ {
		t = time.Now()
		if err := r.f.Launch(cfg, r.buf, int32(1<<20), int32(1)); err != nil {
			return err
		}
		d[k] = time.Since(t)
	}
	r.d = append(r.d, d)
	return nil
}

// medians returns the median of each call's times, in µs.
func (r *issueRig) medians() [4]float64 {
	var m [4]float64
	for k := range m {
		v := make([]time.Duration, len(r.d))
		for j := range r.d {
			v[j] = r.d[j][k]
		}
		slices.Sort(v)
		m[k] = float64(v[len(v)/2].Nanoseconds()) / 1e3
	}
	return m
}

func benchIssue(b *testing.B, devs int, peer, copies bool) {
	rigs := make([]*issueRig, devs)
	for i := range rigs {
		rigs[i] = newIssueRig(b, i)
	}
	if peer {
		for i, r := range rigs {
			for j, q := range rigs {
				if i != j {
					if err := r.ctx.EnablePeerAccess(q.ctx); err != nil {
						b.Skip(err)
					}
				}
			}
		}
	}
	hosts := make([][]byte, devs)
	if copies {
		for i := range hosts {
			hosts[i] = make([]byte, 4<<20)
		}
	}
	// The first runs load the kernel and set the stream up.
	for _, r := range rigs {
		for range 3 {
			if err := r.once(nil); err != nil {
				b.Fatal(err)
			}
		}
		r.d = nil
	}
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		errs := make([]error, devs)
		for i, r := range rigs {
			wg.Go(func() { errs[i] = r.once(hosts[i]) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	for i, r := range rigs {
		m := r.medians()
		b.Logf("device %d, median µs: event %.1f, launches %.1f %.1f %.1f", i, m[0], m[1], m[2], m[3])
		if i == 0 {
			b.ReportMetric(m[1], "first-launch-µs")
			b.ReportMetric(m[2], "second-launch-µs")
		}
	}
}
