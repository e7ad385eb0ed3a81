package mesh_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/misgrid/misgrid/mesh"
)

// Reading a symmetric matrix: the stored lower triangle is mirrored, and
// indices become 0-based.
func ExampleReadMatrixMarket() {
	const file = `%%MatrixMarket matrix coordinate real symmetric
% 1D Laplacian on three nodes
3 3 5
1 1 2
2 1 -1
2 2 2
3 2 -1
3 3 2
`
	a, err := mesh.ReadMatrixMarket(strings.NewReader(file))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(a.Row), "entries")
	g, err := mesh.FromCOO(a, mesh.MatrixOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("neighbours of 1:", g.Neighbors(1))

	// Errors say where the file is wrong.
	_, err = mesh.ReadMatrixMarket(strings.NewReader("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n"))
	fmt.Println(err)
	// Output:
	// 7 entries
	// neighbours of 1: [0 2]
	// mesh: mtx line 3: column index "3": out of range [1,2]
}

// Reading a Gmsh mesh keeps its physical groups, so boundary blocks can be
// told apart from the domain.
func ExampleReadGmsh() {
	f, err := os.Open("testdata/square_tri6.msh")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m, err := mesh.ReadGmsh(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Dim, "D,", m.NumNodes(), "nodes")
	for _, b := range m.Blocks {
		fmt.Printf("%d %v in %q\n", b.Len(), b.Type, m.Groups[b.Group])
	}
	// Output:
	// 2 D, 9 nodes
	// 1 point1 in "corner"
	// 1 line3 in "wall"
	// 1 line3 in "wall"
	// 1 line3 in "wall"
	// 1 line3 in "inlet"
	// 2 tri6 in "fluid domain"
}

// Writing a graph with a per-vertex field for ParaView.
func ExampleWriteVTU() {
	g := mesh.Hex27Graph(4, 4, 4)
	in := make([]bool, g.N())
	in[0] = true
	var buf bytes.Buffer // or an *os.File named something.vtu
	if err := mesh.WriteVTU(&buf, g, mesh.BoolField("selected", in)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(buf.String(), `<Piece NumberOfPoints="64"`))
	// Output: true
}
