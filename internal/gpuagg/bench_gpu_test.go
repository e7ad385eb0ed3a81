package gpuagg_test

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// The benchmarks run on the GPU machine (scripts in .dev); the graph size
// is HEX (edge of the hex27 lattice, default 160: 4.1M vertices, 105M
// entries) and a random graph of as many vertices with degree 16. Every
// figure stands beside a floor measured in the same run: the bytes a step
// must move at the device's copy bandwidth, or the bus's pinned rate.

var benchCorpus = sync.OnceValue(func() []namedGraph {
	k := 160
	if s := os.Getenv("HEX"); s != "" {
		k, _ = strconv.Atoi(s)
	}
	h := mesh.Hex27Graph(k, k, k)
	return []namedGraph{{fmt.Sprintf("hex27-%d", k), h}, {"random16", mesh.RandomGraph(h.N(), 16, 1)}}
})

func benchGraphs(b *testing.B) []namedGraph { return benchCorpus() }

// elapsed times f on the Device's stream with events.
func elapsed(b *testing.B, d *gpuagg.Device, f func()) time.Duration {
	ctx := d.Context()
	e0, err := ctx.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	e1, err := ctx.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer e0.Close()
	defer e1.Close()
	if err := e0.Record(d.Stream()); err != nil {
		b.Fatal(err)
	}
	f()
	if err := e1.Record(d.Stream()); err != nil {
		b.Fatal(err)
	}
	if err := e1.Synchronize(); err != nil {
		b.Fatal(err)
	}
	t, err := cuda.Elapsed(e0, e1)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// copyBandwidth is the device-to-device copy rate, bytes read plus
// written per second, of a 1 GiB copy.
func copyBandwidth(b *testing.B, d *gpuagg.Device) float64 {
	const n = 1 << 30
	src, err := d.Context().Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := d.Context().Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	defer dst.Free()
	best := time.Hour
	for range 5 {
		best = min(best, elapsed(b, d, func() {
			if err := cuda.CopyDeviceAsync(dst, 0, src, 0, n, d.Stream()); err != nil {
				b.Fatal(err)
			}
		}))
	}
	return 2 * n / best.Seconds()
}

// levelBytes is what one level must move at least: the graph and the set
// read once, the aggregate ids and the coarse graph written once.
func levelBytes(n int, m int64, nc int, mc int64) float64 {
	return float64(8*int64(n+1) + 4*m + int64(n) + 4*int64(n) + 8*int64(nc+1) + 4*mc)
}

// BenchmarkCoarsen times one level, aggregation and coarse graph, on
// the MIS-2 of the GPU engine, and checks it against the host once.
func BenchmarkCoarsen(b *testing.B) {
	d, st := device(b)
	bw := copyBandwidth(b, d)
	b.Logf("device copy bandwidth %.0f GB/s", bw/1e9)
	for _, cg := range benchGraphs(b) {
		b.Run(cg.name, func(b *testing.B) {
			dg, err := d.Upload(cg.g, st)
			if err != nil {
				b.Fatal(err)
			}
			defer dg.Free()
			in, size, err := deviceMIS(b, d, mis.Priority{Kind: mis.Hash, Seed: 1}, 2)(0, dg, d.Stream())
			if err != nil {
				b.Fatal(err)
			}
			defer in.Free()
			c := d.NewCoarsener()
			defer c.Close()
			agg, coarse, err := c.Coarsen(dg, in, 2)
			if err != nil {
				b.Fatal(err)
			}
			checkBig(b, d, cg.g, in, agg, coarse)
			floor := levelBytes(dg.N, dg.M, agg.N, coarse.M) / bw
			agg.Free()
			coarse.Free()
			var tot time.Duration
			for b.Loop() {
				tot += elapsed(b, d, func() {
					agg, coarse, err = c.Coarsen(dg, in, 2)
					if err != nil {
						b.Fatal(err)
					}
				})
				agg.Free()
				coarse.Free()
			}
			ms := tot.Seconds() * 1e3 / float64(b.N)
			times := gpuagg.StepTimes(c)
			agg, coarse, err = c.Coarsen(dg, in, 2)
			if err != nil {
				b.Fatal(err)
			}
			agg.Free()
			coarse.Free()
			b.Logf("%s kernels: %s", cg.name, stepLine(times))
			b.ReportMetric(ms, "dev-ms/op")
			b.ReportMetric(floor*1e3, "floor-ms")
			b.ReportMetric(ms/(floor*1e3), "x-floor")
			b.Logf("%s: n %d m %d set %d, coarse n %d m %d: %.3f ms device, floor %.3f ms (%.0f MB at %.0f GB/s), %.1fx",
				cg.name, dg.N, dg.M, size, agg.N, coarse.M, ms, floor*1e3, floor*bw/1e6, bw/1e9, ms/(floor*1e3))
		})
	}
}

// stepLine lists kernel times, longest first.
func stepLine(times map[string]time.Duration) string {
	names := slices.Collect(maps.Keys(times))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(times[b], times[a]) })
	var s string
	for _, n := range names {
		s += fmt.Sprintf(" %s %.3f", n, times[n].Seconds()*1e3)
	}
	return s + " (ms)"
}

// checkBig compares a level of a large graph with the host's.
func checkBig(b *testing.B, d *gpuagg.Device, g *mesh.Graph, in *cuda.Buffer, agg *gpuagg.Aggregates, coarse *gpuagg.Graph) {
	set := make([]uint8, g.N())
	if err := cuda.CopyToHost(set, in, 0); err != nil {
		b.Fatal(err)
	}
	host := make([]bool, len(set))
	for v, x := range set {
		host[v] = x != 0
	}
	want, err := mis.Aggregate(g, host)
	if err != nil {
		b.Fatal(err)
	}
	of, roots, err := d.DownloadAggregates(agg)
	if err != nil {
		b.Fatal(err)
	}
	hc, err := d.Download(coarse)
	if err != nil {
		b.Fatal(err)
	}
	wc, err := mis.CoarseGraph(g, want)
	if err != nil {
		b.Fatal(err)
	}
	if !slices.Equal(of, want.Of) || !slices.Equal(roots, want.Roots) || !sameGraph(hc, wc) {
		b.Fatal("the device level differs from the host's")
	}
}

// BenchmarkHierarchy builds the whole hierarchy on the device with the
// GPU MIS engine (boundary priority, distance 2) and reports each level:
// the MIS as the host sees it (it synchronises), the device time of
// aggregation and coarse graph, and that step's floor.
func BenchmarkHierarchy(b *testing.B) {
	d, st := device(b)
	bw := copyBandwidth(b, d)
	cg := benchGraphs(b)[0]
	dg, err := d.Upload(cg.g, st)
	if err != nil {
		b.Fatal(err)
	}
	defer dg.Free()
	p := mis.Priority{Kind: mis.Boundary}
	for b.Loop() {
		var misT, aggT, floor []time.Duration
		inner := deviceMIS(b, d, p, 2)
		timed := func(level int, g *gpuagg.Graph, s *cuda.Stream) (*cuda.Buffer, int, error) {
			t0 := time.Now()
			in, size, err := inner(level, g, s)
			misT = append(misT, time.Since(t0))
			return in, size, err
		}
		t0 := time.Now()
		levels, err := d.Hierarchy(dg, timed, gpuagg.HierarchyOptions{})
		wall := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		// Each level again alone, for its device time, with working
		// memory already sized by a first run.
		c := d.NewCoarsener()
		agg, coarse, err := c.Coarsen(levels[0].Graph, levels[0].In, 2)
		if err != nil {
			b.Fatal(err)
		}
		agg.Free()
		coarse.Free()
		for _, l := range levels[:len(levels)-1] {
			aggT = append(aggT, elapsed(b, d, func() {
				agg, coarse, err := c.Coarsen(l.Graph, l.In, 2)
				if err != nil {
					b.Fatal(err)
				}
				agg.Free()
				coarse.Free()
			}))
			next := levels[len(aggT)].Graph
			floor = append(floor, time.Duration(levelBytes(l.Graph.N, l.Graph.M, next.N, next.M)/bw*1e9))
		}
		c.Close()
		var sumMIS, sumAgg, sumFloor time.Duration
		for i, l := range levels {
			line := fmt.Sprintf("level %2d: n %9d m %10d set %8d  mis %8.3f ms", i, l.Graph.N, l.Graph.M, l.Size, misT[i].Seconds()*1e3)
			sumMIS += misT[i]
			if i < len(aggT) {
				line += fmt.Sprintf("  agg+coarse %7.3f ms  floor %6.3f ms", aggT[i].Seconds()*1e3, floor[i].Seconds()*1e3)
				sumAgg += aggT[i]
				sumFloor += floor[i]
			}
			b.Log(line)
		}
		b.Logf("%s: %d levels, wall %.1f ms; MIS (host-timed, with flag copies) %.2f ms; aggregation+coarse graph %.3f ms device, floor %.3f ms at %.0f GB/s",
			cg.name, len(levels), wall.Seconds()*1e3, sumMIS.Seconds()*1e3, sumAgg.Seconds()*1e3, sumFloor.Seconds()*1e3, bw/1e9)
		b.ReportMetric(sumAgg.Seconds()*1e3, "agg-dev-ms")
		b.ReportMetric(sumFloor.Seconds()*1e3, "agg-floor-ms")
		b.ReportMetric(wall.Seconds()*1e3, "wall-ms")
		if err := gpuagg.FreeLevels(levels); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpload copies the CSR of the hex27 graph from Go memory to
// the device, with pageable copies and through the Stager, beside the
// bus's rate from a pinned buffer measured in the same run.
func BenchmarkUpload(b *testing.B) {
	d, st := device(b)
	g := benchGraphs(b)[0].g
	bytes := float64(8*len(g.Offsets) + 4*len(g.Adj))
	ctx := d.Context()
	pinned, err := ctx.AllocHost(256 << 20)
	if err != nil {
		b.Fatal(err)
	}
	defer pinned.Free()
	dst, err := ctx.Alloc(256 << 20)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	bus := time.Hour
	for range 5 {
		bus = min(bus, elapsed(b, d, func() {
			if err := dst.CopyFromHostAsync(0, pinned, 0, 256<<20, d.Stream()); err != nil {
				b.Fatal(err)
			}
		}))
	}
	busRate := float64(256<<20) / bus.Seconds()
	off, err := ctx.Alloc(8 * int64(len(g.Offsets)))
	if err != nil {
		b.Fatal(err)
	}
	defer off.Free()
	adj, err := ctx.Alloc(4 * int64(len(g.Adj)))
	if err != nil {
		b.Fatal(err)
	}
	defer adj.Free()
	for _, mode := range []string{"pageable", "staged"} {
		b.Run(mode, func(b *testing.B) {
			var tot time.Duration
			for b.Loop() {
				t0 := time.Now()
				var err error
				if mode == "staged" {
					err = errors.Join(cuda.StageToDevice(st, off, 0, g.Offsets), cuda.StageToDevice(st, adj, 0, g.Adj), st.Synchronize())
				} else {
					err = errors.Join(cuda.CopyToDevice(off, 0, g.Offsets), cuda.CopyToDevice(adj, 0, g.Adj), ctx.Synchronize())
				}
				tot += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
			}
			rate := bytes * float64(b.N) / tot.Seconds()
			b.ReportMetric(rate/1e9, "GB/s")
			b.ReportMetric(busRate/1e9, "bus-GB/s")
			b.Logf("%s copy of the CSR, %.0f MB: %.2f ms, %.1f GB/s; pinned DMA floor %.1f GB/s (%.2f ms)", mode, bytes/1e6,
				tot.Seconds()*1e3/float64(b.N), rate/1e9, busRate/1e9, bytes/busRate*1e3)
		})
	}
}

// BenchmarkComputeFromHost is the MIS-2 of a host graph on the GPU: as
// mis.Compute does it today (pageable upload), and with the graph
// uploaded through the Stager and run in place (mis.NewDeviceGraph,
// mis.ComputeDevice), which is the wiring this package's upload offers.
func BenchmarkComputeFromHost(b *testing.B) {
	d, st := device(b)
	g := benchGraphs(b)[0].g
	opts := mis.Options{Distance: 2, Priority: mis.Priority{Kind: mis.Hash, Seed: 1}, Device: mis.GPU}
	want, err := mis.Compute(g, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("mis.Compute", func(b *testing.B) {
		for b.Loop() {
			if _, err := mis.Compute(g, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("staged", func(b *testing.B) {
		for b.Loop() {
			dg, err := d.Upload(g, st)
			if err != nil {
				b.Fatal(err)
			}
			if err := d.Stream().Synchronize(); err != nil {
				b.Fatal(err)
			}
			mg, err := mis.NewDeviceGraph(dg.N, dg.Offsets, dg.Adj)
			if err != nil {
				b.Fatal(err)
			}
			r, err := mis.ComputeDevice(mg, opts)
			if err != nil {
				b.Fatal(err)
			}
			if r.Size != want.Size || !slices.Equal(r.In, want.In) {
				b.Fatal("the staged run's set differs from mis.Compute's")
			}
			mg.Close()
			dg.Free()
		}
	})
}
