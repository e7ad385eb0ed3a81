package gpusparse_test

import (
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpusparse"
)

// The Galerkin product of a 1D Laplacian and a prolongator that pairs
// its nodes, formed on the device and re-formed after the values change.
func Example() {
	d, err := gpusparse.Open(0)
	if errors.Is(err, cuda.ErrUnavailable) {
		return // no GPU
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := d.Upload(4, 4, []int{0, 2, 5, 8, 10}, []int32{0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
		[]float64{2, -1, -1, 2, -1, -1, 2, -1, -1, 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Free()
	p, err := d.Upload(4, 2, []int{0, 1, 2, 3, 4}, []int32{0, 0, 1, 1}, []float64{1, 1, 1, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Free()
	g, err := d.Galerkin(a, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Free()
	_, _, val, _ := g.Coarse().Download()
	fmt.Println(val)
	// New values on the same pattern: the numeric pass alone.
	_ = a.SetValues([]float64{4, -2, -2, 4, -2, -2, 4, -2, -2, 4})
	_ = g.Numeric()
	_, _, val, _ = g.Coarse().Download()
	fmt.Println(val)
}
