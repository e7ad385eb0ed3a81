package amg

import (
	"math"

	"github.com/misgrid/misgrid/mis"
)

// Theta's auto value for scalar problems. Every coupling is kept
// (θ = 0) unless the finest matrix shows a coefficient jump: couplings
// between nodes on either side of a jump of contrast c have
// |a_ij|/sqrt(a_ii a_jj) of about c^(−1/2) times a mesh coupling's, far
// below what element shapes give, and they come in numbers (a whole
// interface). Aggregates joined across such couplings interpolate
// poorly, so there θ = DefaultSystemTheta leaves them out of the
// strength graph (the harness's 1e4 checkerboard on 151k tetrahedra: 12
// iterations instead of 21). Delaunay tetrahedra of a plain Poisson
// problem have about 0.6% of their couplings below jumpWeak (slivers),
// the checkerboard 4.7%; triangles and hexahedra none, the hexahedra's
// exact zeros (face neighbours of Q1 elements, rounding residue) not
// counted.
const (
	jumpWeak  = 1e-3  // a coupling this far below sqrt(a_ii a_jj) is weak
	jumpZero  = 1e-10 // below: a zero that rounding left, not a coupling
	jumpShare = 0.015 // share of the off-diagonal couplings that marks a jump
)

// resolveTheta sets the auto scalar θ from the matrix as given (pc.op,
// the caller's arrays), before the hierarchy is built on the host or on
// the device, so that both build from the same θ; it reads pc.op's
// indices, so it runs only once they are checked (fromMesh, or the
// device's input checks). NewDevice's matrix is not on the host: there
// auto stays θ = 0.
func (pc *Preconditioner) resolveTheta() {
	if pc.autoScalarTheta() {
		pc.opts.Theta = scalarTheta(pc.pool, pc.op)
	}
}

// autoScalarTheta says whether θ is resolveTheta's to choose.
func (pc *Preconditioner) autoScalarTheta() bool {
	return pc.opts.autoTheta && pc.opts.BlockSize == 1 && pc.op.ptr != nil && pc.op.val != nil
}

// thetaSample: in matrices of more rows than thetaFull, the couplings
// counted are those between rows that a hash picks, one in thetaSample
// (1/64 of the couplings, tens of thousands on the harness's problems,
// the share moving by a few tenths of a percentage point): the full count
// cost 2 ms on 36k tetrahedra, 2.5% of their setup, this 0.6 ms.
const (
	thetaSample = 8
	thetaFull   = 16384
)

// scalarTheta returns DefaultSystemTheta when more than jumpShare of the
// off-diagonal couplings of a are weaker than jumpWeak·sqrt(|a_ii a_jj|),
// else 0. The share does not change when rows and columns are scaled
// symmetrically (squares are compared: a matrix scaled beyond about
// 1e±70 may be misjudged, never fail), and the counts are exact on rows
// chosen by their number, so the choice depends on neither the worker
// count nor the scaling.
func scalarTheta(p pool, a *csr) float64 {
	return thetaFromCounts(thetaCounts(p, a))
}

// thetaCounts returns scalarTheta's counts: the off-diagonal couplings
// between counted rows that are not rounding zeros, and the weak ones.
func thetaCounts(p pool, a *csr) (all, weak int) {
	n := a.rows
	every := n <= thetaFull
	d := make([]float64, n) // |a_ii| of the rows counted, else 0
	p.forRows(a, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if !every && mis.Hash32(int32(i), 0x7e7a)%thetaSample != 0 {
				continue
			}
			for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
				if int(a.col[k]) == i {
					d[i] = math.Abs(a.val[k])
					break
				}
			}
		}
	})
	// Counts per row block, added after: integers, so the sum is the
	// same for every worker count.
	nb := (n + chunk - 1) / chunk
	counts := make([][2]int, nb) // couplings, weak ones
	p.forRange(nb, a.nnz()/thetaSample, func(blo, bhi int) {
		for b := blo; b < bhi; b++ {
			c := &counts[b]
			for i := b * chunk; i < min(n, (b+1)*chunk); i++ {
				if d[i] == 0 {
					continue
				}
				for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
					j := a.col[k]
					dd, x := d[i]*d[j], a.val[k]*a.val[k]
					if int(j) == i || dd == 0 || !(x > jumpZero*jumpZero*dd) {
						continue // the diagonal, a zero, or a zero diagonal
					}
					c[0]++
					if x < jumpWeak*jumpWeak*dd {
						c[1]++
					}
				}
			}
		}
	})
	for _, c := range counts {
		all, weak = all+c[0], weak+c[1]
	}
	return all, weak
}

// thetaFromCounts is scalarTheta's choice from its counts of couplings
// (the device counts them with in_theta).
func thetaFromCounts(all, weak int) float64 {
	if float64(weak) > jumpShare*float64(all) {
		return DefaultSystemTheta
	}
	return 0
}
