package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/gpubench"
	"github.com/misgrid/misgrid/mis"
)

const benchGPUUsage = `usage: misgrid bench -device gpu[:N] [flags]

Measures the GPU MIS on generated graphs or graph files. Each graph is
built or read on the host, copied to the GPU once (the copy is timed
separately), and then timed with CUDA events: the MIS (state
initialisation and all sweeps) and, in the same run, the floor: one
kernel that streams the row offsets and the adjacency once and writes a
byte per vertex, the least memory traffic any MIS needs. Both are medians
of -reps runs after two warm-ups; the ratio MIS/floor says how many floor
passes the MIS costs. Every set is checked with mis.Verify and against
the CPU greedy set for the same graph and priority.

-graphs takes generator specs (see 'misgrid help coarsen') and graph
files: .mtx (Matrix Market), .msh (Gmsh 4.1) and .egr (ECL), each
optionally gzipped (.gz); a mesh refined uniformly L times is named
FILE.msh:refine=L (bench/meshes/part.msh.gz:refine=2: 3.1M nodes).

-order runs each graph in several vertex orders: natural (as generated
or read), rcm (reverse Cuthill-McKee), locality (mesh.LocalityOrder) and
random (a random relabelling), so you can see whether reordering pays
before the MIS. The hash priority depends on vertex ids, so each order
has its own set.

flags:
`

const defaultGPUGraphs = "hex27:160,hex27:160:relabel,hex27:256,grid7:200,random:4000000:16"

func benchGPU(args []string, ordinal int, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchGPUUsage)
	graphs := fs.String("graphs", defaultGPUGraphs, "comma-separated generator specs and graph files")
	dists := fs.String("distance", "1,2", "MIS distances, comma-separated")
	orders := fs.String("order", "natural", "vertex orders, comma-separated: natural, rcm, locality, random")
	priority := fs.String("priority", "hash", "priority: hash, boundary or degree")
	seed := fs.Uint64("seed", 0, "hash seed")
	reps := fs.Int("reps", 10, "timed runs per measurement, at least 10 (median reported)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseDeviceBenchFlags(fs, args, stdout, reps); err != nil {
		return err
	}
	distList, err := intList("distance", *dists, 1, 2)
	if err != nil {
		return err
	}
	kind, err := mis.ParsePriorityKind(*priority)
	if err != nil || kind == mis.User {
		return fmt.Errorf("bench: -priority %q: want hash, boundary or degree", *priority)
	}
	var orderList []string
	for _, o := range strings.Split(*orders, ",") {
		o = strings.TrimSpace(o)
		if err := oneOf("order", o, "natural", "rcm", "locality", "random"); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		orderList = append(orderList, o)
	}
	prog := newProgress(stderr, "bench")
	rep, err := gpubench.Run(gpubench.Config{
		Device: ordinal, Graphs: graphSpecs(*graphs), Load: genspec.Load, Orders: orderList, Distances: distList,
		Priority: mis.Priority{Kind: kind, Seed: *seed}, Reps: *reps, Progress: prog.Show,
	})
	prog.Done("")
	if rep != nil {
		if *asJSON {
			if werr := writeJSON(stdout, rep); werr != nil {
				return werr
			}
		} else {
			rep.Print(stdout)
		}
	}
	if err != nil {
		if errors.Is(err, gpubench.ErrMismatch) {
			return fmt.Errorf("bench: wrong sets (a bug): %w", err)
		}
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// graphSpecs splits a -graphs list; a generator spec may keep the
// gen: prefix that coarsen's inputs take.
func graphSpecs(s string) []string {
	var names []string
	for _, f := range strings.Split(s, ",") {
		names = append(names, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(f), "gen:")))
	}
	return names
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

// intList parses a comma-separated list of the allowed values.
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
