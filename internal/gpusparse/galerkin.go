package gpusparse

import (
	"errors"
	"fmt"
)

// Galerkin is the coarse operator Ac = Pᵀ·(A·P) on the device, with the
// intermediate A·P and the restriction R = Pᵀ (which the solve phase
// uses). Its patterns are formed once; Numeric recomputes every value
// when those of A or P change.
//
// Ac's entries sum p_ki·(A·P)_kj over fine rows k ascending from +0, with
// A·P formed as amg's mulMat forms it: bitwise amg's galerkinStreamed.
type Galerkin struct {
	ap *Product
	r  *Transpose
	ac *Product
}

// Galerkin forms Pᵀ·A·P for a square A and a prolongator P with as many
// rows as A.
func (d *Device) Galerkin(a, p *Matrix) (*Galerkin, error) {
	if a.rows != a.cols || p.rows != a.rows {
		return nil, fmt.Errorf("gpusparse: Galerkin product of a %d×%d operator and a %d×%d prolongator: want a square operator with the prolongator's rows", a.rows, a.cols, p.rows, p.cols)
	}
	g := &Galerkin{}
	var err error
	if g.ap, err = d.Mul(a, p); err != nil {
		return nil, err
	}
	if g.r, err = d.Transpose(p); err == nil {
		g.ac, err = d.mul(g.r.T(), g.ap.C(), 0)
	}
	if err != nil {
		_ = g.Free()
		return nil, err
	}
	return g, nil
}

// Coarse returns Ac.
func (g *Galerkin) Coarse() *Matrix { return g.ac.C() }

// R returns the restriction Pᵀ.
func (g *Galerkin) R() *Matrix { return g.r.T() }

// AP returns the intermediate A·P.
func (g *Galerkin) AP() *Matrix { return g.ap.C() }

// Numeric recomputes A·P, Pᵀ and Ac from the current values of A and P,
// queued at once and waited for once.
func (g *Galerkin) Numeric() error {
	return g.ap.a.d.run(func(q *queue) error {
		if err := g.ap.numeric(q); err != nil {
			return err
		}
		if err := g.r.numeric(q); err != nil {
			return err
		}
		return g.ac.numeric(q)
	})
}

// Free releases Ac, R and A·P.
func (g *Galerkin) Free() error {
	var err error
	if g.ac != nil {
		err = g.ac.Free()
	}
	if g.r != nil {
		err = errors.Join(err, g.r.Free())
	}
	if g.ap != nil {
		err = errors.Join(err, g.ap.Free())
	}
	return err
}
