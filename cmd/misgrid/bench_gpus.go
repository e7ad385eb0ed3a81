package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/gpubench"
	"github.com/misgrid/misgrid/internal/misgpu"
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

const benchGPUsUsage = `usage: misgrid bench -gpus N[,N...] [-graphs SPEC,...] [-distance 1,2] [-reps 10] [-json]

Measures the partitioned MIS over several GPUs of this host (one part per
GPU, contiguous vertex ranges, boundary states copied peer to peer where
the GPUs reach each other, else through pinned host memory). For each
graph, distance and GPU count it prints the median time of -reps runs
(state initialisation and all rounds, every device synchronised), the
single-GPU memory-streaming floor, the speedup over the same driver on
one GPU, the bytes copied per round, and whether the set equals the CPU
greedy set.
`

type gpusBenchResult struct {
	Graph         string   `json:"graph"`
	Vertices      int      `json:"vertices"`
	Edges         int64    `json:"edges"`
	Distance      int      `json:"distance"`
	GPUs          int      `json:"gpus"`
	Links         []string `json:"links"`
	MS            float64  `json:"ms"`
	FloorMS       float64  `json:"floor_ms"`
	SingleMISMS   float64  `json:"single_gpu_mis_ms"`
	Speedup       float64  `json:"speedup"`
	Rounds        int      `json:"rounds"`
	BytesPerRound int64    `json:"bytes_per_round"`
	BytesPerRun   int64    `json:"bytes_per_run"`
	SetSize       int      `json:"set_size"`
	Identical     bool     `json:"identical_to_greedy"`
}

func benchGPUs(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchGPUsUsage)
	gpus := fs.String("gpus", "1,2", "GPU counts, comma-separated")
	graphs := fs.String("graphs", "hex27:256,random:16777216:16", "comma-separated generator specs")
	dists := fs.String("distance", "1,2", "MIS distances, comma-separated")
	reps := fs.Int("reps", 10, "timed runs per measurement, at least 10 (median reported)")
	seed := fs.Uint64("seed", 0, "hash seed")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseDeviceBenchFlags(fs, args, stdout, reps); err != nil {
		return err
	}
	gpuList, err := intList("gpus", *gpus, 1, 2, 3, 4, 5, 6, 7, 8, 16)
	if err != nil {
		return err
	}
	distList, err := intList("distance", *dists, 1, 2)
	if err != nil {
		return err
	}
	nd, err := gpu.Count()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	for _, n := range gpuList {
		if n < 1 || n > nd {
			return fmt.Errorf("bench: -gpus %d, this host has %d GPUs", n, nd)
		}
	}
	prog := newProgress(stderr, "bench")
	pri := mis.Priority{Kind: mis.Hash, Seed: *seed} // the floor and the multi-GPU runs below hash too
	var out []gpusBenchResult
	var mismatch []string
	for _, spec := range strings.Split(*graphs, ",") {
		spec = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(spec), "gen:"))
		prog.Show("generating %s", spec)
		g, _, err := generate(spec)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		dg, err := gpubench.Upload(g, 0)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", spec, err)
		}
		for _, d := range distList {
			prog.Show("%s distance %d: CPU greedy", spec, d)
			want, err := mis.Compute(g, mis.Options{Distance: d, Priority: pri, Device: mis.CPU})
			if err != nil {
				dg.Close()
				return fmt.Errorf("bench: %s: %w", spec, err)
			}
			ft, err := dg.Time(d, misgpu.Priority{Seed: *seed}, nil, *reps, 2, false)
			if err != nil {
				dg.Close()
				return fmt.Errorf("bench: %s floor: %w", spec, err)
			}
			var one float64
			for _, n := range gpuList {
				prog.Show("%s distance %d: %d GPUs", spec, d, n)
				r, err := benchGPUsOne(g.N(), mis.MultiGPUOptions{Distance: d, Priority: pri, Devices: seq(n)}, g, *reps, want)
				if err != nil {
					dg.Close()
					return fmt.Errorf("bench: %s, %d GPUs: %w", spec, n, err)
				}
				r.Graph, r.Edges, r.Distance = spec, g.NumEdges(), d
				r.FloorMS, r.SingleMISMS = durMS(gpubench.Median(ft.Floor)), durMS(gpubench.Median(ft.MIS))
				if n == 1 {
					one = r.MS
				}
				if one > 0 {
					r.Speedup = one / r.MS
				}
				if !r.Identical {
					mismatch = append(mismatch, fmt.Sprintf("%s d%d %d GPUs", spec, d, n))
				}
				out = append(out, r)
			}
		}
		dg.Close()
	}
	prog.Done("done")
	if *asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "graph\tdist\tGPUs\tms\tfloor ms (1 GPU)\t1-GPU MIS ms\tspeedup\trounds\tbytes/round\tset size\tidentical\tlinks\t")
		for _, r := range out {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.2f\t%d\t%d\t%d\t%v\t%s\t\n", r.Graph, r.Distance, r.GPUs, r.MS,
				r.FloorMS, r.SingleMISMS, r.Speedup, r.Rounds, r.BytesPerRound, r.SetSize, r.Identical, strings.Join(r.Links, "; "))
		}
		tw.Flush()
	}
	if len(mismatch) > 0 {
		return fmt.Errorf("bench: sets differ from the greedy set: %s", strings.Join(mismatch, ", "))
	}
	return nil
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
	var times []time.Duration
	var last *mis.MultiGPUResult
	for i := range reps + 2 {
		res, err := m.Run(context.Background())
		if err != nil {
			return r, err
		}
		if i >= 2 {
			times = append(times, res.Time)
		}
		last = res
	}
	r.MS = durMS(median(times))
	r.Rounds, r.BytesPerRound, r.SetSize, r.Links = last.Rounds, last.BytesPerRound, last.Size, last.Links
	r.BytesPerRun = last.BytesPerRun
	r.Identical = last.Size == want.Size
	for v, in := range want.In {
		if last.In[v] != in {
			r.Identical = false
			break
		}
	}
	return r, nil
}
