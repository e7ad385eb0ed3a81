package fem

import (
	"fmt"
	"math"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// TetPoisson returns −Δu = f with P1 elements on the tetrahedra of m,
// Dirichlet conditions on the clamped end (see Clamped): one unknown per
// free node. Unstructured meshes (a Gmsh part, refined) give the rows of
// varying length and the irregular aggregates that the Q1 grids lack.
func TetPoisson(m *mesh.Mesh) (*Problem, error) {
	return tetAssemble(m, 1, func(g *[4][3]float64, vol float64, a, b, _, _ int) float64 {
		return vol * dot3(g[a], g[b])
	})
}

// TetElasticity returns P1 linear elasticity (E = 1, ν = 0.3) on the
// tetrahedra of m, clamped as TetPoisson: three unknowns per free node.
func TetElasticity(m *mesh.Mesh) (*Problem, error) {
	const e, nu = 1.0, 0.3
	lambda, mu := e*nu/((1+nu)*(1-2*nu)), e/(2*(1+nu))
	return tetAssemble(m, 3, func(g *[4][3]float64, vol float64, a, b, i, j int) float64 {
		k := lambda*g[a][i]*g[b][j] + mu*g[a][j]*g[b][i]
		if i == j {
			k += mu * dot3(g[a], g[b])
		}
		return vol * k
	})
}

// Clamped reports the nodes of m that TetPoisson and TetElasticity hold
// fixed: those within 2% of the mesh's extent of its lowest coordinate
// along its longest axis (a clamped end of a part).
func Clamped(m *mesh.Mesh) []bool {
	n, d := m.NumNodes(), m.Dim
	axis, lo, width := 0, 0.0, -1.0
	for k := 0; k < d; k++ {
		mn, mx := math.Inf(1), math.Inf(-1)
		for v := 0; v < n; v++ {
			mn, mx = min(mn, m.Coords[v*d+k]), max(mx, m.Coords[v*d+k])
		}
		if mx-mn > width {
			axis, lo, width = k, mn, mx-mn
		}
	}
	fixed := make([]bool, n)
	for v := range fixed {
		fixed[v] = m.Coords[v*d+axis] <= lo+0.02*width
	}
	return fixed
}

// elementMatrix is the (dof i of local node a, dof j of local node b)
// entry of an element's matrix, from the gradients of its barycentric
// functions and its volume.
type elementMatrix func(g *[4][3]float64, vol float64, a, b, i, j int) float64

// tetAssemble assembles bs dofs per node over the tet4 blocks of m, rows
// of fixed nodes and their columns left out. Each row gathers its node's
// elements in their order in the mesh, so the sums are the same run
// after run; rows come out sorted.
func tetAssemble(m *mesh.Mesh, bs int, ke elementMatrix) (*Problem, error) {
	if m == nil || m.Dim != 3 {
		return nil, fmt.Errorf("fem: P1 assembly wants a 3-D mesh")
	}
	g, err := mesh.FromElements(m, mesh.ElementOptions{})
	if err != nil {
		return nil, err
	}
	var tets []int32
	for _, b := range m.Blocks {
		if b.Type == mesh.Tet4 {
			tets = append(tets, b.Conn...)
		}
	}
	if len(tets) == 0 {
		return nil, fmt.Errorf("fem: P1 assembly: the mesh has no tet4 elements")
	}
	n := m.NumNodes()
	fixed := Clamped(m)
	id, free := make([]int32, n), int32(0)
	pr := &Problem{Dim: 3, Block: bs}
	for v := range id {
		id[v] = -1
		if !fixed[v] {
			id[v] = free
			free++
			pr.Coords = append(pr.Coords, m.Coords[3*v:3*v+3]...)
		}
	}
	inc := incidence(tets, n)
	a := &mesh.CSR[float64]{Rows: int(free) * bs, Cols: int(free) * bs, RowPtr: make([]int64, 1, int(free)*bs+1)}
	var row []int32 // the free nodes of v's row, sorted
	var acc []float64
	var grad [4][3]float64
	for v := 0; v < n; v++ {
		if fixed[v] {
			continue
		}
		row = append(row[:0], int32(v))
		for _, u := range g.Neighbors(int32(v)) {
			if !fixed[u] {
				row = append(row, u)
			}
		}
		slices.Sort(row)
		acc = slices.Grow(acc[:0], len(row)*bs*bs)[:len(row)*bs*bs]
		clear(acc)
		for _, t := range inc[v] {
			c := tets[4*t : 4*t+4]
			vol, ok := tetGradients(m.Coords, c, &grad)
			if !ok {
				return nil, fmt.Errorf("fem: tetrahedron %d is degenerate", t)
			}
			la := slices.Index(c, int32(v))
			for lb, u := range c {
				if fixed[u] {
					continue
				}
				at, _ := slices.BinarySearch(row, u)
				for i := 0; i < bs; i++ {
					for j := 0; j < bs; j++ {
						acc[(i*len(row)+at)*bs+j] += ke(&grad, vol, la, lb, i, j)
					}
				}
			}
		}
		for i := 0; i < bs; i++ {
			for q, u := range row {
				for j := 0; j < bs; j++ {
					a.Col = append(a.Col, id[u]*int32(bs)+int32(j))
					a.Val = append(a.Val, acc[(i*len(row)+q)*bs+j])
				}
			}
			a.RowPtr = append(a.RowPtr, int64(len(a.Col)))
		}
	}
	pr.A = a
	return pr, nil
}

// incidence lists the elements of each node, in mesh order.
func incidence(tets []int32, n int) [][]int32 {
	cnt := make([]int32, n+1)
	for _, v := range tets {
		cnt[v+1]++
	}
	for v := 0; v < n; v++ {
		cnt[v+1] += cnt[v]
	}
	flat := make([]int32, len(tets))
	inc := make([][]int32, n)
	for v := range inc {
		inc[v] = flat[cnt[v]:cnt[v]:cnt[v+1]]
	}
	for q, v := range tets {
		inc[v] = append(inc[v], int32(q/4))
	}
	return inc
}

// tetGradients sets g to the gradients of the barycentric functions of
// the tetrahedron c and returns its volume; false for a flat one.
func tetGradients(xyz []float64, c []int32, g *[4][3]float64) (float64, bool) {
	var j [3][3]float64 // rows: the edges from node 0
	for r := 0; r < 3; r++ {
		for k := 0; k < 3; k++ {
			j[r][k] = xyz[3*int(c[r+1])+k] - xyz[3*int(c[0])+k]
		}
	}
	det := j[0][0]*(j[1][1]*j[2][2]-j[1][2]*j[2][1]) - j[0][1]*(j[1][0]*j[2][2]-j[1][2]*j[2][0]) +
		j[0][2]*(j[1][0]*j[2][1]-j[1][1]*j[2][0])
	if det == 0 || math.IsNaN(det) {
		return 0, false
	}
	// The gradient of node r+1's function is row r of J⁻ᵀ's transpose:
	// column r of J⁻¹, i.e. the cofactors of row r over det.
	for r := 0; r < 3; r++ {
		r1, r2 := (r+1)%3, (r+2)%3
		g[r+1] = [3]float64{
			(j[r1][1]*j[r2][2] - j[r1][2]*j[r2][1]) / det,
			(j[r1][2]*j[r2][0] - j[r1][0]*j[r2][2]) / det,
			(j[r1][0]*j[r2][1] - j[r1][1]*j[r2][0]) / det,
		}
	}
	for k := 0; k < 3; k++ {
		g[0][k] = -(g[1][k] + g[2][k] + g[3][k])
	}
	return math.Abs(det) / 6, true
}

func dot3(x, y [3]float64) float64 { return x[0]*y[0] + x[1]*y[1] + x[2]*y[2] }
