package mesh

import (
	"fmt"
	"math"
	"slices"
)

// RefineOptions controls Refine.
type RefineOptions struct {
	// Levels is the number of times to refine; 0 means once.
	Levels int
	// MaxBytes bounds the memory of each level as ElementOptions.MaxBytes
	// does: zero means what the process may still take on this machine.
	MaxBytes int64
}

// Refine returns the uniform refinement of a simplex mesh: every edge is
// split at its midpoint, each tet4 into eight tets (the four at the
// corners and the inner octahedron cut along its shortest diagonal), each
// tri3 into four triangles, each line2 into two lines; point1 elements are
// kept. A refinement of a 3D mesh of about 7 edges per node multiplies the
// nodes by about 7 and the tets by 8, so a mesh small enough to store
// (Gmsh's, from a file) reaches millions of nodes in two or three levels.
//
// Numbering is deterministic: the old nodes keep their ids, and the
// midpoint of edge (a, b), a < b, gets id n + the rank of (a, b) among all
// edges in increasing order, so new nodes follow the old ones' order.
// Child elements follow their parent, in a fixed order; each child keeps
// its parent's orientation (the sign of its volume or area), block,
// Group and Entity. Edges shared by several blocks (a tet face and a
// boundary triangle) get one midpoint, so the boundary blocks of a Gmsh
// mesh stay conforming. Midpoints lie on the straight edges: curved faces
// stay faceted as the input mesh had them, and volume is preserved
// exactly. NodeTags, when set, keep the old tags and number new nodes
// after the largest.
//
// Other element types (quadrilaterals, hexahedra, prisms, pyramids,
// second-order elements) give an error naming the block. Memory is
// estimated before each level is built.
func Refine(m *Mesh, opt RefineOptions) (*Mesh, error) {
	levels := max(opt.Levels, 1)
	if opt.Levels < 0 {
		return nil, fmt.Errorf("mesh: Refine: %d levels, want at least 0", opt.Levels)
	}
	if err := checkRefinable(m); err != nil {
		return nil, err
	}
	for range levels {
		r, err := refineOnce(m, opt.MaxBytes)
		if err != nil {
			return nil, err
		}
		m = r
	}
	return m, nil
}

// checkRefinable checks the mesh: a known dimension, finite coordinates,
// supported element types and node ids in range in every block.
func checkRefinable(m *Mesh) error {
	if _, err := scanMesh(m, "Refine"); err != nil {
		return err
	}
	n := m.NumNodes()
	for bi := range m.Blocks {
		b := &m.Blocks[bi]
		if _, ok := refineEdges[b.Type]; !ok {
			return fmt.Errorf("mesh: Refine: block %d: %v elements cannot be refined (tet4, tri3, line2 and point1 can)", bi, b.Type)
		}
		k := b.Type.Nodes()
		for i, v := range b.Conn {
			if v < 0 || int(v) >= n {
				return fmt.Errorf("mesh: Refine: block %d (%v), element %d, node %d: id %d out of range [0,%d)", bi, b.Type, i/k, i%k, v, n)
			}
		}
	}
	return nil
}

// refineEdges lists the local edges of each refinable type, and refineKids
// the number of children of one element.
var (
	refineEdges = map[ElementType][][2]int{
		Point1: nil,
		Line2:  {{0, 1}},
		Tri3:   {{0, 1}, {1, 2}, {0, 2}},
		Tet4:   {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}},
	}
	refineKids = map[ElementType]int{Point1: 1, Line2: 2, Tri3: 4, Tet4: 8}
)

func edgeKey(a, b int32) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(b)
}

// refineOnce refines m one level; m has passed checkRefinable.
func refineOnce(m *Mesh, maxBytes int64) (*Mesh, error) {
	n := m.NumNodes()
	var occ int64 // edge occurrences, over all blocks
	var kids int64
	for bi := range m.Blocks {
		b := &m.Blocks[bi]
		occ += int64(b.Len()) * int64(len(refineEdges[b.Type]))
		kids += int64(b.Len()) * int64(refineKids[b.Type]*b.Type.Nodes())
	}
	// The sorted edge list (a copy of every occurrence before it is
	// compacted), then the new coordinates and connectivity: the edges
	// are at most the occurrences.
	need := bytesOf(occ, 8, int64(n)+occ, int64(8*m.Dim), kids, 4)
	what := fmt.Sprintf("the refinement of a mesh of %d nodes and %d edge occurrences", n, occ)
	if err := CheckMemory("Refine", what, need, maxBytes); err != nil {
		return nil, err
	}
	edges := make([]uint64, 0, occ)
	for bi := range m.Blocks {
		b := &m.Blocks[bi]
		k, es := b.Type.Nodes(), refineEdges[b.Type]
		for e := range b.Len() {
			c := b.Conn[e*k : e*k+k]
			for _, ed := range es {
				edges = append(edges, edgeKey(c[ed[0]], c[ed[1]]))
			}
		}
	}
	slices.Sort(edges)
	edges = slices.Clip(slices.Compact(edges))
	if int64(n)+int64(len(edges)) > math.MaxInt32 {
		return nil, fmt.Errorf("mesh: Refine: %d nodes and %d edges: the refined mesh would exceed the int32 id range", n, len(edges))
	}
	out := &Mesh{Dim: m.Dim, Groups: m.Groups}
	out.Coords = make([]float64, (n+len(edges))*m.Dim)
	copy(out.Coords, m.Coords)
	d := m.Dim
	for i, key := range edges {
		a, b := int(key>>32), int(key&math.MaxUint32)
		for j := range d {
			out.Coords[(n+i)*d+j] = 0.5 * (m.Coords[a*d+j] + m.Coords[b*d+j])
		}
	}
	if m.NodeTags != nil {
		out.NodeTags = make([]int64, n+len(edges))
		copy(out.NodeTags, m.NodeTags)
		next := slices.Max(m.NodeTags) + 1
		for i := n; i < len(out.NodeTags); i++ {
			out.NodeTags[i] = next
			next++
		}
	}
	mid := func(a, b int32) int32 {
		i, _ := slices.BinarySearch(edges, edgeKey(a, b))
		return int32(n + i)
	}
	out.Blocks = make([]ElementBlock, len(m.Blocks))
	for bi := range m.Blocks {
		b := &m.Blocks[bi]
		nb := ElementBlock{Type: b.Type, Group: b.Group, Entity: b.Entity}
		nb.Conn = make([]int32, b.Len()*refineKids[b.Type]*b.Type.Nodes())
		refineBlock(b, nb.Conn, out.Coords, d, mid)
		out.Blocks[bi] = nb
	}
	return out, nil
}

// refineBlock writes the children of every element of b into conn, in
// parallel over the elements (each element writes its own range).
func refineBlock(b *ElementBlock, conn []int32, coords []float64, d int, mid func(a, b int32) int32) {
	k := b.Type.Nodes()
	w := refineKids[b.Type] * k
	runSpans(splitRange(b.Len(), 1<<12), func(_ int, s workSpan) {
		for e := s.lo; e < s.hi; e++ {
			c, dst := b.Conn[e*k:e*k+k], conn[e*w:e*w+w]
			switch b.Type {
			case Point1:
				dst[0] = c[0]
			case Line2:
				m := mid(c[0], c[1])
				copy(dst, []int32{c[0], m, m, c[1]})
			case Tri3:
				m01, m12, m02 := mid(c[0], c[1]), mid(c[1], c[2]), mid(c[0], c[2])
				copy(dst, []int32{c[0], m01, m02, m01, c[1], m12, m02, m12, c[2], m01, m12, m02})
			case Tet4:
				refineTet(c, dst, coords, d, mid)
			}
		}
	})
}

// refineTet writes the eight children of tet c: the corner tets, then the
// inner octahedron cut along its shortest diagonal into four tets around
// it, each turned to the parent's orientation.
func refineTet(c, dst []int32, coords []float64, d int, mid func(a, b int32) int32) {
	m01, m02, m03 := mid(c[0], c[1]), mid(c[0], c[2]), mid(c[0], c[3])
	m12, m13, m23 := mid(c[1], c[2]), mid(c[1], c[3]), mid(c[2], c[3])
	copy(dst, []int32{
		c[0], m01, m02, m03,
		m01, c[1], m12, m13,
		m02, m12, c[2], m23,
		m03, m13, m23, c[3],
	})
	// The diagonals of the octahedron join opposite edge midpoints; the
	// four others form the cycle around each.
	type cut struct{ a, b, r0, r1, r2, r3 int32 }
	cuts := [3]cut{
		{m02, m13, m01, m12, m23, m03},
		{m01, m23, m02, m12, m13, m03},
		{m03, m12, m01, m13, m23, m02},
	}
	best, bl := 0, math.Inf(1)
	for i, ct := range cuts {
		if l := dist2(coords, d, ct.a, ct.b); l < bl {
			best, bl = i, l
		}
	}
	ct := cuts[best]
	ring := [4]int32{ct.r0, ct.r1, ct.r2, ct.r3}
	for i := range 4 {
		copy(dst[16+4*i:], []int32{ct.a, ct.b, ring[i], ring[(i+1)%4]})
	}
	sign := tetVolume(coords, c) > 0
	for i := range 8 {
		t := dst[4*i : 4*i+4]
		if tetVolume(coords, t) > 0 != sign {
			t[2], t[3] = t[3], t[2]
		}
	}
}

func dist2(coords []float64, d int, a, b int32) float64 {
	s := 0.0
	for j := range d {
		x := coords[int(a)*d+j] - coords[int(b)*d+j]
		s += x * x
	}
	return s
}

// tetVolume is the signed volume of a tet of a 3D mesh.
func tetVolume(coords []float64, t []int32) float64 {
	p := func(i int) [3]float64 {
		v := int(t[i]) * 3
		return [3]float64{coords[v], coords[v+1], coords[v+2]}
	}
	o := p(0)
	return vdot(vsub(p(1), o), vcross(vsub(p(2), o), vsub(p(3), o))) / 6
}
