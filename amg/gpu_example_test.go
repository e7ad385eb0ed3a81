package amg_test

import (
	"fmt"
	"log"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mis"
)

// Run the solve phase on a GPU when one is usable and the matrix large
// enough (mis.AutoMinVertices rows), on the CPU otherwise.
// The answer agrees to rounding either way.
func ExampleOptions_device() {
	a := laplacian(3, 26) // the matrix of Example
	pc, err := amg.New(a, amg.Options{Device: mis.Auto})
	if err != nil {
		log.Fatal(err)
	}
	defer pc.Close() // frees the device copy, if any
	b := make([]float64, a.Rows)
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
