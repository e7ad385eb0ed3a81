package amg

import (
	"fmt"
	"testing"
	"time"

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

// BenchmarkCycle times one V-cycle (Apply) beside the memory-bandwidth
// floor of the bytes it moves, measured in the same run by a streaming
// pass (read two arrays, write one) over a buffer larger than the caches.
// Reported: ns/op for the cycle, floor-ns the time those bytes take at the
// streaming bandwidth, and the cycle's bytes.
func BenchmarkCycle(b *testing.B) {
	bw := streamBandwidth()
	for _, bp := range benchProblems() {
		pr := bp.pr()
		pc, err := New(pr.A, problemOptions(pr, Options{Workers: 1}))
		if err != nil {
			b.Fatal(err)
		}
		r := randVec(pc.Rows(), 1)
		z := make([]float64, len(r))
		bytes := cycleBytes(pc)
		b.Run(bp.name, func(b *testing.B) {
			b.SetBytes(int64(bytes))
			for b.Loop() {
				pc.cycle(0, z, r, true)
			}
			b.ReportMetric(float64(bytes)/bw*1e9, "floor-ns")
		})
	}
}

// cycleBytes counts the bytes one V-cycle must move at least: every matrix
// product streams its matrix (12 bytes an entry, 8 a row) and reads and
// writes its vectors once; a Chebyshev step touches about five vectors.
func cycleBytes(pc *Preconditioner) int {
	s := pc.opts.Sweeps
	total := 0
	for _, l := range pc.levels[:len(pc.levels)-1] {
		n := l.a.rows
		mat := l.a.nnz()*12 + n*8
		total += 2 * s * (mat + 5*n*8)
		total += l.p.nnz()*12 + l.p.cols*8 + n*8 + l.p.cols*8
		total += l.p.nnz()*12 + n*8 + 2*n*8 + l.p.cols*8
	}
	c := pc.coarse.n
	return total + c*c*8
}

// streamBandwidth returns bytes per second of y[i] = x[i] + a·z[i] over
// 3 × 32 MB, the best of five passes.
func streamBandwidth() float64 {
	const n = 4 << 20
	x, y, z := make([]float64, n), make([]float64, n), make([]float64, n)
	best := 0.0
	for range 5 {
		t := time.Now()
		for i := range y {
			y[i] = x[i] + 0.5*z[i]
		}
		if bw := float64(3*n*8) / time.Since(t).Seconds(); bw > best {
			best = bw
		}
	}
	return best
}
