package mis_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// The partitioned rounds stall on chain priorities as Parallel's do (one
// round per link: 999 rounds on the 1000² grid); the parts hand the rest
// to the serial finish together, after the rounds Parallel takes, and
// return the greedy set for every part count and partition (issue 21,
// item 6).
func TestPartitionedChainPriorities(t *testing.T) {
	for _, c := range chainCases(t) {
		if c.Graph.N() > 200_000 {
			continue // the 1000² grid: the short cases show the same
		}
		p := mis.Priority{Kind: mis.User, Values: c.Values}
		keys, err := mis.Keys(c.Graph, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, dist := range []int{1, 2} {
			want := mistest.Greedy(t, c.Graph, keys, dist)
			par := mistest.Parallel(t, c.Graph, keys, dist, 1)
			for _, k := range []int{1, 2, 5} {
				for _, hashed := range []bool{false, true} {
					name := fmt.Sprintf("%s d%d k=%d hashed=%v", c.Name, dist, k, hashed)
					opts := mis.PartOptions{Distance: dist, Priority: p, Parts: k}
					if hashed {
						opts.Partition = partHashed(c.Graph.N(), k, 3)
					}
					r, err := mis.ComputePartitioned(context.Background(), c.Graph, opts)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if i := testgraphs.FirstDiff(r.In, want.In); i >= 0 || r.Size != want.Size {
						t.Errorf("%s: differs from the greedy set at vertex %d (%d members, want %d)", name, i, r.Size, want.Size)
					}
					if r.Rounds != par.Rounds || r.Rounds > 4 {
						t.Errorf("%s: %d rounds, Parallel takes %d (want at most 4)", name, r.Rounds, par.Rounds)
					}
					if r.FinishVertices == 0 || (k > 1 && r.FinishBytes == 0) {
						t.Errorf("%s: the serial finish decided %d vertices with %d bytes", name, r.FinishVertices, r.FinishBytes)
					}
				}
			}
		}
	}
}

// Finishing after any round keeps the contract: with every round counted
// slow the parts hand over after two rounds on every graph of the suite,
// for contiguous and scattered partitions, and must return the greedy set.
func TestPartitionedSerialFinishContract(t *testing.T) {
	defer mis.SetSlowRounds(1, 0)()
	for _, k := range []int{1, 3} {
		for _, hashed := range []bool{false, true} {
			t.Run(fmt.Sprintf("k=%d/hashed=%v", k, hashed), func(t *testing.T) {
				mistest.Run(t, func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
					opts := mis.PartOptions{Distance: dist, Priority: p, Parts: k}
					if hashed {
						opts.Partition = partHashed(g.N(), k, 5)
					}
					r, err := mis.ComputePartitioned(context.Background(), g, opts)
					if err == nil && r.Rounds > 2 {
						return nil, fmt.Errorf("%d rounds, want at most 2 before the serial finish", r.Rounds)
					}
					if err != nil {
						return nil, err
					}
					return &r.Result, nil
				})
			})
		}
	}
}

// A part whose share of the remainder is too large to send makes all
// parts keep to the rounds: the same set, one round per link.
func TestPartitionedSerialFinishRefused(t *testing.T) {
	defer mis.SetSlowRounds(1, 0)()
	defer mis.SetFinishMessageLimit(16)()
	g := partRing(3001)
	p := mis.Priority{Kind: mis.Hash, Seed: 8}
	keys, _ := mis.Keys(g, p)
	for _, dist := range []int{1, 2} {
		want := mistest.Greedy(t, g, keys, dist)
		r, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Distance: dist, Priority: p, Parts: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.In, want.In) {
			t.Errorf("d%d: differs from the greedy set", dist)
		}
		if par := mistest.Parallel(t, g, keys, dist, 1); r.Rounds <= 2 || r.FinishVertices != 0 {
			t.Errorf("d%d: %d rounds (Parallel alone %d), %d vertices finished serially: the refusal did not hold", dist, r.Rounds, par.Rounds, r.FinishVertices)
		}
	}
}
