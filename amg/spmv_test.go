package amg

import (
	"math"
	"math/rand/v2"
	"testing"
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
