// Package gpubench times the single-GPU MIS against the memory-streaming
// floor in the same run, for 'misgrid bench -device gpu' (the defaults)
// and the developers' benchmark (tools/gpubench, which adjusts the
// tuning). Every set is checked against the CPU greedy set.
package gpubench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Variant is a tuning to time beside (or instead of) the default one.
type Variant struct {
	Name string
	Tune func(*misgpu.Tuning) // nil: the defaults
}

// Config says what to time.
type Config struct {
	Device    int                                    // CUDA device index
	Graphs    []string                               // names for Load
	Load      func(name string) (*mesh.Graph, error) // builds or reads a graph
	Orders    []string                               // natural, rcm, locality, random
	Distances []int                                  // 1, 2
	Priority  mis.Priority                           // Hash, Boundary or Degree
	Reps      int                                    // timed runs, at least 10
	Variants  func(dist int) []Variant               // nil: the defaults only
	Profile   bool                                   // time each sweep of each variant once more
	Progress  func(format string, args ...any)       // nil: quiet
}

// Result is one graph, order, distance and variant. Times are in
// seconds; the MIS and floor times are medians.
type Result struct {
	Graph    string   `json:"graph"`
	Order    string   `json:"order"`
	Variant  string   `json:"variant,omitempty"`
	Vertices int      `json:"vertices"`
	Edges    int64    `json:"edges"`
	Distance int      `json:"distance"`
	Lanes    int      `json:"lanes_per_vertex"`
	Kernels  []string `json:"kernels"` // the plan's stages
	Buckets  int      `json:"buckets,omitempty"`

	UploadSeconds float64 `json:"upload_s"` // host to device copy of the graph
	UploadGBps    float64 `json:"upload_gbps"`
	MISSeconds    float64 `json:"mis_s"`
	MISMinSeconds float64 `json:"mis_min_s"`
	MISMaxSeconds float64 `json:"mis_max_s"`
	FloorSeconds  float64 `json:"floor_s"`
	FloorGBps     float64 `json:"floor_gbps"`
	Ratio         float64 `json:"mis_over_floor"`

	SetSize   int  `json:"set_size"`
	Sweeps    int  `json:"sweeps"`
	Identical bool `json:"identical_to_cpu"`
	Verified  bool `json:"verified"`

	// With Profile: each sweep's time and the vertices still in play.
	SweepMS   []float64 `json:"sweep_ms,omitempty"`
	SweepLive []int     `json:"sweep_live,omitempty"`
}

// Report is a whole run.
type Report struct {
	Device   string   `json:"device"`
	Driver   string   `json:"driver_cuda_version"`
	Reps     int      `json:"reps"`
	Priority string   `json:"priority"`
	Seed     uint64   `json:"seed"`
	StartS   float64  `json:"engine_start_s"` // first use: driver context and kernel image
	Results  []Result `json:"results"`
}

// ErrMismatch marks a GPU set that is not the CPU greedy set (a bug).
var ErrMismatch = errors.New("the GPU set differs from the CPU greedy set")

// Run times every graph, order, distance and variant of c on GPU
// c.Device. A
// wrong set does not stop it: the report comes back with an error
// wrapping ErrMismatch.
func Run(c Config) (*Report, error) {
	if c.Reps < 10 {
		return nil, fmt.Errorf("-reps %d: want at least 10", c.Reps)
	}
	if c.Progress == nil {
		c.Progress = func(string, ...any) {}
	}
	if c.Variants == nil {
		c.Variants = func(int) []Variant { return []Variant{{}} }
	}
	rep := &Report{Reps: c.Reps, Priority: c.Priority.Kind.String(), Seed: c.Priority.Seed}
	if dev, err := cuda.GetDevice(c.Device); err == nil {
		rep.Device, _ = dev.Name()
	}
	if v, err := cuda.DriverVersion(); err == nil {
		rep.Driver = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	// The first use starts the engine (the driver's context, the kernel
	// image): time it apart, so that the copy column holds what each
	// graph costs.
	t0 := time.Now()
	if _, err := misgpu.Open(c.Device); err != nil {
		return nil, err
	}
	rep.StartS = time.Since(t0).Seconds()
	var mismatch []string
	for _, name := range c.Graphs {
		c.Progress("loading %s", name)
		base, err := c.Load(name)
		if err != nil {
			return nil, err
		}
		for _, order := range c.Orders {
			c.Progress("%s: %s order", name, order)
			g, err := Reorder(base, order)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			rs, bad, err := c.graph(g)
			for i := range rs {
				rs[i].Graph, rs[i].Order = name, order
			}
			rep.Results = append(rep.Results, rs...)
			for _, b := range bad {
				mismatch = append(mismatch, fmt.Sprintf("%s %s %s", name, order, b))
			}
			if err != nil {
				return rep, fmt.Errorf("%s %s: %w", name, order, err)
			}
		}
	}
	if len(mismatch) > 0 {
		return rep, fmt.Errorf("%w: %s", ErrMismatch, strings.Join(mismatch, "; "))
	}
	return rep, nil
}

// graph times g at every distance and variant; bad lists the runs whose
// set was wrong.
func (c *Config) graph(g *mesh.Graph) (out []Result, bad []string, err error) {
	t0 := time.Now()
	dg, err := Upload(g, c.Device)
	if err != nil {
		return nil, nil, err
	}
	defer dg.Close()
	up := time.Since(t0)
	pri, err := DevicePriority(c.Priority, g)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range c.Distances {
		c.Progress("distance %d: CPU reference", d)
		want, err := mis.Compute(g, mis.Options{Distance: d, Priority: c.Priority, Device: mis.CPU})
		if err != nil {
			return out, bad, err
		}
		for _, v := range c.Variants(d) {
			c.Progress("distance %d: GPU %s", d, v.Name)
			t, err := dg.Time(d, pri, v.Tune, c.Reps, 2, c.Profile)
			if err != nil {
				return out, bad, err
			}
			r := result(g, d, t, want)
			r.Variant = v.Name
			r.UploadSeconds = up.Seconds()
			r.UploadGBps = float64(8*int64(g.N()+1)+4*g.NumEdges()) / up.Seconds() / 1e9
			if !r.Identical || !r.Verified {
				bad = append(bad, fmt.Sprintf("distance %d %s (CPU %d members, GPU %d)", d, v.Name, want.Size, r.SetSize))
			}
			out = append(out, r)
		}
	}
	return out, bad, nil
}

func result(g *mesh.Graph, d int, t *misgpu.Times, want *mis.Result) Result {
	r := Result{Vertices: g.N(), Edges: g.NumEdges(), Distance: d, Lanes: t.Tuning.Group}
	for _, s := range t.Plan.Stages {
		r.Kernels = append(r.Kernels, s.Kernel)
		if t.Plan.Buckets {
			r.Buckets += s.Launches() - 1
		}
	}
	r.MISSeconds = Median(t.MIS).Seconds()
	r.MISMinSeconds = slices.Min(t.MIS).Seconds()
	r.MISMaxSeconds = slices.Max(t.MIS).Seconds()
	r.FloorSeconds = Median(t.Floor).Seconds()
	r.FloorGBps = float64(8*int64(g.N()+1)+4*g.NumEdges()+int64(g.N())) / r.FloorSeconds / 1e9
	r.Ratio = r.MISSeconds / r.FloorSeconds
	for i, d := range t.SweepTimes {
		r.SweepMS = append(r.SweepMS, 1e3*d.Seconds())
		r.SweepLive = append(r.SweepLive, t.SweepLive[i])
	}
	r.SetSize, r.Sweeps = t.Result.Size, t.Rounds
	r.Identical = slices.Equal(t.Result.In, want.In)
	r.Verified = mis.Verify(g, t.Result.In, d) == nil
	return r
}

// Upload copies g, with its boundary classes, to GPU ordinal.
func Upload(g *mesh.Graph, ordinal int) (*misgpu.Graph, error) {
	l, err := misgpu.Open(ordinal)
	if err != nil {
		return nil, err
	}
	var cls []uint8
	for _, c := range g.Class {
		cls = append(cls, uint8(c))
	}
	return misgpu.Upload(l, g.Offsets, g.Adj, int64(g.MaxDegree()), cls)
}

// DevicePriority is p for the engine: Hash, Boundary (g's classes, which
// Upload copied) or Degree (ranked on the device).
func DevicePriority(p mis.Priority, g *mesh.Graph) (misgpu.Priority, error) {
	pri := misgpu.Priority{Seed: p.Seed}
	switch p.Kind {
	case mis.Hash:
	case mis.Boundary:
		if g.Class == nil {
			return pri, errors.New("the boundary priority needs boundary classes, which this graph lacks")
		}
		pri.GraphClass = true
	case mis.Degree:
		pri.Degree = true
	default:
		return pri, fmt.Errorf("priority %v: want hash, boundary or degree", p.Kind)
	}
	return pri, nil
}

// Reorder returns g in the named vertex order: natural (as it is), rcm
// (reverse Cuthill-McKee), locality (mesh.LocalityOrder) or random (a
// fixed random relabelling).
func Reorder(g *mesh.Graph, order string) (*mesh.Graph, error) {
	switch order {
	case "natural":
		return g, nil
	case "rcm":
		return g.Permute(mesh.RCM(g))
	case "locality":
		return g.Permute(mesh.LocalityOrder(g))
	case "random":
		h, _ := mesh.Relabel(g, 2)
		return h, nil
	}
	return nil, fmt.Errorf("order %q: want natural, rcm, locality or random", order)
}

// Median returns the median of ds (of an even count, the mean of the
// middle two).
func Median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if m := len(s) / 2; len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[len(s)/2]
}

// Print writes the report as a table.
func (rep *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "GPU: %s, driver CUDA %s; priority %s, seed %d; median of %d runs (CUDA events); engine start %.1f ms\n\n",
		rep.Device, rep.Driver, rep.Priority, rep.Seed, rep.Reps, 1e3*rep.StartS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "graph\torder\tvariant\tvertices\tedges\tdist\tlanes\tbuckets\tcopy ms\tfloor ms\tMIS ms\tMIS/floor\tset size\tsweeps\tchecked\t")
	for _, r := range rep.Results {
		check := "NO"
		if r.Verified && r.Identical {
			check = "yes"
		}
		v := r.Variant
		if v == "" {
			v = "default"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.3f\t%.3f\t%.1f\t%d\t%d\t%s\t\n",
			r.Graph, r.Order, v, r.Vertices, r.Edges, r.Distance, r.Lanes, r.Buckets, 1e3*r.UploadSeconds,
			1e3*r.FloorSeconds, 1e3*r.MISSeconds, r.Ratio, r.SetSize, r.Sweeps, check)
	}
	tw.Flush()
}
