package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/internal/progress"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

const demoUsage = `usage: misgrid demo [flags]

Shows what misgrid does, in two parts.

The picture: meshes an L-shaped bracket with bolt holes (quad4 elements,
built in), classifies its boundary vertices (corners, the rest of the
boundary, interior) from the mesh edges, builds the coarse-grid hierarchy
(distance-2 MIS with boundary priority, aggregates, coarse graph,
repeated), prints its level table and writes DIR/demo.png: the
aggregates of each level side by side, roots marked by boundary class.

At scale: generates a hex8 mesh of the unit cube with N vertices per side,
classifies it from its facets, computes a distance-1 MIS with boundary
priority and the same hierarchy, prints a table per level, and writes
DIR/demo.vtu for ParaView (fields class, in_set, root, aggregate,
coarse_level).

Memory grows as N³: %s.
demo.vtu takes about 145 bytes a vertex on disk (1 GB at N = 192). A size
the machine cannot hold is refused before any work, with the largest
that fits.

flags:
`

// bracketCellSide is the demo bracket's elements per cell side: enough
// vertices (2,374) for four levels, few enough to see every aggregate.
const bracketCellSide = 10

type demoConfig struct {
	n   int
	out string
}

func demoFlags() (*flag.FlagSet, *demoConfig) {
	c := &demoConfig{}
	fs := newFlagSet("demo", fmt.Sprintf(demoUsage, demoMemoryHelp()))
	fs.IntVar(&c.n, "n", 48, "vertices per side of the cube (N³ vertices; memory "+demoMemoryHelp()+")")
	fs.StringVar(&c.out, "out", ".", "directory for demo.png and demo.vtu")
	return fs, c
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs, c := demoFlags()
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demo: unexpected argument %q", fs.Arg(0))
	}
	if c.n < 4 || c.n > demoMaxN {
		return fmt.Errorf("demo: -n %d: want 4 to %d vertices per side", c.n, demoMaxN)
	}
	if err := checkDemoMemory(c.n); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	prog := newProgress(stderr, "demo")
	defer prog.Done("")
	stdout = prog.Wrap(stdout)

	png := filepath.Join(c.out, "demo.png")
	if err := demoBracket(stdout, png); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	vtu := filepath.Join(c.out, "demo.vtu")
	if err := demoCube(stdout, prog, c.n, vtu); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	prog.Done("")
	fmt.Fprintf(stdout, "\nwrote %s (the bracket's coarse grids) and %s (fields: class, in_set, root, coarse_level, aggregate)\n", png, vtu)
	return nil
}

// demoBracket coarsens the bracket, prints its levels and draws them.
func demoBracket(stdout io.Writer, png string) error {
	t := time.Now()
	m, err := bracketMesh(bracketCellSide)
	if err != nil {
		return err
	}
	g, err := meshGraph(m, 0)
	if err != nil {
		return err
	}
	holes := 0
	for _, c := range bracketCells {
		if c.Hole > 0 {
			holes++
		}
	}
	var cls [mesh.NumClasses]int
	for _, c := range g.Class {
		cls[c]++
	}
	fmt.Fprintf(stdout, "L-bracket (for %s): %d holes, %d quad4 elements, %d vertices, %d edges (%.0f ms)\n",
		filepath.Base(png), holes, m.Blocks[0].Len(), g.N(), g.NumEdges()/2, ms(time.Since(t)))
	fmt.Fprintf(stdout, "boundary classes from the mesh edges: corner %d, boundary %d, interior %d\n",
		cls[mesh.Corner], cls[mesh.Face]+cls[mesh.Edge], cls[mesh.Interior])
	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{
		Distance: 2, Priority: mis.Priority{Kind: mis.Boundary}, MinVertices: 8, Device: mis.CPU,
	})
	if err != nil {
		return err
	}
	for i, l := range levels {
		if err := mis.Verify(l.Graph, l.Set.In, 2); err != nil {
			return fmt.Errorf("bracket level %d: %w", i, err)
		}
	}
	fmt.Fprintln(stdout, "coarse-grid hierarchy: distance-2 MIS with boundary priority, aggregates, coarse graph")
	printLevels(stdout, levels)
	title := fmt.Sprintf("misgrid demo: the coarse grids of an L-bracket (%d quad4 elements); distance-2 MIS, boundary priority", m.Blocks[0].Len())
	return drawHierarchy(png, m, levels, title)
}

// demoCube coarsens the N³ cube, prints its MIS and levels and writes
// them for ParaView.
func demoCube(stdout io.Writer, prog *progress.Reporter, n int, vtu string) error {
	prog.Show("meshing")
	t := time.Now()
	m := mesh.StructuredHex(n, n, n)
	g, err := meshGraph(m, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nunit cube (for %s, -n %d): %d hex8 elements, %d vertices, %d edges (%.0f ms)\n",
		filepath.Base(vtu), n, m.Blocks[0].Len(), g.N(), g.NumEdges()/2, ms(time.Since(t)))
	fmt.Fprintf(stdout, "boundary classes from facets: %s\n", classCounts(g.Class, nil))

	prog.Show("distance-1 MIS")
	prio := mis.Priority{Kind: mis.Boundary}
	set, err := mis.Compute(g, mis.Options{Distance: 1, Priority: prio, Device: mis.CPU})
	if err != nil {
		return err
	}
	if err := mis.Verify(g, set.In, 1); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "distance-1 MIS, boundary priority: %d vertices (%.1f%%), %d rounds, %.1f ms; in the set: %s\n\n",
		set.Size, 100*float64(set.Size)/float64(g.N()), set.Rounds, ms(set.Elapsed), classCounts(g.Class, set.In))

	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{
		Distance: 2, Priority: prio, Device: mis.CPU,
		Progress: func(l int, lv *mis.Level) { prog.Show("hierarchy level %d: %d vertices", l, lv.Graph.N()) },
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "coarse-grid hierarchy: distance-2 MIS with boundary priority, aggregates, coarse graph")
	printLevels(stdout, levels)

	prog.Show("writing output")
	fields := []mesh.Field{
		mesh.ClassField("class", g.Class),
		mesh.BoolField("in_set", set.In),
		mesh.BoolField("root", levels[0].Set.In),
		mesh.Int32Field("coarse_level", coarseLevel(levels)),
	}
	if levels[0].Agg != nil {
		fields = append(fields, mesh.Int32Field("aggregate", levels[0].Agg.Of))
	}
	return writeVTUFile(vtu, g, m, fields)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// classCounts says how many vertices of each boundary class there are,
// or, given a set, how many of each class are in it out of how many.
func classCounts(cls []mesh.Class, in []bool) string {
	if cls == nil {
		return "no classes"
	}
	var all, sel [mesh.NumClasses]int
	for v, c := range cls {
		all[c]++
		if in != nil && in[v] {
			sel[c]++
		}
	}
	s := ""
	for c := mesh.Class(mesh.NumClasses - 1); ; c-- {
		if s != "" {
			s += ", "
		}
		if in != nil {
			s += fmt.Sprintf("%s %d/%d", c, sel[c], all[c])
		} else {
			s += fmt.Sprintf("%s %d", c, all[c])
		}
		if c == 0 {
			return s
		}
	}
}

// cornersKept counts the Corner vertices in the set and in the graph.
func cornersKept(g *mesh.Graph, in []bool) (kept, total int) {
	for v, c := range g.Class {
		if c == mesh.Corner {
			total++
			if in[v] {
				kept++
			}
		}
	}
	return kept, total
}

// printLevels prints one row per hierarchy level.
func printLevels(w io.Writer, levels []mis.Level) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\tvertices\tedges\tset\tset %\tcorners kept\trounds\ttime ms\t")
	for i, l := range levels {
		kept, total := cornersKept(l.Graph, l.Set.In)
		corners := "-"
		if l.Graph.Class != nil {
			corners = fmt.Sprintf("%d/%d", kept, total)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.1f\t%s\t%d\t%.2f\t\n", i, l.Graph.N(), l.Graph.NumEdges()/2,
			l.Set.Size, 100*float64(l.Set.Size)/float64(max(l.Graph.N(), 1)), corners, l.Set.Rounds, ms(l.Elapsed))
	}
	tw.Flush()
}

// coarseLevel returns, for each fine vertex, the deepest level at which it
// is still a grid point: 0 for a vertex not in the level-0 set, k when it
// is a root on levels 0..k−1 (its aggregate is coarse vertex Of[v] of the
// next level, where that vertex may be a root again).
func coarseLevel(levels []mis.Level) []int32 {
	n := levels[0].Graph.N()
	depth := make([]int32, n)
	for v := 0; v < n; v++ {
		rep := int32(v)
		for _, l := range levels {
			if !l.Set.In[rep] {
				break
			}
			depth[v]++
			if l.Agg == nil {
				break
			}
			rep = l.Agg.Of[rep]
		}
	}
	return depth
}
