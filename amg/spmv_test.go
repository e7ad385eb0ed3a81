package amg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// spmvMasked gives dotTo's sums bit for bit on rows of every length from
// 0 to 40 in every order, the last ones ending at the arrays' end, with
// negative zeros, subnormal and huge terms among the entries; variedRows
// tells such rows from rows of one length.
func TestSpmvMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 50
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
	}
	x[3], x[7] = math.Copysign(0, -1), 5e-324
	a := &csr{rows: 0, cols: n, ptr: []int{0}}
	for range 3 {
		for _, l := range rng.Perm(41) {
			for range l {
				a.col = append(a.col, int32(rng.IntN(n)))
				v := rng.NormFloat64()
				if rng.IntN(9) == 0 {
					v = math.Copysign(0, -1)
				}
				a.val = append(a.val, v)
			}
			a.ptr = append(a.ptr, len(a.col))
			a.rows++
		}
	}
	if !variedRows(a, 0, a.rows) {
		t.Error("rows of every length: variedRows false")
	}
	for _, r := range [][2]int{{0, a.rows}, {5, 70}, {a.rows - 3, a.rows}, {9, 10}} {
		got, want := make([]float64, a.rows), make([]float64, a.rows)
		spmvMasked(a, x, got, r[0], r[1])
		for i := r[0]; i < r[1]; i++ {
			want[i] = dotTo(a.col, a.val, x, a.ptr[i], a.ptr[i+1])
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("rows %v: row %d (%d entries): %v, want %v", r, i, a.ptr[i+1]-a.ptr[i], got[i], want[i])
			}
		}
	}
	u := &csr{rows: 100, cols: n, ptr: make([]int, 101)}
	for i := range u.ptr {
		u.ptr[i] = 9 * i
	}
	if variedRows(u, 0, u.rows) {
		t.Error("rows of one length: variedRows true")
	}
}

// randomLaplacian returns the graph Laplacian of a random graph plus the
// identity: SPD, with rows of every length (an unstructured matrix).
func randomLaplacian(n int, degree float64, seed uint64) *mesh.CSR[float64] {
	g := mesh.RandomGraph(n, degree, seed)
	a := &mesh.CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for v := 0; v < n; v++ {
		nb := slices.Sorted(slices.Values(g.Neighbors(int32(v))))
		at, _ := slices.BinarySearch(nb, int32(v))
		nb = slices.Insert(nb, at, int32(v))
		for _, u := range nb {
			a.Col = append(a.Col, u)
			if u == int32(v) {
				a.Val = append(a.Val, float64(len(nb)))
			} else {
				a.Val = append(a.Val, -1)
			}
		}
		a.RowPtr[v+1] = int64(len(a.Col))
	}
	return a
}

// On rows of varying length the products take spmvMasked, on ranges of
// rows split between workers too: the solve stays bitwise the same for
// any worker count.
func TestMaskedRowsAcrossWorkers(t *testing.T) {
	a := randomLaplacian(20000, 10, 3)
	if !variedRows(mustCSR(t, a), 0, a.Rows) {
		t.Fatal("random Laplacian: variedRows false, the test would not reach spmvMasked")
	}
	sameSolveAcrossWorkers(t, a, Options{}, 1, 2, 3)
}
