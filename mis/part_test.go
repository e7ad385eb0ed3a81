package mis_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// partBackend runs the partitioned driver over k contiguous parts, or
// over a hashed partition vector when hashed is set.
func partBackend(k int, hashed bool) mistest.Backend {
	return func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
		opts := mis.PartOptions{Distance: dist, Priority: p, Parts: k}
		if hashed {
			opts.Partition = partHashed(g.N(), k, 5)
		}
		r, err := mis.ComputePartitioned(context.Background(), g, opts)
		if err != nil {
			return nil, err
		}
		if want := max(g.N(), 0); len(r.BytesPerRound) != r.Rounds && want > 0 && r.Rounds > 0 {
			return nil, fmt.Errorf("%d byte counts for %d rounds", len(r.BytesPerRound), r.Rounds)
		}
		return &r.Result, nil
	}
}

// hashPartition scatters vertices over k parts: the worst case for
// communication, every part a neighbour of every other.
func partHashed(n, k int, seed uint64) []int32 {
	p := make([]int32, n)
	for v := range p {
		p[v] = int32(mis.Hash32(int32(v), seed) % uint32(k))
	}
	return p
}

func TestPartitionedContract(t *testing.T) {
	ks, hs := []int{1, 2, 3, 4, 7}, []int{2, 5}
	if testing.Short() {
		ks, hs = []int{1, 4}, []int{3}
	}
	for _, k := range ks {
		t.Run(fmt.Sprintf("contiguous-%d", k), func(t *testing.T) { mistest.Run(t, partBackend(k, false)) })
	}
	for _, k := range hs {
		t.Run(fmt.Sprintf("hashed-%d", k), func(t *testing.T) { mistest.Run(t, partBackend(k, true)) })
	}
}

// The parts run the phases of Parallel with exact halo states, so they
// need exactly as many rounds as Parallel, for any number of parts.
func TestPartitionedRoundsMatchParallel(t *testing.T) {
	graphs := map[string]*mesh.Graph{
		"grid": partGrid7(14, 13, 12),
		"ring": partRing(3001),
	}
	for name, g := range graphs {
		for _, dist := range []int{1, 2} {
			p := mis.Priority{Kind: mis.Hash, Seed: 42}
			keys, _ := mis.Keys(g, p)
			want := mistest.Parallel(t, g, keys, dist, 1)
			for _, k := range []int{1, 2, 5, 8} {
				r, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Distance: dist, Priority: p, Parts: k})
				if err != nil {
					t.Fatal(err)
				}
				if r.Rounds != want.Rounds {
					t.Errorf("%s d%d k=%d: %d rounds, Parallel takes %d", name, dist, k, r.Rounds, want.Rounds)
				}
				if len(r.BytesPerRound) != r.Rounds {
					t.Errorf("%s d%d k=%d: %d byte counts for %d rounds", name, dist, k, len(r.BytesPerRound), r.Rounds)
				}
				if k == 1 && r.Bytes() != 0 {
					t.Errorf("%s d%d: one part sent %d bytes", name, dist, r.Bytes())
				}
			}
		}
	}
}

// In distance 1 every state change of a shared vertex is sent once to
// each part that keeps it as a ghost, and nothing else is: so the bytes
// lie between one and five per copy, plus two per message (header and
// count, small here).
func TestPartitionedBytesAreStateChanges(t *testing.T) {
	g := partGrid7(20, 20, 20)
	for _, k := range []int{2, 4, 7} {
		locs, err := mis.SplitGraph(g, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		var copies int64
		for q := range locs {
			copies += int64(partHaloCopies(g, locs[q].Ranges, q))
		}
		r, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Parts: k})
		if err != nil {
			t.Fatal(err)
		}
		payload := r.Bytes() - 2*r.Messages
		if payload < copies || payload > 5*copies {
			t.Errorf("k=%d: %d payload bytes for %d halo copies", k, payload, copies)
		}
		if r.SetupBytes < copies {
			t.Errorf("k=%d: setup sent %d bytes for %d halo copies", k, r.SetupBytes, copies)
		}
	}
}

// haloCopies counts pairs (v, q) with v owned by part p and q ≠ p a part
// that owns a neighbour of v.
func partHaloCopies(g *mesh.Graph, ranges []int32, p int) int {
	owner := func(v int32) int {
		for q := 0; q+1 < len(ranges); q++ {
			if v < ranges[q+1] {
				return q
			}
		}
		return -1
	}
	n := 0
	for v := ranges[p]; v < ranges[p+1]; v++ {
		seen := map[int]bool{}
		for _, u := range g.Neighbors(v) {
			if q := owner(u); q != p && !seen[q] {
				seen[q] = true
				n++
			}
		}
	}
	return n
}

// Graphs with boundary classes: the keys take the class from Local.Class
// on each part, as from Graph.Class on the whole graph.
func TestPartitionedBoundaryClasses(t *testing.T) {
	g := partGrid7(11, 9, 7)
	g.Class = partClasses(11, 9, 7)
	p := mis.Priority{Kind: mis.Boundary, Seed: 3}
	for _, dist := range []int{1, 2} {
		for _, k := range []int{2, 3} {
			if err := mistest.Check(g, p, dist, partBackend(k, false)); err != nil {
				t.Errorf("d%d k=%d: %v", dist, k, err)
			}
			if err := mistest.Check(g, p, dist, partBackend(k, true)); err != nil {
				t.Errorf("hashed d%d k=%d: %v", dist, k, err)
			}
		}
	}
}

func TestParsePartMode(t *testing.T) {
	for _, m := range []mis.PartMode{mis.Exact, mis.ADMMA} {
		got, err := mis.ParsePartMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParsePartMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := mis.ParsePartMode("luby"); err == nil {
		t.Error("ParsePartMode(luby) gave no error")
	}
}

func TestContiguousRanges(t *testing.T) {
	for _, c := range []struct{ n, k int }{{0, 1}, {1, 3}, {10, 3}, {1 << 20, 7}} {
		r := mis.ContiguousRanges(c.n, c.k)
		if len(r) != c.k+1 || r[0] != 0 || int(r[c.k]) != c.n {
			t.Fatalf("ContiguousRanges(%d,%d) = %v", c.n, c.k, r)
		}
		for q := 0; q < c.k; q++ {
			if d := int(r[q+1] - r[q]); d < c.n/c.k || d > c.n/c.k+1 {
				t.Errorf("ContiguousRanges(%d,%d): part %d has %d vertices", c.n, c.k, q, d)
			}
		}
	}
}

// partGrid7 is the 7-point grid in natural order without coordinates or
// classes, so that boundary priorities take the classes by degree.
func partGrid7(nx, ny, nz int) *mesh.Graph {
	g := mesh.Grid7Graph(nx, ny, nz)
	g.Dim, g.Coords, g.Class = 0, nil, nil
	return g
}

// gridClasses classifies grid vertices by how many coordinates sit on the
// boundary.
func partClasses(nx, ny, nz int) []mesh.Class {
	c := make([]mesh.Class, 0, nx*ny*nz)
	on := func(i, n int) int {
		if i == 0 || i == n-1 {
			return 1
		}
		return 0
	}
	for k := range nz {
		for j := range ny {
			for i := range nx {
				c = append(c, mesh.Class(on(i, nx)+on(j, ny)+on(k, nz)))
			}
		}
	}
	return c
}

func partRing(n int) *mesh.Graph {
	b := mesh.NewBuilder(n)
	for v := range n {
		b.Add(int32(v), int32((v+1)%n))
	}
	return b.Graph()
}

// Every member holds the whole graph, keeps its own part and gets the
// whole set back: the mpirun path of a command.
func TestComputeReplicated(t *testing.T) {
	g := partGrid7(9, 8, 7)
	for _, k := range []int{1, 3} {
		for _, part := range [][]int32{nil, partHashed(g.N(), k, 1)} {
			for _, p := range []mis.Priority{{Kind: mis.Hash}, {Kind: mis.User, Values: partUserValues(g.N())}} {
				keys, _ := mis.Keys(g, p)
				want := mistest.Greedy(t, g, keys, 2)
				grp, _ := mis.NewLocalGroup(k, 0)
				res := make([]*mis.PartResult, k)
				errs := make([]error, k)
				var wg sync.WaitGroup
				for q := range k {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res[q], errs[q] = mis.ComputeReplicated(context.Background(), grp.Member(q), g, mis.PartOptions{Distance: 2, Priority: p, Partition: part})
					}()
				}
				wg.Wait()
				grp.Close()
				for q := range k {
					if errs[q] != nil {
						t.Fatalf("k=%d member %d: %v", k, q, errs[q])
					}
					if !slices.Equal(res[q].In, want.In) || res[q].Size != want.Size {
						t.Errorf("k=%d member %d (%v, partition %v): set differs from the greedy one", k, q, p.Kind, part != nil)
					}
				}
			}
		}
	}
}

func partUserValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i%7) * 0.5
	}
	return v
}

func TestSplitPartMatchesSplitGraph(t *testing.T) {
	g := partGrid7(5, 4, 3)
	g.Class = partClasses(5, 4, 3)
	for _, part := range [][]int32{nil, partHashed(g.N(), 4, 3)} {
		all, err := mis.SplitGraph(g, 4, part)
		if err != nil {
			t.Fatal(err)
		}
		for q := range 4 {
			one, err := mis.SplitPart(g, 4, q, part)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(one, all[q]) {
				t.Errorf("part %d (partition %v): SplitPart differs from SplitGraph", q, part != nil)
			}
		}
	}
	if _, err := mis.SplitPart(g, 4, 4, nil); err == nil {
		t.Error("SplitPart of part 4 of 4 gave no error")
	}
	if _, err := mis.SplitGraph(g, 2, make([]int32, 3)); err == nil {
		t.Error("short partition gave no error")
	}
}

func TestComputeReplicatedDifferentGraphs(t *testing.T) {
	grp, _ := mis.NewLocalGroup(2, 0)
	defer grp.Close()
	graphs := []*mesh.Graph{partRing(10), partRing(11)}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for q := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[q] = mis.ComputeReplicated(context.Background(), grp.Member(q), graphs[q], mis.PartOptions{})
		}()
	}
	wg.Wait()
	for q, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "10 to 11 vertices") {
			t.Errorf("member %d: %v", q, err)
		}
	}
}
