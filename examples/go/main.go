// Command example shows the misgrid Go API on a generated mesh: build the
// node graph of a hex mesh, classify its boundary, pick a distance-1 MIS
// that keeps the corners, and coarsen it into a hierarchy.
//
//	go run ./examples/go [-n 16]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// maxN bounds -n: the example holds about 400 bytes a vertex at its peak
// (mesh, graph, classes, sets, hierarchy), 6.7 GB at 256³.
const maxN = 256

func main() {
	n := flag.Int("n", 16, fmt.Sprintf("vertices per side of the cube, 2 to %d (N³ vertices, about 400 bytes each: 27 MB at 40, 6.7 GB at %d)", maxN, maxN))
	flag.Parse()
	if err := run(os.Stdout, *n); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, n int) error {
	if n < 2 || n > maxN {
		return fmt.Errorf("-n %d: want 2 to %d vertices per side", n, maxN)
	}
	// A mesh as a FEM code has it: coordinates and hex8 connectivity.
	m := mesh.StructuredHex(n, n, n)

	// Its node graph: two nodes are adjacent when they share an element.
	g, err := mesh.FromElements(m, mesh.ElementOptions{})
	if err != nil {
		return err
	}
	// Boundary classes from the exterior facets: corner, edge, face.
	if g.Class, err = mesh.Classify(m, mesh.ClassifyOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(w, "graph: %d vertices, %d edges\n", g.N(), g.NumEdges()/2)

	// A distance-1 MIS that visits corners first, then edges, faces and
	// the interior. The set is the same on every backend and thread count.
	set, err := mis.Compute(g, mis.Options{Distance: 1, Priority: mis.Priority{Kind: mis.Boundary}})
	if err != nil {
		return err
	}
	if err := mis.Verify(g, set.In, 1); err != nil {
		return err
	}
	corners, kept := 0, 0
	for v, c := range g.Class {
		if c == mesh.Corner {
			corners++
			if set.In[v] {
				kept++
			}
		}
	}
	fmt.Fprintf(w, "distance-1 MIS: %d vertices, corners kept %d of %d\n", set.Size, kept, corners)

	// Coarse grids for aggregation AMG: distance-2 MIS, aggregates around
	// its vertices, the aggregates' graph, and again.
	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{Distance: 2, Priority: mis.Priority{Kind: mis.Boundary}})
	if err != nil {
		return err
	}
	for i, l := range levels {
		fmt.Fprintf(w, "level %d: %d vertices, %d in the MIS-2\n", i, l.Graph.N(), l.Set.Size)
	}
	return nil
}
