package amg

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Host models of input.cu, thread body by thread body, rows in a shuffled
// order (the kernels' minima do not depend on it), checked against
// fromMesh and dropSmall. They run in CI without a GPU.

const mNone = ^uint64(0)

// modelCheck is in_check64.
func modelCheck(a *mesh.CSR[float64], seed uint64) (diag []float64, bad [4]uint64) {
	n, nnz := a.Rows, a.RowPtr[a.Rows]
	diag = make([]float64, n)
	bad = [4]uint64{mNone, mNone, mNone, mNone}
	amin := func(w *uint64, v int64) { *w = min(*w, uint64(v)) }
	for _, i := range rand.New(rand.NewPCG(seed, 1)).Perm(n) {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		if lo > hi {
			amin(&bad[badPtr], int64(i))
			continue
		}
		if lo < 0 || hi > nnz {
			continue
		}
		prev, sorted, d := int32(-1), true, 0.0
		for k := lo; k < hi; k++ {
			c, v := a.Col[k], a.Val[k]
			if c < 0 || int(c) >= n || math.IsNaN(v) || math.IsInf(v, 0) {
				amin(&bad[badEntry], k)
				sorted = false
				break
			}
			sorted = sorted && c > prev
			prev = c
			if int(c) == i {
				d = v
			}
		}
		if !sorted {
			amin(&bad[badOrder], int64(i))
			continue
		}
		diag[i] = d
		if !(d > 0) {
			amin(&bad[badDiag], int64(i))
		}
	}
	return diag, bad
}

func mSmall(v, t2 float64, d []float64, i int, j int32) bool {
	return v*v <= t2*d[i]*d[j] && int(j) != i
}

// modelDrop is in_drop_count, the scan, in_drop_block and in_drop_place
// with the host's decision (ds.drop): the kept matrix and positions, or
// nil where nothing is dropped.
func modelDrop(a *csr, diag []float64, tol float64, bs int) (*csr, []int32) {
	n, nz, t2 := a.rows, a.nnz(), tol*tol
	cnt := make([]int, n+1)
	for i := range n {
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			if !mSmall(a.val[k], t2, diag, i, a.col[k]) {
				cnt[i+1]++
			}
		}
	}
	for i := range n {
		cnt[i+1] += cnt[i]
	}
	if dropped := nz - cnt[n]; dropped == 0 || dropped < nz/minDrop {
		return nil, nil
	}
	if bs > 1 && bs <= maxGroup {
		ungrouped, mixed := false, false
		for v := range n / bs {
			i0, p0 := v*bs, a.ptr[v*bs]
			ln := a.ptr[i0+1] - p0
			same := true
			for r := 1; r < bs && same; r++ {
				pr := a.ptr[i0+r]
				same = a.ptr[i0+r+1]-pr == ln && slices.Equal(a.col[pr:pr+ln], a.col[p0:p0+ln])
			}
			if !same {
				ungrouped = true
				continue
			}
			for q := 0; q < ln; q++ {
				j := a.col[p0+q]
				s0 := mSmall(a.val[p0+q], t2, diag, i0, j)
				for r := 1; r < bs; r++ {
					mixed = mixed || mSmall(a.val[a.ptr[i0+r]+q], t2, diag, i0+r, j) != s0
				}
			}
		}
		if !ungrouped && mixed {
			return nil, nil
		}
	}
	c := &csr{rows: n, cols: n, ptr: cnt, col: make([]int32, cnt[n]), val: make([]float64, cnt[n])}
	keep := make([]int32, cnt[n])
	for i := range n {
		w := cnt[i]
		for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
			if mSmall(a.val[k], t2, diag, i, a.col[k]) {
				continue
			}
			c.col[w], c.val[w], keep[w] = a.col[k], a.val[k], int32(k)
			w++
		}
	}
	return c, keep
}

func cloneCSR(a *mesh.CSR[float64], f func(a *mesh.CSR[float64])) *mesh.CSR[float64] {
	b := *a
	b.RowPtr, b.Col, b.Val = slices.Clone(a.RowPtr), slices.Clone(a.Col), slices.Clone(a.Val)
	f(&b)
	return &b
}

// in_check passes exactly the matrices that fromMesh takes in place; what
// it flags, fromMesh rejects (naming the entry in_check's minimum names)
// or sorts.
func TestModelInputCheck(t *testing.T) {
	good := fem.Poisson(2, 7).A
	diagAt := func(a *mesh.CSR[float64], i int) int64 {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			if int(a.Col[k]) == i {
				return k
			}
		}
		panic("no diagonal")
	}
	for _, c := range []struct {
		name string
		a    *mesh.CSR[float64]
		bad  int // word flagged, −1 for none
		in   string
	}{
		{"good", good, -1, ""},
		{"zero diagonal", cloneCSR(good, func(a *mesh.CSR[float64]) { a.Val[diagAt(a, 9)] = 0 }), badDiag, "(9,9)"},
		{"negative diagonal", cloneCSR(good, func(a *mesh.CSR[float64]) { a.Val[diagAt(a, 3)] = -1 }), badDiag, "(3,3)"},
		{"NaN", cloneCSR(good, func(a *mesh.CSR[float64]) { a.Val[10], a.Val[40] = math.NaN(), math.NaN() }), badEntry, "is NaN"},
		{"Inf", cloneCSR(good, func(a *mesh.CSR[float64]) { a.Val[12] = math.Inf(-1) }), badEntry, "-Inf"},
		{"column out of range", cloneCSR(good, func(a *mesh.CSR[float64]) { a.Col[5], a.Col[30] = 99, -1 }), badEntry, "Col[5] = 99"},
		{"negative column", cloneCSR(good, func(a *mesh.CSR[float64]) { a.Col[7] = -3 }), badEntry, "Col[7] = -3"},
		{"offsets decrease", cloneCSR(good, func(a *mesh.CSR[float64]) { a.RowPtr[4], a.RowPtr[20] = a.RowPtr[6], 1<<40 }), badPtr, "RowPtr[4]"},
		{"unsorted", cloneCSR(good, func(a *mesh.CSR[float64]) {
			k := a.RowPtr[11]
			a.Col[k], a.Col[k+1] = a.Col[k+1], a.Col[k]
			a.Val[k], a.Val[k+1] = a.Val[k+1], a.Val[k]
		}), badOrder, ""},
	} {
		for seed := range uint64(3) {
			diag, bad := modelCheck(c.a, seed)
			// The word of the host's first error is set, and none before
			// it (later ones may be: a bad entry stops its row's order
			// check, offsets that decrease mix rows).
			for w, x := range bad {
				if w < c.bad && x != mNone || w == c.bad && x == mNone || c.bad < 0 && x != mNone {
					t.Errorf("%s: word %d = %d", c.name, w, x)
				}
			}
			m, err := fromMesh(newPool(2), c.a)
			switch {
			case c.in != "" && (err == nil || !strings.Contains(err.Error(), c.in)):
				t.Errorf("%s: fromMesh: %v, want an error naming %q", c.name, err, c.in)
			case c.in == "" && err != nil:
				t.Errorf("%s: fromMesh: %v", c.name, err)
			case c.bad < 0 && !slices.Equal(diag, m.diag()):
				t.Errorf("%s: diagonal differs from the host's", c.name)
			}
		}
	}
}

// in_drop_* give dropSmall's matrix and positions, with its decisions
// (too few dropped, node blocks that would split).
func TestModelInputDrop(t *testing.T) {
	for _, c := range []struct {
		name string
		pr   *fem.Problem
		bs   int
		tol  float64
	}{
		{"poisson", fem.Poisson(3, 7), 1, DefaultDropTol},
		{"poisson none", fem.Poisson(3, 7), 1, 1e-30},
		{"poisson most", fem.Poisson(2, 9), 1, 0.09},
		{"elasticity", fem.Elasticity(4), 3, DefaultDropTol},
		{"elasticity mixed", fem.Elasticity(4), 3, 0.05},
	} {
		a := mustCSR(t, c.pr.A)
		diag, bad := modelCheck(c.pr.A, 0)
		if bad != [4]uint64{mNone, mNone, mNone, mNone} {
			t.Fatalf("%s: flagged %v", c.name, bad)
		}
		want, wkeep := a.dropSmall(newPool(3), c.tol, c.bs)
		got, keep := modelDrop(a, diag, c.tol, c.bs)
		if want == a {
			if got != nil {
				t.Errorf("%s: the model drops %d entries, the host none", c.name, a.nnz()-got.nnz())
			}
			continue
		}
		if got == nil || !slices.Equal(got.ptr, want.ptr) || !slices.Equal(got.col, want.col) ||
			!slices.Equal(got.val, want.val) || !slices.Equal(keep, wkeep) {
			t.Errorf("%s: the model's kept matrix differs from dropSmall's", c.name)
		}
	}
}

// in_hash_vec gives checkSymmetric's vectors.
func TestModelInputHashVec(t *testing.T) {
	for _, seed := range []uint32{1, 2} {
		for _, i := range []int32{0, 1, 77, 1 << 20, math.MaxInt32} {
			h := uint32(i) ^ seed
			h ^= h >> 16
			h *= 0x7feb352d
			h ^= h >> 15
			h *= 0x846ca68b
			h ^= h >> 16
			if got, want := float64(h)/4294967296.0-0.5, float64(mis.Hash32(i, uint64(seed)))/(1<<32)-0.5; got != want {
				t.Errorf("seed %d, i %d: %v, host %v", seed, i, got, want)
			}
		}
	}
}

// modelTheta is in_theta, thread body by thread body (rows in a shuffled
// order: the counts are integer sums), on a matrix in_check accepted.
func modelTheta(a *mesh.CSR[float64], diag []float64, seed uint64) (all, weak int) {
	n := a.Rows
	every := n <= thetaFull
	row := func(i int) bool { return every || mis.Hash32(int32(i), 0x7e7a)%8 == 0 }
	for _, i := range rand.New(rand.NewPCG(seed, 2)).Perm(n) {
		if !row(i) {
			continue
		}
		di := math.Abs(diag[i])
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			j := int(a.Col[k])
			if j == i || !row(j) {
				continue
			}
			dd, x := di*math.Abs(diag[j]), a.Val[k]*a.Val[k]
			if dd == 0 || !(x > 1e-20*dd) {
				continue
			}
			all++
			if x < 1e-6*dd {
				weak++
			}
		}
	}
	return all, weak
}

// TestModelTheta holds in_theta's counts to scalarTheta's, on matrices
// counted whole and sampled (above thetaFull rows), with and without a
// coefficient jump, so the device chooses the host's θ.
func TestModelTheta(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    *mesh.CSR[float64]
	}{
		{"plain 64", jumpPoisson(64, 8, 1)},
		{"jump 64", jumpPoisson(64, 8, 1e6)},
		{"plain 200 (sampled)", jumpPoisson(200, 10, 1)},
		{"jump 200 (sampled)", jumpPoisson(200, 10, 1e6)},
		{"hex 20 (sampled)", fem.Poisson(3, 27).A},
	} {
		diag, bad := modelCheck(tc.a, 1)
		if bad != [4]uint64{mNone, mNone, mNone, mNone} {
			t.Fatalf("%s: in_check flags %v", tc.name, bad)
		}
		all, weak := modelTheta(tc.a, diag, 3)
		hall, hweak := thetaCounts(newPool(3), mustCSR(t, tc.a))
		if all != hall || weak != hweak || all == 0 {
			t.Errorf("%s: in_theta counts %d couplings, %d weak; scalarTheta %d, %d", tc.name, all, weak, hall, hweak)
		}
	}
}
