package mesh_test

import (
	"fmt"

	"github.com/misgrid/misgrid/mesh"
)

// The graph of a 1D Laplacian with a Dirichlet row at each end, as an FEM
// code assembles it: the boundary rows hold only their diagonal, and the
// interior rows keep their entries in the boundary columns.
func ExampleFromCSR() {
	a := &mesh.CSR[float64]{
		Rows: 4, Cols: 4,
		RowPtr: []int64{0, 1, 4, 7, 8},
		Col:    []int32{0, 0, 1, 2, 1, 2, 3, 3},
		Val:    []float64{1, -1, 2, -1, -1, 2, -1, 1},
	}
	g, err := mesh.FromCSR(a, mesh.MatrixOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for v := range g.N() {
		fmt.Println(v, g.Neighbors(int32(v)), g.Dirichlet[v])
	}
	// Output:
	// 0 [] true
	// 1 [2] false
	// 2 [1] false
	// 3 [] true
}

// Vector problems: two unknowns per node and a strength threshold.
func ExampleFromCOO() {
	a := &mesh.COO[float32]{
		Rows: 4, Cols: 4,
		Row: []int32{0, 1, 2, 3, 0, 2, 1, 3},
		Col: []int32{0, 1, 2, 3, 2, 0, 3, 1},
		Val: []float32{4, 4, 4, 4, -1, -1, -1, -1},
	}
	for _, theta := range []float64{0.1, 0.5} {
		g, err := mesh.FromCOO(a, mesh.MatrixOptions{Theta: theta, BlockSize: 2})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("θ=%v: %d nodes, node 0 neighbours %v\n", theta, g.N(), g.Neighbors(0))
	}
	// Output:
	// θ=0.1: 2 nodes, node 0 neighbours [1]
	// θ=0.5: 2 nodes, node 0 neighbours []
}

func ExampleFromElements() {
	m := mesh.StructuredHex(3, 3, 3) // 27 nodes, 8 hex8 elements
	g, err := mesh.FromElements(m, mesh.ElementOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	g.Class, err = mesh.Classify(m, mesh.ClassifyOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	centre := int32(13)
	fmt.Println(g.N(), "vertices;", "centre has", g.Degree(centre), "neighbours, class", g.Class[centre])
	fmt.Println("vertex 0 has", g.Degree(0), "neighbours, class", g.Class[0])
	// Output:
	// 27 vertices; centre has 26 neighbours, class interior
	// vertex 0 has 7 neighbours, class corner
}

func ExampleClassify() {
	m := mesh.StructuredTet(4, 4, 4)
	cls, err := mesh.Classify(m, mesh.ClassifyOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	count := map[mesh.Class]int{}
	for _, c := range cls {
		count[c]++
	}
	fmt.Println(count[mesh.Corner], "corners,", count[mesh.Edge], "edge,", count[mesh.Face], "face,", count[mesh.Interior], "interior")
	// Output: 8 corners, 24 edge, 24 face, 8 interior
}

func ExampleHex27Graph() {
	g := mesh.Hex27Graph(64, 64, 64)
	fmt.Println(g.N(), "vertices,", g.NumEdges(), "directed edges, max degree", g.MaxDegree())
	// Output: 262144 vertices, 6596856 directed edges, max degree 26
}

func ExampleRCM() {
	g, _ := mesh.Relabel(mesh.Grid7Graph(10, 10, 10), 1)
	h, _ := g.Permute(mesh.RCM(g))
	fmt.Println(mesh.Bandwidth(g) > 500, mesh.Bandwidth(h) <= 150)
	// Output: true true
}

func ExampleLocalityOrder() {
	g, _ := mesh.Relabel(mesh.Hex27Graph(32, 32, 32), 1)
	h, _ := g.Permute(mesh.LocalityOrder(g))
	fmt.Println(h.Validate() == nil, h.N() == g.N())
	// Output: true true
}

// A coarse tet mesh refined twice: each level splits every edge at its
// midpoint and every tet into eight.
func ExampleRefine() {
	m := mesh.StructuredTet(3, 3, 3) // 27 nodes, 48 tets
	r, err := mesh.Refine(m, mesh.RefineOptions{Levels: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d nodes, %d tets -> %d nodes, %d tets\n", m.NumNodes(), m.Blocks[0].Len(), r.NumNodes(), r.Blocks[0].Len())
	// Output: 27 nodes, 48 tets -> 729 nodes, 3072 tets
}
