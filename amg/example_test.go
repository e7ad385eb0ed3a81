package amg_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/amg/internal/fem"
)

// Solve the 3D Poisson problem with AMG-preconditioned conjugate gradients.
func Example() {
	pr := fem.Poisson(3, 24) // Q1 hexahedra, 23³ unknowns
	pc, err := amg.New(pr.A, amg.Options{})
	if err != nil {
		log.Fatal(err)
	}
	b := make([]float64, pr.A.Rows)
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
	// 2 levels, operator complexity 1.04
	// converged true in 9 iterations
}

// Elasticity needs the rigid-body modes, built from the node coordinates.
func ExampleNew_elasticity() {
	pr := fem.Elasticity(10) // 3 dofs per node, clamped at x = 0
	pc, err := amg.New(pr.A, amg.Options{
		BlockSize: 3,
		Nullspace: amg.RigidBody,
		Dim:       3,
		Coords:    pr.Coords,
		MaxCoarse: 200,
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, l := range pc.Stats().Levels {
		fmt.Printf("level %d: %d rows, %d dofs per node\n", i, l.Rows, l.BlockSize)
	}
	// Output:
	// level 0: 3630 rows, 3 dofs per node
	// level 1: 324 rows, 6 dofs per node
	// level 2: 18 rows, 6 dofs per node
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
	pr := fem.Poisson(2, 64)
	pc, err := amg.New(pr.A, amg.Options{Reuse: true})
	if err != nil {
		log.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		// New coefficients on the same pattern: here the operator scaled.
		for i := range pr.A.Val {
			pr.A.Val[i] *= 2
		}
		if err := pc.Update(pr.A); err != nil {
			log.Fatal(err)
		}
		b := make([]float64, pr.A.Rows)
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
	pr := fem.Poisson(2, 32)
	pc, err := amg.New(pr.A, amg.Options{})
	if err != nil {
		log.Fatal(err)
	}
	r := make([]float64, pr.A.Rows)
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
	pr := fem.Neumann(2, 64) // no Dirichlet condition: A·1 = 0
	pc, err := amg.New(pr.A, amg.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("null space:", len(pc.Kernel()), "vector")
	b := make([]float64, pr.A.Rows)
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
