package mis_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// chainCases are mistest.Chains, smaller in short mode.
func chainCases(tb testing.TB) []mistest.Chain {
	if testing.Short() {
		return mistest.Chains(tb, 200, 20_000)
	}
	return mistest.Chains(tb, 1000, 100_000)
}

// Parallel finishes chain-ordered priorities in a few rounds, with the
// greedy set.
func TestParallelChainPriorities(t *testing.T) {
	for _, c := range chainCases(t) {
		keys, err := mis.Keys(c.Graph, mis.Priority{Kind: mis.User, Values: c.Values})
		if err != nil {
			t.Fatal(err)
		}
		workers := []int{1, 3}
		if c.Graph.N() > 200_000 {
			workers = []int{3} // the big grid once: it is slow to check
		}
		for _, dist := range []int{1, 2} {
			want := mistest.Greedy(t, c.Graph, keys, dist)
			for _, workers := range workers {
				got := mistest.Parallel(t, c.Graph, keys, dist, workers)
				if got.Rounds > 4 {
					t.Errorf("%s d%d workers %d: %d rounds, want at most 4", c.Name, dist, workers, got.Rounds)
				}
				if !slices.Equal(got.In, want.In) || got.Size != want.Size {
					t.Errorf("%s d%d workers %d: set differs from the greedy one", c.Name, dist, workers)
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
		keys, err := mis.Keys(c.Graph, mis.Priority{Kind: mis.User, Values: c.Values})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name+"/greedy", func(b *testing.B) {
			for b.Loop() {
				mistest.Greedy(b, c.Graph, keys, 1)
			}
		})
		b.Run(c.Name+"/parallel", func(b *testing.B) {
			for b.Loop() {
				mistest.Parallel(b, c.Graph, keys, 1, 0)
			}
		})
	}
}
