package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/internal/gpubench"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

const benchUsage = `usage: misgrid bench [flags]

Measures CPU MIS throughput on generated graphs: the serial greedy
reference, the parallel version, and a one-pass floor (a parallel loop that
reads every adjacency entry once), all in the same run, as the median of
-reps timed runs after one warm-up. Throughput is adjacency entries
(directed edges) per second; the ratios say how many floor passes each MIS
costs. With -device gpu the GPU benchmark runs instead, with the other flags.

flags:
`

// defaultBenchGraphs are the graphs of a plain 'misgrid bench'.
var defaultBenchGraphs = "hex27:64,hex27:64:relabel,grid7:100,random:1000000:16"

type benchConfig struct {
	graphs    string
	distances string
	priority  string
	seed      uint64
	workers   int
	reps      int
	json      bool
	device    string
}

func benchFlags() (*flag.FlagSet, *benchConfig) {
	c := &benchConfig{}
	fs := newFlagSet("bench", benchUsage)
	fs.StringVar(&c.graphs, "graphs", defaultBenchGraphs, "comma-separated generator specs (as in coarsen, without gen:)")
	fs.StringVar(&c.distances, "distance", "1,2", "MIS distances to measure, comma-separated")
	fs.StringVar(&c.priority, "priority", "hash", "priority: hash, boundary or degree")
	fs.Uint64Var(&c.seed, "seed", 0, "hash seed")
	fs.IntVar(&c.workers, "threads", 0, "goroutines of the parallel MIS and the floor (0: GOMAXPROCS)")
	refuseRenamed(fs, map[string]string{"workers": "threads"})
	fs.IntVar(&c.reps, "reps", 5, "timed runs per measurement (median reported)")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	fs.StringVar(&c.device, "device", "cpu", "cpu, or gpu (gpu:N) to run the GPU benchmark")
	return fs, c
}

// benchResult is one graph at one distance. Times are medians in seconds.
type benchResult struct {
	Graph    string `json:"graph"`
	Vertices int    `json:"vertices"`
	Edges    int64  `json:"edges"` // adjacency entries (directed edges)
	Distance int    `json:"distance"`

	SerialSeconds   float64 `json:"serial_s"`
	ParallelSeconds float64 `json:"parallel_s"`
	FloorSeconds    float64 `json:"floor_s"`

	SerialEdgesPerSecond   float64 `json:"serial_edges_per_s"`
	ParallelEdgesPerSecond float64 `json:"parallel_edges_per_s"`
	FloorEdgesPerSecond    float64 `json:"floor_edges_per_s"`

	ParallelOverFloor float64 `json:"parallel_over_floor"`
	SerialOverFloor   float64 `json:"serial_over_floor"`
	Speedup           float64 `json:"speedup"` // serial / parallel

	SetSize int `json:"set_size"`
	Rounds  int `json:"rounds"`
	// Identical reports that the parallel set equals the serial one (the
	// package's contract); a false here is a bug, and bench fails.
	Identical bool `json:"identical"`
}

type benchReport struct {
	Workers    int           `json:"workers"`
	GOMAXPROCS int           `json:"gomaxprocs"`
	NumCPU     int           `json:"num_cpu"`
	Reps       int           `json:"reps"`
	Priority   string        `json:"priority"`
	GoVersion  string        `json:"go_version"`
	Results    []benchResult `json:"results"`
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if wantsGPUs(args) {
		return benchGPUs(args, stdout, stderr)
	}
	if rest, dev, gpu := splitDevice(args); gpu {
		return benchGPU(rest, dev.Index(), stdout, stderr)
	}
	fs, c := benchFlags()
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	if err := oneOf("device", c.device, "cpu", "gpu"); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if c.reps < 1 {
		return fmt.Errorf("bench: -reps %d: want at least 1", c.reps)
	}
	if c.workers < 0 {
		return fmt.Errorf("bench: -workers %d: want 0 (all) or more", c.workers)
	}
	kind, err := mis.ParsePriorityKind(c.priority)
	if err != nil || kind == mis.User {
		return fmt.Errorf("bench: -priority %q: want hash, boundary or degree", c.priority)
	}
	var dists []int
	for _, s := range strings.Split(c.distances, ",") {
		switch strings.TrimSpace(s) {
		case "1":
			dists = append(dists, 1)
		case "2":
			dists = append(dists, 2)
		default:
			return fmt.Errorf("bench: -distance %q: want 1, 2 or 1,2", c.distances)
		}
	}
	workers := c.workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	specs := strings.Split(c.graphs, ",")
	prog := newProgress(stderr, "bench")
	stdout = prog.Wrap(stdout)
	rep := benchReport{Workers: workers, GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Reps: c.reps, Priority: kind.String(), GoVersion: runtime.Version()}
	for _, spec := range specs {
		spec = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(spec), "gen:"))
		prog.Show("generating %s", spec)
		g, _, err := generate(spec)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		keys, err := mis.Keys(g, mis.Priority{Kind: kind, Seed: c.seed})
		if err != nil {
			return fmt.Errorf("bench: %s: %w", spec, err)
		}
		for _, d := range dists {
			prog.Show("%s distance %d", spec, d)
			r, err := benchOne(g, keys, d, workers, c.reps)
			if err != nil {
				return fmt.Errorf("bench: %s distance %d: %w", spec, d, err)
			}
			r.Graph = spec
			rep.Results = append(rep.Results, r)
		}
	}
	prog.Done("")
	if c.json {
		return writeJSON(stdout, rep)
	}
	printBench(stdout, &rep)
	return nil
}

// splitDevice finds -device gpu (or --device=gpu) in args and returns the
// other arguments, so that the GPU benchmark can parse them itself; dev
// is the device, gpu or gpu:N.
func splitDevice(args []string) (rest []string, dev mis.Device, gpu bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "device" {
			if a == "--" {
				break
			}
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return args, 0, false
			}
			val = args[i+1]
		}
		d, err := mis.ParseDevice(val)
		if err != nil || d.Kind() != mis.GPU {
			return args, 0, false
		}
		rest = append(slices.Clone(args[:i]), args[i+1:]...)
		if !hasVal {
			rest = append(slices.Clone(args[:i]), args[i+2:]...)
		}
		return rest, d, true
	}
	return args, 0, false
}

// benchOne times the serial greedy, the parallel MIS and the floor on one
// graph, interleaved rep by rep so that all three see the same machine
// state, after one untimed warm-up of each.
func benchOne(g *mesh.Graph, keys []uint64, dist, workers, reps int) (benchResult, error) {
	var ser, par, flo []time.Duration
	var sres, pres *mis.Result
	for i := -1; i < reps; i++ {
		var err error
		t := time.Now()
		if sres, err = mis.Greedy(g, keys, dist); err != nil {
			return benchResult{}, err
		}
		ts := time.Since(t)
		t = time.Now()
		if pres, err = mis.Parallel(g, keys, dist, workers); err != nil {
			return benchResult{}, err
		}
		tp := time.Since(t)
		t = time.Now()
		floorSink = Floor(g, workers)
		tf := time.Since(t)
		if i >= 0 {
			ser, par, flo = append(ser, ts), append(par, tp), append(flo, tf)
		}
	}
	r := benchResult{Vertices: g.N(), Edges: g.NumEdges(), Distance: dist,
		SetSize: pres.Size, Rounds: pres.Rounds, Identical: slices.Equal(sres.In, pres.In)}
	if !r.Identical {
		return r, errors.New("parallel set differs from the serial greedy set")
	}
	if err := mis.Verify(g, pres.In, dist); err != nil {
		return r, err
	}
	r.SerialSeconds = gpubench.Median(ser).Seconds()
	r.ParallelSeconds = gpubench.Median(par).Seconds()
	r.FloorSeconds = gpubench.Median(flo).Seconds()
	e := float64(r.Edges)
	r.SerialEdgesPerSecond = e / r.SerialSeconds
	r.ParallelEdgesPerSecond = e / r.ParallelSeconds
	r.FloorEdgesPerSecond = e / r.FloorSeconds
	r.ParallelOverFloor = r.ParallelSeconds / r.FloorSeconds
	r.SerialOverFloor = r.SerialSeconds / r.FloorSeconds
	r.Speedup = r.SerialSeconds / r.ParallelSeconds
	return r, nil
}

// floorSink keeps the floor's sum alive so the compiler cannot drop the loop.
var floorSink uint64

// Floor is the one-pass floor: it reads every row offset and every
// adjacency entry once, summing them, split over workers in contiguous
// vertex ranges as the parallel MIS splits its work. No MIS can read its
// graph in less time than this on the same cores.
func Floor(g *mesh.Graph, workers int) uint64 {
	n := g.N()
	if n == 0 {
		return 0
	}
	workers = max(1, min(workers, n))
	sums := make([]uint64, workers)
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s uint64
			off, adj := g.Offsets, g.Adj
			for v := lo; v < hi; v++ {
				s += uint64(off[v+1])
				for _, u := range adj[off[v]:off[v+1]] {
					s += uint64(u)
				}
			}
			sums[w] = s
		}()
	}
	wg.Wait()
	var s uint64
	for _, x := range sums {
		s += x
	}
	return s
}

func printBench(w io.Writer, r *benchReport) {
	fmt.Fprintf(w, "CPU MIS throughput: %d workers (GOMAXPROCS %d, %d CPUs), %s priority, median of %d runs, %s\n",
		r.Workers, r.GOMAXPROCS, r.NumCPU, r.Priority, r.Reps, r.GoVersion)
	fmt.Fprintln(w, "edges are adjacency entries (directed); x floor is time over the one-pass floor's time")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\tvertices\tedges\tdist\tserial ms\tparallel ms\tfloor ms\tserial Medge/s\tparallel Medge/s\tfloor Medge/s\tserial x floor\tparallel x floor\tspeedup\tset\trounds\t")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%d\t\n",
			x.Graph, x.Vertices, x.Edges, x.Distance,
			1e3*x.SerialSeconds, 1e3*x.ParallelSeconds, 1e3*x.FloorSeconds,
			x.SerialEdgesPerSecond/1e6, x.ParallelEdgesPerSecond/1e6, x.FloorEdgesPerSecond/1e6,
			x.SerialOverFloor, x.ParallelOverFloor, x.Speedup, x.SetSize, x.Rounds)
	}
	tw.Flush()
}
