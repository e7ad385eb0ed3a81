package mis

import (
	"context"
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
)

// BenchmarkMultiGPUSends times the ways the multi-GPU driver can send
// and finish on two GPUs (byte stores or pairs into the peers'
// mailboxes, MIS-1 with or without the persistent tail) on the graphs of
// the multi-GPU table, and reports each part's sweeps.
func BenchmarkMultiGPUSends(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		b.Skip("needs two GPUs")
	}
	graphs := []struct {
		name string
		g    func() *mesh.Graph
	}{
		{"hex27-256", func() *mesh.Graph { return mesh.Hex27Graph(256, 256, 256) }},
		{"random-16M-16", func() *mesh.Graph { return mesh.RandomGraph(1<<24, 16, 1) }},
	}
	for _, c := range graphs {
		g := c.g()
		for _, dist := range []int{1, 2} {
			for _, o := range []MultiGPUOptions{{}, {pairs: true}, {tail: true}, {pairs: true, tail: true}} {
				if dist == 2 && o.tail {
					continue
				}
				o.Distance, o.Priority, o.Devices = dist, Priority{Kind: Hash}, []int{0, 1}
				b.Run(fmt.Sprintf("%s/d%d/pairs=%v/tail=%v", c.name, dist, o.pairs, o.tail), func(b *testing.B) {
					m, err := NewMultiGPU(g, o)
					if err != nil {
						b.Fatal(err)
					}
					defer m.Close()
					for range 2 {
						if _, err := m.pp.Run(context.Background()); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					var ms float64
					for i := range b.N {
						r, err := m.pp.Run(context.Background())
						if err != nil {
							b.Fatal(err)
						}
						ms += float64(r.Time.Microseconds()) / 1000
						if i == b.N-1 {
							b.Logf("parts %v rounds %v bytes %d plans %v", r.PartTime, r.PartRounds, r.Bytes, r.Plans)
						}
					}
					b.ReportMetric(ms/float64(b.N), "sweep-ms")
				})
			}
		}
	}
}
