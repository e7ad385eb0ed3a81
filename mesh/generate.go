package mesh

import (
	"math"
	"math/bits"
)

// Generators take sizes in vertices per side, so StructuredHex(64, 64, 64)
// has 64³ vertices and 63³ elements. A size below 2, or a vertex count
// beyond the int32 id range, yields an empty mesh or graph: check sizes
// that come from users before calling, and their memory with
// StructuredBytes, Hex27GraphBytes, Grid7GraphBytes or RandomGraphBytes
// and CheckMemory.

// gridSize returns the product of dims and whether every dim is at least 2
// and the product fits a vertex id.
func gridSize(dims ...int) (int, bool) {
	n := 1
	for _, d := range dims {
		if d < 2 || d > math.MaxInt32 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt32 {
			return 0, false
		}
		n = int(lo)
	}
	return n, true
}

// StructuredBytes estimates the memory of the mesh that StructuredQuad
// (t = Quad4), StructuredTri (Tri3), StructuredHex (Hex8) or StructuredTet
// (Tet4) makes with the given vertices per side, together with the peak of
// FromElements on it: what a program that generates a mesh and builds its
// graph needs, for callers that take sizes from users (see CheckMemory).
// It returns −1 for another type, a wrong number of sides, or sizes the
// generators refuse.
func StructuredBytes(t ElementType, dims ...int) int64 {
	// Nodes per element and vertex degree inside the mesh.
	shape := map[ElementType]struct{ dim, nodes, deg int }{
		Quad4: {2, 4, 8}, Tri3: {2, 6, 6}, Hex8: {3, 8, 26}, Tet4: {3, 24, 14},
	}
	s, ok := shape[t]
	n, fits := gridSize(dims...)
	if !ok || len(dims) != s.dim || !fits {
		return -1
	}
	cells := int64(1)
	for _, d := range dims {
		cells *= int64(d - 1)
	}
	// Mesh: coordinates and connectivity (tet4 has six elements per cell,
	// tri3 two, so nodes above counts the cell's connectivity). Graph:
	// incidence lists as long as the connectivity, offsets, incidence
	// offsets and cursor, adjacency, copied coordinates.
	return bytesOf(int64(n), 2*8*int64(s.dim)+24+4*int64(s.deg), cells, 2*4*int64(s.nodes))
}

// Hex27GraphBytes returns the memory of Hex27Graph(nx, ny, nz): offsets,
// adjacency, coordinates and classes, with nothing transient; −1 for
// sizes it refuses.
func Hex27GraphBytes(nx, ny, nz int) int64 {
	n, ok := gridSize(nx, ny, nz)
	if !ok {
		return -1
	}
	// Per axis the lattice positions within one step sum to 3m−2.
	edges := int64(3*nx-2)*int64(3*ny-2)*int64(3*nz-2) - int64(n)
	return bytesOf(int64(n)+1, 8, int64(n), 24+1, edges, 4)
}

// Grid7GraphBytes is Hex27GraphBytes for Grid7Graph.
func Grid7GraphBytes(nx, ny, nz int) int64 {
	n, ok := gridSize(nx, ny, nz)
	if !ok {
		return -1
	}
	edges := 2 * (int64(n)/int64(nx)*int64(nx-1) + int64(n)/int64(ny)*int64(ny-1) + int64(n)/int64(nz)*int64(nz-1))
	return bytesOf(int64(n)+1, 8, int64(n), 24+1, edges, 4)
}

// RandomGraphBytes returns the peak memory of RandomGraph(n, avgDegree, ·):
// per draw (n·avgDegree/2 of them) the pair that routes it and both
// directions of its edge, per vertex the offsets, draw counts, row
// lengths and the workers' cursors; −1 for sizes it refuses.
func RandomGraphBytes(n int, avgDegree float64) int64 {
	if n <= 0 || n > math.MaxInt32 {
		return -1
	}
	if !(avgDegree > 0) {
		avgDegree = 0
	}
	draws := int64(float64(n) * min(avgDegree, float64(n-1)) / 2)
	return bytesOf(draws, 16, int64(n), 40)
}

// gridCoords returns the coordinates of an nx×ny(×nz) lattice on the unit
// square or cube, x fastest.
func gridCoords(dims ...int) []float64 {
	n, _ := gridSize(dims...)
	d := len(dims)
	c := make([]float64, d*n)
	runSpans(splitRange(n, 1<<14), func(_ int, s workSpan) {
		for v := s.lo; v < s.hi; v++ {
			r := v
			for a, m := range dims {
				// Divide, not multiply by the inverse: the last
				// lattice position must be exactly 1.
				c[d*v+a] = float64(r%m) / float64(m-1)
				r /= m
			}
		}
	})
	return c
}

// StructuredQuad returns the unit square split into (nx−1)×(ny−1) quad4
// elements, vertices numbered x fastest, corners counterclockwise.
func StructuredQuad(nx, ny int) *Mesh {
	if _, ok := gridSize(nx, ny); !ok {
		return &Mesh{Dim: 2}
	}
	conn := make([]int32, 0, 4*(nx-1)*(ny-1))
	for j := 0; j < ny-1; j++ {
		for i := 0; i < nx-1; i++ {
			a := int32(i + nx*j)
			conn = append(conn, a, a+1, a+1+int32(nx), a+int32(nx))
		}
	}
	return &Mesh{Dim: 2, Coords: gridCoords(nx, ny), Blocks: []ElementBlock{{Type: Quad4, Conn: conn}}}
}

// StructuredTri returns the unit square with every quad of StructuredQuad
// split along its (i,j)–(i+1,j+1) diagonal into two counterclockwise tri3.
func StructuredTri(nx, ny int) *Mesh {
	if _, ok := gridSize(nx, ny); !ok {
		return &Mesh{Dim: 2}
	}
	conn := make([]int32, 0, 6*(nx-1)*(ny-1))
	for j := 0; j < ny-1; j++ {
		for i := 0; i < nx-1; i++ {
			a := int32(i + nx*j)
			b, c, d := a+1, a+1+int32(nx), a+int32(nx)
			conn = append(conn, a, b, c, a, c, d)
		}
	}
	return &Mesh{Dim: 2, Coords: gridCoords(nx, ny), Blocks: []ElementBlock{{Type: Tri3, Conn: conn}}}
}

// hexCorner lists the lattice offsets (bit 0 x, bit 1 y, bit 2 z) of the
// eight hex8 corners in Gmsh order.
var hexCorner = [8]int{0b000, 0b001, 0b011, 0b010, 0b100, 0b101, 0b111, 0b110}

// StructuredHex returns the unit cube split into (nx−1)(ny−1)(nz−1) hex8
// elements, vertices numbered x fastest, corners in Gmsh order (positive
// volume).
func StructuredHex(nx, ny, nz int) *Mesh {
	if _, ok := gridSize(nx, ny, nz); !ok {
		return &Mesh{Dim: 3}
	}
	conn := cellConn(nx, ny, nz, hexCorner[:])
	return &Mesh{Dim: 3, Coords: gridCoords(nx, ny, nz), Blocks: []ElementBlock{{Type: Hex8, Conn: conn}}}
}

// kuhnTets lists, four corners each, the six tetrahedra of the Kuhn
// (Freudenthal) split of a cube (bit 0 x, bit 1 y, bit 2 z), one per
// ordering of the axes: each runs from corner 000 to 111 along cube
// edges. Every cell uses the same split, so the diagonals on shared faces
// agree and the mesh is conforming. The volume's sign is the ordering's
// parity, so the odd orderings have their middle two corners swapped.
var kuhnTets = []int{
	0b000, 0b001, 0b011, 0b111, // x, y, z
	0b000, 0b010, 0b110, 0b111, // y, z, x
	0b000, 0b100, 0b101, 0b111, // z, x, y
	0b000, 0b101, 0b001, 0b111, // x, z, y (odd)
	0b000, 0b011, 0b010, 0b111, // y, x, z (odd)
	0b000, 0b110, 0b100, 0b111, // z, y, x (odd)
}

// StructuredTet returns the unit cube with every cell of StructuredHex
// split into six tet4 by the Kuhn (Freudenthal) split, which is
// conforming: an interior vertex has 14 neighbours.
func StructuredTet(nx, ny, nz int) *Mesh {
	if _, ok := gridSize(nx, ny, nz); !ok {
		return &Mesh{Dim: 3}
	}
	conn := cellConn(nx, ny, nz, kuhnTets)
	return &Mesh{Dim: 3, Coords: gridCoords(nx, ny, nz), Blocks: []ElementBlock{{Type: Tet4, Conn: conn}}}
}

// cellConn returns the connectivity of every cell of an nx×ny×nz lattice
// (sizes checked), each cell's nodes the lattice offsets corners from its
// lowest corner (one or several elements per cell), filled in parallel.
func cellConn(nx, ny, nz int, corners []int) []int32 {
	ne := (nx - 1) * (ny - 1) * (nz - 1)
	k := len(corners)
	conn := make([]int32, k*ne)
	off := cellOffsets(nx, ny)
	runSpans(splitRange(ne, 1<<12), func(_ int, s workSpan) {
		for e := s.lo; e < s.hi; e++ {
			base := cellBase(e, nx, ny, nz)
			for l, h := range corners {
				conn[k*e+l] = base + off[h]
			}
		}
	})
	return conn
}

// cellOffsets maps a lattice offset (bit 0 x, bit 1 y, bit 2 z) to the
// difference of vertex ids.
func cellOffsets(nx, ny int) [8]int32 {
	var off [8]int32
	for h := range off {
		off[h] = int32(h&1 + nx*((h>>1)&1) + nx*ny*((h>>2)&1))
	}
	return off
}

// cellBase returns the id of the lowest corner of cell e of an
// (nx−1)(ny−1)(nz−1) cell grid.
func cellBase(e, nx, ny, nz int) int32 {
	i := e % (nx - 1)
	j := (e / (nx - 1)) % (ny - 1)
	k := e / ((nx - 1) * (ny - 1))
	return int32(i + nx*(j+ny*k))
}

// gridClass returns the structured-geometry class of a lattice vertex:
// how many of its coordinates sit on the min or max of their axis.
func gridClass(onBoundary int, dim int) Class {
	switch {
	case onBoundary == 0:
		return Interior
	case onBoundary >= dim:
		return Corner
	case onBoundary == 2:
		return Edge
	}
	return Face
}

// Hex27Graph returns the 27-point stencil graph of an nx×ny×nz lattice on
// the unit cube (the vertex graph of StructuredHex), with coordinates and
// boundary classes (corner, edge, face from the structured geometry, the
// same as Classify gives for StructuredHex). It computes row offsets
// analytically and fills rows in parallel, so it needs no edge list:
// 256³ (433M directed edges) needs 2.3 GB, for adjacency, offsets and
// coordinates, and nothing transient.
func Hex27Graph(nx, ny, nz int) *Graph {
	return stencilGraph(nx, ny, nz, true)
}

// Grid7Graph returns the 7-point stencil graph (face neighbours only) of
// an nx×ny×nz lattice on the unit cube, with coordinates and boundary
// classes as Hex27Graph has them.
func Grid7Graph(nx, ny, nz int) *Graph {
	return stencilGraph(nx, ny, nz, false)
}

func stencilGraph(nx, ny, nz int, full bool) *Graph {
	n, ok := gridSize(nx, ny, nz)
	if !ok {
		return &Graph{Offsets: []int64{0}}
	}
	st := stencil{nx, ny, nz, full}
	planeStart := st.planeStarts()
	g := &Graph{
		Offsets: make([]int64, n+1),
		Adj:     make([]int32, planeStart[nz]),
		Dim:     3,
		Coords:  gridCoords(nx, ny, nz),
		Class:   make([]Class, n),
	}
	runSpans(splitRange(nz, 1), func(_ int, s workSpan) {
		for k := s.lo; k < s.hi; k++ {
			pos := planeStart[k]
			for j := 0; j < ny; j++ {
				for i := 0; i < nx; i++ {
					v := i + nx*(j+ny*k)
					pos += int64(st.fillRow(g.Adj[pos:pos+st.rowDeg(i, j, k)], i, j, k))
					g.Offsets[v+1] = pos
					on := boolInt(i == 0 || i == nx-1) + boolInt(j == 0 || j == ny-1) + boolInt(k == 0 || k == nz-1)
					g.Class[v] = gridClass(on, 3)
				}
			}
		}
	})
	return g
}

// stencil is the 27-point (full) or 7-point lattice of stencilGraph. Its
// row lengths are known in closed form, so every plane's rows can be
// placed and filled in parallel without an edge list.
type stencil struct {
	nx, ny, nz int
	full       bool
}

// span1 is the number of lattice positions in {i-1, i, i+1} on an axis
// of m positions.
func span1(i, m int) int64 {
	c := int64(3)
	if i == 0 {
		c--
	}
	if i == m-1 {
		c--
	}
	return c
}

func (st stencil) rowDeg(i, j, k int) int64 {
	a, b, c := span1(i, st.nx), span1(j, st.ny), span1(k, st.nz)
	if st.full {
		return a*b*c - 1
	}
	return a + b + c - 3
}

// planeStarts returns the offset of every plane's first row (and the
// edge count last), from per-axis sums rather than a pass over the rows.
func (st stencil) planeStarts() []int64 {
	nx, ny, nz := st.nx, st.ny, st.nz
	var sx, sy int64
	for i := 0; i < nx; i++ {
		sx += span1(i, nx)
	}
	for j := 0; j < ny; j++ {
		sy += span1(j, ny)
	}
	plane := func(k int) int64 {
		c := span1(k, nz)
		if st.full {
			return c*sx*sy - int64(nx*ny)
		}
		return (sx-int64(nx))*int64(ny) + (sy-int64(ny))*int64(nx) + (c-1)*int64(nx*ny)
	}
	planeStart := make([]int64, nz+1)
	for k := 0; k < nz; k++ {
		planeStart[k+1] = planeStart[k] + plane(k)
	}
	return planeStart
}

// fillRow writes the neighbours of vertex (i, j, k) into row in
// increasing order and returns how many it wrote.
func (st stencil) fillRow(row []int32, i, j, k int) int {
	nx, ny, nz := st.nx, st.ny, st.nz
	sxy := nx * ny
	v := i + nx*(j+ny*k)
	w := 0
	put := func(u int) { row[w] = int32(u); w++ }
	if st.full {
		for dz := -1; dz <= 1; dz++ {
			if k+dz < 0 || k+dz >= nz {
				continue
			}
			for dy := -1; dy <= 1; dy++ {
				if j+dy < 0 || j+dy >= ny {
					continue
				}
				for dx := -1; dx <= 1; dx++ {
					if i+dx < 0 || i+dx >= nx || dx|dy|dz == 0 {
						continue
					}
					put(v + dx + nx*dy + sxy*dz)
				}
			}
		}
		return w
	}
	if k > 0 {
		put(v - sxy)
	}
	if j > 0 {
		put(v - nx)
	}
	if i > 0 {
		put(v - 1)
	}
	if i < nx-1 {
		put(v + 1)
	}
	if j < ny-1 {
		put(v + nx)
	}
	if k < nz-1 {
		put(v + sxy)
	}
	return w
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
