package mis_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// chainCases are priorities whose greedy order runs along long chains, so
// that each parallel round decides a thin band: x + 10⁻³·y on a quad grid
// took 999 rounds and 13.2 s at 1000×1000, a path with increasing values
// 26 s at 10⁵ vertices (issue 21, item 6).
func chainCases(tb testing.TB) []struct {
	name   string
	g      *mesh.Graph
	values []float64
} {
	side, n := 1000, 100_000
	if testing.Short() {
		side, n = 200, 20_000
	}
	grid, err := mesh.FromElements(mesh.StructuredQuad(side, side), mesh.ElementOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	xy := make([]float64, grid.N())
	for v := range xy {
		xy[v] = grid.Coords[2*v] + 1e-3*grid.Coords[2*v+1]
	}
	edges := make([]mesh.Pair, n-1)
	rising := make([]float64, n)
	for v := range n {
		rising[v] = float64(v)
		if v > 0 {
			edges[v-1] = mesh.Pair{U: int32(v - 1), V: int32(v)}
		}
	}
	path, err := mesh.FromEdges(n, edges)
	if err != nil {
		tb.Fatal(err)
	}
	return []struct {
		name   string
		g      *mesh.Graph
		values []float64
	}{
		{fmt.Sprintf("quad%d-x+1e-3y", side), grid, xy},
		{fmt.Sprintf("path%d-increasing", n), path, rising},
	}
}

// Parallel finishes chain-ordered priorities in a few rounds, with the
// greedy set.
func TestParallelChainPriorities(t *testing.T) {
	for _, c := range chainCases(t) {
		keys, err := mis.Keys(c.g, mis.Priority{Kind: mis.User, Values: c.values})
		if err != nil {
			t.Fatal(err)
		}
		workers := []int{1, 3}
		if c.g.N() > 200_000 {
			workers = []int{3} // the big grid once: it is slow to check
		}
		for _, dist := range []int{1, 2} {
			want := mistest.Greedy(t, c.g, keys, dist)
			for _, workers := range workers {
				got := mistest.Parallel(t, c.g, keys, dist, workers)
				if got.Rounds > 4 {
					t.Errorf("%s d%d workers %d: %d rounds, want at most 4", c.name, dist, workers, got.Rounds)
				}
				if !slices.Equal(got.In, want.In) || got.Size != want.Size {
					t.Errorf("%s d%d workers %d: set differs from the greedy one", c.name, dist, workers)
				}
			}
		}
	}
}

// Finishing serially after any round keeps the contract: with every round
// counted slow, Parallel hands over after two rounds on every graph of the
// suite, and must still return the greedy set.
func TestParallelSerialFinishContract(t *testing.T) {
	defer mis.SetSlowRounds(1, 0)()
	defer mis.SetParallelGrain(8)()
	mistest.Run(t, func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
		keys, err := mis.Keys(g, p)
		if err != nil {
			return nil, err
		}
		r, err := mis.Parallel(g, keys, dist, 3)
		if err == nil && r.Rounds > 2 {
			return nil, fmt.Errorf("%d rounds, want at most 2 before the serial finish", r.Rounds)
		}
		return r, err
	})
}

func BenchmarkParallelChainPriorities(b *testing.B) {
	for _, c := range chainCases(b) {
		keys, err := mis.Keys(c.g, mis.Priority{Kind: mis.User, Values: c.values})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/greedy", func(b *testing.B) {
			for b.Loop() {
				mistest.Greedy(b, c.g, keys, 1)
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			for b.Loop() {
				mistest.Parallel(b, c.g, keys, 1, 0)
			}
		})
	}
}
