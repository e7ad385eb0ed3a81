package mis_test

import (
	"sync"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

var benchGraphs = sync.OnceValue(func() map[string]*mesh.Graph {
	hex := mesh.Hex27Graph(64, 64, 64)
	rel, _ := mesh.Relabel(hex, 1)
	return map[string]*mesh.Graph{
		"hex27-64-natural":    hex,
		"hex27-64-relabelled": rel,
		"random-1M-deg16":     mesh.RandomGraph(1<<20, 16, 1),
	}
})

func benchMIS(b *testing.B, name string, dist int, serial bool) {
	g := benchGraphs()[name]
	opts := mis.Options{Distance: dist, Priority: mis.Priority{Kind: mis.Boundary}, Device: mis.CPU, Serial: serial}
	b.SetBytes(g.NumEdges()*4 + int64(g.N()+1)*8)
	b.ResetTimer()
	for b.Loop() {
		if _, err := mis.Compute(g, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

func BenchmarkMIS1(b *testing.B) {
	for _, name := range []string{"hex27-64-natural", "hex27-64-relabelled", "random-1M-deg16"} {
		b.Run(name+"/parallel", func(b *testing.B) { benchMIS(b, name, 1, false) })
		b.Run(name+"/serial", func(b *testing.B) { benchMIS(b, name, 1, true) })
	}
}

func BenchmarkMIS2(b *testing.B) {
	for _, name := range []string{"hex27-64-natural", "hex27-64-relabelled", "random-1M-deg16"} {
		b.Run(name+"/parallel", func(b *testing.B) { benchMIS(b, name, 2, false) })
		b.Run(name+"/serial", func(b *testing.B) { benchMIS(b, name, 2, true) })
	}
}
