package amg

import (
	"fmt"
	"math"
	"time"
)

// Nullspace selects the near-nullspace the tentative prolongator
// interpolates exactly: the vectors that the smoother cannot reduce.
type Nullspace int

const (
	// Constant is one constant vector per degree of freedom of a node
	// (BlockSize vectors): right for scalar diffusion, and per component
	// for systems.
	Constant Nullspace = iota
	// RigidBody is the rigid-body modes of elasticity from the node
	// coordinates: 3 in 2D, 6 in 3D. It needs Options.Coords and a block
	// size equal to the dimension.
	RigidBody
	// Vectors takes Options.Vectors as given.
	Vectors
)

func (k Nullspace) String() string {
	switch k {
	case Constant:
		return "constant"
	case RigidBody:
		return "rbm"
	case Vectors:
		return "vectors"
	}
	return fmt.Sprintf("Nullspace(%d)", int(k))
}

// nearNullspace returns the fine-level near-nullspace as a row-major
// n×k array, and k.
func nearNullspace(o *Options, n, bs int) ([]float64, int, error) {
	switch o.Nullspace {
	case Constant:
		b := make([]float64, n*bs)
		// In parallel, as the modes below: a device setup waits on them
		// (the first touch of a fresh array costs more than the stores).
		newPool(o.Workers).forRange(n, n*bs, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b[i*bs+i%bs] = 1
			}
		})
		return b, bs, nil
	case RigidBody:
		return rigidBodyModes(newPool(o.Workers), o.Coords, o.Dim, n, bs)
	case Vectors:
		k := len(o.Vectors)
		if k == 0 {
			return nil, 0, fmt.Errorf("amg: nullspace=vectors but Options.Vectors is empty")
		}
		b := make([]float64, n*k)
		for j, v := range o.Vectors {
			if len(v) != n {
				return nil, 0, fmt.Errorf("amg: near-nullspace vector %d has length %d, want %d (the matrix rows)", j, len(v), n)
			}
			nrm := 0.0
			for i, x := range v {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, 0, fmt.Errorf("amg: near-nullspace vector %d, entry %d is %v", j, i, x)
				}
				b[i*k+j] = x
				nrm += x * x
			}
			if nrm == 0 {
				return nil, 0, fmt.Errorf("amg: near-nullspace vector %d is zero", j)
			}
		}
		return b, k, nil
	}
	return nil, 0, fmt.Errorf("amg: unknown nullspace kind %d", int(o.Nullspace))
}

// rigidBodyModes builds translations and rotations about the centroid
// (centring keeps the local QR well conditioned far from the origin).
func rigidBodyModes(p pool, coords []float64, dim, n, bs int) ([]float64, int, error) {
	if err := rigidShape(coords, dim, n, bs); err != nil {
		return nil, 0, err
	}
	nodes := n / bs
	c, err := centroid(coords, dim)
	if err != nil {
		return nil, 0, err
	}
	k := rigidModes(dim)
	b := make([]float64, n*k)
	p.forRange(nodes, n*k, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			x := coords[v*dim] - c[0]
			y := coords[v*dim+1] - c[1]
			r := b[v*dim*k : (v+1)*dim*k] // dim rows of k
			if dim == 2 {
				r[0*k+0], r[1*k+1] = 1, 1
				r[0*k+2], r[1*k+2] = -y, x
				continue
			}
			z := coords[v*dim+2] - c[2]
			r[0*k+0], r[1*k+1], r[2*k+2] = 1, 1, 1
			r[0*k+3], r[1*k+3] = -y, x // about z
			r[1*k+4], r[2*k+4] = -z, y // about x
			r[0*k+5], r[2*k+5] = z, -x // about y
		}
	})
	return b, k, nil
}

// rigidShape checks the dimension, the block size and the number of
// coordinates of the rigid-body modes of n rows.
func rigidShape(coords []float64, dim, n, bs int) error {
	if dim != 2 && dim != 3 {
		return fmt.Errorf("amg: rigid-body modes need Dim 2 or 3, got %d", dim)
	}
	if bs != dim {
		return fmt.Errorf("amg: rigid-body modes need block size = dimension (%d), got block size %d", dim, bs)
	}
	if nodes := n / bs; len(coords) != nodes*dim {
		return fmt.Errorf("amg: %d coordinates for %d nodes in %dD, want %d", len(coords), nodes, dim, nodes*dim)
	}
	return nil
}

// rigidModes is the number of rigid-body modes in dim dimensions.
func rigidModes(dim int) int {
	if dim == 3 {
		return 6
	}
	return 3
}

// centroid is the mean of the nodes' coordinates (dim per node), summed
// in node order; a coordinate that is not finite is an error.
func centroid(coords []float64, dim int) ([3]float64, error) {
	var c [3]float64
	nodes := len(coords) / dim
	for v := range nodes {
		for d, x := range coords[v*dim : (v+1)*dim] {
			if x-x != 0 {
				return c, fmt.Errorf("amg: coordinate %d of node %d is %v", d, v, x)
			}
			c[d] += x
		}
	}
	for d := range dim {
		c[d] /= float64(nodes)
	}
	return c, nil
}

// deviceModes gives the number of near-nullspace vectors that a device
// setup forms itself (devSetup.nearNullspace), with no array on the
// host: the constant vectors, and the rigid-body modes where the
// coordinates have the right shape (rigidShape; whether they are finite
// the device setup learns from centroid, and the error is then the host
// setup's, from the same centroid). ok is false for vectors the host
// forms.
func deviceModes(o *Options, n, bs int) (k int, ok bool) {
	switch o.Nullspace {
	case Constant:
		return bs, true
	case RigidBody:
		if rigidShape(o.Coords, o.Dim, n, bs) == nil {
			return rigidModes(o.Dim), true
		}
	}
	return 0, false
}

// modes is nearNullspace for the setup of n rows, timed as the
// "nullspace" phase: a device setup waits on it before its first kernel.
func (pc *Preconditioner) modes(n int) ([]float64, int, error) {
	t0 := time.Now()
	defer pc.phase("nullspace", t0)
	return nearNullspace(&pc.opts, n, pc.opts.BlockSize)
}
