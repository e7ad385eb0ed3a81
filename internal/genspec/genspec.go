// Package genspec builds the graphs that generator specs such as
// "hex27:160:relabel" name, for the command line and the developers'
// benchmark: a spec names one graph everywhere.
package genspec

import (
	"fmt"
	"math"
	"os"
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
  tet and tri specs, and .msh files, + :refine=L
                   the mesh refined uniformly L times (each tet into 8, each
                   triangle into 4: about 7× the nodes a level in 3D), e.g.
                   gen:tet:40:refine=2, part.msh.gz:refine=2
`

// Generate builds the graph of a generator spec such as "hex:64" or
// "random:1000000:16:relabel". Element meshes come back too (nil for the
// stencil and random graphs), so their cells can be written out. Graphs
// carry coordinates and boundary classes where the generator has them.
func Generate(spec string) (*mesh.Graph, *mesh.Mesh, error) {
	return GenerateWith(spec, mesh.ElementOptions{}, mesh.ClassifyOptions{})
}

// kind is one generator of the specs: the dimension of its grid (for the
// bound on vertex ids), the memory of what it builds, and the builder of
// an element mesh or of a graph.
type kind struct {
	dim   int
	bytes func(n int, deg float64) int64
	mesh  func(n int) *mesh.Mesh
	graph func(n int, deg float64) *mesh.Graph
}

var kinds = map[string]kind{
	"hex": {dim: 3, bytes: func(n int, _ float64) int64 { return mesh.StructuredBytes(mesh.Hex8, n, n, n) },
		mesh: func(n int) *mesh.Mesh { return mesh.StructuredHex(n, n, n) }},
	"tet": {dim: 3, bytes: func(n int, _ float64) int64 { return mesh.StructuredBytes(mesh.Tet4, n, n, n) },
		mesh: func(n int) *mesh.Mesh { return mesh.StructuredTet(n, n, n) }},
	"quad": {dim: 2, bytes: func(n int, _ float64) int64 { return mesh.StructuredBytes(mesh.Quad4, n, n) },
		mesh: func(n int) *mesh.Mesh { return mesh.StructuredQuad(n, n) }},
	"tri": {dim: 2, bytes: func(n int, _ float64) int64 { return mesh.StructuredBytes(mesh.Tri3, n, n) },
		mesh: func(n int) *mesh.Mesh { return mesh.StructuredTri(n, n) }},
	"hex27": {dim: 3, bytes: func(n int, _ float64) int64 { return mesh.Hex27GraphBytes(n, n, n) },
		graph: func(n int, _ float64) *mesh.Graph { return mesh.Hex27Graph(n, n, n) }},
	"grid7": {dim: 3, bytes: func(n int, _ float64) int64 { return mesh.Grid7GraphBytes(n, n, n) },
		graph: func(n int, _ float64) *mesh.Graph { return mesh.Grid7Graph(n, n, n) }},
	"random": {dim: 1, bytes: mesh.RandomGraphBytes,
		graph: func(n int, deg float64) *mesh.Graph { return mesh.RandomGraph(n, deg, Seed) }},
}

// GenerateWith is Generate with the options of the element graph and of
// the boundary classification of generated meshes. Sizes come from users:
// one whose result the machine (or eo.MaxBytes) cannot hold is refused
// before anything is built, since a generator that outgrows memory is
// killed, not failed.
func GenerateWith(spec string, eo mesh.ElementOptions, co mesh.ClassifyOptions) (*mesh.Graph, *mesh.Mesh, error) {
	parts := strings.Split(spec, ":")
	bad := func(format string, args ...any) error {
		return fmt.Errorf("generator %q: %s (see 'misgrid help coarsen')", spec, fmt.Sprintf(format, args...))
	}
	relabel, levels := false, 0
	for len(parts) > 2 {
		last := parts[len(parts)-1]
		if last == "relabel" && !relabel {
			relabel = true
		} else if v, ok := strings.CutPrefix(last, "refine="); ok && levels == 0 {
			var err error
			if levels, err = parseLevels(v); err != nil {
				return nil, nil, bad("%v", err)
			}
		} else {
			break
		}
		parts = parts[:len(parts)-1]
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
	k, ok := kinds[parts[0]]
	if !ok {
		return nil, nil, bad("unknown generator %q", parts[0])
	}
	if float64(n) > math.Pow(math.MaxInt32, 1/float64(k.dim)) {
		return nil, nil, bad("size %d gives more than 2³¹−1 vertices", n)
	}
	var deg float64
	if want == 3 {
		deg, err = strconv.ParseFloat(parts[2], 64)
		if err != nil || !(deg > 0) || deg >= float64(n) {
			return nil, nil, bad("degree %q is not a number in (0, N)", parts[2])
		}
	}
	if need := k.bytes(n, deg); need >= 0 {
		if err := mesh.CheckMemory("generate", fmt.Sprintf("the graph of %q", spec), need, eo.MaxBytes); err != nil {
			return nil, nil, fmt.Errorf("generator %q: %w", spec, err)
		}
	}
	var g *mesh.Graph
	var m *mesh.Mesh
	if levels > 0 && parts[0] != "tet" && parts[0] != "tri" {
		return nil, nil, bad("refine applies to the tet and tri meshes")
	}
	if k.mesh != nil {
		m = k.mesh(n)
		if levels > 0 {
			if m, err = mesh.Refine(m, mesh.RefineOptions{Levels: levels, MaxBytes: eo.MaxBytes}); err != nil {
				return nil, nil, fmt.Errorf("generator %q: %w", spec, err)
			}
		}
		if g, err = MeshGraphWith(m, eo, co); err != nil {
			return nil, nil, fmt.Errorf("generator %q: %w", spec, err)
		}
	} else {
		g = k.graph(n, deg)
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

// maxLevels bounds refine=L: eight levels multiply the elements by 8⁸.
const maxLevels = 8

func parseLevels(v string) (int, error) {
	l, err := strconv.Atoi(v)
	if err != nil || l < 1 || l > maxLevels {
		return 0, fmt.Errorf("refine=%q: want an integer in [1, %d]", v, maxLevels)
	}
	return l, nil
}

// CutRefine splits the ":refine=L" suffix off the name of an input file:
// it returns the file name and L, or the name and 0 without the suffix.
func CutRefine(input string) (string, int, error) {
	name, v, ok := cutLast(input, ":refine=")
	if !ok {
		return input, 0, nil
	}
	l, err := parseLevels(v)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", input, err)
	}
	return name, l, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// ReadFile is mesh.ReadFile for names that may end in ":refine=L": the
// mesh of a .msh file is then refined L times, and the graph built from
// it, with boundary classes from its facets.
func ReadFile(name string) (*mesh.Graph, *mesh.Mesh, error) {
	path, levels, err := CutRefine(name)
	if err != nil {
		return nil, nil, err
	}
	g, m, err := mesh.ReadFile(path)
	if err != nil || levels == 0 {
		return g, m, err
	}
	if m == nil {
		return nil, nil, fmt.Errorf("%s: refine applies to meshes (.msh) only", name)
	}
	if m, err = mesh.Refine(m, mesh.RefineOptions{Levels: levels}); err == nil {
		g, err = MeshGraph(m, 0)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, m, nil
}

// Load reads a graph file, by its extension (.mtx, .msh, .egr, each
// optionally .gz; a mesh may end in :refine=L), or builds the graph of a
// generator spec: what the benchmarks take for a graph.
func Load(name string) (*mesh.Graph, error) {
	file, _, _ := CutRefine(name)
	base := strings.TrimSuffix(file, ".gz")
	for _, ext := range []string{".mtx", ".msh", ".egr"} {
		if strings.HasSuffix(base, ext) {
			g, _, err := ReadFile(name)
			return g, err
		}
	}
	if _, err := os.Stat(name); err == nil {
		return nil, fmt.Errorf("%s: unknown graph file type (want .mtx, .msh or .egr, optionally .gz)", name)
	}
	g, _, err := Generate(name)
	return g, err
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
