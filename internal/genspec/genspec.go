// Package genspec builds the graphs that generator specs such as
// "hex27:160:relabel" name, for the command line and the developers'
// benchmark: a spec names one graph everywhere.
package genspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/misgrid/misgrid/mesh"
)

// Seed seeds the random graphs and relabellings of generator specs, so
// that a spec names one graph everywhere.
const Seed = 1

// Help describes the generator specs for usage texts.
const Help = `generator specs (N vertices per side, all on the unit square or cube):
  hex:N            hex8 mesh, N³ vertices, 27-point graph, classified from its facets
  hex27:N          the same graph built directly from the stencil (fast, no elements)
  quad:N, tri:N    quad4 / tri3 mesh of the unit square, N² vertices
  tet:N            tet4 mesh (6 tets per cube), N³ vertices
  grid7:N          7-point stencil graph, N³ vertices
  random:N:DEG     random graph, N vertices, average degree DEG
  any spec + :relabel   the same graph in a random vertex order
`

// Generate builds the graph of a generator spec such as "hex:64" or
// "random:1000000:16:relabel". Element meshes come back too (nil for the
// stencil and random graphs), so their cells can be written out. Graphs
// carry coordinates and boundary classes where the generator has them.
func Generate(spec string) (*mesh.Graph, *mesh.Mesh, error) {
	return GenerateWith(spec, mesh.ElementOptions{}, mesh.ClassifyOptions{})
}

// GenerateWith is Generate with the options of the element graph and of
// the boundary classification of generated meshes.
func GenerateWith(spec string, eo mesh.ElementOptions, co mesh.ClassifyOptions) (*mesh.Graph, *mesh.Mesh, error) {
	parts := strings.Split(spec, ":")
	relabel := false
	if len(parts) > 1 && parts[len(parts)-1] == "relabel" {
		relabel = true
		parts = parts[:len(parts)-1]
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("generator %q: %s (see 'misgrid help coarsen')", spec, fmt.Sprintf(format, args...))
	}
	want := 2
	if parts[0] == "random" {
		want = 3
	}
	if len(parts) != want {
		return nil, nil, bad("want %d fields separated by ':'", want)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 2 {
		return nil, nil, bad("size %q is not an integer ≥ 2", parts[1])
	}
	dim := 3
	switch parts[0] {
	case "quad", "tri":
		dim = 2
	case "random":
		dim = 1
	}
	if float64(n) > math.Pow(math.MaxInt32, 1/float64(dim)) {
		return nil, nil, bad("size %d gives more than 2³¹−1 vertices", n)
	}
	if err := checkMemory(spec, parts, n, eo.MaxBytes); err != nil {
		return nil, nil, err
	}
	var g *mesh.Graph
	var m *mesh.Mesh
	switch parts[0] {
	case "hex":
		m = mesh.StructuredHex(n, n, n)
	case "tet":
		m = mesh.StructuredTet(n, n, n)
	case "quad":
		m = mesh.StructuredQuad(n, n)
	case "tri":
		m = mesh.StructuredTri(n, n)
	case "hex27":
		g = mesh.Hex27Graph(n, n, n)
	case "grid7":
		g = mesh.Grid7Graph(n, n, n)
	case "random":
		deg, err := strconv.ParseFloat(parts[2], 64)
		if err != nil || !(deg > 0) || deg >= float64(n) {
			return nil, nil, bad("degree %q is not a number in (0, N)", parts[2])
		}
		g = mesh.RandomGraph(n, deg, Seed)
	default:
		return nil, nil, bad("unknown generator %q", parts[0])
	}
	if m != nil {
		if g, err = MeshGraphWith(m, eo, co); err != nil {
			return nil, nil, fmt.Errorf("generator %q: %w", spec, err)
		}
	}
	if relabel {
		var perm []int32
		g, perm = mesh.Relabel(g, Seed)
		if m != nil {
			m = permuteMesh(m, perm)
		}
	}
	return g, m, nil
}

// checkMemory refuses a spec whose graph the machine (or maxBytes, as in
// mesh.ElementOptions) cannot hold, before anything is built: sizes come
// from users, and a generator that outgrows memory is killed, not failed.
func checkMemory(spec string, parts []string, n int, maxBytes int64) error {
	var need int64
	switch parts[0] {
	case "hex":
		need = mesh.StructuredBytes(mesh.Hex8, n, n, n)
	case "tet":
		need = mesh.StructuredBytes(mesh.Tet4, n, n, n)
	case "quad":
		need = mesh.StructuredBytes(mesh.Quad4, n, n)
	case "tri":
		need = mesh.StructuredBytes(mesh.Tri3, n, n)
	case "hex27":
		need = mesh.Hex27GraphBytes(n, n, n)
	case "grid7":
		need = mesh.Grid7GraphBytes(n, n, n)
	case "random":
		deg, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			return nil // the generator's own check names the bad degree
		}
		need = mesh.RandomGraphBytes(n, deg)
	}
	if need < 0 {
		return nil
	}
	if err := mesh.CheckMemory("generate", fmt.Sprintf("the graph of %q", spec), need, maxBytes); err != nil {
		return fmt.Errorf("generator %q: %w", spec, err)
	}
	return nil
}

// MeshGraph returns the node graph of m with boundary classes from its
// facets (featureAngle in degrees; 0 means mesh.DefaultFeatureAngle).
func MeshGraph(m *mesh.Mesh, featureAngle float64) (*mesh.Graph, error) {
	return MeshGraphWith(m, mesh.ElementOptions{}, mesh.ClassifyOptions{FeatureAngle: featureAngle})
}

// MeshGraphWith is MeshGraph with the options of the element graph and of
// the classification.
func MeshGraphWith(m *mesh.Mesh, eo mesh.ElementOptions, co mesh.ClassifyOptions) (*mesh.Graph, error) {
	g, err := mesh.FromElements(m, eo)
	if err != nil {
		return nil, err
	}
	if g.Class, err = mesh.Classify(m, co); err != nil {
		return nil, err
	}
	return g, nil
}

// permuteMesh renumbers the nodes of m by perm[old] = new, as Relabel did
// to its graph, so that cells written beside the graph still match.
func permuteMesh(m *mesh.Mesh, perm []int32) *mesh.Mesh {
	out := &mesh.Mesh{Dim: m.Dim, Coords: make([]float64, len(m.Coords)), Groups: m.Groups}
	for old, nw := range perm {
		copy(out.Coords[int(nw)*m.Dim:int(nw+1)*m.Dim], m.Coords[old*m.Dim:(old+1)*m.Dim])
	}
	for _, b := range m.Blocks {
		nb := b
		nb.Conn = make([]int32, len(b.Conn))
		for i, v := range b.Conn {
			nb.Conn[i] = perm[v]
		}
		out.Blocks = append(out.Blocks, nb)
	}
	if m.NodeTags != nil {
		out.NodeTags = make([]int64, len(m.NodeTags))
		for old, nw := range perm {
			out.NodeTags[nw] = m.NodeTags[old]
		}
	}
	return out
}
