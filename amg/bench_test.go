package amg

import (
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
)

// The benchmark problems: the harness sizes (bench/amg) are 64 and 32
// elements per side; these are smaller so that a run takes seconds.
func benchProblems() []struct {
	name string
	pr   func() *fem.Problem
} {
	return []struct {
		name string
		pr   func() *fem.Problem
	}{
		{"poisson40", func() *fem.Problem { return fem.Poisson(3, 40) }},
		{"elasticity20", func() *fem.Problem { return fem.Elasticity(20) }},
	}
}

func BenchmarkSetup(b *testing.B) {
	for _, bp := range benchProblems() {
		pr := bp.pr()
		b.Run(bp.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := New(pr.A, problemOptions(pr, Options{})); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, bp := range benchProblems() {
		pr := bp.pr()
		pc, err := New(pr.A, problemOptions(pr, Options{}))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bp.name, func(b *testing.B) {
			for b.Loop() {
				if err := pc.Update(pr.A); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, bp := range benchProblems() {
		pr := bp.pr()
		pc, err := New(pr.A, problemOptions(pr, Options{}))
		if err != nil {
			b.Fatal(err)
		}
		rhs := mulDense(mustCSR(b, pr.A), randVec(pr.A.Rows, 1))
		x := make([]float64, len(rhs))
		b.Run(bp.name, func(b *testing.B) {
			its := 0
			for b.Loop() {
				clear(x)
				res, err := pc.Solve(rhs, x)
				if err != nil || !res.Converged {
					b.Fatal(err)
				}
				its = res.Iterations
			}
			b.ReportMetric(float64(its), "iterations")
		})
	}
}

// BenchmarkMulVec reports the fine-level SpMV in bytes of matrix streamed.
func BenchmarkMulVec(b *testing.B) {
	for _, bp := range benchProblems() {
		a := mustCSR(b, bp.pr().A)
		x, y := randVec(a.rows, 1), make([]float64, a.rows)
		for _, w := range []int{1, 2} {
			p := newPool(w)
			b.Run(fmt.Sprintf("%s/workers=%d", bp.name, w), func(b *testing.B) {
				b.SetBytes(int64(a.nnz()*12 + a.rows*16))
				for b.Loop() {
					p.mulVec(a, x, y)
				}
			})
		}
	}
}
