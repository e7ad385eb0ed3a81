package main

import (
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/misgrid/misgrid/internal/progress"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

const coarsenUsage = `usage: misgrid coarsen [flags] INPUT

Computes a maximal independent set of INPUT's graph, or with -levels a
coarse-grid hierarchy (MIS, aggregates, coarse graph, repeated), prints a
summary and writes -o.

INPUT is a file or a generator spec:
  FILE.mtx   Matrix Market matrix: its pattern, with -theta and -block
  FILE.msh   Gmsh 4.1 ASCII mesh: its node graph, boundary classified from facets
  FILE.egr   ECL binary graph
             (any of them may be gzipped: FILE.mtx.gz)
  gen:SPEC   a generated graph, e.g. gen:hex:64, gen:hex27:100:relabel

` + genHelp + `
-o writes, by extension:
  .vtu       the mesh (or graph) with fields class, in_set, aggregate, coarse_level
  .egr       the coarse graph: the aggregates of the last level as vertices
  .png       a picture of a 2D mesh: the aggregates of each level, roots by class
  .txt, -    the vertex ids of the (finest level's) set, one a line

flags:
`

type coarsenConfig struct {
	distance     int
	priority     string
	seed         uint64
	theta        float64
	block        int
	device       string
	workers      int
	levels       int
	minVertices  int
	out          string
	featureAngle float64
	verify       bool
}

func coarsenFlags() (*flag.FlagSet, *coarsenConfig) {
	c := &coarsenConfig{}
	fs := newFlagSet("coarsen", coarsenUsage)
	fs.IntVar(&c.distance, "distance", 2, "MIS distance, 1 or 2")
	fs.StringVar(&c.priority, "priority", "boundary", "vertex priority: hash, boundary or degree")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the hash that breaks ties")
	fs.Float64Var(&c.theta, "theta", 0, "strength threshold for matrices: keep a_ij when |a_ij| > θ·sqrt(|a_ii·a_jj|)")
	fs.IntVar(&c.block, "block", 1, "block size of matrices: collapse b×b blocks (b dofs per node) to one vertex")
	fs.StringVar(&c.device, "device", "auto", "where the MIS runs: auto, cpu or gpu")
	fs.IntVar(&c.workers, "workers", 0, "CPU goroutines (0: GOMAXPROCS)")
	fs.IntVar(&c.levels, "levels", 0, "build a hierarchy of at most this many levels (0: one MIS)")
	fs.IntVar(&c.minVertices, "min", 64, "with -levels: stop at a level of at most this many vertices")
	fs.StringVar(&c.out, "o", "", "output file: .vtu, .egr, .png, .txt, or - for the set on stdout")
	fs.Float64Var(&c.featureAngle, "feature-angle", 30, "meshes: angle in degrees under which facet normals count as one direction")
	fs.BoolVar(&c.verify, "verify", true, "check that every set is a maximal independent set")
	return fs, c
}

func runCoarsen(args []string, stdout, stderr io.Writer) error {
	fs, c := coarsenFlags()
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 0:
		return errors.New("coarsen: no INPUT given (a .mtx, .msh or .egr file, or gen:hex:32)")
	case fs.NArg() > 1:
		return fmt.Errorf("coarsen: unexpected argument %q after INPUT (flags go before it)", fs.Arg(1))
	}
	if c.distance != 1 && c.distance != 2 {
		return fmt.Errorf("coarsen: -distance %d: want 1 or 2", c.distance)
	}
	kind, err := mis.ParsePriorityKind(c.priority)
	if err != nil || kind == mis.User {
		return fmt.Errorf("coarsen: -priority %q: want hash, boundary or degree", c.priority)
	}
	dev, err := mis.ParseDevice(c.device)
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	for _, chk := range []struct {
		bad        bool
		flag, want string
		val        any
	}{
		{c.levels < 0, "levels", "0 or more", c.levels},
		{c.workers < 0, "workers", "0 (all) or more", c.workers},
		{c.block < 1, "block", "1 or more", c.block},
		{c.minVertices < 1, "min", "1 or more", c.minVertices},
		{!(c.theta >= 0), "theta", "0 or more", c.theta},
		{!(c.featureAngle > 0 && c.featureAngle <= 180), "feature-angle", "in (0, 180] degrees", c.featureAngle},
	} {
		if chk.bad {
			return fmt.Errorf("coarsen: -%s %v: want %s", chk.flag, chk.val, chk.want)
		}
	}
	outKind := ""
	switch ext := strings.ToLower(filepath.Ext(c.out)); {
	case c.out == "":
	case c.out == "-" || ext == ".txt":
		outKind = "txt"
	case ext == ".vtu" || ext == ".egr" || ext == ".png":
		outKind = ext[1:]
	default:
		return fmt.Errorf("coarsen: -o %q: want a .vtu, .egr, .png or .txt file, or -", c.out)
	}
	job, err := startMPI(c, outKind)
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	if job != nil {
		defer job.Close()
		if job.Rank() != 0 {
			// Every rank computes; rank 0 alone reports and writes.
			stdout, stderr, outKind = io.Discard, io.Discard, ""
		}
	}
	prog := newProgress(stderr, "coarsen")
	defer prog.Done("")
	// The summary goes where the set does not.
	summary := prog.Wrap(stdout)
	if c.out == "-" {
		summary = prog.Wrap(stderr)
	}

	input := fs.Arg(0)
	t := time.Now()
	g, m, err := loadInput(input, c, prog)
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	fmt.Fprintf(summary, "%s: %d vertices, %d edges, max degree %d (%.0f ms)\n",
		input, g.N(), g.NumEdges()/2, g.MaxDegree(), ms(time.Since(t)))
	if ndir := countTrue(g.Dirichlet); ndir > 0 {
		fmt.Fprintf(summary, "%d Dirichlet rows (diagonal only) kept as isolated vertices\n", ndir)
	}
	if g.Class != nil {
		fmt.Fprintf(summary, "boundary classes: %s\n", classCounts(g.Class, nil))
	} else if kind == mis.Boundary {
		fmt.Fprintln(summary, "no geometry: boundary priority classifies by degree deficit")
	}

	// One MIS is a one-level hierarchy; an .egr output needs the coarse
	// graph of its aggregates, one level more.
	maxLevels := c.levels
	if maxLevels == 0 {
		maxLevels = 1
		if outKind == "egr" {
			maxLevels = 2
		}
	}
	minV := c.minVertices
	if c.levels == 0 {
		minV = 1
	}
	prio := mis.Priority{Kind: kind, Seed: c.seed}
	var levels []mis.Level
	if job != nil {
		levels, err = mpiMIS(job, g, c.distance, prio)
	} else {
		levels, err = mis.Hierarchy(g, mis.HierarchyOptions{
			Distance: c.distance, Priority: prio,
			MinVertices: minV, MaxLevels: maxLevels, Workers: c.workers, Device: dev,
			Progress: func(l int, lv *mis.Level) { prog.Show("level %d: %d vertices", l, lv.Graph.N()) },
		})
	}
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	prog.Done("")
	if c.verify {
		for i, l := range levels {
			if err := mis.Verify(l.Graph, l.Set.In, c.distance); err != nil {
				return fmt.Errorf("coarsen: level %d: %w", i, err)
			}
		}
	}
	set := levels[0].Set
	fmt.Fprintf(summary, "distance-%d MIS, %s priority, %s backend: %d vertices (%.1f%%), %d rounds, %.1f ms",
		c.distance, kind, set.Backend, set.Size, 100*float64(set.Size)/float64(max(g.N(), 1)), set.Rounds, ms(set.Elapsed))
	if g.Class != nil {
		k, n := cornersKept(g, set.In)
		fmt.Fprintf(summary, ", corners kept %d/%d", k, n)
	}
	fmt.Fprintln(summary)
	if c.levels > 0 {
		printLevels(summary, levels)
	}

	switch outKind {
	case "txt":
		if c.out == "-" {
			err = writeList(stdout, set.In)
		} else {
			err = createFile(c.out, func(w io.Writer) error { return writeList(w, set.In) })
		}
	case "egr":
		coarse := levels[len(levels)-1]
		if len(levels) == 1 && maxLevels > 1 {
			// Hierarchy stopped at once (no edges, or one vertex): the
			// coarse graph is the input, and the file says no more.
			fmt.Fprintln(summary, "the graph did not coarsen further")
		}
		err = createFile(c.out, func(w io.Writer) error { return mesh.WriteEGR(w, coarse.Graph) })
	case "vtu":
		fields := []mesh.Field{mesh.BoolField("in_set", set.In), mesh.Int32Field("coarse_level", coarseLevel(levels))}
		if g.Class != nil {
			fields = append(fields, mesh.ClassField("class", g.Class))
		}
		if levels[0].Agg != nil {
			fields = append(fields, mesh.Int32Field("aggregate", levels[0].Agg.Of))
		}
		err = writeVTUFile(c.out, g, m, fields)
	case "png":
		err = drawHierarchy(c.out, m, levels, fmt.Sprintf("%s: distance-%d MIS, %s priority", filepath.Base(input), c.distance, kind))
	}
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	if outKind != "" && c.out != "-" {
		fmt.Fprintf(summary, "wrote %s\n", c.out)
	}
	return nil
}

// startMPI joins the MPI job when an MPI launcher started this process,
// and returns nil otherwise. Under MPI every rank reads the input and the
// ranks compute one MIS together; hierarchies and coarse graphs stay
// single-process for now.
func startMPI(c *coarsenConfig, outKind string) (mpiJob, error) {
	if !mpiLaunched() {
		return nil, nil
	}
	switch {
	case mpiStart == nil:
		return nil, errors.New("started by an MPI launcher, but this build has no MPI support (build with -tags mpi)")
	case c.levels > 0 || outKind == "egr":
		return nil, errors.New("under MPI, coarsen computes one MIS: -levels and .egr output need a single process")
	}
	return mpiStart()
}

// mpiMIS computes the MIS across the ranks of job, as a one-level
// hierarchy like the single-process path builds.
func mpiMIS(job mpiJob, g *mesh.Graph, dist int, prio mis.Priority) ([]mis.Level, error) {
	t := time.Now()
	res, err := job.Compute(context.Background(), g, mis.PartOptions{Distance: dist, Priority: prio})
	if err != nil {
		return nil, err
	}
	set := res.Result
	set.Backend = fmt.Sprintf("mpi (%d ranks)", job.Size())
	set.Elapsed = time.Since(t)
	return []mis.Level{{Graph: g, Set: &set, Elapsed: set.Elapsed}}, nil
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// loadInput reads a file by its extension, or generates a gen: spec.
// Meshes come back with the graph so that .vtu output can show the cells.
func loadInput(input string, c *coarsenConfig, prog *progress.Reporter) (*mesh.Graph, *mesh.Mesh, error) {
	if spec, ok := strings.CutPrefix(input, "gen:"); ok {
		prog.Show("generating %s", spec)
		return generate(spec)
	}
	name, gz := strings.CutSuffix(strings.ToLower(input), ".gz")
	ext := filepath.Ext(name)
	switch ext {
	case ".mtx", ".msh", ".egr":
	default:
		return nil, nil, fmt.Errorf("%s: unknown input type %q (want .mtx, .msh, .egr, any of them .gz, or gen:SPEC)", input, ext)
	}
	if ext != ".mtx" && (c.theta != 0 || c.block != 1) {
		return nil, nil, fmt.Errorf("%s: -theta and -block apply to matrices (.mtx) only", input)
	}
	f, err := os.Open(input)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// Progress wraps the file only on a terminal: the readers size their
	// buffers from the file itself when they can see it.
	var r io.Reader = f
	if prog != nil {
		if st, err := f.Stat(); err == nil {
			r = prog.Reader(f, st.Size())
		}
	}
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", input, err)
		}
		defer zr.Close()
		r = zr
	}
	var g *mesh.Graph
	var m *mesh.Mesh
	switch ext {
	case ".mtx":
		var a *mesh.COO[float64]
		if a, err = mesh.ReadMatrixMarket(r); err == nil {
			prog.Show("building the graph")
			g, err = mesh.FromCOO(a, mesh.MatrixOptions{Theta: c.theta, BlockSize: c.block})
		}
	case ".msh":
		if m, err = mesh.ReadGmsh(r); err == nil {
			prog.Show("building the graph")
			g, err = meshGraph(m, c.featureAngle)
		}
	case ".egr":
		g, err = mesh.ReadEGR(r)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", input, err)
	}
	return g, m, nil
}
