package mesh

import "fmt"

// Float is the set of matrix value types the builders accept.
type Float interface{ ~float32 | ~float64 }

// CSR is a sparse matrix in compressed sparse row form, as FEM codes
// assemble it. Val may be nil for a pattern-only matrix. Column indices
// are 0-based; rows need not be sorted and may repeat entries (repeats
// are summed where values matter).
type CSR[T Float] struct {
	Rows, Cols int
	RowPtr     []int64 // len Rows+1
	Col        []int32 // len RowPtr[Rows]
	Val        []T     // len RowPtr[Rows], or nil
}

// COO is a sparse matrix as a list of (row, column, value) triplets.
// Repeated entries are summed; Val may be nil for a pattern.
type COO[T Float] struct {
	Rows, Cols int
	Row, Col   []int32
	Val        []T
}

// ElementType names a finite-element shape by its node count and order.
type ElementType int

const (
	Line2 ElementType = iota + 1
	Tri3
	Quad4
	Tet4
	Hex8
	Tri6
	Quad9
	Tet10
	Hex27
	Point1
	Line3
	Prism6
	Pyramid5
)

var elementInfo = map[ElementType]struct {
	name         string
	nodes, verts int // all nodes, corner (vertex) nodes
	dim          int
}{
	Point1:   {"point1", 1, 1, 0},
	Line2:    {"line2", 2, 2, 1},
	Line3:    {"line3", 3, 2, 1},
	Tri3:     {"tri3", 3, 3, 2},
	Quad4:    {"quad4", 4, 4, 2},
	Tet4:     {"tet4", 4, 4, 3},
	Hex8:     {"hex8", 8, 8, 3},
	Prism6:   {"prism6", 6, 6, 3},
	Pyramid5: {"pyramid5", 5, 5, 3},
	Tri6:     {"tri6", 6, 3, 2},
	Quad9:    {"quad9", 9, 4, 2},
	Tet10:    {"tet10", 10, 4, 3},
	Hex27:    {"hex27", 27, 8, 3},
}

func (t ElementType) String() string {
	if i, ok := elementInfo[t]; ok {
		return i.name
	}
	return fmt.Sprintf("ElementType(%d)", int(t))
}

// Nodes returns the number of nodes of one element (0 for an unknown type).
func (t ElementType) Nodes() int { return elementInfo[t].nodes }

// Vertices returns the number of corner nodes; the first Vertices() nodes
// of an element are its corners in every supported ordering (Gmsh, VTK).
func (t ElementType) Vertices() int { return elementInfo[t].verts }

// Dim returns the topological dimension of the element.
func (t ElementType) Dim() int { return elementInfo[t].dim }

// ParseElementType converts a name such as "hex8" or "tet10".
func ParseElementType(s string) (ElementType, error) {
	for t, i := range elementInfo {
		if i.name == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("mesh: unknown element type %q", s)
}

// ElementBlock is a set of elements of one type, node ids 0-based, each
// element's nodes in Gmsh order (corners first; for second-order elements
// Gmsh's edge and face node order, which differs from VTK's for tet10 and
// hex27 — WriteMeshVTU converts).
type ElementBlock struct {
	Type  ElementType
	Conn  []int32 // len Type.Nodes()*count, element e at Conn[e*k : e*k+k]
	Group int     // physical group tag (0 when none)
	// Entity is the Gmsh entity tag the block came from (0 when none).
	Entity int
}

// Len returns the number of elements in the block.
func (b *ElementBlock) Len() int {
	if b == nil {
		return 0
	}
	k := b.Type.Nodes()
	if k == 0 {
		return 0
	}
	return len(b.Conn) / k
}

// Mesh is nodes with coordinates and element connectivity, as a mesh file
// or a generator gives them.
type Mesh struct {
	Dim    int       // spatial dimension: 2 or 3
	Coords []float64 // len Dim*NumNodes
	Blocks []ElementBlock
	// Groups maps a physical group tag to its name (Gmsh $PhysicalNames).
	Groups map[int]string
	// NodeTags holds the file's tag of each node where it differs from
	// index+1 (Gmsh), so results can be written back in the file's terms.
	NodeTags []int64
}

// NumNodes returns the number of nodes.
func (m *Mesh) NumNodes() int {
	if m == nil || m.Dim == 0 {
		return 0
	}
	return len(m.Coords) / m.Dim
}
