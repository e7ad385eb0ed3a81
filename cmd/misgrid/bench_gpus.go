package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/gpubench"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/internal/progress"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// wantsGPUs reports whether args hold -gpus (or --gpus=...).
func wantsGPUs(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "gpus" {
			return true
		}
	}
	return false
}

const benchGPUsUsage = `usage: misgrid bench -gpus N[,N...] [-parts N[,N...]] [-partition ranges,locality]
                    [-graphs SPEC,...] [-weak N] [-distance 1,2] [-priority hash]
                    [-seed S] [-reps 10] [-json]

Measures the partitioned MIS over several GPUs of this host: each part
runs the single-GPU engine and stores the boundary vertices it decides
straight into its neighbours' ghosts where the GPUs reach each other,
else through pinned host memory. -gpus gives one part per GPU; -parts
runs that many parts on GPU 0 (the driver's logic on one device).
-partition takes contiguous vertex ranges, ranges of the locality order
(a Hilbert curve through the coordinates), or both. -graphs takes
generator specs and graph files (.mtx, .msh, .egr, as bench -device gpu
does; FILE.msh:refine=L). For each graph, distance and configuration it
prints the median wall time of -reps runs (every part's launches and
checks, every device synchronised, the set copied back between runs
and not timed), the single-GPU memory-streaming floor, the tuned
single-GPU engine's time on the whole graph twice (device time of runs
back to back, and as a caller runs it: wall time taken the driver's
way), with ranges the engine's time on the largest range's
own rows alone (its edges to other parts dropped: the split with no
boundary, whose ratio to the whole is the most the parts can give), the
speedup over the engine both ways and over the same
driver on one GPU, the bytes sent per round, and whether the set equals
the CPU greedy set, all under -priority (hash, boundary or degree) and
-seed. -weak N adds the weak scaling: for each GPU count k,
the 27-point graph of N×N×kN vertices on k GPUs (contiguous ranges: a
cube of N³ per GPU), with its time over that of one GPU on N³ (the rows
of hex27:N with ranges stand for one GPU when -graphs has them).
`

type gpusBenchResult struct {
	Graph       string   `json:"graph"`
	Vertices    int      `json:"vertices"`
	Edges       int64    `json:"edges"`
	Distance    int      `json:"distance"`
	GPUs        int      `json:"gpus"`
	Config      string   `json:"config"`
	Partition   string   `json:"partition"`
	VsEngine    float64  `json:"speedup_vs_engine"`
	Plans       []string `json:"plans"`
	Links       []string `json:"links"`
	MS          float64  `json:"ms"`
	FloorMS     float64  `json:"floor_ms"`
	SingleMISMS float64  `json:"single_gpu_mis_ms"`
	// CalledMS is the engine as a caller runs it (misgpu.Result.Time):
	// wall time, each run after the last one's set was copied back, the
	// way MS is taken; SingleMISMS is device time, back to back.
	CalledMS float64 `json:"single_gpu_called_ms"`
	VsCalled float64 `json:"speedup_vs_engine_called"`
	// AloneMS is the engine on the largest range's own rows alone, its
	// edges to other parts dropped (ranges with several parts): the time
	// a part would take with no boundary, so SingleMISMS / AloneMS is
	// the most the split can give.
	AloneMS       float64 `json:"part_alone_ms,omitempty"`
	Speedup       float64 `json:"speedup"`
	Rounds        int     `json:"rounds"`
	BytesPerRound int64   `json:"bytes_per_round"`
	BytesPerRun   int64   `json:"bytes_per_run"`
	SetSize       int     `json:"set_size"`
	Identical     bool    `json:"identical_to_greedy"`
	// Weak scaling rows: the time over that of one GPU on a k-th of
	// the graph (0 elsewhere).
	WeakVsOne float64 `json:"weak_vs_one_gpu,omitempty"`
}

func benchGPUs(args []string, stdout, stderr io.Writer) error {
	b, err := parseGPUsBench(args, stdout)
	if err != nil {
		return err
	}
	prog := newProgress(stderr, "bench")
	var out []gpusBenchResult
	for _, spec := range b.graphs {
		rs, err := b.graph(spec, prog)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		out = append(out, rs...)
	}
	if b.weak > 0 {
		rs, err := b.weakScaling(out, prog)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		out = append(out, rs...)
	}
	prog.Done("done")
	if b.asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		printGPUsBench(stdout, out)
	}
	var mismatch []string
	for _, r := range out {
		if !r.Identical {
			mismatch = append(mismatch, fmt.Sprintf("%s d%d %s %s", r.Graph, r.Distance, r.Config, r.Partition))
		}
	}
	if len(mismatch) > 0 {
		return fmt.Errorf("bench: sets differ from the greedy set: %s", strings.Join(mismatch, ", "))
	}
	return nil
}

// gpusBench is what benchGPUs measures, from its flags.
type gpusBench struct {
	graphs     []string
	gpus       []int // GPU counts, one part per GPU
	parts      []int // part counts on GPU 0
	partitions []string
	dists      []int
	weak       int // the side of the weak scaling's cube per GPU, or 0
	reps       int
	pri        mis.Priority
	asJSON     bool
}

func parseGPUsBench(args []string, stdout io.Writer) (*gpusBench, error) {
	fs := newFlagSet("bench", benchGPUsUsage)
	gpus := fs.String("gpus", "1,2", "GPU counts, comma-separated")
	partsOn1 := fs.String("parts", "", "part counts on GPU 0, comma-separated (none by default)")
	partitions := fs.String("partition", "ranges", "partitions: ranges, locality, or both comma-separated")
	graphs := fs.String("graphs", "hex27:256,random:16777216:16", "comma-separated generator specs")
	dists := fs.String("distance", "1,2", "MIS distances, comma-separated")
	b := &gpusBench{}
	fs.IntVar(&b.weak, "weak", 0, "weak scaling: hex27 N×N×kN on k GPUs for each -gpus count k (0: none)")
	fs.IntVar(&b.reps, "reps", 10, "timed runs per measurement, at least 10 (median reported)")
	seed := fs.Uint64("seed", 0, "hash seed")
	priority := fs.String("priority", "hash", "priority: hash, boundary or degree")
	fs.BoolVar(&b.asJSON, "json", false, "print JSON instead of a table")
	if err := parseDeviceBenchFlags(fs, args, stdout, &b.reps); err != nil {
		return nil, err
	}
	var err error
	if b.gpus, err = intList("gpus", *gpus, 1, 2, 3, 4, 5, 6, 7, 8, 16); err != nil {
		return nil, err
	}
	if b.dists, err = intList("distance", *dists, 1, 2); err != nil {
		return nil, err
	}
	if *partsOn1 != "" {
		if b.parts, err = intList("parts", *partsOn1, 1, 2, 3, 4, 5, 6, 7, 8, 16); err != nil {
			return nil, err
		}
	}
	kind, err := mis.ParsePriorityKind(*priority)
	if err != nil {
		return nil, fmt.Errorf("bench: -priority %q: want hash, boundary or degree", *priority)
	}
	b.pri = mis.Priority{Kind: kind, Seed: *seed}
	b.partitions = strings.Split(*partitions, ",")
	for _, p := range b.partitions {
		if p != "ranges" && p != "locality" {
			return nil, fmt.Errorf("bench: -partition %q: want ranges or locality", p)
		}
	}
	nd, err := gpu.Count()
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	for _, n := range b.gpus {
		if n < 1 || n > nd {
			return nil, fmt.Errorf("bench: -gpus %d, this host has %d GPUs", n, nd)
		}
	}
	if b.weak < 0 || b.weak > 0 && (b.weak < 2 || float64(b.weak)*float64(b.weak)*float64(b.weak*slices.Max(b.gpus)) >= 1<<31) {
		return nil, fmt.Errorf("bench: -weak %d: want a side of at least 2 and fewer than 2³¹ vertices", b.weak)
	}
	b.graphs = graphSpecs(*graphs)
	if *graphs == "" {
		b.graphs = nil
	}
	return b, nil
}

// graph times every distance and configuration on the graph of spec.
func (b *gpusBench) graph(spec string, prog *progress.Reporter) ([]gpusBenchResult, error) {
	prog.Show("generating %s", spec)
	g, err := genspec.Load(spec)
	if err != nil {
		return nil, err
	}
	return b.measure(spec, g, gpuConfigs(b.gpus, b.parts, b.partitions), prog)
}

// weakScaling times hex27 b.weak²×k·b.weak on k GPUs for each GPU count
// k, against one GPU on the k = 1 graph; the rows of that graph in done
// (hex27:N measured on one GPU with ranges) stand for k = 1.
func (b *gpusBench) weakScaling(done []gpusBenchResult, prog *progress.Reporter) ([]gpusBenchResult, error) {
	var out []gpusBenchResult
	one := map[int]float64{} // by distance: one GPU's time on N³
	n := b.weak
	for _, r := range done {
		if r.Graph == fmt.Sprintf("hex27:%d", n) && r.Config == "1 GPU" && r.Partition == "ranges" {
			one[r.Distance] = r.MS
		}
	}
	for _, k := range b.gpus {
		if k == 1 && len(one) == len(b.dists) {
			continue
		}
		spec := fmt.Sprintf("hex27 %d×%d×%d", n, n, k*n)
		prog.Show("generating %s", spec)
		rs, err := b.measure(spec, mesh.Hex27Graph(n, n, k*n), gpuConfigs([]int{k}, nil, []string{"ranges"}), prog)
		if err != nil {
			return nil, err
		}
		for i := range rs {
			if k == 1 {
				one[rs[i].Distance] = rs[i].MS
			}
			if o := one[rs[i].Distance]; o > 0 {
				rs[i].WeakVsOne = rs[i].MS / o
			}
		}
		out = append(out, rs...)
	}
	return out, nil
}

// measure times every distance and configuration of cfgs on g, named
// spec in the rows.
func (b *gpusBench) measure(spec string, g *mesh.Graph, cfgs []gpuConfig, prog *progress.Reporter) ([]gpusBenchResult, error) {
	dg, err := gpubench.Upload(g, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	defer dg.Close()
	// The engine's priority, resolved on g as the multi-GPU runs resolve
	// b.pri on their parts.
	pri := b.pri
	dpri, err := gpubench.DevicePriority(pri, g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	locality := map[int][2][]int32{} // by part count: the partition and the order
	halves := map[int]*mesh.Graph{}  // by part count: the largest range alone
	var out []gpusBenchResult
	for _, d := range b.dists {
		prog.Show("%s distance %d: CPU greedy", spec, d)
		want, err := mis.Compute(g, mis.Options{Distance: d, Priority: pri, Device: mis.CPU})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		ft, err := dg.Time(d, dpri, nil, b.reps, 2, false)
		if err != nil {
			return nil, fmt.Errorf("%s floor: %w", spec, err)
		}
		called, err := engineCalled(dg, d, dpri, b.reps)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		var one float64            // the driver's time on one GPU, first partition
		alone := map[int]float64{} // by part count, ranges
		for _, cfg := range cfgs {
			prog.Show("%s distance %d: %s", spec, d, cfg.name)
			o := mis.MultiGPUOptions{Distance: d, Priority: pri, Devices: cfg.devices}
			if cfg.partition == "locality" {
				k := len(cfg.devices)
				if _, ok := locality[k]; !ok {
					p, order, err := mis.LocalityPartition(g, k)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", spec, err)
					}
					locality[k] = [2][]int32{p, order}
				}
				o.Partition, o.Order = locality[k][0], locality[k][1]
			}
			r, err := benchGPUsOne(g.N(), o, g, b.reps, want)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", spec, cfg.name, err)
			}
			r.Graph, r.Edges, r.Distance, r.Config, r.Partition = spec, g.NumEdges(), d, cfg.name, cfg.partition
			r.FloorMS, r.SingleMISMS = durMS(gpubench.Median(ft.Floor)), durMS(gpubench.Median(ft.MIS))
			r.VsEngine = r.SingleMISMS / r.MS
			r.CalledMS, r.VsCalled = called, called/r.MS
			if k := len(cfg.devices); k > 1 && cfg.partition == "ranges" {
				if _, ok := alone[k]; !ok {
					prog.Show("%s distance %d: the engine on a %d-th alone", spec, d, k)
					if halves[k] == nil {
						halves[k] = largestRange(g, k)
					}
					if alone[k], err = b.alone(halves[k], d); err != nil {
						return nil, fmt.Errorf("%s: %w", spec, err)
					}
				}
				r.AloneMS = alone[k]
			}
			if cfg.name == "1 GPU" && cfg.partition == cfgs[0].partition {
				one = r.MS
			}
			if one > 0 {
				r.Speedup = one / r.MS
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// largestRange is the largest of the k contiguous ranges of g, with only
// the edges inside it.
func largestRange(g *mesh.Graph, k int) *mesh.Graph {
	r := mis.ContiguousRanges(g.N(), k)
	lo, hi := r[0], r[1]
	for q := 1; q < k; q++ {
		if r[q+1]-r[q] > hi-lo {
			lo, hi = r[q], r[q+1]
		}
	}
	return rangeGraph(g, lo, hi)
}

// engineCalled is the median wall time of the engine's runs on dg as a
// caller makes them (benchGPUsOne's way).
func engineCalled(dg *misgpu.Graph, dist int, pri misgpu.Priority, reps int) (float64, error) {
	return medianRun(reps, func() (time.Duration, error) {
		r, err := dg.Run(dist, pri, nil)
		if err != nil {
			return 0, err
		}
		return r.Time, nil
	})
}

// medianRun calls run reps+2 times and returns the median, in ms, of the
// times the last reps calls report: the first two are warm-ups.
func medianRun(reps int, run func() (time.Duration, error)) (float64, error) {
	var times []time.Duration
	for i := range reps + 2 {
		d, err := run()
		if err != nil {
			return 0, err
		}
		if i >= 2 {
			times = append(times, d)
		}
	}
	return durMS(gpubench.Median(times)), nil
}

// alone times the engine on sub.
func (b *gpusBench) alone(sub *mesh.Graph, dist int) (float64, error) {
	dg, err := gpubench.Upload(sub, 0)
	if err != nil {
		return 0, err
	}
	defer dg.Close()
	pri, err := gpubench.DevicePriority(b.pri, sub)
	if err != nil {
		return 0, err
	}
	t, err := dg.Time(dist, pri, nil, b.reps, 2, false)
	if err != nil {
		return 0, err
	}
	return durMS(gpubench.Median(t.MIS)), nil
}

// rangeGraph is the graph that vertices [lo, hi) of g induce, renumbered
// from 0.
func rangeGraph(g *mesh.Graph, lo, hi int32) *mesh.Graph {
	n := int(hi - lo)
	sub := &mesh.Graph{Offsets: make([]int64, n+1)}
	for v := lo; v < hi; v++ {
		for _, u := range g.Adj[g.Offsets[v]:g.Offsets[v+1]] {
			if u >= lo && u < hi {
				sub.Adj = append(sub.Adj, u-lo)
			}
		}
		sub.Offsets[v-lo+1] = int64(len(sub.Adj))
	}
	return sub
}

func printGPUsBench(w io.Writer, out []gpusBenchResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\tdist\tparts\tpartition\tms\tfloor ms (1 GPU)\tengine ms (1 GPU)\tengine as called ms\ta part alone ms\t× engine\t× as called\t× driver on 1 GPU\tweak: ms / 1 GPU's\trounds\tbytes/round\tset size\tidentical\tlinks\t")
	for _, r := range out {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%.2f\t%.2f\t%s\t%s\t%d\t%d\t%d\t%v\t%s\t\n", r.Graph, r.Distance, r.Config, r.Partition,
			r.MS, r.FloorMS, r.SingleMISMS, r.CalledMS, msOrDash(r.AloneMS), r.VsEngine, r.VsCalled, ratio(r.Speedup), ratio(r.WeakVsOne), r.Rounds, r.BytesPerRound, r.SetSize, r.Identical,
			strings.Join(r.Links, "; "))
	}
	tw.Flush()
}

// msOrDash prints a time in ms, or "-" where the row has none.
func msOrDash(x float64) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

// ratio prints x, or "-" where the row has none.
func ratio(x float64) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

type gpuConfig struct {
	name, partition string
	devices         []int
}

// gpuConfigs lists what to time: each GPU count (one part per GPU), then
// each part count on GPU 0, each with each partition.
func gpuConfigs(gpus, parts []int, partitions []string) []gpuConfig {
	var out []gpuConfig
	for _, n := range gpus {
		for _, p := range partitions {
			name := fmt.Sprintf("%d GPUs", n)
			if n == 1 {
				name = "1 GPU"
			}
			out = append(out, gpuConfig{name, p, seq(n)})
		}
	}
	for _, n := range parts {
		for _, p := range partitions {
			out = append(out, gpuConfig{fmt.Sprintf("%d on GPU 0", n), p, make([]int, n)})
		}
	}
	return out
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func durMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchGPUsOne times the multi-GPU run after two untimed warm-ups and
// compares the last set with want.
func benchGPUsOne(n int, opts mis.MultiGPUOptions, g *mesh.Graph, reps int, want *mis.Result) (gpusBenchResult, error) {
	r := gpusBenchResult{Vertices: n, GPUs: len(opts.Devices)}
	m, err := mis.NewMultiGPU(g, opts)
	if err != nil {
		return r, err
	}
	defer m.Close()
	var last *mis.MultiGPUResult
	if r.MS, err = medianRun(reps, func() (time.Duration, error) {
		res, err := m.Run(context.Background())
		if err != nil {
			return 0, err
		}
		last = res
		return res.Time, nil
	}); err != nil {
		return r, err
	}
	r.Rounds, r.BytesPerRound, r.SetSize, r.Links = last.Rounds, last.BytesPerRound, last.Size, last.Links
	r.BytesPerRun, r.Plans = last.BytesPerRun, last.Plans
	r.Identical = last.Size == want.Size
	for v, in := range want.In {
		if last.In[v] != in {
			r.Identical = false
			break
		}
	}
	return r, nil
}
