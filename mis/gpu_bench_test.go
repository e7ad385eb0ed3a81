package mis

import (
	"errors"
	"fmt"
	"os"
	"slices"
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

// benchUploadPhases splits computeGPU's path as it runs (the shared
// Stager, the classes by degree inside the run): upload with the check,
// the run with the set's copy back, Close; beside it the copy back alone
// (n bytes into a Go slice). Then it tries Stager shapes on the upload.
func benchUploadPhases(b *testing.B, l *gpu.Loader, g *mesh.Graph, floor float64) {
	const reps = 5
	var up, run, back, closing, whole time.Duration
	in := make([]uint8, g.N())
	for range reps {
		t0 := time.Now()
		dg, err := misgpu.UploadStaged(l, nil, g.Offsets, g.Adj, nil)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := dg.RunOrStall(1, misgpu.Priority{DegreeClass: true}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		_, adj, _ := dg.Buffers()
		if err := cuda.CopyToHost(in, adj, 0); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		dg.Close()
		t4 := time.Now()
		if _, err := Compute(g, Options{Device: GPU}); err != nil {
			b.Fatal(err)
		}
		up, run, back, closing, whole = up+t1.Sub(t0), run+t2.Sub(t1), back+t3.Sub(t2), closing+t4.Sub(t3), whole+time.Since(t4)
	}
	b.Logf("Compute's path: upload+check %.2f ms (%.1f GB/s; floor %.2f ms), run with the copy back %.2f ms (the copy back alone %.2f ms), Close %.2f ms; Compute %.2f ms",
		ms(up)/reps, csrBytes(g)/(up.Seconds()/reps)/1e9, floor*1e3, ms(run)/reps, ms(back)/reps, ms(closing)/reps, ms(whole)/reps)
	shapes := []cuda.StagerOptions{
		gpu.StagerOptions,
		{ChunkBytes: 16 << 20, Chunks: 6, Workers: 16},
		{ChunkBytes: 8 << 20, Chunks: 4, Workers: 8},
		{ChunkBytes: 8 << 20, Chunks: 6, Workers: 6},
		{ChunkBytes: 8 << 20, Chunks: 6, Workers: 8},
		{ChunkBytes: 8 << 20, Chunks: 6, Workers: 10},
		{ChunkBytes: 8 << 20, Chunks: 8, Workers: 8},
		{ChunkBytes: 4 << 20, Chunks: 8, Workers: 8},
		{ChunkBytes: 4 << 20, Chunks: 12, Workers: 8},
		{ChunkBytes: 16 << 20, Chunks: 4, Workers: 8},
	}
	sts := make([]*cuda.Stager, len(shapes))
	for i, so := range shapes {
		st, err := l.Ctx.NewStager(l.Stream, so)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		sts[i] = st
	}
	// Shapes take turns, round after round, so that a slow spell of the
	// host falls on all of them.
	const rounds = 9
	times := make([][]float64, len(shapes))
	for r := range rounds + 1 {
		for i, st := range sts {
			t0 := time.Now()
			dg, err := misgpu.UploadStaged(l, st, g.Offsets, g.Adj, nil)
			if err != nil {
				b.Fatal(err)
			}
			if r > 0 { // the first round pins the rings' pages
				times[i] = append(times[i], ms(time.Since(t0)))
			}
			dg.Close()
		}
	}
	for i, so := range shapes {
		t := times[i]
		slices.Sort(t)
		b.Logf("stager %2d×%2d MiB, %2d workers: upload+check median %.2f ms (%.1f GB/s), best %.2f, worst %.2f; floor %.2f ms",
			so.Chunks, so.ChunkBytes>>20, so.Workers, t[len(t)/2], csrBytes(g)/t[len(t)/2]/1e6, t[0], t[len(t)-1], floor*1e3)
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
