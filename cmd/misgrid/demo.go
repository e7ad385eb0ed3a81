package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

const demoUsage = `usage: misgrid demo [flags]

Generates a hex8 mesh of the unit cube with N vertices per side, classifies
its boundary vertices (corner, edge, face) from the mesh facets, computes a
distance-1 MIS with boundary priority and a coarse-grid hierarchy
(distance-2 MIS, aggregates, coarse graph, repeated), prints a table per
level, and writes DIR/demo.vtu (for ParaView) and DIR/demo.png (the z=mid
slice, coarse vertices coloured by class).

flags:
`

type demoConfig struct {
	n   int
	out string
}

func demoFlags() (*flag.FlagSet, *demoConfig) {
	c := &demoConfig{}
	fs := newFlagSet("demo", demoUsage)
	fs.IntVar(&c.n, "n", 48, "vertices per side of the cube (N³ vertices)")
	fs.StringVar(&c.out, "out", ".", "directory for demo.vtu and demo.png")
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
	if c.n < 4 || c.n > 512 {
		return fmt.Errorf("demo: -n %d: want 4 to 512 vertices per side", c.n)
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	prog := newProgress(stderr, "demo")
	defer prog.Done("")
	stdout = prog.Wrap(stdout)

	prog.Show("meshing")
	t := time.Now()
	m := mesh.StructuredHex(c.n, c.n, c.n)
	g, err := meshGraph(m, 0)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(stdout, "mesh: unit cube, %d hex8 elements, %d vertices, %d edges (%.0f ms)\n",
		m.Blocks[0].Len(), g.N(), g.NumEdges()/2, ms(time.Since(t)))
	fmt.Fprintf(stdout, "boundary classes from facets: %s\n", classCounts(g.Class, nil))

	prog.Show("distance-1 MIS")
	prio := mis.Priority{Kind: mis.Boundary}
	set, err := mis.Compute(g, mis.Options{Distance: 1, Priority: prio, Device: mis.CPU})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := mis.Verify(g, set.In, 1); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(stdout, "distance-1 MIS, boundary priority: %d vertices (%.1f%%), %d rounds, %.1f ms; in the set: %s\n\n",
		set.Size, 100*float64(set.Size)/float64(g.N()), set.Rounds, ms(set.Elapsed), classCounts(g.Class, set.In))

	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{
		Distance: 2, Priority: prio, Device: mis.CPU,
		Progress: func(l int, lv *mis.Level) { prog.Show("hierarchy level %d: %d vertices", l, lv.Graph.N()) },
	})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintln(stdout, "coarse-grid hierarchy: distance-2 MIS with boundary priority, aggregates, coarse graph")
	printLevels(stdout, levels)

	prog.Show("writing output")
	vtu := filepath.Join(c.out, "demo.vtu")
	fields := []mesh.Field{
		mesh.ClassField("class", g.Class),
		mesh.BoolField("in_set", set.In),
		mesh.BoolField("root", levels[0].Set.In),
		mesh.Int32Field("coarse_level", coarseLevel(levels)),
	}
	if levels[0].Agg != nil {
		fields = append(fields, mesh.Int32Field("aggregate", levels[0].Agg.Of))
	}
	if err := writeVTUFile(vtu, g, m, fields); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	png := filepath.Join(c.out, "demo.png")
	title := fmt.Sprintf("misgrid demo: distance-1 MIS, boundary priority (%d³ hex mesh)", c.n)
	if err := plotSlice(g, set.In, title, png); err != nil {
		return fmt.Errorf("demo: %s: %w", png, err)
	}
	prog.Done("")
	fmt.Fprintf(stdout, "\nwrote %s (fields: class, in_set, root, coarse_level, aggregate) and %s\n", vtu, png)
	return nil
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
