package mis

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// The GPU benchmarks of the host-graph paths run on the GPU machine on
// hex27 HEX³ (default 160: 4.1M vertices, 105M entries, 441 MB of CSR).
// Every figure stands beside a floor measured in the same run: the CSR's
// bytes at the bus's rate from pinned memory (and, for comparison, the
// rate of the plain pageable copy), or a level's bytes at the device's
// copy rate.

var gpuBenchGraph = sync.OnceValue(func() *mesh.Graph {
	k := 160
	if s := os.Getenv("HEX"); s != "" {
		k, _ = strconv.Atoi(s)
	}
	return mesh.Hex27Graph(k, k, k)
})

func benchLoader(b *testing.B) *gpu.Loader {
	if err := cuda.Available(); err != nil {
		b.Skip(err.Error())
	}
	l, err := misgpu.Open(0)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// timeStream times f's work on the loader's stream with events.
func timeStream(b *testing.B, l *gpu.Loader, f func() error) time.Duration {
	var t streamTimer
	defer t.close()
	if err := t.start(l); err != nil {
		b.Fatal(err)
	}
	if err := f(); err != nil {
		b.Fatal(err)
	}
	d, err := t.stop(l)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// busRates measures the host-to-device rate from a pinned buffer (best of
// five 256 MiB copies) and of one pageable copy of g's CSR.
func busRates(b *testing.B, l *gpu.Loader, g *mesh.Graph) (pinned, pageable float64) {
	const size = 256 << 20
	ctx := l.Ctx
	src, err := ctx.AllocHost(size)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	dst, err := ctx.Alloc(max(size, 4*int64(len(g.Adj))))
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	best := time.Hour
	for range 5 {
		best = min(best, timeStream(b, l, func() error { return dst.CopyFromHostAsync(0, src, 0, size, l.Stream) }))
	}
	t0 := time.Now()
	err = errors.Join(cuda.CopyToDevice(dst, 0, g.Offsets), cuda.CopyToDevice(dst, 0, g.Adj), ctx.Synchronize())
	if err != nil {
		b.Fatal(err)
	}
	return size / best.Seconds(), csrBytes(g) / time.Since(t0).Seconds()
}

func csrBytes(g *mesh.Graph) float64 { return float64(8*len(g.Offsets) + 4*len(g.Adj)) }

// BenchmarkGPUComputeFromHost is mis.Compute of a host graph on the GPU
// with the zero Options (MIS-1, boundary priority: classes by degree),
// and MIS-2, against the floor of moving the CSR once over the bus.
func BenchmarkGPUComputeFromHost(b *testing.B) {
	l := benchLoader(b)
	g := gpuBenchGraph()
	pinned, pageable := busRates(b, l, g)
	bytes := csrBytes(g)
	floor := bytes / pinned
	for _, dist := range []int{1, 2} {
		b.Run(fmt.Sprintf("d%d", dist), func(b *testing.B) {
			o := Options{Distance: dist, Device: GPU}
			want, err := Compute(g, Options{Distance: dist, Device: CPU})
			if err != nil {
				b.Fatal(err)
			}
			// The first call loads the kernels and pins the Stager's chunks.
			if _, err := Compute(g, o); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				got, err := Compute(g, o)
				if err != nil {
					b.Fatal(err)
				}
				if got.Size != want.Size {
					b.Fatalf("%d members on the GPU, %d on the CPU", got.Size, want.Size)
				}
			}
			ms := b.Elapsed().Seconds() * 1e3 / float64(b.N)
			b.ReportMetric(ms, "ms/op")
			b.ReportMetric(floor*1e3, "floor-ms")
			b.Logf("hex27 %d vertices, %.0f MB of CSR: mis.Compute MIS-%d %.2f ms; floor %.2f ms (pinned bus %.1f GB/s), pageable copy alone %.2f ms (%.1f GB/s)",
				g.N(), bytes/1e6, dist, ms, floor*1e3, pinned/1e9, bytes/pageable*1e3, pageable/1e9)
		})
	}
	b.Run("phases", func(b *testing.B) { benchUploadPhases(b, l, g, floor) })
}

// benchUploadPhases splits a run: the staged upload with the device check,
// the classes by degree, the MIS; and tries Stager shapes.
func benchUploadPhases(b *testing.B, l *gpu.Loader, g *mesh.Graph, floor float64) {
	for _, so := range []cuda.StagerOptions{
		gpu.StagerOptions,
		{ChunkBytes: 8 << 20, Chunks: 4, Workers: 8},
		{ChunkBytes: 16 << 20, Chunks: 6, Workers: 16},
		{ChunkBytes: 32 << 20, Chunks: 4, Workers: 16},
		{ChunkBytes: 64 << 20, Chunks: 4, Workers: 16},
		{ChunkBytes: 64 << 20, Chunks: 3, Workers: 32},
		{ChunkBytes: 32 << 20, Chunks: 6, Workers: 32},
	} {
		st, err := l.Ctx.NewStager(l.Stream, so)
		if err != nil {
			b.Fatal(err)
		}
		var up, cls, run, closing time.Duration
		const reps = 3
		for range reps {
			t0 := time.Now()
			dg, err := misgpu.UploadStaged(l, st, g.Offsets, g.Adj, nil)
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			cls += timeStream(b, l, dg.ClassifyByDegree)
			t2 := time.Now()
			if _, err := dg.Run(1, misgpu.Priority{GraphClass: true}, nil); err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			run += t3.Sub(t2)
			up += t1.Sub(t0)
			dg.Close()
			closing += time.Since(t3)
		}
		st.Close()
		b.Logf("stager %d×%d MiB, %d workers: upload+check %.2f ms (%.1f GB/s; floor %.2f ms), classes %.3f ms device, MIS-1 %.2f ms host-timed, free %.2f ms",
			so.Chunks, so.ChunkBytes>>20, so.Workers, ms(up)/reps, csrBytes(g)/(up.Seconds()/reps)/1e9, floor*1e3, ms(cls)/reps, ms(run)/reps, ms(closing)/reps)
	}
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }

// BenchmarkGPUHierarchy is Hierarchy of hex27 on the GPU with the zero
// options (MIS-2, boundary priority): the device time of all levels
// beside their floor (each level's graph and set read once, aggregate
// ids and coarse graph written once, at the device's copy rate), and the
// upload and the copy of the levels to the host.
func BenchmarkGPUHierarchy(b *testing.B) {
	l := benchLoader(b)
	g := gpuBenchGraph()
	bw := copyRate(b, l)
	o := HierarchyOptions{Device: GPU}
	for b.Loop() {
		var t gpuTimes
		t0 := time.Now()
		levels, err := hierarchyGPUTimed(g, o, DefaultHierarchyDistance, DefaultMinVertices, DefaultMaxLevels, &t)
		wall := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		floor := 0.0
		for i, lv := range levels {
			n, m := lv.Graph.N(), lv.Graph.NumEdges()
			bytes := float64(8*int64(n+1) + 4*m + int64(n))
			if i+1 < len(levels) {
				nx := levels[i+1].Graph
				bytes += float64(4*int64(n) + 8*int64(nx.N()+1) + 4*nx.NumEdges())
			}
			floor += bytes / bw
			b.Logf("level %d: n %9d m %10d set %8d sweeps %3d (%.2f ms host-timed)", i, n, m, lv.Set.Size, lv.Set.Rounds, ms(lv.Elapsed))
		}
		b.ReportMetric(ms(t.Levels), "levels-dev-ms")
		b.ReportMetric(floor*1e3, "floor-ms")
		b.Logf("%d levels: device %.2f ms (floor %.3f ms at %.0f GB/s), upload %.2f ms, download %.2f ms, wall %.1f ms",
			len(levels), ms(t.Levels), floor*1e3, bw/1e9, ms(t.Upload), ms(t.Download), ms(wall))
	}
}

// copyRate is the device-to-device copy rate, bytes read plus written per
// second, of a 1 GiB copy (best of five).
func copyRate(b *testing.B, l *gpu.Loader) float64 {
	const n = 1 << 30
	src, err := l.Ctx.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	dst, err := l.Ctx.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	best := time.Hour
	for range 5 {
		best = min(best, timeStream(b, l, func() error { return cuda.CopyDeviceAsync(dst, 0, src, 0, n, l.Stream) }))
	}
	return 2 * n / best.Seconds()
}
