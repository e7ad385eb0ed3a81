package mis_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// A partition with an empty part: that part has no rows, so no classes or
// primary ranks to give (nil, as a C caller passes NULL). It used to make
// every part fail with "some parts have Local.Class and some do not"
// (issue 21, item 7). Every part must still return the greedy set.
func TestPartitionedEmptyPart(t *testing.T) {
	g := partGrid7(7, 6, 5)
	classes := partClasses(7, 6, 5)
	const parts = 4
	partition := make([]int32, g.N())
	for v := range partition {
		partition[v] = []int32{0, 1, 3}[v%3] // part 2 is empty
	}
	for _, withClass := range []bool{true, false} {
		g.Class = nil
		if withClass {
			g.Class = classes
		}
		for _, p := range []mis.Priority{
			{Kind: mis.Boundary, Seed: 2},
			{Kind: mis.User, Seed: 3, Values: partUserValues(g.N())},
			{Kind: mis.Degree, Seed: 4},
			{Kind: mis.Hash, Seed: 5},
		} {
			for _, dist := range []int{1, 2} {
				name := fmt.Sprintf("class=%v/%v/d%d", withClass, p.Kind, dist)
				keys, err := mis.Keys(g, p)
				if err != nil {
					t.Fatal(err)
				}
				want := mistest.Greedy(t, g, keys, dist)
				r, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Distance: dist, Priority: p, Partition: partition, Parts: parts})
				if err != nil {
					t.Errorf("%s: ComputePartitioned: %v", name, err)
				} else if !slices.Equal(r.In, want.In) {
					t.Errorf("%s: ComputePartitioned's set differs from the greedy one", name)
				}
				runEmptyPartRanks(t, name, g, partition, parts, p, dist, want)
				if dist == 1 {
					// ADMMA's set depends on the partition; it must run.
					if _, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Priority: p, Partition: partition, Parts: parts, Mode: mis.ADMMA}); err != nil {
						t.Errorf("%s: ADMMA: %v", name, err)
					}
				}
			}
		}
	}
}

// runEmptyPartRanks runs every part as its own member, the empty one with
// nil Class and Primary, and compares each part's rows with want.
func runEmptyPartRanks(t *testing.T, name string, g *mesh.Graph, partition []int32, parts int, p mis.Priority, dist int, want *mis.Result) {
	t.Helper()
	locs, err := mis.SplitGraph(g, parts, partition)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind == mis.User {
		prim, err := mis.Primaries(g, p)
		if err != nil {
			t.Fatal(err)
		}
		for q := range locs {
			for _, v := range locs[q].Rows {
				locs[q].Primary = append(locs[q].Primary, prim[v])
			}
		}
	}
	if len(locs[2].Rows) != 0 || locs[2].Class != nil || locs[2].Primary != nil {
		t.Fatalf("part 2: %d rows, Class %v, Primary %v: want an empty part with nil data", len(locs[2].Rows), locs[2].Class, locs[2].Primary)
	}
	grp, err := mis.NewLocalGroup(parts, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer grp.Close()
	res := make([]*mis.LocalResult, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for q := range parts {
		wg.Go(func() {
			res[q], errs[q] = mis.RunPart(context.Background(), grp.Member(q), &locs[q], mis.PartOptions{Distance: dist, Priority: p})
		})
	}
	wg.Wait()
	for q := range parts {
		if errs[q] != nil {
			t.Errorf("%s: part %d: %v", name, q, errs[q])
			continue
		}
		for i, v := range locs[q].Rows {
			if res[q].In[i] != want.In[v] {
				t.Errorf("%s: part %d, vertex %d: in=%v, greedy says %v", name, q, v, res[q].In[i], want.In[v])
				break
			}
		}
		if res[q].Size != want.Size {
			t.Errorf("%s: part %d: size %d, greedy %d", name, q, res[q].Size, want.Size)
		}
	}
}
