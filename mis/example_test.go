package mis_test

import (
	"fmt"
	"log"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// quadGraph is the node graph of a quad mesh of the unit square with n×n
// nodes, boundary classified from its edges: 4 corners, the rest of the
// boundary faces.
func quadGraph(n int) *mesh.Graph {
	m := mesh.StructuredQuad(n, n)
	g, err := mesh.FromElements(m, mesh.ElementOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if g.Class, err = mesh.Classify(m, mesh.ClassifyOptions{}); err != nil {
		log.Fatal(err)
	}
	return g
}

// Compute with zero options: a distance-1 set in boundary priority, so
// every corner of the domain is in it, and any backend returns this set.
func ExampleCompute() {
	g := quadGraph(9)
	set, err := mis.Compute(g, mis.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := mis.Verify(g, set.In, 1); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d vertices; corners in the set: %v %v %v %v\n",
		set.Size, g.N(), set.In[0], set.In[8], set.In[72], set.In[80])
	// Output:
	// 22 of 81 vertices; corners in the set: true true true true
}

// Hierarchy with zero options coarsens by distance-2 sets in boundary
// priority, as misgrid coarsen and misgrid_hierarchy do with no options.
func ExampleHierarchy() {
	g := quadGraph(33)
	levels, err := mis.Hierarchy(g, mis.HierarchyOptions{MinVertices: 8})
	if err != nil {
		log.Fatal(err)
	}
	for i, l := range levels {
		fmt.Printf("level %d: %4d vertices, %3d in the set\n", i, l.Graph.N(), l.Set.Size)
	}
	// Output:
	// level 0: 1089 vertices,  94 in the set
	// level 1:   94 vertices,  12 in the set
	// level 2:   12 vertices,   3 in the set
	// level 3:    3 vertices,   1 in the set
}

// Options have a text form, for command lines and configuration files;
// the keys are those of the C ABI.
func ExampleHierarchyOptions_Parse() {
	var o mis.HierarchyOptions
	if err := o.Parse("distance=1", "priority=hash", "max_levels=4"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Distance, o.Priority.Kind, o.MaxLevels)
	fmt.Println(o.Set("workers", "2"))
	// Output:
	// 1 hash 4
	// mis: unknown option "workers": the key is "threads"
}
