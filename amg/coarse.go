package amg

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// coarseSolver solves the coarsest level exactly with a dense Cholesky
// factor: it is small by construction (Options.MaxCoarse).
type coarseSolver struct {
	chol mat.Cholesky
	n    int
	bv   *mat.VecDense
	xv   *mat.VecDense
}

func newCoarseSolver(a *csr) (*coarseSolver, error) {
	n := a.rows
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			// Average the two triangles, so that rounding asymmetry
			// from the Galerkin products does not matter.
			switch j := int(a.col[k]); {
			case j == i:
				d.SetSym(i, i, d.At(i, i)+a.val[k])
			case j > i:
				d.SetSym(i, j, d.At(i, j)+0.5*a.val[k])
			default:
				d.SetSym(j, i, d.At(j, i)+0.5*a.val[k])
			}
		}
	}
	c := &coarseSolver{n: n, bv: mat.NewVecDense(n, nil), xv: mat.NewVecDense(n, nil)}
	if ok := c.chol.Factorize(d); !ok {
		return nil, fmt.Errorf("amg: the coarsest operator (%d rows) is not positive definite: is the matrix SPD, and the near-nullspace right?", n)
	}
	return c, nil
}

func (c *coarseSolver) solve(b, x []float64) {
	copy(c.bv.RawVector().Data, b)
	// SolveVecTo only fails for a singular factor, which Factorize ruled out.
	_ = c.chol.SolveVecTo(c.xv, c.bv)
	copy(x, c.xv.RawVector().Data)
}
