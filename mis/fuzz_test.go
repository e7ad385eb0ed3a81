package mis_test

import (
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// FuzzCompute builds a graph from fuzzed edges (2 bytes each) and checks
// that every CPU backend of Compute returns Greedy's set under every
// priority kind, at both distances, and that the set passes Verify. A flag
// makes every parallel round count as slow, so the serial finish is
// fuzzed too.
func FuzzCompute(f *testing.F) {
	f.Add(uint8(6), uint8(0), uint64(1), []byte{0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0})
	f.Add(uint8(9), uint8(0x17), uint64(7), []byte{0, 1, 0, 2, 0, 3, 1, 4, 2, 5, 3, 6, 7, 8})
	f.Add(uint8(40), uint8(0x2b), uint64(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 2, 9, 30, 31, 31, 32, 39, 0})
	f.Fuzz(func(t *testing.T, nodes, flags uint8, seed uint64, raw []byte) {
		n := int(nodes)
		var edges []mesh.Pair
		for k := 0; n > 0 && k+1 < len(raw); k += 2 {
			edges = append(edges, mesh.Pair{U: int32(int(raw[k]) % n), V: int32(int(raw[k+1]) % n)})
		}
		g, err := mesh.FromEdges(n, edges)
		if err != nil {
			t.Fatal(err)
		}
		dist := 1 + int(flags&1)
		p := mis.Priority{Kind: mis.PriorityKind(flags >> 1 & 3), Seed: seed}
		if p.Kind == mis.User {
			// Few distinct values, so that ties fall to the hash.
			p.Values = make([]float64, n)
			for v := range n {
				p.Values[v] = float64((uint64(v)*seed)>>3%5) - 2
			}
		}
		if flags&8 != 0 {
			defer mis.SetSlowRounds(1, 0)()
		}
		if flags&16 != 0 {
			defer mis.SetParallelGrain(4)()
		}
		keys, err := mis.Keys(g, p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := mis.Greedy(g, keys, dist)
		if err != nil {
			t.Fatal(err)
		}
		if err := mis.Verify(g, want.In, dist); err != nil {
			t.Fatalf("greedy set: %v", err)
		}
		for _, o := range []mis.Options{
			{Distance: dist, Priority: p, Device: mis.CPU, Serial: true},
			{Distance: dist, Priority: p, Device: mis.CPU, Workers: 1 + int(flags>>5)},
		} {
			got, err := mis.Compute(g, o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.In, want.In) || got.Size != want.Size {
				t.Fatalf("%+v: set differs from Greedy's", o)
			}
		}
	})
}
