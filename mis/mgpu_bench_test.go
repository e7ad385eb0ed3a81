package mis

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// BenchmarkMultiGPUSends times the ways the multi-GPU driver can run on
// two GPUs, over one layout per graph and distance: byte stores or
// pairs into the peers' mailboxes, MIS-1's tail that sends by itself or
// none, the ghosts' OUT given back to their owners or not; tables runs
// the default on the layout without ghost windows. It reports
// each part's launches and exchanges timed on its stream (the median
// run's), and fails when a variant's set differs from the first's.
func BenchmarkMultiGPUSends(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		b.Skip("needs two GPUs")
	}
	graphs := []struct {
		name string
		g    func() *mesh.Graph
	}{
		{"hex27-256", func() *mesh.Graph { return mesh.Hex27Graph(256, 256, 256) }},
		{"random-16M-16", func() *mesh.Graph { return mesh.RandomGraph(1<<24, 16, 1) }},
	}
	variants := []struct {
		name   string
		o      misgpu.PartsOptions
		tables bool // the layout with no ghost windows
	}{
		{"plain", misgpu.PartsOptions{NoTailSends: true, NoReturns: true}, false},
		{"returns", misgpu.PartsOptions{NoTailSends: true}, false},
		{"tail", misgpu.PartsOptions{NoReturns: true}, false},
		{"default", misgpu.PartsOptions{}, false},
		{"pairs", misgpu.PartsOptions{Pairs: true}, false},
		{"tables", misgpu.PartsOptions{}, true},
	}
	for _, c := range graphs {
		g := c.g()
		keys, err := Keys(g, Priority{Kind: Hash})
		if err != nil {
			b.Fatal(err)
		}
		for _, dist := range []int{1, 2} {
			parts, err := layoutParts(g, 2, nil, keys, dist, nil, misgpu.MaxWindows)
			if err != nil {
				b.Fatal(err)
			}
			// The same with every ghost in the tables (no windows).
			tparts, err := layoutParts(g, 2, nil, keys, dist, nil, 0)
			if err != nil {
				b.Fatal(err)
			}
			var want [][]bool
			for _, v := range variants {
				if dist == 2 && !v.o.NoTailSends && !v.o.Pairs && !v.tables {
					continue // no tail at distance 2: as plain or returns
				}
				ps := parts
				if v.tables {
					ps = tparts
				}
				specs := []*misgpu.PartSpec{&ps[0].spec, &ps[1].spec}
				specs[0].Device, specs[1].Device = 0, 1
				b.Run(fmt.Sprintf("%s/d%d/%s", c.name, dist, v.name), func(b *testing.B) {
					o := v.o
					o.Dist, o.Trace = dist, true
					got := benchParts(b, specs, o)
					if want == nil {
						want = got
					} else if !slices.EqualFunc(want, got, slices.Equal) {
						b.Fatalf("the set differs from variant %s's", variants[0].name)
					}
				})
			}
		}
	}
}

// benchParts times the parts of specs under o and logs the median run's
// traces; it returns the run's flags.
func benchParts(b *testing.B, specs []*misgpu.PartSpec, o misgpu.PartsOptions) [][]bool {
	pp, err := misgpu.NewParts(specs, o)
	if err != nil {
		b.Fatal(err)
	}
	defer pp.Close()
	for range 2 {
		if _, err := pp.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var runs []*misgpu.PartsResult
	for range b.N {
		r, err := pp.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r)
	}
	b.StopTimer()
	slices.SortFunc(runs, func(x, y *misgpu.PartsResult) int { return int(x.Time - y.Time) })
	r := runs[len(runs)/2]
	b.ReportMetric(float64(r.Time.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(r.Bytes), "bytes")
	b.Logf("links %v plans %v rounds %v bytes %d parts %v", pp.Links(), r.Plans, r.PartRounds, r.Bytes, r.PartTime)
	for q, t := range r.Trace {
		b.Logf("part %d: %v", q, t)
	}
	return r.In
}

// BenchmarkOnePartVsEngine runs the driver with one part on GPU 0 beside
// the engine on the same graph, both with their launches timed (the
// part's trace, the engine's profile of each sweep), so that what the
// driver adds to the engine shows launch by launch.
func BenchmarkOnePartVsEngine(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skip(err)
	}
	g := mesh.Hex27Graph(256, 256, 256)
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		b.Fatal(err)
	}
	l, err := misgpu.Open(0)
	if err != nil {
		b.Fatal(err)
	}
	dg, err := misgpu.Upload(l, g.Offsets, g.Adj, int64(g.MaxDegree()), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer dg.Close()
	for _, dist := range []int{1, 2} {
		parts, err := layoutParts(g, 1, nil, keys, dist, nil, misgpu.MaxWindows)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hex27-256/d%d/part", dist), func(b *testing.B) {
			benchParts(b, []*misgpu.PartSpec{&parts[0].spec}, misgpu.PartsOptions{Dist: dist, Trace: true})
		})
		b.Run(fmt.Sprintf("hex27-256/d%d/engine", dist), func(b *testing.B) {
			t, err := dg.Time(dist, misgpu.Priority{}, nil, max(b.N, 10), 2, true)
			if err != nil {
				b.Fatal(err)
			}
			slices.Sort(t.MIS)
			b.ReportMetric(float64(t.MIS[len(t.MIS)/2].Microseconds())/1000, "median-ms")
			us := make([]int64, len(t.SweepTimes))
			for i, d := range t.SweepTimes {
				us[i] = d.Microseconds()
			}
			b.Logf("plan %s rounds %d; sweeps one by one (µs): %v", t.Plan.Stages[0].Kernel, t.Rounds, us)
		})
	}
}

// BenchmarkMultiGPUIdle splits the gap between the driver on one part
// and the engine: the engine timed back to back (as misgrid bench does),
// the engine after the device idled as long as the driver leaves it
// between runs (its set copied back, the next run prepared), the
// driver's wall time and its stream's event time, and the driver right
// after the engine kept the device busy.
func BenchmarkMultiGPUIdle(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skip(err)
	}
	g := mesh.Hex27Graph(256, 256, 256)
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		b.Fatal(err)
	}
	l, err := misgpu.Open(0)
	if err != nil {
		b.Fatal(err)
	}
	dg, err := misgpu.Upload(l, g.Offsets, g.Adj, int64(g.MaxDegree()), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer dg.Close()
	med := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	const reps = 10
	for _, dist := range []int{1, 2} {
		for _, k := range []int{1, 3} {
			parts, err := layoutParts(g, k, nil, keys, dist, nil, misgpu.MaxWindows)
			if err != nil {
				b.Fatal(err)
			}
			specs := make([]*misgpu.PartSpec, k)
			for q := range specs {
				specs[q] = &parts[q].spec
			}
			pp, err := misgpu.NewParts(specs, misgpu.PartsOptions{Dist: dist, Trace: true})
			if err != nil {
				b.Fatal(err)
			}
			var wall, warm, span []time.Duration
			var last *misgpu.PartsResult
			for i := range reps + 2 {
				r, err := pp.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if i < 2 {
					continue
				}
				wall = append(wall, r.Time)
				var s time.Duration
				for _, t := range r.Trace {
					var x time.Duration
					for j := range t.Launch {
						x += t.Launch[j] + t.Exchange[j]
					}
					s = max(s, x)
				}
				span = append(span, s)
				last = r
			}
			for range reps {
				if _, err := dg.Time(dist, misgpu.Priority{}, nil, 1, 0, false); err != nil {
					b.Fatal(err)
				}
				r, err := pp.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				warm = append(warm, r.Time)
			}
			pp.Close()
			b.Logf("d%d %d parts: driver wall %.3f ms, stream events %.3f ms, wall after a busy device %.3f ms; rounds %v",
				dist, k, med(wall), med(span), med(warm), last.PartRounds)
			for q, t := range last.Trace {
				b.Logf("  part %d: %v", q, t)
			}
		}
		t, err := dg.Time(dist, misgpu.Priority{}, nil, reps, 2, false)
		if err != nil {
			b.Fatal(err)
		}
		var idle []time.Duration
		for range reps {
			time.Sleep(30 * time.Millisecond)
			ti, err := dg.Time(dist, misgpu.Priority{}, nil, 1, 0, false)
			if err != nil {
				b.Fatal(err)
			}
			idle = append(idle, ti.MIS[0])
		}
		b.Logf("d%d engine back to back %.3f ms, after 30 ms idle %.3f ms", dist, med(t.MIS), med(idle))
	}
}
