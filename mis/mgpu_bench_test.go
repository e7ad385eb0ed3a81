package mis

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// BenchmarkMultiGPUSends times the ways the multi-GPU driver can run on
// two GPUs, over one layout per graph and distance: the parts pulling
// their neighbours' decisions (part_pull, the default there), with
// MIS-1's tail that sends by itself and the windows pushed before it,
// or no tail, or part_send beside the tail after every launch
// (pull-send); or sending them, as byte
// stores or pairs into the peers' mailboxes, with the tail, or with
// none and the ghosts' OUT given back to their owners or not; tables
// runs the default on the layout without ghost windows (which sends),
// one-gpu with both parts on GPU 0. The graphs are hex27 256³ and a
// random graph split into ranges, and hex27 256³ relabelled at random
// and the Gmsh part refined three times split by LocalityPartition,
// whose parts send through the tables. It reports each part's launches
// and exchanges timed on its stream (the median run's), and fails when
// a variant's set differs from the first's.
func BenchmarkMultiGPUSends(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		b.Skip("needs two GPUs")
	}
	graphs := []struct {
		name     string
		g        func(b *testing.B) *mesh.Graph
		locality bool // split by LocalityPartition, not by ranges of ids
	}{
		{"hex27-256", func(*testing.B) *mesh.Graph { return mesh.Hex27Graph(256, 256, 256) }, false},
		{"random-16M-16", func(*testing.B) *mesh.Graph { return mesh.RandomGraph(1<<24, 16, 1) }, false},
		{"hex27-256-relabel", func(*testing.B) *mesh.Graph {
			g, _ := mesh.Relabel(mesh.Hex27Graph(256, 256, 256), 2)
			return g
		}, true},
		{"gmsh-part-x3", func(b *testing.B) *mesh.Graph {
			g, err := genspec.Load("../bench/meshes/part.msh.gz:refine=3")
			if err != nil {
				b.Fatal(err)
			}
			return g
		}, true},
	}
	for _, c := range graphs {
		b.Run(c.name, func(b *testing.B) { benchSends(b, c.g(b), c.locality) })
	}
}

// sendVariants are the ways BenchmarkMultiGPUSends runs the parts.
var sendVariants = []struct {
	name   string
	o      misgpu.PartsOptions
	tables bool // the layout with no ghost windows
	oneGPU bool // both parts on GPU 0
}{
	{"pull", misgpu.PartsOptions{}, false, false},
	{"pull-notail", misgpu.PartsOptions{NoTailSends: true}, false, false},
	{"pull-send", misgpu.PartsOptions{SendForward: true}, false, false},
	{"plain", misgpu.PartsOptions{Push: true, NoTailSends: true, NoReturns: true}, false, false},
	{"returns", misgpu.PartsOptions{Push: true, NoTailSends: true}, false, false},
	{"push", misgpu.PartsOptions{Push: true}, false, false},
	{"pairs", misgpu.PartsOptions{Pairs: true}, false, false},
	{"tables", misgpu.PartsOptions{}, true, false},
	{"one-gpu", misgpu.PartsOptions{}, false, true},
}

// benchSends runs every variant on two parts of g, by locality or by
// ranges, at distance 1 and 2.
func benchSends(b *testing.B, g *mesh.Graph, locality bool) {
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		b.Fatal(err)
	}
	var partition, order []int32
	if locality {
		if partition, order, err = LocalityPartition(g, 2); err != nil {
			b.Fatal(err)
		}
	}
	for _, dist := range []int{1, 2} {
		parts, err := layoutParts(g, 2, partition, keys, dist, order, misgpu.MaxWindows)
		if err != nil {
			b.Fatal(err)
		}
		// The same with every ghost in the tables (no windows).
		tparts, err := layoutParts(g, 2, partition, keys, dist, order, 0)
		if err != nil {
			b.Fatal(err)
		}
		var want [][]bool
		for _, v := range sendVariants {
			if dist == 2 && (v.name == "pull-notail" || v.name == "pull-send" || v.name == "push") {
				continue // no tail at distance 2: as pull, plain or returns
			}
			ps := parts
			if v.tables {
				ps = tparts
			}
			specs := []*misgpu.PartSpec{&ps[0].spec, &ps[1].spec}
			specs[0].Device, specs[1].Device = 0, 1
			if v.oneGPU {
				specs[1].Device = 0
			}
			b.Run(fmt.Sprintf("d%d/%s", dist, v.name), func(b *testing.B) {
				o := v.o
				o.Dist, o.Trace = dist, true
				got := benchParts(b, specs, o)
				if want == nil {
					want = got
				} else if !slices.EqualFunc(want, got, slices.Equal) {
					b.Fatalf("the set differs from variant %s's", sendVariants[0].name)
				}
			})
		}
	}
}

// benchParts times the parts of specs under o and logs the median run's
// traces; it returns the run's flags.
func benchParts(b *testing.B, specs []*misgpu.PartSpec, o misgpu.PartsOptions) [][]bool {
	return benchPartsGap(b, specs, o, 0)
}

func benchPartsGap(b *testing.B, specs []*misgpu.PartSpec, o misgpu.PartsOptions, gap time.Duration) [][]bool {
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
		if gap > 0 {
			time.Sleep(gap)
		}
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

// hexOnGPU is hex27 256×256×nz, its hash keys, and the graph on GPU 0 for
// the engine; it skips without a GPU.
func hexOnGPU(b *testing.B, nz int) (*mesh.Graph, []uint64, *misgpu.Graph) {
	if err := cuda.Available(); err != nil {
		b.Skip(err)
	}
	g := mesh.Hex27Graph(256, 256, nz)
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		b.Fatal(err)
	}
	return g, keys, engineOnGPU(b, g)
}

// engineOnGPU is g on GPU 0 for the engine.
func engineOnGPU(b *testing.B, g *mesh.Graph) *misgpu.Graph {
	l, err := misgpu.Open(0)
	if err != nil {
		b.Fatal(err)
	}
	dg, err := misgpu.Upload(l, g.Offsets, g.Adj, int64(g.MaxDegree()), nil)
	if err != nil {
		b.Fatal(err)
	}
	return dg
}

// BenchmarkOnePartVsEngine runs the driver with one part on GPU 0 beside
// the engine on the same graph, both with their launches timed (the
// part's trace, the engine's profile of each sweep), so that what the
// driver adds to the engine shows launch by launch.
func BenchmarkOnePartVsEngine(b *testing.B) {
	g, keys, dg := hexOnGPU(b, 256)
	defer dg.Close()
	for _, dist := range []int{1, 2} {
		part := ranges(b, g, keys, dist, 1, false)[0]
		b.Run(fmt.Sprintf("hex27-256/d%d/part", dist), func(b *testing.B) {
			benchParts(b, []*misgpu.PartSpec{part}, misgpu.PartsOptions{Dist: dist, Trace: true})
		})
		b.Run(fmt.Sprintf("hex27-256/d%d/engine", dist), func(b *testing.B) { benchEngineSweeps(b, dg, dist) })
	}
}

// BenchmarkMultiGPUOverhead splits the gap between the driver and the
// engine on one GPU, hex27 256³: the engine timed back to back (as
// misgrid bench does) and after the device idled 30 ms (the driver's
// runs follow the copy of the last set back and the next run's
// preparation); the driver's wall time (MultiGPUResult.Time) and its
// streams' event time on 1, 2, 3 and 5 parts, with what this driver
// does and without it: the id table on one part (keep-ids), MIS-1's
// tail on parts that share the device (no-tail), the sends and returns
// in one launch (split).
func BenchmarkMultiGPUOverhead(b *testing.B) {
	g, keys, dg := hexOnGPU(b, 256)
	defer dg.Close()
	const reps = 10
	for _, dist := range []int{1, 2} {
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
		b.Logf("d%d engine back to back %.3f ms, after 30 ms idle %.3f ms", dist, medianMS(t.MIS), medianMS(idle))
		var want [][]bool
		for _, k := range []int{1, 2, 3, 5} {
			specs := ranges(b, g, keys, dist, k, false)
			variants := map[string]misgpu.PartsOptions{"default": {}}
			switch {
			case k == 1:
				variants["keep-ids"] = misgpu.PartsOptions{KeepIDs: true}
			case k < 5:
				variants["split"] = misgpu.PartsOptions{SplitExchange: true}
				if dist == 1 {
					variants["no-tail"] = misgpu.PartsOptions{NoTailSends: true}
				}
			}
			for _, name := range slices.Sorted(maps.Keys(variants)) {
				o := variants[name]
				o.Dist, o.Trace = dist, true
				in := overheadRuns(b, fmt.Sprintf("d%d %d parts %s", dist, k, name), specs, o, reps, name == "default")
				if want == nil {
					want = [][]bool{slices.Concat(in...)}
				} else if !slices.Equal(want[0], slices.Concat(in...)) {
					b.Fatalf("d%d %d parts %s: the set differs from one part's", dist, k, name)
				}
			}
		}
	}
}

// overheadRuns times reps runs of the parts of specs under o after two
// warm-ups and logs the medians of the wall time and of the longest
// stream's event time (and with trace, the median run's launches); it
// returns the last run's flags.
func overheadRuns(b *testing.B, name string, specs []*misgpu.PartSpec, o misgpu.PartsOptions, reps int, trace bool) [][]bool {
	pp, err := misgpu.NewParts(specs, o)
	if err != nil {
		b.Fatal(err)
	}
	defer pp.Close()
	var wall, span []time.Duration
	var runs []*misgpu.PartsResult
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
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(x, y *misgpu.PartsResult) int { return int(x.Time - y.Time) })
	r := runs[len(runs)/2]
	b.Logf("%s: wall %.3f ms, streams %.3f ms; rounds %v, bytes %d, plans %v", name, medianMS(wall), medianMS(span), r.PartRounds, r.Bytes, r.Plans)
	if trace {
		for q, t := range r.Trace {
			b.Logf("  part %d: %v", q, t)
		}
	}
	return r.In
}

func medianMS(ds []time.Duration) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// BenchmarkPartsVsAlone sets the launches of each of two parts of hex27
// 256×256×nz on two GPUs (their traces) beside the half (hex27
// 256×256×nz/2, the first part's rows with the cut edges dropped) on
// GPU 0 as one part of the driver (its trace), the same hashing through
// a ghost window (a hole) as a part of several does, and by the engine
// (its sweeps one by one): where a part's time goes beyond what its
// vertices cost without a boundary. nz is 256 (hex27 256³) and 512 (the
// weak scaling's graph). The parts run untraced too, and traced with
// the GPUs idle between runs (a sleep of 2, 10 or 40 ms), as they are
// while a caller uses the last set.
func BenchmarkPartsVsAlone(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		b.Skip("needs two GPUs")
	}
	for _, nz := range []int{256, 512} {
		b.Run(fmt.Sprintf("nz%d", nz), func(b *testing.B) { benchPartsVsAlone(b, 2, nz, "half") })
	}
}

// BenchmarkFourPartsVsAlone is BenchmarkPartsVsAlone on four GPUs and
// hex27 256³, beside a quarter (hex27 256×256×64). An inner part has
// two neighbours and a quarter of the graph's work, and the last part
// starts three first launches after the first, which at distance 1
// every part's tail waits for.
func BenchmarkFourPartsVsAlone(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 4 {
		b.Skip("needs four GPUs")
	}
	benchPartsVsAlone(b, 4, 256, "quarter")
}

// benchPartsVsAlone runs k parts of hex27 256×256×nz, one per GPU,
// beside the first part's rows alone (named piece).
func benchPartsVsAlone(b *testing.B, k, nz int, piece string) {
	g := mesh.Hex27Graph(256, 256, nz)
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		b.Fatal(err)
	}
	alone, ak, dg := hexOnGPU(b, nz/k)
	defer dg.Close()
	for _, dist := range []int{1, 2} {
		specs := ranges(b, g, keys, dist, k, true)
		b.Run(fmt.Sprintf("d%d/parts", dist), func(b *testing.B) {
			benchParts(b, specs, misgpu.PartsOptions{Dist: dist, Trace: true})
		})
		b.Run(fmt.Sprintf("d%d/parts-untraced", dist), func(b *testing.B) {
			benchParts(b, specs, misgpu.PartsOptions{Dist: dist})
		})
		for _, gap := range []time.Duration{2 * time.Millisecond, 10 * time.Millisecond, 40 * time.Millisecond} {
			b.Run(fmt.Sprintf("d%d/parts-gap%v", dist, gap), func(b *testing.B) {
				benchPartsGap(b, specs, misgpu.PartsOptions{Dist: dist, Trace: true}, gap)
			})
		}
		// The piece as one part on GPU 0: the driver without a boundary.
		one := ranges(b, alone, ak, dist, 1, false)[0]
		b.Run(fmt.Sprintf("d%d/%s-one-part", dist, piece), func(b *testing.B) {
			benchParts(b, []*misgpu.PartSpec{one}, misgpu.PartsOptions{Dist: dist, Trace: true})
		})
		// The same with one window of one hole after its vertices: its
		// kernels hash through vhash's window selects, as a part of
		// several does, on the same launches.
		w := *one
		gf := misgpu.GhostFrom(w.Own)
		w.Offsets = append(slices.Clone(w.Offsets[:gf+1]), w.Offsets[gf])
		w.Windows = []misgpu.Window{{From: gf, Len: 1, First: uint32(alone.N())}}
		w.GIDFrom, w.GID, w.Home = gf+1, nil, nil
		b.Run(fmt.Sprintf("d%d/%s-one-part-windowed", dist, piece), func(b *testing.B) {
			benchParts(b, []*misgpu.PartSpec{&w}, misgpu.PartsOptions{Dist: dist, Trace: true})
		})
		b.Run(fmt.Sprintf("d%d/alone", dist), func(b *testing.B) { benchEngineSweeps(b, dg, dist) })
	}
}

// BenchmarkRandomPartsVsHalf runs two parts of the random graph (16M
// vertices, degree 16) on two GPUs, traced and untraced, beside the
// engine on that graph and on a random graph of half its vertices and
// the same degree. A part holds half the vertices and all their rows, as
// the half-sized graph does, so the engine's time on it bounds what a
// split into two parts can reach, however little the parts exchange.
func BenchmarkRandomPartsVsHalf(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		b.Skip("needs two GPUs")
	}
	for _, n := range []int{1 << 23, 1 << 24} {
		g := mesh.RandomGraph(n, 16, 1)
		dg := engineOnGPU(b, g)
		for _, dist := range []int{1, 2} {
			b.Run(fmt.Sprintf("n%d/d%d/engine", n, dist), func(b *testing.B) { benchEngineSweeps(b, dg, dist) })
		}
		dg.Close()
		if n < 1<<24 {
			continue
		}
		keys, err := Keys(g, Priority{Kind: Hash})
		if err != nil {
			b.Fatal(err)
		}
		for _, dist := range []int{1, 2} {
			specs := ranges(b, g, keys, dist, 2, true)
			b.Run(fmt.Sprintf("n%d/d%d/parts", n, dist), func(b *testing.B) {
				benchParts(b, specs, misgpu.PartsOptions{Dist: dist, Trace: true})
			})
			b.Run(fmt.Sprintf("n%d/d%d/parts-untraced", n, dist), func(b *testing.B) {
				benchParts(b, specs, misgpu.PartsOptions{Dist: dist})
			})
		}
	}
}

// ranges lays g out in k ranges of ids at distance dist: range q on GPU
// q where spread, else every range on GPU 0.
func ranges(b *testing.B, g *mesh.Graph, keys []uint64, dist, k int, spread bool) []*misgpu.PartSpec {
	parts, err := layoutParts(g, k, nil, keys, dist, nil, misgpu.MaxWindows)
	if err != nil {
		b.Fatal(err)
	}
	specs := make([]*misgpu.PartSpec, k)
	for q := range parts {
		specs[q] = &parts[q].spec
		if spread {
			specs[q].Device = q
		}
	}
	return specs
}

// benchEngineSweeps times the engine on dg (hash keys) and logs its
// sweeps timed one by one, with the vertices each left in play.
func benchEngineSweeps(b *testing.B, dg *misgpu.Graph, dist int) {
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
	b.Logf("plan %s rounds %d; sweeps one by one (µs): %v; live %v", t.Plan.Stages[0].Kernel, t.Rounds, us, t.SweepLive)
}

// BenchmarkPartTables times one part of hex27 256³ in Hilbert order two
// ways, at both distances: numbered as the locality partition leaves
// it, so that the part hashes its global ids through the id tables
// (part.cu), and renumbered in that order first, so that its ids are its
// global ids (part1w.cu). The difference is what the tables cost a
// part's sweeps.
func BenchmarkPartTables(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skip(err)
	}
	g := mesh.Hex27Graph(256, 256, 256)
	partition, order, err := LocalityPartition(g, 1)
	if err != nil {
		b.Fatal(err)
	}
	h, err := g.Permute(order)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		g         *mesh.Graph
		partition []int32
		order     []int32
	}{{"tables", g, partition, order}, {"own-ids", h, nil, nil}} {
		keys, err := Keys(c.g, Priority{Kind: Hash})
		if err != nil {
			b.Fatal(err)
		}
		for _, dist := range []int{1, 2} {
			parts, err := layoutParts(c.g, 1, c.partition, keys, dist, c.order, misgpu.MaxWindows)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("d%d/%s", dist, c.name), func(b *testing.B) {
				benchParts(b, []*misgpu.PartSpec{&parts[0].spec}, misgpu.PartsOptions{Dist: dist})
			})
		}
	}
}
