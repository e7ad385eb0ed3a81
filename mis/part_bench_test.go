package mis_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// BenchmarkComputePartitioned times the in-process partitioned driver
// against Parallel on the same graph, and reports what the parts send.
func BenchmarkComputePartitioned(b *testing.B) {
	g := mistest.Grid27(64)
	keys, _ := mis.Keys(g, mis.Priority{})
	for _, dist := range []int{1, 2} {
		b.Run(fmt.Sprintf("d%d/parallel", dist), func(b *testing.B) {
			for b.Loop() {
				mistest.Parallel(b, g, keys, dist, 0)
			}
		})
		for _, mode := range []mis.PartMode{mis.Exact, mis.ADMMA} {
			if mode == mis.ADMMA && dist == 2 {
				continue
			}
			for _, k := range []int{1, 2, 4, 8} {
				b.Run(fmt.Sprintf("d%d/%v/parts=%d", dist, mode, k), func(b *testing.B) {
					var r *mis.PartResult
					for b.Loop() {
						var err error
						r, err = mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Distance: dist, Parts: k, Mode: mode})
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(r.Rounds), "rounds")
					b.ReportMetric(float64(r.Bytes()), "bytes")
					b.ReportMetric(float64(r.SetupBytes), "setup-bytes")
				})
			}
		}
	}
}
