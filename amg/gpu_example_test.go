package amg_test

import (
	"fmt"
	"log"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mis"
)

// Run the solve phase on a GPU when one is usable and the matrix large
// enough (mis.AutoMinVertices rows), on the CPU otherwise.
// The answer agrees to rounding either way.
func ExampleOptions_device() {
	pr := fem.Poisson(3, 24)
	pc, err := amg.New(pr.A, amg.Options{Device: mis.Auto})
	if err != nil {
		log.Fatal(err)
	}
	defer pc.Close() // frees the device copy, if any
	b := make([]float64, pr.A.Rows)
	for i := range b {
		b[i] = 1
	}
	x := make([]float64, len(b))
	res, err := pc.Solve(b, x)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("converged:", res.Converged, "residual below 1e-8:", res.Residuals[res.Iterations] <= 1e-8)
	// Output:
	// converged: true residual below 1e-8: true
}
