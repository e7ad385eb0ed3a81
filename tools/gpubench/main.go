// Command gpubench is the developers' benchmark of the single-GPU MIS:
// 'misgrid bench -device gpu' with the engine's tuning exposed, to
// measure a change of a default against the default in one run.
// Each tuning flag takes a comma-separated list; every combination runs.
// scripts/gpu-check.sh builds it.
//
//	go run ./tools/gpubench -graphs hex27:160 -distance 2 -buckets 0,8,12
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/gpubench"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// knob is a tuning flag: a list of values, 0 (or "") keeping the default.
type knob struct {
	name, usage string
	list        *string
	set         func(t *misgpu.Tuning, v float64)
}

var knobs = []knob{
	{name: "group", usage: "lanes per vertex: 1, 4, 8, 32", set: func(t *misgpu.Tuning, v float64) { t.Group = int(v) }},
	{name: "tail", usage: "full sweeps before the persistent tail, -1 none", set: func(t *misgpu.Tuning, v float64) { t.Tail = max(int(v), 0) }},
	{name: "bands", usage: "MIS-1 hash bands of the first sweeps, 1 none", set: func(t *misgpu.Tuning, v float64) { t.Bands = int(v) }},
	{name: "perband", usage: "sweeps per band", set: func(t *misgpu.Tuning, v float64) { t.PerBand = int(v) }},
	{name: "bandshape", usage: "band shape γ: band i of k takes the top ((i+1)/k)^γ", set: func(t *misgpu.Tuning, v float64) { t.BandShape = v }},
	{name: "kf", usage: "read mode, a sum of KF_* bits of mis.cu (-1: by locality)", set: func(t *misgpu.Tuning, v float64) { t.KF, t.KFAuto = uint32(max(v, 0)), v < 0 }},
	{name: "buckets", usage: "MIS-2 key buckets, -1 for the ball sweeps", set: func(t *misgpu.Tuning, v float64) { t.Buckets, t.FarBuckets = max(int(v), 0), 0 }},
	{name: "bucketshape", usage: "bucket shape γ", set: func(t *misgpu.Tuning, v float64) { t.BucketShape = v }},
	{name: "flush", usage: "candidates a warp lists before deciding, 1 to 32", set: func(t *misgpu.Tuning, v float64) { t.Flush = int(v) }},
	{name: "classbuckets", usage: "1 per-class buckets, -1 over all keys", set: func(t *misgpu.Tuning, v float64) { t.ClassBuckets = v > 0 }},
	{name: "split", usage: "class keys in two stages: 1, 2 (from a list), -1 one stage", set: func(t *misgpu.Tuning, v float64) { t.Split = max(int(v), 0) }},
	{name: "balanced", usage: "1 the balanced bucket kernels, -1 the others", set: func(t *misgpu.Tuning, v float64) { t.Balanced, t.BalancedHash = v > 0, false }},
	{name: "mixedbuckets", usage: "MIS-2 buckets of class keys mixed over all keys, -1 as -buckets", set: func(t *misgpu.Tuning, v float64) { t.MixedBuckets = max(int(v), 0) }},
	{name: "pipe", usage: "1 bucket kernels load a pair ahead (KF_PIPE), -1 not", set: func(t *misgpu.Tuning, v float64) { t.Pipe = v > 0 }},
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gpubench", flag.ContinueOnError)
	graphs := fs.String("graphs", "hex27:160,hex27:160:relabel,grid7:200,random:4000000:16", "generator specs and graph files, comma-separated")
	dists := fs.String("distance", "1,2", "MIS distances, comma-separated")
	orders := fs.String("order", "natural", "vertex orders: natural, rcm, locality, random")
	priority := fs.String("priority", "hash", "hash, boundary or degree")
	seed := fs.Uint64("seed", 0, "hash seed")
	reps := fs.Int("reps", 10, "timed runs, at least 10")
	device := fs.Int("device", 0, "CUDA device index")
	profile := fs.Bool("profile", false, "also time each sweep on its own (JSON)")
	asJSON := fs.Bool("json", false, "print JSON")
	for i := range knobs {
		knobs[i].list = fs.String(knobs[i].name, "0", knobs[i].usage+"; 0 the default; comma-separated")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	kind, err := mis.ParsePriorityKind(*priority)
	if err != nil {
		return err
	}
	var dl []int
	for _, s := range strings.Split(*dists, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || d < 1 || d > 2 {
			return fmt.Errorf("-distance %q: want 1, 2 or 1,2", *dists)
		}
		dl = append(dl, d)
	}
	variants, err := combinations()
	if err != nil {
		return err
	}
	rep, err := gpubench.Run(gpubench.Config{
		Device: *device, Graphs: strings.Split(*graphs, ","), Load: func(name string) (*mesh.Graph, error) { return genspec.Load(strings.TrimSpace(name)) }, Orders: strings.Split(*orders, ","), Distances: dl,
		Priority: mis.Priority{Kind: kind, Seed: *seed}, Reps: *reps, Profile: *profile,
		Variants: func(int) []gpubench.Variant { return variants },
		Progress: func(f string, a ...any) { fmt.Fprintf(os.Stderr, "\r\033[K"+f, a...) },
	})
	fmt.Fprint(os.Stderr, "\r\033[K")
	if rep != nil {
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(rep); jerr != nil {
				return errors.Join(err, jerr)
			}
		} else {
			rep.Print(os.Stdout)
		}
	}
	return err
}

// combinations is every combination of the knobs' lists, named by the
// values that differ from the default.
func combinations() ([]gpubench.Variant, error) {
	out := []gpubench.Variant{{}}
	for _, k := range knobs {
		var next []gpubench.Variant
		for _, s := range strings.Split(*k.list, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return nil, fmt.Errorf("-%s %q: want numbers", k.name, *k.list)
			}
			for _, b := range out {
				if v == 0 {
					next = append(next, b)
					continue
				}
				prev, set := b.Tune, k.set
				next = append(next, gpubench.Variant{
					Name: strings.TrimSpace(b.Name + " " + k.name + "=" + strings.TrimSpace(s)),
					Tune: func(t *misgpu.Tuning) {
						if prev != nil {
							prev(t)
						}
						set(t, v)
					},
				})
			}
		}
		out = next
	}
	return out, nil
}
