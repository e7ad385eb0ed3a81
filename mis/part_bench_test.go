package mis_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// grid27 is the node graph of an n³ hex mesh: each node linked to the 26
// around it.
func partGrid27(n int) *mesh.Graph {
	id := func(i, j, k int) int32 { return int32(i + n*(j+n*k)) }
	b := mesh.NewBuilder(n * n * n)
	for k := range n {
		for j := range n {
			for i := range n {
				for dk := 0; dk <= 1; dk++ {
					for dj := -1; dj <= 1; dj++ {
						for di := -1; di <= 1; di++ {
							if dk == 0 && (dj < 0 || dj == 0 && di <= 0) {
								continue
							}
							x, y, z := i+di, j+dj, k+dk
							if x >= 0 && x < n && y >= 0 && y < n && z < n {
								b.Add(id(i, j, k), id(x, y, z))
							}
						}
					}
				}
			}
		}
	}
	return b.Graph()
}

// BenchmarkComputePartitioned times the in-process partitioned driver
// against Parallel on the same graph, and reports what the parts send.
func BenchmarkComputePartitioned(b *testing.B) {
	g := partGrid27(64)
	keys, _ := mis.Keys(g, mis.Priority{})
	for _, dist := range []int{1, 2} {
		b.Run(fmt.Sprintf("d%d/parallel", dist), func(b *testing.B) {
			for b.Loop() {
				mis.Parallel(g, keys, dist, 0)
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
