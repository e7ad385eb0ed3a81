package mesh

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// ClassifyOptions controls Classify.
type ClassifyOptions struct {
	// FeatureAngle, in degrees, is the angle under which two facet normals
	// count as one direction, as in VTK's feature edges. Zero means
	// DefaultFeatureAngle.
	FeatureAngle float64
}

// Classify returns the boundary class of every node of a mesh, from its
// topology and coordinates.
//
// The exterior facets are the faces (in 2D the edges) of top-dimensional
// elements that belong to exactly one element; facets are matched by
// their sorted corner ids, and a facet shared by three or more elements
// counts as interior. Their nodes are the boundary nodes. Each exterior
// facet gets an outward unit normal from its corner coordinates (pointing
// away from its element's centroid, so element orientation does not
// matter). At each boundary node the normals of its facets are clustered
// greedily, in a fixed order: a normal joins the first cluster whose first
// normal lies within the feature angle, or starts a new one. The number of
// clusters is the number of distinct directions: in 3D three or more make
// a Corner, two an Edge, one a Face; in 2D two or more make a Corner, one
// a Face; the end points of a 1D mesh are Corners. So a curved surface
// meshed finely enough is Face throughout, not a sea of corners.
//
// Second-order nodes (tri6, quad9, tet10, hex27, in Gmsh node order) are
// classified with the facets they lie on: a mid-edge node on an edge of a
// cube sees the facets of two faces and is an Edge, a face-centre node is
// a Face. Nodes in no exterior facet are Interior.
func Classify(m *Mesh, opt ClassifyOptions) ([]Class, error) {
	tm, err := scanMesh(m, "Classify")
	if err != nil {
		return nil, err
	}
	angle := opt.FeatureAngle
	if angle == 0 {
		angle = DefaultFeatureAngle
	}
	if !(angle > 0 && angle <= 180) {
		return nil, fmt.Errorf("mesh: Classify: feature angle %v° outside (0°, 180°]", opt.FeatureAngle)
	}
	cls := make([]Class, tm.n)
	if tm.dim < 1 {
		return cls, nil
	}
	c := &classifier{m: m, tm: tm}
	ext := c.exteriorFacets()
	normals := c.normals(ext)

	// Node → exterior facet incidence, each list in facet order.
	n := tm.n
	inc := make([]int64, n+1)
	var nodes []int32
	for _, ref := range ext {
		nodes = c.facetNodes(ref, nodes[:0])
		for _, v := range nodes {
			inc[v+1]++
		}
	}
	for v := range n {
		inc[v+1] += inc[v]
	}
	list := make([]int32, inc[n])
	pos := slices.Clone(inc[:n])
	for f, ref := range ext {
		nodes = c.facetNodes(ref, nodes[:0])
		for _, v := range nodes {
			list[pos[v]] = int32(f)
			pos[v]++
		}
	}
	cosMax := math.Cos(angle * math.Pi / 180)
	var reps [][3]float64
	for v := range n {
		fs := list[inc[v]:inc[v+1]]
		if len(fs) == 0 {
			continue
		}
		reps = reps[:0]
	facets:
		for _, f := range fs {
			nv := normals[f]
			if nv == ([3]float64{}) {
				continue // degenerate facet: boundary, but no direction
			}
			for _, r := range reps {
				if nv[0]*r[0]+nv[1]*r[1]+nv[2]*r[2] > cosMax {
					continue facets
				}
			}
			reps = append(reps, nv)
		}
		cls[v] = directionsClass(len(reps), tm.dim)
	}
	return cls, nil
}

// directionsClass maps the number of distinct normal directions at a
// boundary node of a dim-dimensional mesh to its class.
func directionsClass(dirs, dim int) Class {
	switch {
	case dirs == 0:
		return Face
	case dim <= 1 || dirs >= dim:
		return Corner
	case dirs == 2:
		return Edge
	}
	return Face
}

// facetDef is one facet of an element shape: its corners in cyclic order
// and the second-order nodes on it (Gmsh numbering), which only elements
// with more nodes than corners have.
type facetDef struct {
	corners []int8
	extra   []int8
}

var (
	lineFacets = []facetDef{{corners: []int8{0}}, {corners: []int8{1}}}
	triFacets  = []facetDef{
		{[]int8{0, 1}, []int8{3}}, {[]int8{1, 2}, []int8{4}}, {[]int8{2, 0}, []int8{5}},
	}
	quadFacets = []facetDef{
		{[]int8{0, 1}, []int8{4}}, {[]int8{1, 2}, []int8{5}},
		{[]int8{2, 3}, []int8{6}}, {[]int8{3, 0}, []int8{7}},
	}
	// Gmsh tet10: 4=01 5=12 6=02 7=03 8=23 9=13.
	tetFacets = []facetDef{
		{[]int8{0, 1, 2}, []int8{4, 5, 6}}, {[]int8{0, 1, 3}, []int8{4, 9, 7}},
		{[]int8{0, 2, 3}, []int8{6, 8, 7}}, {[]int8{1, 2, 3}, []int8{5, 8, 9}},
	}
	// Gmsh hex27: edges 8=01 9=03 10=04 11=12 12=15 13=23 14=26 15=37
	// 16=45 17=47 18=56 19=67; face centres 20=0123 21=0154 22=0374
	// 23=1265 24=2376 25=4567.
	hexFacets = []facetDef{
		{[]int8{0, 3, 2, 1}, []int8{9, 13, 11, 8, 20}},
		{[]int8{4, 5, 6, 7}, []int8{16, 18, 19, 17, 25}},
		{[]int8{0, 1, 5, 4}, []int8{8, 12, 16, 10, 21}},
		{[]int8{1, 2, 6, 5}, []int8{11, 14, 18, 12, 23}},
		{[]int8{2, 3, 7, 6}, []int8{13, 15, 19, 14, 24}},
		{[]int8{3, 0, 4, 7}, []int8{9, 10, 17, 15, 22}},
	}
	prismFacets = []facetDef{
		{corners: []int8{0, 1, 2}}, {corners: []int8{3, 4, 5}},
		{corners: []int8{0, 1, 4, 3}}, {corners: []int8{1, 2, 5, 4}}, {corners: []int8{2, 0, 3, 5}},
	}
	pyramidFacets = []facetDef{
		{corners: []int8{0, 1, 2, 3}},
		{corners: []int8{0, 1, 4}}, {corners: []int8{1, 2, 4}}, {corners: []int8{2, 3, 4}}, {corners: []int8{3, 0, 4}},
	}
)

func facetsOf(t ElementType) []facetDef {
	switch t {
	case Line2, Line3:
		return lineFacets
	case Tri3, Tri6:
		return triFacets
	case Quad4, Quad9:
		return quadFacets
	case Tet4, Tet10:
		return tetFacets
	case Hex8, Hex27:
		return hexFacets
	case Prism6:
		return prismFacets
	case Pyramid5:
		return pyramidFacets
	}
	return nil
}

// A facet reference packs a global element index and a local facet number.
const facetsPerElem = 8

type classifier struct {
	m  *Mesh
	tm *topMesh
}

// element returns the node list and type of global element ge.
func (c *classifier) element(ge int) ([]int32, ElementType) {
	i := c.tm.blockOf(ge)
	b := &c.m.Blocks[c.tm.blocks[i]]
	k := b.Type.Nodes()
	e := ge - c.tm.start[i]
	return b.Conn[e*k : e*k+k], b.Type
}

// key returns the sorted corner ids of a facet, padded with −1.
func (c *classifier) key(ref int64) [4]int32 {
	conn, t := c.element(int(ref / facetsPerElem))
	fd := facetsOf(t)[ref%facetsPerElem]
	k := [4]int32{-1, -1, -1, -1}
	for i, l := range fd.corners {
		k[i] = conn[l]
	}
	slices.Sort(k[:len(fd.corners)])
	return k
}

// facetNodes appends the corner and second-order nodes of a facet.
func (c *classifier) facetNodes(ref int64, dst []int32) []int32 {
	conn, t := c.element(int(ref / facetsPerElem))
	fd := facetsOf(t)[ref%facetsPerElem]
	for _, l := range fd.corners {
		dst = append(dst, conn[l])
	}
	if t.Nodes() > t.Vertices() {
		for _, l := range fd.extra {
			dst = append(dst, conn[l])
		}
	}
	return dst
}

// exteriorFacets returns the facets that belong to exactly one element,
// ordered by smallest corner id, then corner ids, then element: a bucket
// per smallest corner keeps the matching linear in the mesh size with no
// hash map.
func (c *classifier) exteriorFacets() []int64 {
	n, tm, m := c.tm.n, c.tm, c.m
	ne := tm.start[len(tm.start)-1]
	minCorner := func(conn []int32, fd facetDef) int32 {
		v := conn[fd.corners[0]]
		for _, l := range fd.corners[1:] {
			v = min(v, conn[l])
		}
		return v
	}
	bucket := make([]int64, n+1)
	for _, bi := range tm.blocks {
		b := &m.Blocks[bi]
		k, fds := b.Type.Nodes(), facetsOf(b.Type)
		for e := range b.Len() {
			conn := b.Conn[e*k : e*k+k]
			for _, fd := range fds {
				bucket[minCorner(conn, fd)+1]++
			}
		}
	}
	for v := range n {
		bucket[v+1] += bucket[v]
	}
	refs := make([]int64, bucket[n])
	pos := slices.Clone(bucket[:n])
	for ge := range ne {
		conn, t := c.element(ge)
		for f, fd := range facetsOf(t) {
			v := minCorner(conn, fd)
			refs[pos[v]] = int64(ge)*facetsPerElem + int64(f)
			pos[v]++
		}
	}
	pos = nil
	type keyed struct {
		k   [4]int32
		ref int64
	}
	spans := splitRange(n, 1<<12)
	found := make([][]int64, len(spans))
	runSpans(spans, func(si int, s workSpan) {
		var buf []keyed
		var out []int64
		for v := s.lo; v < s.hi; v++ {
			buf = buf[:0]
			for _, ref := range refs[bucket[v]:bucket[v+1]] {
				buf = append(buf, keyed{c.key(ref), ref})
			}
			slices.SortFunc(buf, func(a, b keyed) int {
				if r := slices.Compare(a.k[:], b.k[:]); r != 0 {
					return r
				}
				return cmp.Compare(a.ref, b.ref)
			})
			for i := 0; i < len(buf); {
				j := i + 1
				for j < len(buf) && buf[j].k == buf[i].k {
					j++
				}
				if j == i+1 {
					out = append(out, buf[i].ref)
				}
				i = j
			}
		}
		found[si] = out
	})
	return slices.Concat(found...)
}

// normals returns the outward unit normal of every facet in refs, or zero
// for a degenerate facet.
func (c *classifier) normals(refs []int64) [][3]float64 {
	d := c.m.Dim
	at := func(v int32) (p [3]float64) {
		copy(p[:], c.m.Coords[int(v)*d:int(v)*d+d])
		return p
	}
	out := make([][3]float64, len(refs))
	runSpans(splitRange(len(refs), 1<<10), func(_ int, s workSpan) {
		for i := s.lo; i < s.hi; i++ {
			ref := refs[i]
			conn, t := c.element(int(ref / facetsPerElem))
			fd := facetsOf(t)[ref%facetsPerElem]
			var ec, fc [3]float64
			for _, v := range conn[:t.Vertices()] {
				ec = vadd(ec, at(v))
			}
			ec = vscale(ec, 1/float64(t.Vertices()))
			var pa [4][3]float64
			p := pa[:len(fd.corners)]
			for j, l := range fd.corners {
				p[j] = at(conn[l])
				fc = vadd(fc, p[j])
			}
			fc = vscale(fc, 1/float64(len(p)))
			w := vsub(fc, ec) // points out of the element
			var nv [3]float64
			switch len(p) {
			case 1:
				nv = w
			case 2:
				// In-plane normal to the edge: w without its part along the edge.
				e := vsub(p[1], p[0])
				if ee := vdot(e, e); ee > 0 {
					nv = vsub(w, vscale(e, vdot(w, e)/ee))
				}
			case 3:
				nv = vcross(vsub(p[1], p[0]), vsub(p[2], p[0]))
			case 4:
				nv = vcross(vsub(p[2], p[0]), vsub(p[3], p[1]))
			}
			if vdot(nv, w) < 0 {
				nv = vscale(nv, -1)
			}
			if l := math.Sqrt(vdot(nv, nv)); l > 0 {
				out[i] = vscale(nv, 1/l)
			}
		}
	})
	return out
}

func vadd(a, b [3]float64) [3]float64 { return [3]float64{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func vsub(a, b [3]float64) [3]float64 { return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func vscale(a [3]float64, s float64) [3]float64 {
	return [3]float64{a[0] * s, a[1] * s, a[2] * s}
}
func vdot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func vcross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
