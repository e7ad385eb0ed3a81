package mis_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
	"pgregory.net/rapid"
)

func TestParallelContract(t *testing.T) {
	// Split even tiny vertex lists, so every worker count really runs.
	defer mis.SetParallelGrain(1)()
	for w := 1; w <= 8; w++ {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			mistest.Run(t, func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
				return mis.Compute(g, mis.Options{Distance: dist, Priority: p, Workers: w, Device: mis.CPU})
			})
		})
	}
}

func TestSerialOption(t *testing.T) {
	mistest.Run(t, func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
		return mis.Compute(g, mis.Options{Distance: dist, Priority: p, Serial: true})
	})
}

// TestDistance2BruteForce checks distance-2 independence and maximality
// against all-pairs BFS distances, independently of Verify.
func TestDistance2BruteForce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := mistest.DrawGraph(rt)
		if g.N() > 150 {
			return
		}
		res, err := mis.Compute(g, mis.Options{Distance: 2, Priority: mis.Priority{Seed: rapid.Uint64().Draw(rt, "seed")}, Device: mis.CPU})
		if err != nil {
			rt.Fatal(err)
		}
		n := g.N()
		for s := 0; s < n; s++ {
			d := bfs(g, int32(s))
			near := false
			for v := 0; v < n; v++ {
				if v != s && d[v] >= 0 && d[v] <= 2 {
					if res.In[s] && res.In[v] {
						rt.Fatalf("members %d and %d at distance %d", s, v, d[v])
					}
					near = near || res.In[v]
				}
			}
			if !res.In[s] && !near {
				rt.Fatalf("vertex %d is outside the set with no member within distance 2", s)
			}
		}
	})
}

func bfs(g *mesh.Graph, s int32) []int {
	d := make([]int, g.N())
	for i := range d {
		d[i] = -1
	}
	d[s] = 0
	q := []int32{s}
	for len(q) > 0 {
		v := q[0]
		q = q[1:]
		for _, u := range g.Neighbors(v) {
			if d[u] < 0 {
				d[u] = d[v] + 1
				q = append(q, u)
			}
		}
	}
	return d
}

func TestVerifyFindsViolations(t *testing.T) {
	g := mistest.Cases()[3].Graph // path of 200
	in := make([]bool, g.N())
	for v := 0; v < g.N(); v += 2 {
		in[v] = true
	}
	if err := mis.Verify(g, in, 1); err != nil {
		t.Fatalf("alternate vertices of a path: %v", err)
	}
	if err := mis.Verify(g, in, 2); err == nil {
		t.Fatal("alternate vertices are at distance 2: Verify(2) accepted them")
	}
	in[1] = true
	var ve *mis.VerifyError
	if err := mis.Verify(g, in, 1); !errors.As(err, &ve) || ve.Vertex != 0 || ve.Other != 1 {
		t.Fatalf("adjacent members 0,1: got %v", err)
	}
	in[1] = false
	in[100] = false
	if err := mis.Verify(g, in, 1); !errors.As(err, &ve) || ve.Vertex != 100 {
		t.Fatalf("uncovered vertex 100: got %v", err)
	}
	if err := mis.Verify(g, in[:5], 1); err == nil {
		t.Fatal("short set accepted")
	}
}

func TestComputeErrors(t *testing.T) {
	g := mistest.Cases()[3].Graph
	if _, err := mis.Compute(g, mis.Options{Distance: 3}); err == nil {
		t.Error("distance 3 accepted")
	}
	if _, err := mis.Compute(nil, mis.Options{}); err == nil {
		t.Error("nil graph accepted")
	}
	if _, err := mis.Compute(g, mis.Options{Priority: mis.Priority{Kind: mis.User, Values: []float64{1}}}); err == nil {
		t.Error("short user values accepted")
	}
}

func TestGreedyIsGreedy(t *testing.T) {
	// The highest-key vertex is always in the set, at both distances.
	for _, c := range mistest.Cases() {
		if c.Graph.N() == 0 {
			continue
		}
		keys, _ := mis.Keys(c.Graph, mis.Priority{Seed: 5})
		top := mis.Order(keys)[0]
		for _, d := range []int{1, 2} {
			if !mistest.Greedy(t, c.Graph, keys, d).In[top] {
				t.Errorf("%s d%d: top vertex %d not in set", c.Name, d, top)
			}
		}
	}
}

func TestHash32Bijective(t *testing.T) {
	seen := make(map[uint32]int32, 1<<16)
	for v := int32(0); v < 1<<16; v++ {
		h := mis.Hash32(v, 12345)
		if w, ok := seen[h]; ok {
			t.Fatalf("Hash32 collision: %d and %d", v, w)
		}
		seen[h] = v
	}
}

// TestContractCatchesWrongSet makes sure the contract suite can fail: a
// backend that uses another seed returns a valid MIS, but not the greedy
// one, and Check must say so.
func TestContractCatchesWrongSet(t *testing.T) {
	wrong := func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
		p.Seed++
		return mis.Compute(g, mis.Options{Distance: dist, Priority: p, Device: mis.CPU})
	}
	g := mistest.Cases()[8].Graph // random-sparse
	for _, d := range []int{1, 2} {
		if err := mistest.Check(g, mis.Priority{}, d, wrong); err == nil {
			t.Errorf("distance %d: a set from another seed passed the contract", d)
		}
	}
}
