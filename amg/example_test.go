package amg_test

import (
	"errors"
	"fmt"
	"log"
	"slices"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mesh"
)

// csr assembles a symmetric matrix from its rows, given as column → value
// maps, with the columns of each row in increasing order.
func csr(rows []map[int]float64) *mesh.CSR[float64] {
	a := &mesh.CSR[float64]{Rows: len(rows), Cols: len(rows), RowPtr: make([]int64, len(rows)+1)}
	for i, row := range rows {
		cols := make([]int, 0, len(row))
		for j := range row {
			cols = append(cols, j)
		}
		slices.Sort(cols)
		for _, j := range cols {
			a.Col, a.Val = append(a.Col, int32(j)), append(a.Val, row[j])
		}
		a.RowPtr[i+1] = int64(len(a.Col))
	}
	return a
}

// laplacian is the finite-difference Laplacian on the interior nodes of a
// uniform grid with n nodes per side in dim dimensions (2 or 3), the
// Dirichlet boundary nodes eliminated: (n−2)^dim unknowns.
func laplacian(dim, n int) *mesh.CSR[float64] {
	m := n - 2
	size := m * m
	stride := []int{1, m, m * m}
	if dim == 3 {
		size *= m
	}
	rows := make([]map[int]float64, size)
	for v := range rows {
		rows[v] = map[int]float64{v: 2 * float64(dim)}
		for d := 0; d < dim; d++ {
			c := v / stride[d] % m // coordinate along d
			if c > 0 {
				rows[v][v-stride[d]] = -1
			}
			if c < m-1 {
				rows[v][v+stride[d]] = -1
			}
		}
	}
	return csr(rows)
}

// neumann is the graph Laplacian of an n×n grid: the five-point
// Laplacian with natural boundary conditions, whose rows sum to zero.
func neumann(n int) *mesh.CSR[float64] {
	rows := make([]map[int]float64, n*n)
	for v := range rows {
		rows[v] = map[int]float64{}
	}
	link := func(u, v int) {
		rows[u][v], rows[v][u] = -1, -1
		rows[u][u]++
		rows[v][v]++
	}
	for j := range n {
		for i := range n {
			if i+1 < n {
				link(j*n+i, j*n+i+1)
			}
			if j+1 < n {
				link(j*n+i, (j+1)*n+i)
			}
		}
	}
	return csr(rows)
}

// truss is the stiffness matrix of a plane truss: an n×n grid of nodes
// joined by unit springs along the grid lines and both diagonals of each
// cell, the column x = 0 clamped. Two unknowns per node (x and y
// displacement, interleaved); coords holds the free nodes' positions, for
// the rigid-body modes of the near-nullspace.
func truss(n int) (a *mesh.CSR[float64], coords []float64) {
	free := func(i, j int) int { return j*(n-1) + i - 1 } // node (i, j), i ≥ 1
	rows := make([]map[int]float64, 2*(n-1)*n)
	for r := range rows {
		rows[r] = map[int]float64{}
	}
	spring := func(i0, j0, i1, j1 int) {
		dx, dy := float64(i1-i0), float64(j1-j0)
		l2 := dx*dx + dy*dy
		e := [2]float64{dx, dy}
		ends := [2][2]int{{i0, j0}, {i1, j1}}
		for p, P := range ends {
			for q, Q := range ends {
				if P[0] == 0 || Q[0] == 0 {
					continue // clamped
				}
				sign := 1.0
				if p != q {
					sign = -1
				}
				for a := 0; a < 2; a++ {
					for b := 0; b < 2; b++ {
						rows[2*free(P[0], P[1])+a][2*free(Q[0], Q[1])+b] += sign * e[a] * e[b] / l2
					}
				}
			}
		}
	}
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			if i+1 < n {
				spring(i, j, i+1, j)
			}
			if j+1 < n {
				spring(i, j, i, j+1)
			}
			if i+1 < n && j+1 < n {
				spring(i, j, i+1, j+1)
				spring(i+1, j, i, j+1)
			}
			if i > 0 {
				coords = append(coords, float64(i), float64(j))
			}
		}
	}
	return csr(rows), coords
}

// Solve the 3D Poisson problem with AMG-preconditioned conjugate gradients.
func Example() {
	a := laplacian(3, 26) // 24³ unknowns
	pc, err := amg.New(a, amg.Options{})
	if err != nil {
		log.Fatal(err)
	}
	b := make([]float64, a.Rows)
	for i := range b {
		b[i] = 1
	}
	x := make([]float64, len(b))
	res, err := pc.Solve(b, x)
	if err != nil {
		log.Fatal(err)
	}
	st := pc.Stats()
	fmt.Printf("%d levels, operator complexity %.2f\n", len(st.Levels), st.OperatorComplexity)
	fmt.Printf("converged %v in %d iterations\n", res.Converged, res.Iterations)
	// Output:
	// 3 levels, operator complexity 1.40
	// converged true in 10 iterations
}

// Elasticity needs the rigid-body modes, built from the node coordinates.
func ExampleNew_elasticity() {
	a, coords := truss(40) // 2 dofs per node, clamped at x = 0
	pc, err := amg.New(a, amg.Options{
		BlockSize: 2,
		Nullspace: amg.RigidBody,
		Dim:       2,
		Coords:    coords,
		MaxCoarse: 200,
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, l := range pc.Stats().Levels {
		fmt.Printf("level %d: %d rows, %d dofs per node\n", i, l.Rows, l.BlockSize)
	}
	b := make([]float64, a.Rows)
	for i := 1; i < len(b); i += 2 {
		b[i] = -1 // gravity
	}
	res, err := pc.Solve(b, make([]float64, len(b)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("converged %v in %d iterations\n", res.Converged, res.Iterations)
	// Output:
	// level 0: 3120 rows, 2 dofs per node
	// level 1: 414 rows, 3 dofs per node
	// level 2: 45 rows, 3 dofs per node
	// converged true in 14 iterations
}

// Options have a text form for command lines and the C ABI.
func ExampleParseOptions() {
	o, err := amg.ParseOptions([]string{"smoother=chebyshev", "cycle=w", "theta=0.08", "sweeps=3"})
	fmt.Println(o.Cycle == amg.WCycle, o.Theta, o.Sweeps, err)
	_, err = amg.ParseOptions([]string{"smoothr=jacobi"})
	fmt.Println(err != nil)
	// Output:
	// true 0.08 3 <nil>
	// true
}

// A Newton or time-stepping loop changes the values, not the pattern:
// with Reuse, Update redoes only the numeric part of the setup.
func ExamplePreconditioner_Update() {
	a := laplacian(2, 66)
	pc, err := amg.New(a, amg.Options{Reuse: true})
	if err != nil {
		log.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		// New coefficients on the same pattern: here the operator scaled.
		for i := range a.Val {
			a.Val[i] *= 2
		}
		if err := pc.Update(a); err != nil {
			log.Fatal(err)
		}
		b := make([]float64, a.Rows)
		b[len(b)/2] = 1
		res, err := pc.Solve(b, make([]float64, len(b)))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("step %d: %d iterations\n", step, res.Iterations)
	}
	// Output:
	// step 1: 10 iterations
	// step 2: 10 iterations
	// step 3: 10 iterations
}

// Apply is the preconditioner alone, for a Krylov method of your own.
func ExamplePreconditioner_Apply() {
	pc, err := amg.New(laplacian(2, 34), amg.Options{})
	if err != nil {
		log.Fatal(err)
	}
	r := make([]float64, pc.Rows())
	r[0] = 1
	z := make([]float64, len(r))
	if err := pc.Apply(r, z); err != nil {
		log.Fatal(err)
	}
	fmt.Println(z[0] > 0)
	// Output:
	// true
}

// A pure-Neumann problem is singular: the setup finds the constants as its
// null space, and Solve returns the solution orthogonal to them for a
// consistent right-hand side, or ErrInconsistent for one that is not.
func ExampleNew_singular() {
	a := neumann(64) // no Dirichlet condition: A·1 = 0
	pc, err := amg.New(a, amg.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("null space:", len(pc.Kernel()), "vector")
	b := make([]float64, a.Rows)
	b[0], b[len(b)-1] = 1, -1 // a source and a sink: Σb = 0
	res, err := pc.Solve(b, make([]float64, len(b)))
	fmt.Println(res.Status, res.TrueResidual < 1e-8, err)
	b[0] = 2 // a net source: no solution
	_, err = pc.Solve(b, make([]float64, len(b)))
	fmt.Println(errors.Is(err, amg.ErrInconsistent))
	// Output:
	// null space: 1 vector
	// converged true <nil>
	// true
}
