package mesh

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Class is the boundary class of a vertex. The zero value is Interior.
// Higher classes are "more boundary": a coarse grid should keep them first.
type Class uint8

const (
	Interior Class = iota // not on the boundary
	Face                  // on one boundary facet direction (2D: an edge)
	Edge                  // where two facet directions meet (3D only)
	Corner                // where three or more directions meet (2D: two or more)
)

// NumClasses is the number of distinct Class values.
const NumClasses = 4

func (c Class) String() string {
	switch c {
	case Interior:
		return "interior"
	case Face:
		return "face"
	case Edge:
		return "edge"
	case Corner:
		return "corner"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Graph is an undirected graph in compressed sparse row form.
//
// The neighbours of vertex v are Adj[Offsets[v]:Offsets[v+1]]. Rows are
// sorted, hold no duplicates and no self loops, and the pattern is symmetric.
// Offsets are int64 so that graphs with more than 2³¹ directed edges fit;
// vertex ids are int32, which bounds a graph to 2³¹−1 vertices.
//
// Coords, Class and Dirichlet are optional per-vertex data: nil when unknown.
//
// Functions that take a *Graph read a nil one as the empty graph, and
// assume that a graph holds these invariants: those of this package build
// only such graphs, and Validate checks one built by hand.
type Graph struct {
	Offsets []int64 // len N()+1, Offsets[0] == 0
	Adj     []int32 // len Offsets[N()]

	Dim    int       // spatial dimension of Coords (0 when there are none)
	Coords []float64 // len Dim*N(), vertex v at Coords[Dim*v : Dim*v+Dim]
	Class  []Class   // boundary class per vertex, or nil

	// Dirichlet flags vertices whose matrix rows held only a diagonal.
	// They are isolated in the graph but kept, so vertex ids keep matching
	// matrix rows.
	Dirichlet []bool
}

// N returns the number of vertices.
func (g *Graph) N() int {
	if g == nil || len(g.Offsets) == 0 {
		return 0
	}
	return len(g.Offsets) - 1
}

// NumEdges returns the number of directed edges (twice the undirected count).
func (g *Graph) NumEdges() int64 {
	if g.N() == 0 {
		return 0
	}
	return g.Offsets[g.N()]
}

// Neighbors returns the sorted neighbours of v. The slice aliases g.Adj.
func (g *Graph) Neighbors(v int32) []int32 {
	return g.Adj[g.Offsets[v]:g.Offsets[v+1]]
}

// Degree returns the number of neighbours of v.
func (g *Graph) Degree(v int32) int {
	return int(g.Offsets[v+1] - g.Offsets[v])
}

// MaxDegree returns the largest vertex degree (0 for an empty graph).
func (g *Graph) MaxDegree() int {
	m := 0
	for v := 0; v < g.N(); v++ {
		if d := int(g.Offsets[v+1] - g.Offsets[v]); d > m {
			m = d
		}
	}
	return m
}

// ValidationError says which part of a Graph breaks its invariants.
type ValidationError struct {
	Row   int   // vertex whose row is at fault, or -1
	Index int64 // index into Adj or Offsets, or -1
	Msg   string
}

func (e *ValidationError) Error() string {
	switch {
	case e.Row >= 0 && e.Index >= 0:
		return fmt.Sprintf("mesh: graph row %d (Adj[%d]): %s", e.Row, e.Index, e.Msg)
	case e.Row >= 0:
		return fmt.Sprintf("mesh: graph row %d: %s", e.Row, e.Msg)
	}
	return "mesh: graph: " + e.Msg
}

// Validate checks every invariant of the CSR form and of the optional
// per-vertex data, and names the first offending row and index.
func (g *Graph) Validate() error {
	if g == nil {
		return &ValidationError{Row: -1, Index: -1, Msg: "nil graph"}
	}
	if len(g.Offsets) == 0 {
		if len(g.Adj) != 0 {
			return &ValidationError{Row: -1, Index: -1, Msg: "Adj is not empty but Offsets is"}
		}
		return g.validateVertexData(0)
	}
	n := len(g.Offsets) - 1
	if n > math.MaxInt32 {
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("%d vertices exceed the int32 id range", n)}
	}
	if g.Offsets[0] != 0 {
		return &ValidationError{Row: 0, Index: -1, Msg: fmt.Sprintf("Offsets[0] = %d, want 0", g.Offsets[0])}
	}
	for v := 0; v < n; v++ {
		lo, hi := g.Offsets[v], g.Offsets[v+1]
		if hi < lo {
			return &ValidationError{Row: v, Index: -1, Msg: fmt.Sprintf("Offsets[%d] = %d < Offsets[%d] = %d", v+1, hi, v, lo)}
		}
		if hi > int64(len(g.Adj)) {
			return &ValidationError{Row: v, Index: -1, Msg: fmt.Sprintf("Offsets[%d] = %d beyond len(Adj) = %d", v+1, hi, len(g.Adj))}
		}
	}
	if g.Offsets[n] != int64(len(g.Adj)) {
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("Offsets[%d] = %d, but len(Adj) = %d", n, g.Offsets[n], len(g.Adj))}
	}
	for v := 0; v < n; v++ {
		prev := int32(-1)
		for k := g.Offsets[v]; k < g.Offsets[v+1]; k++ {
			u := g.Adj[k]
			switch {
			case u < 0 || int(u) >= n:
				return &ValidationError{Row: v, Index: k, Msg: fmt.Sprintf("neighbour %d out of range [0,%d)", u, n)}
			case int(u) == v:
				return &ValidationError{Row: v, Index: k, Msg: "self loop"}
			case u == prev:
				return &ValidationError{Row: v, Index: k, Msg: fmt.Sprintf("duplicate neighbour %d", u)}
			case u < prev:
				return &ValidationError{Row: v, Index: k, Msg: fmt.Sprintf("row not sorted: %d after %d", u, prev)}
			}
			prev = u
		}
	}
	for v := 0; v < n; v++ {
		for k := g.Offsets[v]; k < g.Offsets[v+1]; k++ {
			u := g.Adj[k]
			if _, ok := slices.BinarySearch(g.Neighbors(u), int32(v)); !ok {
				return &ValidationError{Row: v, Index: k, Msg: fmt.Sprintf("edge %d-%d has no reverse %d-%d", v, u, u, v)}
			}
		}
	}
	return g.validateVertexData(n)
}

// ValidateStructure checks, in one linear pass, the invariants that code
// indexing by g relies on: offsets rising from 0 to len(Adj), neighbour ids
// in range, per-vertex data of the right lengths. It leaves out what
// Validate adds (sorted rows without repeats or self loops, symmetry, finite
// coordinates), so it costs less than one traversal of the graph: functions
// that take a graph they did not build call it to return an error where
// they would otherwise index out of range.
func (g *Graph) ValidateStructure() error {
	if g == nil {
		return &ValidationError{Row: -1, Index: -1, Msg: "nil graph"}
	}
	n := g.N()
	if n > math.MaxInt32 {
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("%d vertices exceed the int32 id range", n)}
	}
	if n == 0 {
		if len(g.Adj) != 0 {
			return &ValidationError{Row: -1, Index: -1, Msg: "Adj is not empty but there are no vertices"}
		}
		return g.vertexDataLengths(0)
	}
	if g.Offsets[0] != 0 {
		return &ValidationError{Row: 0, Index: -1, Msg: fmt.Sprintf("Offsets[0] = %d, want 0", g.Offsets[0])}
	}
	for v := 0; v < n; v++ {
		if g.Offsets[v+1] < g.Offsets[v] {
			return &ValidationError{Row: v, Index: -1, Msg: fmt.Sprintf("Offsets[%d] = %d < Offsets[%d] = %d", v+1, g.Offsets[v+1], v, g.Offsets[v])}
		}
	}
	if g.Offsets[n] != int64(len(g.Adj)) {
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("Offsets[%d] = %d, but len(Adj) = %d", n, g.Offsets[n], len(g.Adj))}
	}
	for k, u := range g.Adj {
		if u < 0 || int(u) >= n {
			return &ValidationError{Row: -1, Index: int64(k), Msg: fmt.Sprintf("Adj[%d] = %d out of range [0,%d)", k, u, n)}
		}
	}
	return g.vertexDataLengths(n)
}

// vertexDataLengths checks the lengths of the optional per-vertex data.
func (g *Graph) vertexDataLengths(n int) error {
	switch {
	case g.Coords != nil && (g.Dim < 1 || g.Dim > 3):
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("Dim = %d with coordinates, want 1, 2 or 3", g.Dim)}
	case g.Coords != nil && len(g.Coords) != g.Dim*n:
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("len(Coords) = %d, want Dim*N = %d", len(g.Coords), g.Dim*n)}
	case g.Class != nil && len(g.Class) != n:
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("len(Class) = %d, want N = %d", len(g.Class), n)}
	case g.Dirichlet != nil && len(g.Dirichlet) != n:
		return &ValidationError{Row: -1, Index: -1, Msg: fmt.Sprintf("len(Dirichlet) = %d, want N = %d", len(g.Dirichlet), n)}
	}
	return nil
}

func (g *Graph) validateVertexData(n int) error {
	if err := g.vertexDataLengths(n); err != nil {
		return err
	}
	for i, x := range g.Coords {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &ValidationError{Row: i / g.Dim, Index: -1, Msg: fmt.Sprintf("coordinate %d is %v", i%g.Dim, x)}
		}
	}
	for v, c := range g.Class {
		if c >= NumClasses {
			return &ValidationError{Row: v, Index: -1, Msg: fmt.Sprintf("boundary class %d out of range", c)}
		}
	}
	return nil
}

// Pair is an undirected edge between two vertex ids.
type Pair struct{ U, V int32 }

// FromEdges builds a graph on n vertices from a list of edges. Each edge is
// added in both directions; self loops and repeated edges are dropped, so
// the list may hold any mixture of (u,v) and (v,u).
func FromEdges(n int, edges []Pair) (*Graph, error) {
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("mesh: FromEdges: vertex count %d out of range [0, 2³¹)", n)
	}
	for i, e := range edges {
		if e.U < 0 || int(e.U) >= n || e.V < 0 || int(e.V) >= n {
			return nil, fmt.Errorf("mesh: FromEdges: edge %d (%d,%d) has a vertex out of range [0,%d)", i, e.U, e.V, n)
		}
	}
	// Both directions of every edge, then offsets, cursors and the rows.
	need := bytesOf(int64(n)+1, 24, int64(len(edges)), 32)
	if err := CheckMemory("FromEdges", fmt.Sprintf("a graph of %d vertices and %d edges", n, len(edges)), need, 0); err != nil {
		return nil, err
	}
	b := NewBuilder(n)
	for _, e := range edges {
		b.Add(e.U, e.V)
	}
	return b.Graph(), nil
}

// Builder accumulates undirected edges and produces a Graph in two passes
// (count, then fill), so that memory is the final CSR plus one copy of the
// directed edge list. Its zero value is not usable; call NewBuilder.
type Builder struct {
	n   int
	src []int32
	dst []int32
}

// NewBuilder returns a Builder for a graph on n vertices.
// A negative n is taken as 0.
func NewBuilder(n int) *Builder { return &Builder{n: max(n, 0)} }

// Add records the undirected edge u–v. Self loops are ignored. The caller
// guarantees 0 ≤ u, v < n; Add does not check, for speed in inner loops.
func (b *Builder) Add(u, v int32) {
	if u == v {
		return
	}
	b.src = append(b.src, u, v)
	b.dst = append(b.dst, v, u)
}

// Graph returns the symmetric, sorted, duplicate-free graph of the edges
// added so far.
func (b *Builder) Graph() *Graph {
	return csrFromDirected(b.n, b.src, b.dst)
}

// csrFromDirected builds sorted, deduplicated CSR rows from directed pairs
// (src[i] → dst[i]). The caller has made the pair list symmetric.
func csrFromDirected(n int, src, dst []int32) *Graph {
	off := make([]int64, n+1)
	for _, s := range src {
		off[s+1]++
	}
	for v := 0; v < n; v++ {
		off[v+1] += off[v]
	}
	adj := make([]int32, len(src))
	pos := slices.Clone(off[:n])
	for i, s := range src {
		adj[pos[s]] = dst[i]
		pos[s]++
	}
	// Sort and deduplicate each row, compacting in place.
	w := int64(0)
	newOff := make([]int64, n+1)
	for v := 0; v < n; v++ {
		row := adj[off[v]:off[v+1]]
		slices.Sort(row)
		prev := int32(-1)
		for _, u := range row {
			if u != prev {
				adj[w] = u
				w++
				prev = u
			}
		}
		newOff[v+1] = w
	}
	return &Graph{Offsets: newOff, Adj: slices.Clip(adj[:w])}
}

// ErrEmpty is returned by operations that need at least one vertex.
var ErrEmpty = errors.New("mesh: empty graph")

// Permute returns the graph relabelled by perm, where perm[old] = new.
// Per-vertex data moves with the vertices. perm must be a permutation of
// 0..N-1.
func (g *Graph) Permute(perm []int32) (*Graph, error) {
	n := g.N()
	if len(perm) != n {
		return nil, fmt.Errorf("mesh: Permute: len(perm) = %d, want %d", len(perm), n)
	}
	seen := make([]bool, n)
	for i, p := range perm {
		if p < 0 || int(p) >= n || seen[p] {
			return nil, fmt.Errorf("mesh: Permute: perm[%d] = %d is out of range or repeated", i, p)
		}
		seen[p] = true
	}
	return g.permute(perm), nil
}

// permute is Permute for a perm the caller knows to be a permutation.
func (g *Graph) permute(perm []int32) *Graph {
	if g == nil {
		return &Graph{Offsets: []int64{0}}
	}
	n := g.N()
	inv := make([]int32, n)
	for old, p := range perm {
		inv[p] = int32(old)
	}
	h := &Graph{Offsets: make([]int64, n+1), Adj: make([]int32, len(g.Adj)), Dim: g.Dim}
	for nv := 0; nv < n; nv++ {
		h.Offsets[nv+1] = h.Offsets[nv] + int64(g.Degree(inv[nv]))
	}
	// Rows are independent: relabelling a graph of 16M vertices takes
	// tens of seconds on one core, most of it the rows' sorts.
	runSpans(splitRange(n, 1<<14), func(_ int, s workSpan) {
		for nv := s.lo; nv < s.hi; nv++ {
			dst := h.Adj[h.Offsets[nv]:h.Offsets[nv+1]]
			for i, u := range g.Neighbors(inv[nv]) {
				dst[i] = perm[u]
			}
			slices.Sort(dst)
		}
	})
	if g.Coords != nil {
		h.Coords = make([]float64, len(g.Coords))
		for old, p := range perm {
			copy(h.Coords[int(p)*g.Dim:int(p+1)*g.Dim], g.Coords[old*g.Dim:(old+1)*g.Dim])
		}
	}
	if g.Class != nil {
		h.Class = make([]Class, n)
		for old, p := range perm {
			h.Class[p] = g.Class[old]
		}
	}
	if g.Dirichlet != nil {
		h.Dirichlet = make([]bool, n)
		for old, p := range perm {
			h.Dirichlet[p] = g.Dirichlet[old]
		}
	}
	return h
}
