// Package fem assembles the finite-element test problems of the amg
// tests, examples and benchmarks: Q1 Poisson on the unit square and cube
// and Q1 linear elasticity on the unit cube, on uniform grids, and P1
// Poisson and elasticity on the tetrahedra of any mesh (a Gmsh part), with
// Dirichlet nodes eliminated. bench/amg/run.py assembles the same
// problems in Python for the comparison with PETSc.
package fem

import (
	"math"

	"github.com/misgrid/misgrid/mesh"
)

// Problem is an assembled system.
type Problem struct {
	A      *mesh.CSR[float64]
	Dim    int
	Coords []float64 // Dim per node of the unknowns
	Block  int       // dofs per node
}

// gauss2 holds the 2-point Gauss rule on [−1,1].
var gauss2 = [2]float64{-1 / math.Sqrt(3), 1 / math.Sqrt(3)}

// q1Grad returns the gradients of the 2^dim Q1 shape functions at the
// reference point xi, in physical units for an element of side h.
// Local node a has corner bits (a&1, a>>1&1, a>>2&1) along x, y, z.
func q1Grad(dim int, xi [3]float64, h float64) [8][3]float64 {
	var g [8][3]float64
	nn := 1 << dim
	for a := 0; a < nn; a++ {
		var s [3]float64
		for d := 0; d < dim; d++ {
			s[d] = float64(2*(a>>d&1) - 1)
		}
		for d := 0; d < dim; d++ {
			v := s[d] / 2
			for e := 0; e < dim; e++ {
				if e != d {
					v *= (1 + s[e]*xi[e]) / 2
				}
			}
			g[a][d] = v * 2 / h
		}
	}
	return g
}

// elementLaplace returns the Q1 stiffness matrix of −Δ on a square/cube
// element of side h.
func elementLaplace(dim int, h float64) [8][8]float64 {
	var k [8][8]float64
	nn := 1 << dim
	w := math.Pow(h/2, float64(dim))
	for q := 0; q < nn; q++ {
		var xi [3]float64
		for d := 0; d < dim; d++ {
			xi[d] = gauss2[q>>d&1]
		}
		g := q1Grad(dim, xi, h)
		for a := 0; a < nn; a++ {
			for b := 0; b < nn; b++ {
				s := 0.0
				for d := 0; d < dim; d++ {
					s += g[a][d] * g[b][d]
				}
				k[a][b] += s * w
			}
		}
	}
	return k
}

// elementElasticity returns the 24×24 Q1 stiffness of isotropic linear
// elasticity on a cube of side h, dofs ordered node-major (node a,
// component c at 3a+c).
func elementElasticity(h, e, nu float64) [24][24]float64 {
	lam := e * nu / ((1 + nu) * (1 - 2*nu))
	mu := e / (2 * (1 + nu))
	var k [24][24]float64
	w := math.Pow(h/2, 3)
	for q := 0; q < 8; q++ {
		xi := [3]float64{gauss2[q&1], gauss2[q>>1&1], gauss2[q>>2&1]}
		g := q1Grad(3, xi, h)
		// k_(ai)(bj) = λ ∂_i N_a ∂_j N_b + μ (∂_j N_a ∂_i N_b + δ_ij ∇N_a·∇N_b)
		for a := 0; a < 8; a++ {
			for b := 0; b < 8; b++ {
				dot := g[a][0]*g[b][0] + g[a][1]*g[b][1] + g[a][2]*g[b][2]
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						v := lam*g[a][i]*g[b][j] + mu*g[a][j]*g[b][i]
						if i == j {
							v += mu * dot
						}
						k[3*a+i][3*b+j] += v * w
					}
				}
			}
		}
	}
	return k
}

// grid numbers the nodes of a uniform grid of n elements per side and
// marks the eliminated ones.
type grid struct {
	dim, n int
	id     []int32 // unknown node number, −1 when eliminated
	nodes  int
}

func newGrid(dim, n int, fixed func(idx [3]int) bool) *grid {
	m := n + 1
	total := 1
	for d := 0; d < dim; d++ {
		total *= m
	}
	g := &grid{dim: dim, n: n, id: make([]int32, total)}
	for v := range g.id {
		if fixed(g.idx(v)) {
			g.id[v] = -1
			continue
		}
		g.id[v] = int32(g.nodes)
		g.nodes++
	}
	return g
}

func (g *grid) idx(v int) [3]int {
	m := g.n + 1
	var x [3]int
	for d := 0; d < g.dim; d++ {
		x[d] = v % m
		v /= m
	}
	return x
}

func (g *grid) vertex(x [3]int) int {
	m := g.n + 1
	v := 0
	for d := g.dim - 1; d >= 0; d-- {
		v = v*m + x[d]
	}
	return v
}

// assemble builds the CSR matrix with bs dofs per node from the element
// matrix ke (local node-major dofs), rows of eliminated nodes dropped.
// Each node's row couples to the 3^dim grid neighbours, visited in
// increasing vertex order, so rows come out sorted.
func (g *grid) assemble(bs int, ke func(a, b, i, j int) float64) *Problem {
	nn := 1 << g.dim
	nb := 1
	for d := 0; d < g.dim; d++ {
		nb *= 3
	}
	h := 1 / float64(g.n)
	pr := &Problem{Dim: g.dim, Block: bs}
	a := &mesh.CSR[float64]{Rows: g.nodes * bs, Cols: g.nodes * bs}
	a.RowPtr = make([]int64, 1, g.nodes*bs+1)
	acc := make([]float64, nb*bs*bs)
	for v := range g.id {
		if g.id[v] < 0 {
			continue
		}
		x := g.idx(v)
		for d := 0; d < g.dim; d++ {
			pr.Coords = append(pr.Coords, float64(x[d])*h)
		}
		clear(acc)
		// Elements around v: lower corner x − s for s ∈ {0,1}^dim.
		for e := 0; e < nn; e++ {
			var lo [3]int
			ok := true
			for d := 0; d < g.dim; d++ {
				lo[d] = x[d] - (e >> d & 1)
				if lo[d] < 0 || lo[d] >= g.n {
					ok = false
				}
			}
			if !ok {
				continue
			}
			la := e // v's local index in this element has bits (x−lo)
			for lb := 0; lb < nn; lb++ {
				// Neighbour offset in {−1,0,1}^dim → slot in the 3^dim stencil.
				slot, mul := 0, 1
				for d := 0; d < g.dim; d++ {
					off := (lb >> d & 1) - (la >> d & 1)
					slot += (off + 1) * mul
					mul *= 3
				}
				for i := 0; i < bs; i++ {
					for j := 0; j < bs; j++ {
						acc[(i*nb+slot)*bs+j] += ke(la, lb, i, j)
					}
				}
			}
		}
		for i := 0; i < bs; i++ {
			for slot := 0; slot < nb; slot++ {
				var y [3]int
				ok := true
				s := slot
				for d := 0; d < g.dim; d++ {
					y[d] = x[d] + s%3 - 1
					s /= 3
					if y[d] < 0 || y[d] > g.n {
						ok = false
					}
				}
				if !ok {
					continue
				}
				u := g.id[g.vertex(y)]
				if u < 0 {
					continue
				}
				for j := 0; j < bs; j++ {
					a.Col = append(a.Col, u*int32(bs)+int32(j))
					a.Val = append(a.Val, acc[(i*nb+slot)*bs+j])
				}
			}
			a.RowPtr = append(a.RowPtr, int64(len(a.Col)))
		}
	}
	pr.A = a
	return pr
}

// Poisson returns −Δu = f with Q1 elements on the unit square (dim 2) or
// cube (dim 3) split into n elements per side, Dirichlet conditions on the
// whole boundary: (n−1)^dim unknowns.
func Poisson(dim, n int) *Problem {
	g := newGrid(dim, n, func(x [3]int) bool {
		for d := 0; d < dim; d++ {
			if x[d] == 0 || x[d] == n {
				return true
			}
		}
		return false
	})
	k := elementLaplace(dim, 1/float64(n))
	return g.assemble(1, func(a, b, _, _ int) float64 { return k[a][b] })
}

// Elasticity returns Q1 linear elasticity (E = 1, ν = 0.3) on the unit
// cube split into n elements per side, clamped at x = 0: 3·n·(n+1)²
// unknowns, three per node.
func Elasticity(n int) *Problem {
	g := newGrid(3, n, func(x [3]int) bool { return x[0] == 0 })
	k := elementElasticity(1/float64(n), 1, 0.3)
	return g.assemble(3, func(a, b, i, j int) float64 { return k[3*a+i][3*b+j] })
}

// Neumann returns the pure-Neumann Laplacian with Q1 elements on the unit
// square or cube, n elements per side, no node eliminated: (n+1)^dim
// unknowns, singular with the constants as its null space.
func Neumann(dim, n int) *Problem {
	g := newGrid(dim, n, func([3]int) bool { return false })
	k := elementLaplace(dim, 1/float64(n))
	return g.assemble(1, func(a, b, _, _ int) float64 { return k[a][b] })
}

// FreeElasticity returns Q1 elasticity on the unit cube with no support:
// 3·(n+1)³ unknowns, singular with the six rigid-body modes as null space.
func FreeElasticity(n int) *Problem {
	g := newGrid(3, n, func([3]int) bool { return false })
	k := elementElasticity(1/float64(n), 1, 0.3)
	return g.assemble(3, func(a, b, i, j int) float64 { return k[3*a+i][3*b+j] })
}
