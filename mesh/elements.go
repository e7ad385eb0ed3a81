package mesh

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// ElementOptions controls FromElements. The zero value connects every node
// of every element.
type ElementOptions struct {
	// VertexOnly connects only the corner nodes of each element. The other
	// nodes of second-order elements (mid-edge, mid-face, centre) stay in
	// the graph as isolated vertices, so that vertex ids keep matching node
	// ids. By default all nodes of an element are mutually adjacent, which
	// is the matrix pattern of the finite-element space the mesh carries
	// (quadratic for tri6, quad9, tet10, hex27).
	VertexOnly bool

	// MaxBytes bounds the memory of the build as MatrixOptions.MaxBytes
	// does: zero means what the process may still take on this machine.
	MaxBytes int64
}

// FromElements returns the node graph of a mesh: two nodes are adjacent
// when they share an element of the highest dimension present. Blocks of
// lower dimension (the boundary lines, faces and points a Gmsh file
// carries) add no edges. Nodes in no such element are isolated vertices.
// The graph takes a copy of the mesh coordinates.
//
// Errors name the block, element and local node of a node id out of range.
func FromElements(m *Mesh, opt ElementOptions) (*Graph, error) {
	tm, err := scanMesh(m, "FromElements")
	if err != nil {
		return nil, err
	}
	n := tm.n
	used := func(t ElementType) int {
		if opt.VertexOnly {
			return t.Vertices()
		}
		return t.Nodes()
	}
	inc, elems, err := tm.incidence(m, used, opt.MaxBytes)
	if err != nil {
		return nil, err
	}
	nodesOf := func(ge int32) []int32 {
		i := tm.blockOf(int(ge))
		b := &m.Blocks[tm.blocks[i]]
		k := b.Type.Nodes()
		e := int(ge) - tm.start[i]
		return b.Conn[e*k : e*k+used(b.Type)]
	}
	// row gathers the neighbours of v into buf: sorted, unique, without v.
	row := func(v int, buf []int32) []int32 {
		buf = buf[:0]
		for _, ge := range elems[inc[v]:inc[v+1]] {
			buf = append(buf, nodesOf(ge)...)
		}
		slices.Sort(buf)
		w := 0
		for i, u := range buf {
			if int(u) != v && (i == 0 || u != buf[i-1]) {
				buf[w] = u
				w++
			}
		}
		return buf[:w]
	}
	spans := splitRange(n, 1<<10)
	off := make([]int64, n+1)
	runSpans(spans, func(_ int, s workSpan) {
		var buf []int32
		for v := s.lo; v < s.hi; v++ {
			buf = row(v, buf)
			off[v+1] = int64(len(buf))
		}
	})
	for v := range n {
		off[v+1] += off[v]
	}
	need := bytesOf(int64(n)+1, 16, inc[n], 4, int64(len(m.Coords)), 8, off[n], 4)
	if err := CheckMemory("FromElements", fmt.Sprintf("the graph of %d nodes and %d directed edges", n, off[n]), need, opt.MaxBytes); err != nil {
		return nil, err
	}
	adj := make([]int32, off[n])
	runSpans(spans, func(_ int, s workSpan) {
		var buf []int32
		for v := s.lo; v < s.hi; v++ {
			buf = row(v, buf)
			copy(adj[off[v]:], buf)
		}
	})
	g := &Graph{Offsets: off, Adj: adj}
	if n > 0 {
		g.Dim = m.Dim
		g.Coords = slices.Clone(m.Coords)
	}
	return g, nil
}

// incidence returns every node's elements (the first used(type) nodes of
// each element of the top blocks), each list in increasing element order:
// a node's row is then the union of its elements' nodes, built without an
// edge list. Checks the memory of the lists, the graph's offsets and its
// coordinates first; FromElements checks the adjacency once its size is
// known.
func (tm *topMesh) incidence(m *Mesh, used func(ElementType) int, maxBytes int64) (inc []int64, elems []int32, err error) {
	n := tm.n
	inc = make([]int64, n+1)
	for _, bi := range tm.blocks {
		b := &m.Blocks[bi]
		k, u := b.Type.Nodes(), used(b.Type)
		for e := range b.Len() {
			for _, v := range b.Conn[e*k : e*k+u] {
				inc[v+1]++
			}
		}
	}
	for v := range n {
		inc[v+1] += inc[v]
	}
	// Incidence lists and their cursor, offsets, coordinates.
	need := bytesOf(int64(n)+1, 24, inc[n], 4, int64(len(m.Coords)), 8)
	if err := CheckMemory("FromElements", fmt.Sprintf("the graph of a mesh of %d nodes", n), need, maxBytes); err != nil {
		return nil, nil, err
	}
	elems = make([]int32, inc[n])
	pos := slices.Clone(inc[:n])
	for i, bi := range tm.blocks {
		b := &m.Blocks[bi]
		k, u := b.Type.Nodes(), used(b.Type)
		for e := range b.Len() {
			ge := int32(tm.start[i] + e)
			for _, v := range b.Conn[e*k : e*k+u] {
				elems[pos[v]] = ge
				pos[v]++
			}
		}
	}
	return inc, elems, nil
}

// topMesh is what scanMesh learns: the node count and the blocks of the
// highest element dimension, with the global index of each block's first
// element.
type topMesh struct {
	n      int
	dim    int   // highest element dimension (−1 when there are no elements)
	blocks []int // indices into Mesh.Blocks
	start  []int // global element index of each block's first element, plus the total
}

// blockOf returns the index into t.blocks of global element ge.
func (t *topMesh) blockOf(ge int) int {
	if len(t.blocks) == 1 {
		return 0
	}
	return sort.SearchInts(t.start, ge+1) - 1
}

// scanMesh checks everything FromElements and Classify rely on and finds
// the top-dimensional blocks.
func scanMesh(m *Mesh, who string) (*topMesh, error) {
	if m == nil {
		return nil, fmt.Errorf("mesh: %s: nil mesh", who)
	}
	if m.Dim < 0 || m.Dim > 3 || (m.Dim == 0 && len(m.Coords) > 0) {
		return nil, fmt.Errorf("mesh: %s: spatial dimension %d, want 1, 2 or 3", who, m.Dim)
	}
	if m.Dim > 0 && len(m.Coords)%m.Dim != 0 {
		return nil, fmt.Errorf("mesh: %s: len(Coords) = %d is not a multiple of Dim = %d", who, len(m.Coords), m.Dim)
	}
	n := m.NumNodes()
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("mesh: %s: %d nodes exceed the int32 id range", who, n)
	}
	for i, x := range m.Coords {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("mesh: %s: node %d: coordinate %d is %v", who, i/m.Dim, i%m.Dim, x)
		}
	}
	t := &topMesh{n: n, dim: -1}
	for bi := range m.Blocks {
		b := &m.Blocks[bi]
		k := b.Type.Nodes()
		if k == 0 {
			return nil, fmt.Errorf("mesh: %s: block %d: unknown element type %v", who, bi, b.Type)
		}
		if len(b.Conn)%k != 0 {
			return nil, fmt.Errorf("mesh: %s: block %d (%v): len(Conn) = %d is not a multiple of %d nodes", who, bi, b.Type, len(b.Conn), k)
		}
		if b.Type.Dim() > m.Dim {
			return nil, fmt.Errorf("mesh: %s: block %d: %v elements in a %d-dimensional mesh", who, bi, b.Type, m.Dim)
		}
		if b.Len() > 0 && b.Type.Dim() > t.dim {
			t.dim = b.Type.Dim()
		}
	}
	total := 0
	for bi := range m.Blocks {
		b := &m.Blocks[bi]
		if b.Len() == 0 || b.Type.Dim() != t.dim {
			continue
		}
		k := b.Type.Nodes()
		for i, v := range b.Conn {
			if v < 0 || int(v) >= n {
				return nil, fmt.Errorf("mesh: %s: block %d (%v), element %d, node %d: id %d out of range [0,%d)", who, bi, b.Type, i/k, i%k, v, n)
			}
		}
		t.blocks = append(t.blocks, bi)
		t.start = append(t.start, total)
		total += b.Len()
		if total > math.MaxInt32 {
			return nil, fmt.Errorf("mesh: %s: more than 2³¹−1 elements", who)
		}
	}
	t.start = append(t.start, total)
	return t, nil
}
