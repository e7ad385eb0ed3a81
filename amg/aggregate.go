package amg

import (
	"fmt"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// aggregateMIS2 groups the nodes of the strength graph around the roots of
// a distance-2 MIS taken with boundary priorities, so that boundary nodes
// become roots first and boundary aggregates are not left as slivers.
// Unless the options say cpu, the MIS runs on their GPU when the graph
// is large enough (mis.Auto); every backend returns the same set, so the
// hierarchy does not depend on where it was built.
func aggregateMIS2(g *mesh.Graph, workers int, dev mis.Device) ([]int32, int, error) {
	misDev := mis.CPU
	if dev.Kind() != mis.CPU {
		misDev = mis.Auto.On(dev.Index())
	}
	// On one worker the serial greedy is the faster way to the same set.
	set, err := mis.Compute(g, mis.Options{
		Distance: 2,
		Priority: mis.Priority{Kind: mis.Boundary},
		Workers:  workers,
		Serial:   workers == 1 && misDev == mis.CPU,
		Device:   misDev,
	})
	if err != nil {
		return nil, 0, err
	}
	agg, err := mis.Aggregate(g, set.In)
	if err != nil {
		return nil, 0, err
	}
	return agg.Of, agg.N, nil
}

// fixAggregates makes an aggregation usable for a near-nullspace of k
// vectors at bs dofs per node: Dirichlet nodes leave their (singleton)
// aggregates, since their rows need no coarse correction; aggregates with
// fewer than k dofs, which could not interpolate all k vectors, join the
// neighbouring aggregate they share most strong edges with (or dissolve
// when they have none). Aggregates are then renumbered densely, keeping
// their order. The result depends only on the graph and the input.
func fixAggregates(g *mesh.Graph, of []int32, nagg, bs, k int) ([]int32, int) {
	if g.Dirichlet != nil {
		for v, d := range g.Dirichlet {
			if d {
				of[v] = -1
			}
		}
	}
	size := make([]int, nagg)
	for _, a := range of {
		if a >= 0 {
			size[a]++
		}
	}
	if bs < k {
		// Votes of each small aggregate for its neighbours, counted over
		// all its members; lowest aggregate id wins a tie.
		need := (k + bs - 1) / bs
		target := make([]int32, nagg)
		for a := range target {
			target[a] = -1
		}
		votes := map[int32]int{}
		members := membersOf(of, nagg)
		for a := 0; a < nagg; a++ {
			if size[a] == 0 || size[a] >= need {
				continue
			}
			clear(votes)
			for _, v := range members[a] {
				for _, u := range g.Neighbors(v) {
					if b := of[u]; b >= 0 && int(b) != a && size[b] >= need {
						votes[b]++
					}
				}
			}
			best, bc := int32(-1), 0
			for b, c := range votes {
				if c > bc || (c == bc && b < best) {
					best, bc = b, c
				}
			}
			target[a] = best
		}
		for v, a := range of {
			if a >= 0 && size[a] < need {
				of[v] = target[a]
			}
		}
	}
	// Renumber densely.
	id := make([]int32, nagg)
	for a := range id {
		id[a] = -1
	}
	for _, a := range of {
		if a >= 0 {
			id[a] = 0
		}
	}
	n := int32(0)
	for a := range id {
		if id[a] == 0 {
			id[a] = n
			n++
		}
	}
	for v, a := range of {
		if a >= 0 {
			of[v] = id[a]
		}
	}
	return of, int(n)
}

// membersOf lists the nodes of every aggregate in increasing order.
func membersOf(of []int32, nagg int) [][]int32 {
	m := make([][]int32, nagg)
	for v, a := range of {
		if a >= 0 {
			m[a] = append(m[a], int32(v))
		}
	}
	return m
}

// checkAggregates verifies that of assigns each node to −1 or a valid
// aggregate and that no aggregate is empty.
func checkAggregates(of []int32, nagg int) error {
	seen := make([]bool, nagg)
	for v, a := range of {
		if a < -1 || int(a) >= nagg {
			return fmt.Errorf("amg: node %d in aggregate %d, want -1 or [0,%d)", v, a, nagg)
		}
		if a >= 0 {
			seen[a] = true
		}
	}
	for a, s := range seen {
		if !s {
			return fmt.Errorf("amg: aggregate %d is empty", a)
		}
	}
	return nil
}
