package amg

import (
	"fmt"
	"github.com/misgrid/misgrid/mis"
	"testing"
	"time"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/cuda"
)

// gpuBenchProblems are the harness's problems (bench/amg) and, without
// -short, Poisson 100³ (about a million unknowns).
func gpuBenchProblems() []testProblem {
	ps := []testProblem{{"poisson64", fem.Poisson(3, 64)}, {"elasticity32", fem.Elasticity(32)}}
	if !testing.Short() {
		ps = append(ps, testProblem{"poisson101", fem.Poisson(3, 101)})
	}
	return ps
}

// BenchmarkGPUSolve times setup (upload included, and reported alone),
// and PCG to 1e-8 from x = 0, on the CPU and the GPU; ns/op is one solve.
func BenchmarkGPUSolve(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skipf("no usable GPU: %v", err)
	}
	for _, tp := range gpuBenchProblems() {
		for _, dev := range []mis.Device{mis.CPU, mis.GPU} {
			b.Run(fmt.Sprintf("%s/%v", tp.name, dev), func(b *testing.B) {
				o := problemOptions(tp.pr, Options{Device: dev})
				pc, err := New(tp.pr.A, o)
				if err != nil {
					b.Fatal(err)
				}
				defer pc.Close()
				st := pc.Stats()
				n := pc.Rows()
				rhs := mulDense(mustCSR(b, tp.pr.A), randVec(n, 3))
				x := make([]float64, n)
				var res *Result
				b.ResetTimer()
				for range b.N {
					clear(x)
					if res, err = pc.Solve(rhs, x); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer() // not the Close below
				b.ReportMetric(float64(res.Iterations), "its")
				b.ReportMetric(st.Setup.Seconds(), "setup_s")
				b.ReportMetric(st.Phases["upload"].Seconds(), "upload_s")
				b.ReportMetric(res.Elapsed.Seconds(), "solve_s")
				b.ReportMetric(float64(n), "rows")
			})
		}
	}
}

// BenchmarkGPUMulVec times the fine-level product on the device and
// reports it against the time to stream the matrix and vectors once at
// the device's peak bandwidth (values, column ids, offsets, y written,
// x read once: the floor for a product that reuses x from cache).
func BenchmarkGPUMulVec(b *testing.B) {
	if err := cuda.Available(); err != nil {
		b.Skipf("no usable GPU: %v", err)
	}
	for _, tp := range gpuBenchProblems() {
		b.Run(tp.name, func(b *testing.B) {
			pc, err := New(tp.pr.A, Options{Device: mis.GPU, BlockSize: tp.pr.Block})
			if err != nil {
				b.Fatal(err)
			}
			defer pc.Close()
			g := pc.dev
			m := g.op
			x := g.vd
			if err := cuda.CopyToDevice(x, 0, randVec(m.rows, 1)); err != nil {
				b.Fatal(err)
			}
			run := func(k int) time.Duration {
				t0 := time.Now()
				for range k {
					g.rows(m, rowMV, x, g.vq, nil, nil, nil, nil, nil, nil, 0, 0)
				}
				if g.err != nil {
					b.Fatal(g.err)
				}
				if err := g.stream.Synchronize(); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			run(10)
			b.ResetTimer()
			el := run(b.N)
			b.StopTimer() // not the Close below
			per := el.Seconds() / float64(b.N)
			bytes := float64(m.nnz)*12 + float64(m.rows+1)*4 + float64(m.rows)*16
			b.ReportMetric(per*1e6, "spmv_us")
			b.ReportMetric(bytes/per/1e9, "GB/s")
			b.ReportMetric(float64(m.g), "lanes")
			// Peak bandwidth: double data rate × bus width.
			dev := g.e.Ctx.Device()
			clk, err1 := dev.Attribute(cuda.AttrMemoryClockRate)
			bus, err2 := dev.Attribute(cuda.AttrGlobalMemoryBusWidth)
			if err1 == nil && err2 == nil && clk > 0 && bus > 0 {
				peak := 2 * float64(clk) * 1e3 * float64(bus) / 8
				b.ReportMetric(bytes/peak*1e6, "floor_us")
			}
		})
	}
}
