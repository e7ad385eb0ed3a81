package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

func init() { gpuBench = benchGPU }

const benchGPUUsage = `usage: misgrid bench -device gpu [flags]

Measures the GPU MIS on generated graphs. Each graph is built on the host,
copied to the GPU once (the copy is timed separately), and then timed with
CUDA events: the MIS (state initialisation and all sweeps) and, in the same
run, the floor: one kernel that streams the row offsets and the adjacency
once and writes a byte per vertex, the least memory traffic any MIS needs.
Both are medians of -reps runs after two warm-ups; the ratio MIS/floor says
how many floor passes the MIS costs. Every set is checked with mis.Verify
and against the CPU greedy set for the same graph and priority.

-order runs each graph in several vertex orders: natural (as generated),
rcm (reverse Cuthill-McKee), locality (mesh.LocalityOrder) and random (a
random relabelling), so you can see whether reordering pays before the MIS.
The hash priority depends on vertex ids, so each order has its own set.

flags:
`

const defaultGPUGraphs = "hex27:160,hex27:160:relabel,hex27:256,grid7:200,random:4000000:16"

type gpuBenchResult struct {
	Graph     string `json:"graph"`
	Order     string `json:"order"`
	Vertices  int    `json:"vertices"`
	Edges     int64  `json:"edges"`
	Distance  int    `json:"distance"`
	Group     int    `json:"lanes_per_vertex"`
	Tail      int    `json:"tail,omitempty"` // full sweeps before the tail launch, -1 none
	Scalar    bool   `json:"scalar_rows,omitempty"`
	Single    bool   `json:"single_champion,omitempty"` // MIS-2 without runner-ups
	Bands     int    `json:"bands,omitempty"`           // hash bands of the first sweeps
	PerBand   int    `json:"sweeps_per_band,omitempty"`
	KeyFilter int    `json:"key_filter,omitempty"`       // read mode used (kf in mis.cu)
	BandShape int    `json:"band_shape,omitempty"`       // hundredths, 0 default
	NoFirst   bool   `json:"no_first_kernel,omitempty"`  // MIS-2's first sweep by the general kernel
	Buckets   int    `json:"buckets,omitempty"`          // MIS-2 key buckets (mis2b), 0 for the ball sweeps
	BShape    int    `json:"bucket_shape,omitempty"`     // hundredths, 0 default
	Flush     int    `json:"flush,omitempty"`            // candidates a warp lists before deciding (buckets)
	ClassBk   bool   `json:"bucket_per_class,omitempty"` // buckets of their own per class
	Stages    int    `json:"bucket_stages,omitempty"`    // kernel stages (2: class 0 by the hash kernels)
	Balanced  bool   `json:"bucket_balanced,omitempty"`  // the balanced kernels

	UploadSeconds float64 `json:"upload_s"` // host to device copy of the graph
	UploadGBps    float64 `json:"upload_gbps"`
	MISSeconds    float64 `json:"mis_s"` // median
	MISMinSeconds float64 `json:"mis_min_s"`
	MISMaxSeconds float64 `json:"mis_max_s"`
	FloorSeconds  float64 `json:"floor_s"` // median
	FloorGBps     float64 `json:"floor_gbps"`
	Ratio         float64 `json:"mis_over_floor"`

	SetSize   int  `json:"set_size"`
	Sweeps    int  `json:"sweeps"`
	Identical bool `json:"identical_to_cpu"`
	Verified  bool `json:"verified"`

	// With -profile: each sweep's time and the vertices still in play.
	SweepMS   []float64 `json:"sweep_ms,omitempty"`
	SweepLive []int     `json:"sweep_live,omitempty"`
}

type gpuBenchReport struct {
	Device   string           `json:"device"`
	Driver   string           `json:"driver_cuda_version"`
	Reps     int              `json:"reps"`
	Priority string           `json:"priority"`
	Seed     uint64           `json:"seed"`
	StartS   float64          `json:"engine_start_s"` // first use: driver context and kernel image
	Results  []gpuBenchResult `json:"results"`
}

func benchGPU(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchGPUUsage)
	var lists listFlags
	graphs := fs.String("graphs", defaultGPUGraphs, "comma-separated generator specs (see 'misgrid help coarsen')")
	distList := lists.add(fs, "distance", "1,2", "MIS distances, comma-separated", 1, 2)
	orders := fs.String("order", "natural", "vertex orders, comma-separated: natural, rcm, locality, random")
	groupList := lists.add(fs, "group", "0", "lanes per vertex, comma-separated: 1, 4, 8, 32, or 0 to choose by degree", 0, 1, 4, 8, 32)
	vecList := lists.add(fs, "vec", "1", "MIS-1 with one lane per vertex: 1 reads rows with 16-byte loads, 0 with 4-byte loads; comma-separated", 0, 1)
	ruList := lists.add(fs, "runnerup", "1", "MIS-2 with one lane per vertex: 1 keeps a runner-up beside each ball's champion, 0 rescans the ball whenever its champion leaves; comma-separated", 0, 1)
	bandList := lists.add(fs, "bands", "0", "order the first sweeps by key in this many bands of the hash, comma-separated: 1 for none, 0 for the default", 0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32)
	perList := lists.add(fs, "perband", "0", "sweeps per band, comma-separated: 0 for the default", 0, 1, 2, 3, 4)
	kfList := lists.add(fs, "keyfilter", "-1", "read modes, one lane per vertex: -1 for the default (MIS-1: by locality; MIS-2: 16, or 48 on long local rows), else the sum of 1 (MIS-1 scans read only states that can decide; hash keys), 2 (members push OUT without reading), 4 (... into all neighbours), 16 (MIS-2: a member's warp pushes its two-hop neighbourhood), 48 (... one OR per state word of a run of ids; the default on long local rows); MIS-2 by buckets takes 32 (two-hop pushes one OR per state word) and 1 (hash keys: scans read larger keys only, pushes go to smaller ones only; the default on scattered rows from average degree 10); comma-separated", -1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 18, 32, 33, 48)
	shapeList := lists.add(fs, "bandshape", "0", "band shape in hundredths: band i of k takes the top ((i+1)/k)^(shape/100) of the hash range; 0 for the default; comma-separated", 0, 25, 50, 75, 100, 125, 150, 200, 250, 300, 400)
	firstList := lists.add(fs, "first", "1", "MIS-2 with one lane per vertex: 1 runs the first sweep with its own kernel (16-byte row loads), 0 with the general one; comma-separated", 0, 1)
	bucketList := lists.add(fs, "buckets", "0", "MIS-2 by key buckets in this many launches (mis2b), comma-separated: -1 for the ball sweeps, 0 for the default", -1, 0, 4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)
	bshapeList := lists.add(fs, "bucketshape", "0", "MIS-2 bucket shape in hundredths: launch i of k takes the top ((i+1)/k)^(shape/100) of the keys; 0 for the default; comma-separated", 0, 100, 150, 200, 250, 300, 400)
	classList := lists.add(fs, "bucketclass", "0", "MIS-2 by buckets: 1 gives each class buckets of its own where one class holds most vertices (Boundary, Degree on meshes), -1 runs the buckets over all keys, 0 for the default (1 from average degree 10); comma-separated", -1, 0, 1)
	flushList := lists.add(fs, "flush", "0", "MIS-2 by buckets: a warp decides its listed candidates once it has this many, comma-separated: 1 to 32, 0 for the default (1 from average degree 20, else 8)", 0, 1, 2, 4, 8, 16, 32)
	splitList := lists.add(fs, "split", "0", "MIS-2 by buckets, class keys whose class 0 holds most vertices (Boundary, Degree on meshes): 1 runs the classes above 0 first, then class 0 by the hash kernels, 2 the same with the first stage's candidates from a list of its vertices, -1 all classes by the class kernel, 0 for the default; comma-separated", -1, 0, 1, 2)
	balList := lists.add(fs, "balanced", "0", "MIS-2 by buckets: 1 takes the balanced kernels (a block's tiles go to its warps as they ask; pushes along scattered rows skip repeated targets), -1 the others, 0 for the default (from average degree 20, and for hash keys below 10); comma-separated", -1, 0, 1)
	tailList := lists.add(fs, "tail", "0", "full sweeps before the persistent tail launch, comma-separated: 1 to 16, -1 for none, 0 for the default", -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
	priority := fs.String("priority", "hash", "priority: hash, boundary or degree")
	seed := fs.Uint64("seed", 0, "hash seed")
	reps := fs.Int("reps", 10, "timed runs per measurement, at least 10 (median reported)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	verify := fs.Bool("verify", true, "check every set against the CPU greedy set and mis.Verify")
	profile := fs.Bool("profile", false, "also time each sweep on its own (JSON only)")
	if err := parseDeviceBenchFlags(fs, args, stdout, reps); err != nil {
		return err
	}
	if err := lists.parse(); err != nil {
		return err
	}
	kind, err := mis.ParsePriorityKind(*priority)
	if err != nil || kind == mis.User {
		return fmt.Errorf("bench: -priority %q: want hash, boundary or degree", *priority)
	}
	orderList := strings.Split(*orders, ",")
	for i, o := range orderList {
		orderList[i] = strings.TrimSpace(o)
		if err := oneOf("order", orderList[i], "natural", "rcm", "locality", "random"); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	if err := cuda.Available(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	rep := gpuBenchReport{Reps: *reps, Priority: kind.String(), Seed: *seed}
	if dev, err := cuda.GetDevice(0); err == nil {
		rep.Device, _ = dev.Name()
	}
	if v, err := cuda.DriverVersion(); err == nil {
		rep.Driver = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	// The first upload of a process starts the engine (the driver's
	// context, the kernel image): time it on an empty graph, so that the
	// copy column holds what each further graph costs.
	t0 := time.Now()
	dg0, err := mis.UploadGraph(&mesh.Graph{Offsets: []int64{0}}, nil)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	dg0.Close()
	rep.StartS = time.Since(t0).Seconds()
	prog := newProgress(stderr, "bench")
	pri := mis.Priority{Kind: kind, Seed: *seed}
	var mismatch []string
	for _, spec := range strings.Split(*graphs, ",") {
		spec = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(spec), "gen:"))
		prog.Show("generating %s", spec)
		base, _, err := generate(spec)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		for _, order := range orderList {
			prog.Show("%s: %s order", spec, order)
			g, err := reorder(base, order)
			if err != nil {
				return fmt.Errorf("bench: %s: %w", spec, err)
			}
			t0 := time.Now()
			dg, err := mis.UploadGraph(g, nil)
			if err != nil {
				return fmt.Errorf("bench: %s: %w", spec, err)
			}
			up := time.Since(t0)
			for _, d := range *distList {
				var want *mis.Result
				if *verify {
					prog.Show("%s %s distance %d: CPU reference", spec, order, d)
					if want, err = mis.Compute(g, mis.Options{Distance: d, Priority: pri, Device: mis.CPU}); err != nil {
						dg.Close()
						return fmt.Errorf("bench: %s: %w", spec, err)
					}
				}
				for _, v := range gpuVariants(d, *groupList, *tailList, *vecList, *ruList, *bandList, *perList, *kfList, *shapeList, *firstList, *bucketList, *bshapeList, *flushList, *classList, *splitList, *balList) {
					prog.Show("%s %s distance %d: GPU", spec, order, d)
					v.Reps, v.Profile = *reps, *profile
					r, err := benchGPUOne(g, dg, mis.Options{Distance: d, Priority: pri}, v, want)
					r.Scalar, r.Single = v.Scalar, v.Single
					r.Graph, r.Order = spec, order
					r.UploadSeconds = up.Seconds()
					r.UploadGBps = float64(8*int64(g.N()+1)+4*g.NumEdges()) / up.Seconds() / 1e9
					if errors.Is(err, errMismatch) {
						// Report the numbers, and fail at the end.
						mismatch = append(mismatch, fmt.Sprintf("%s %s distance %d lanes %d: %v", spec, order, d, r.Group, err))
					} else if err != nil {
						dg.Close()
						return fmt.Errorf("bench: %s %s distance %d: %w", spec, order, d, err)
					}
					rep.Results = append(rep.Results, r)
				}
			}
			if err := dg.Close(); err != nil {
				return fmt.Errorf("bench: %s: %w", spec, err)
			}
		}
	}
	prog.Done("")
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		printGPUBench(stdout, &rep)
	}
	if len(mismatch) > 0 {
		return fmt.Errorf("bench: wrong sets (a bug): %s", strings.Join(mismatch, "; "))
	}
	return nil
}

// gpuVariants is every combination of the tuning lists for distance d,
// the earlier lists varying slowest: -vec applies to MIS-1, -runnerup,
// -first to MIS-2, -bandshape to MIS-1.
func gpuVariants(d int, groups, tails, vecs, runnerUps, bands, perBand, kfs, shapes, firsts, buckets, bshapes, flushes, classes, splits, bals []int) []mis.DeviceBench {
	variants := vecs
	if d == 2 {
		variants, shapes = runnerUps, []int{0}
	} else {
		firsts, buckets, bshapes, flushes, classes, splits, bals = []int{1}, []int{0}, []int{0}, []int{0}, []int{0}, []int{0}, []int{0}
	}
	out := []mis.DeviceBench{{}}
	expand := func(vals []int, set func(*mis.DeviceBench, int)) {
		next := make([]mis.DeviceBench, 0, len(out)*len(vals))
		for _, b := range out {
			for _, v := range vals {
				set(&b, v)
				next = append(next, b)
			}
		}
		out = next
	}
	expand(groups, func(b *mis.DeviceBench, v int) { b.Group = v })
	expand(tails, func(b *mis.DeviceBench, v int) { b.Tail = v })
	expand(variants, func(b *mis.DeviceBench, v int) { b.Scalar, b.Single = d == 1 && v == 0, d == 2 && v == 0 })
	expand(bands, func(b *mis.DeviceBench, v int) { b.Bands = v })
	expand(perBand, func(b *mis.DeviceBench, v int) { b.PerBand = v })
	expand(kfs, func(b *mis.DeviceBench, v int) { b.KeyFilter = v + 1 })
	expand(shapes, func(b *mis.DeviceBench, v int) { b.BandShape = v })
	expand(firsts, func(b *mis.DeviceBench, v int) { b.NoFirst = v == 0 })
	expand(buckets, func(b *mis.DeviceBench, v int) { b.Buckets = v })
	expand(bshapes, func(b *mis.DeviceBench, v int) { b.BucketShape = v })
	expand(flushes, func(b *mis.DeviceBench, v int) { b.Flush = v })
	expand(classes, func(b *mis.DeviceBench, v int) { b.ClassBuckets = v })
	expand(splits, func(b *mis.DeviceBench, v int) { b.Split = v })
	expand(bals, func(b *mis.DeviceBench, v int) { b.Balanced = v })
	return out
}

// errMismatch marks a GPU set that is not the CPU greedy set.
var errMismatch = errors.New("the GPU set differs from the CPU greedy set")

func benchGPUOne(g *mesh.Graph, dg *mis.DeviceGraph, opts mis.Options, b mis.DeviceBench, want *mis.Result) (gpuBenchResult, error) {
	r := gpuBenchResult{Vertices: g.N(), Edges: g.NumEdges(), Distance: opts.Distance}
	t, err := mis.TimeDevice(dg, opts, b)
	if err != nil {
		return r, err
	}
	r.Group, r.Tail, r.Bands, r.PerBand, r.KeyFilter = t.Group, t.Tail, t.Bands, t.PerBand, t.KeyFilter
	r.BandShape, r.NoFirst, r.Buckets, r.BShape, r.Flush, r.ClassBk = b.BandShape, b.NoFirst, t.Buckets, b.BucketShape, t.Flush, t.PerClass
	r.Stages, r.Balanced = t.Stages, t.Balanced
	r.MISSeconds = median(t.MIS).Seconds()
	r.MISMinSeconds = slices.Min(t.MIS).Seconds()
	r.MISMaxSeconds = slices.Max(t.MIS).Seconds()
	r.FloorSeconds = median(t.Floor).Seconds()
	r.FloorGBps = float64(8*int64(g.N()+1)+4*g.NumEdges()+int64(g.N())) / r.FloorSeconds / 1e9
	r.Ratio = r.MISSeconds / r.FloorSeconds
	for i, d := range t.SweepTimes {
		r.SweepMS = append(r.SweepMS, 1e3*d.Seconds())
		r.SweepLive = append(r.SweepLive, t.SweepLive[i])
	}
	r.SetSize = t.Result.Size
	r.Sweeps = t.Rounds
	if want != nil {
		r.Identical = slices.Equal(t.Result.In, want.In)
		verr := mis.Verify(g, t.Result.In, opts.Distance)
		r.Verified = verr == nil
		if !r.Identical {
			return r, fmt.Errorf("%w (CPU %d members, GPU %d; Verify: %v)", errMismatch, want.Size, t.Result.Size, verr)
		}
		if verr != nil {
			return r, fmt.Errorf("%w: %v", errMismatch, verr)
		}
	}
	return r, nil
}

// reorder returns g in the named vertex order.
func reorder(g *mesh.Graph, order string) (*mesh.Graph, error) {
	switch order {
	case "rcm":
		return g.Permute(mesh.RCM(g))
	case "locality":
		return g.Permute(mesh.LocalityOrder(g))
	case "random":
		h, _ := mesh.Relabel(g, genSeed+1)
		return h, nil
	}
	return g, nil
}

// parseDeviceBenchFlags parses the flags of the GPU benchmarks, which take
// no arguments and time at least ten runs, as the project's method asks.
func parseDeviceBenchFlags(fs *flag.FlagSet, args []string, stdout io.Writer, reps *int) error {
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	if *reps < 10 {
		return fmt.Errorf("bench: -reps %d: want at least 10", *reps)
	}
	return nil
}

// listFlags are comma-separated integer flags, each with the values it
// allows; parse fills them after the flag set is parsed.
type listFlags []listFlag

type listFlag struct {
	name    string
	s       *string
	allowed []int
	out     *[]int
}

func (l *listFlags) add(fs *flag.FlagSet, name, def, usage string, allowed ...int) *[]int {
	out := new([]int)
	*l = append(*l, listFlag{name, fs.String(name, def, usage), allowed, out})
	return out
}

func (l listFlags) parse() error {
	for _, f := range l {
		v, err := intList(f.name, *f.s, f.allowed...)
		if err != nil {
			return err
		}
		*f.out = v
	}
	return nil
}

func intList(name, s string, allowed ...int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || !slices.Contains(allowed, v) {
			return nil, fmt.Errorf("bench: -%s %q: want a comma-separated list of %v", name, s, allowed)
		}
		out = append(out, v)
	}
	return out, nil
}

func printGPUBench(w io.Writer, rep *gpuBenchReport) {
	fmt.Fprintf(w, "GPU: %s, driver CUDA %s; priority %s, seed %d; median of %d runs (CUDA events); engine start %.1f ms\n\n",
		rep.Device, rep.Driver, rep.Priority, rep.Seed, rep.Reps, 1e3*rep.StartS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\torder\tvertices\tedges\tdist\tlanes\ttail\tbuckets\tcopy ms\tfloor ms\tMIS ms\tMIS/floor\tset size\tsweeps\tchecked\t")
	for _, r := range rep.Results {
		check := "-"
		if r.Verified && r.Identical {
			check = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.3f\t%.3f\t%.1f\t%d\t%d\t%s\t\n",
			r.Graph, r.Order, r.Vertices, r.Edges, r.Distance, r.Group, r.Tail, r.Buckets, 1e3*r.UploadSeconds,
			1e3*r.FloorSeconds, 1e3*r.MISSeconds, r.Ratio, r.SetSize, r.Sweeps, check)
	}
	tw.Flush()
}
