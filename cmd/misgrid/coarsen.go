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

	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/progress"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

const coarsenUsage = `usage: misgrid coarsen [flags] INPUT

Builds the coarse-grid hierarchy of INPUT's graph (MIS, aggregates,
coarse graph, repeated: the hierarchy of misgrid_hierarchy and of Go's
mis.Hierarchy with the same options), prints a summary and writes -o.
-max_levels 1 computes one MIS. Flags go before INPUT.

INPUT is a file or a generator spec:
  FILE.mtx   Matrix Market matrix: its pattern, with -theta and -block_size
  FILE.msh   Gmsh 4.1 ASCII mesh: its node graph, boundary classified from facets
  FILE.egr   ECL binary graph
             (any of them may be gzipped: FILE.mtx.gz)
  gen:SPEC   a generated graph, e.g. gen:hex:64, gen:hex27:100:relabel
  FILE.msh:refine=L, gen:tet:N:refine=L
             the mesh refined uniformly L times (see below)

` + genHelp + `
-o writes, by extension:
  .vtu       the mesh (or graph) with fields class, in_set, aggregate, coarse_level
  .egr       the coarse graph: the aggregates of the last level as vertices
  .png       a picture of a 2D mesh: the aggregates of each level, roots by class
  .txt, -    the vertex ids of the finest level's set, one a line

Options are flags named by their keys, the keys of the C ABI's options
strings and of the Go packages' Set methods.
`

type coarsenConfig struct {
	matrix   mesh.MatrixOptions
	elements mesh.ElementOptions
	classify mesh.ClassifyOptions
	hier     mis.HierarchyOptions
	out      string
	verify   bool
}

// coarsenRenamed are flags of earlier versions and names of other
// interfaces, refused with the flag to use.
var coarsenRenamed = map[string]string{"block": "block_size", "workers": "threads", "levels": "max_levels",
	"min": "min_vertices", "feature-angle": "feature_angle"}

func coarsenFlags() (*flag.FlagSet, *coarsenConfig) {
	c := &coarsenConfig{}
	fs := newFlagSet("coarsen", coarsenUsage)
	fs.StringVar(&c.out, "o", "", "output `file`: .vtu, .egr, .png, .txt, or - for the set on stdout")
	fs.BoolVar(&c.verify, "verify", true, "check that every set is a maximal independent set")
	addOptions(fs, coarsenUsage, coarsenRenamed,
		optionGroup{"matrix options (.mtx input)", mesh.MatrixOptionKeys(), c.matrix.Set},
		optionGroup{"mesh options (.msh and generated meshes)", append(mesh.ElementOptionKeys(), mesh.ClassifyOptionKeys()...),
			func(k, v string) error {
				if k == "vertex_only" {
					return c.elements.Set(k, v)
				}
				return c.classify.Set(k, v)
			}},
		optionGroup{"hierarchy options", mis.HierarchyOptionKeys(), c.hier.Set})
	return fs, c
}

// outputKind is what -o writes, from its name, or an error that says what
// the name should be.
func outputKind(out string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case out == "":
		return "", nil
	case out == "-" || ext == ".txt":
		return "txt", nil
	case ext == ".vtu" || ext == ".egr" || ext == ".png":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("-o %q: want a .vtu, .egr, .png or .txt file, or -", out)
	}
}

// checkCoarsen refuses, before any work, what would fail only at the end:
// options that do not apply to the input, outputs the input cannot give,
// and an output that cannot be created.
func checkCoarsen(fs *flag.FlagSet, c *coarsenConfig, input, outKind string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	kind := inputKind(input)
	if kind != "matrix" && (given["theta"] || given["block_size"]) {
		return fmt.Errorf("%s: -theta and -block_size apply to matrices (.mtx) only", input)
	}
	if kind != "mesh" && (given["feature_angle"] || given["vertex_only"]) {
		return fmt.Errorf("%s: -feature_angle and -vertex_only apply to meshes (.msh, gen:hex, tet, quad, tri) only", input)
	}
	if c.hier.Priority.Kind == mis.User {
		return errors.New("-priority user needs values per vertex, which the command line cannot pass: use boundary, hash or degree")
	}
	switch {
	case outKind == "vtu" && (kind == "matrix" || kind == "graph"):
		return fmt.Errorf("-o %s: %s has no coordinates to draw (a matrix, an .egr file or a random graph): write .egr or .txt instead", c.out, input)
	case outKind == "png" && (kind != "mesh" || strings.HasPrefix(input, "gen:hex") || strings.HasPrefix(input, "gen:tet")):
		return fmt.Errorf("-o %s: a picture needs a 2D mesh (a .msh of triangles or quadrilaterals, gen:quad, gen:tri): write .vtu for %s", c.out, input)
	case outKind == "egr" && c.hier.MaxLevels == 1:
		return fmt.Errorf("-o %s: the coarse graph needs a second level, and -max_levels is 1", c.out)
	}
	if c.out == "-" {
		return nil
	}
	return checkWritable(c.out)
}

// inputKind is "matrix", "mesh" (with cells and coordinates), "stencil"
// (coordinates, no cells) or "graph" (neither), or "" for an input
// loadInput refuses.
func inputKind(input string) string {
	if spec, ok := strings.CutPrefix(input, "gen:"); ok {
		name, _, _ := strings.Cut(spec, ":")
		switch name {
		case "hex", "tet", "quad", "tri":
			return "mesh"
		case "hex27", "grid7":
			return "stencil"
		}
		return "graph"
	}
	file, levels, err := genspec.CutRefine(input)
	if err != nil {
		return ""
	}
	name, _ := strings.CutSuffix(strings.ToLower(file), ".gz")
	switch ext := filepath.Ext(name); {
	case levels > 0 && ext != ".msh":
		return ""
	case ext == ".mtx":
		return "matrix"
	case ext == ".msh":
		return "mesh"
	case ext == ".egr":
		return "graph"
	}
	return ""
}

func runCoarsen(args []string, stdout, stderr io.Writer) error {
	fs, c := coarsenFlags()
	rest, err := parseArgs(fs, args, stdout, 1, "INPUT")
	if err != nil {
		return err
	}
	input := rest[0]
	outKind, err := outputKind(c.out)
	if err == nil {
		err = checkCoarsen(fs, c, input, outKind)
	}
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	dist := c.hier.Distance
	if dist == 0 {
		dist = mis.DefaultHierarchyDistance
	}
	job, err := startMPI(fs, outKind)
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
	kind := c.hier.Priority.Kind
	if g.Class != nil {
		fmt.Fprintf(summary, "boundary classes: %s\n", classCounts(g.Class, nil))
	} else if kind == mis.Boundary {
		fmt.Fprintln(summary, "no geometry: boundary priority classifies by degree deficit")
	}

	var levels []mis.Level
	if job != nil {
		levels, err = mpiMIS(job, g, dist, c.hier.Priority)
	} else {
		opts := c.hier
		opts.Progress = func(l int, lv *mis.Level) { prog.Show("level %d: %d vertices", l, lv.Graph.N()) }
		levels, err = mis.Hierarchy(g, opts)
	}
	if err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	prog.Done("")
	if c.verify {
		for i, l := range levels {
			if err := mis.Verify(l.Graph, l.Set.In, dist); err != nil {
				return fmt.Errorf("coarsen: level %d: %w", i, err)
			}
		}
	}
	set := levels[0].Set
	fmt.Fprintf(summary, "distance-%d MIS, %s priority, %s backend: %d vertices (%.1f%%), %d rounds, %.1f ms",
		dist, kind, set.Backend, set.Size, 100*float64(set.Size)/float64(max(g.N(), 1)), set.Rounds, ms(set.Elapsed))
	if g.Class != nil {
		k, n := cornersKept(g, set.In)
		fmt.Fprintf(summary, ", corners kept %d/%d", k, n)
	}
	fmt.Fprintln(summary)
	if len(levels) > 1 {
		printLevels(summary, levels)
	}
	title := fmt.Sprintf("%s: distance-%d MIS, %s priority", filepath.Base(input), dist, kind)
	if err := writeCoarsenOutput(c.out, outKind, g, m, levels, title, stdout, summary); err != nil {
		return fmt.Errorf("coarsen: %w", err)
	}
	return nil
}

// writeCoarsenOutput writes -o, of the kind outputKind found; a picture
// gets title.
func writeCoarsenOutput(out, outKind string, g *mesh.Graph, m *mesh.Mesh, levels []mis.Level, title string, stdout, summary io.Writer) error {
	set := levels[0].Set
	var err error
	switch outKind {
	case "":
		return nil
	case "txt":
		if out == "-" {
			return writeList(stdout, set.In)
		}
		err = createFile(out, func(w io.Writer) error { return writeList(w, set.In) })
	case "egr":
		coarse := levels[len(levels)-1]
		if len(levels) == 1 {
			// Hierarchy stopped at once (no edges, or one vertex): the
			// coarse graph is the input, and the file says no more.
			fmt.Fprintln(summary, "the graph did not coarsen further")
		}
		err = createFile(out, func(w io.Writer) error { return mesh.WriteEGR(w, coarse.Graph) })
	case "vtu":
		fields := []mesh.Field{mesh.BoolField("in_set", set.In), mesh.Int32Field("coarse_level", coarseLevel(levels))}
		if g.Class != nil {
			fields = append(fields, mesh.ClassField("class", g.Class))
		}
		if levels[0].Agg != nil {
			fields = append(fields, mesh.Int32Field("aggregate", levels[0].Agg.Of))
		}
		err = writeVTUFile(out, g, m, fields)
	case "png":
		err = drawHierarchy(out, m, levels, title)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(summary, "wrote %s\n", out)
	return nil
}

// startMPI joins the MPI job when an MPI launcher started this process,
// and returns nil otherwise. Under MPI every rank reads the input and the
// ranks compute one MIS together; hierarchies and coarse graphs stay
// single-process for now, so the level-0 set is all it gives.
func startMPI(fs *flag.FlagSet, outKind string) (mpiJob, error) {
	if !mpiLaunched() {
		return nil, nil
	}
	levels := false
	fs.Visit(func(f *flag.Flag) { levels = levels || f.Name == "max_levels" || f.Name == "min_vertices" })
	switch {
	case mpiStart == nil:
		return nil, errors.New("started by an MPI launcher, but this build has no MPI support (build with -tags mpi)")
	case levels || outKind == "egr":
		return nil, errors.New("under MPI, coarsen computes the level-0 MIS only: -max_levels, -min_vertices and .egr output need a single process")
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

// checkMatrix refuses, in the command's terms, what mesh.FromCOO would
// refuse in the library's.
func checkMatrix(a *mesh.COO[float64], o mesh.MatrixOptions) error {
	switch b := max(o.BlockSize, 1); {
	case a.Rows != a.Cols:
		return fmt.Errorf("matrix is %d×%d, want square", a.Rows, a.Cols)
	case a.Val == nil && o.Theta > 0:
		return fmt.Errorf("-theta %g needs values, and this is a pattern matrix", o.Theta)
	case a.Rows%b != 0:
		return fmt.Errorf("%d rows are not a multiple of -block_size %d", a.Rows, b)
	}
	return nil
}

// loadInput reads a file by its extension, or generates a gen: spec.
// Meshes come back with the graph so that .vtu output can show the cells.
func loadInput(input string, c *coarsenConfig, prog *progress.Reporter) (*mesh.Graph, *mesh.Mesh, error) {
	if spec, ok := strings.CutPrefix(input, "gen:"); ok {
		prog.Show("generating %s", spec)
		return generateWith(spec, c.elements, c.classify)
	}
	file, levels, err := genspec.CutRefine(input)
	if err != nil {
		return nil, nil, err
	}
	name, gz := strings.CutSuffix(strings.ToLower(file), ".gz")
	ext := filepath.Ext(name)
	switch ext {
	case ".mtx", ".msh", ".egr":
	default:
		return nil, nil, fmt.Errorf("%s: unknown input type %q (want .mtx, .msh, .egr, any of them .gz, or gen:SPEC)", input, ext)
	}
	if levels > 0 && ext != ".msh" {
		return nil, nil, fmt.Errorf("%s: refine applies to meshes (.msh) only", input)
	}
	f, err := os.Open(file)
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
			if err = checkMatrix(a, c.matrix); err == nil {
				prog.Show("building the graph")
				g, err = mesh.FromCOO(a, c.matrix)
			}
		}
	case ".msh":
		if m, err = mesh.ReadGmsh(r); err == nil && levels > 0 {
			prog.Show("refining the mesh %d times", levels)
			m, err = mesh.Refine(m, mesh.RefineOptions{Levels: levels, MaxBytes: c.elements.MaxBytes})
		}
		if err == nil {
			prog.Show("building the graph")
			g, err = meshGraphWith(m, c.elements, c.classify)
		}
	case ".egr":
		g, err = mesh.ReadEGR(r)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", input, err)
	}
	return g, m, nil
}
