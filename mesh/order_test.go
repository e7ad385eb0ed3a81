package mesh

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func checkPerm(t interface {
	Helper()
	Fatalf(string, ...any)
}, perm []int32, n int) {
	t.Helper()
	if len(perm) != n {
		t.Fatalf("len(perm) = %d, want %d", len(perm), n)
	}
	seen := make([]bool, n)
	for i, p := range perm {
		if p < 0 || int(p) >= n || seen[p] {
			t.Fatalf("perm[%d] = %d out of range or repeated", i, p)
		}
		seen[p] = true
	}
}

func TestBandwidth(t *testing.T) {
	tests := []struct {
		edges []Pair
		n     int
		want  int
	}{
		{nil, 0, 0},
		{nil, 3, 0},
		{[]Pair{{0, 1}, {1, 2}}, 3, 1},
		{[]Pair{{0, 4}, {1, 2}}, 5, 4},
		{[]Pair{{3, 1}}, 4, 2},
	}
	for _, tc := range tests {
		g, err := FromEdges(tc.n, tc.edges)
		if err != nil {
			t.Fatal(err)
		}
		if got := Bandwidth(g); got != tc.want {
			t.Errorf("Bandwidth(%v) = %d, want %d", tc.edges, got, tc.want)
		}
	}
	if got := Bandwidth(Hex27Graph(5, 6, 7)); got != 5*6+5+1 {
		t.Errorf("hex 5×6×7 bandwidth %d, want %d", got, 5*6+5+1)
	}
}

func TestRCMReducesBandwidth(t *testing.T) {
	tests := []struct {
		name string
		g    *Graph
	}{
		{"hex27 10x8x6", Hex27Graph(10, 8, 6)},
		{"grid7 12x12x12", Grid7Graph(12, 12, 12)},
		{"tri 30x20", mustElements(t, StructuredTri(30, 20))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			natural := Bandwidth(tc.g)
			rg, _ := Relabel(tc.g, 11)
			random := Bandwidth(rg)
			perm := RCM(rg)
			checkPerm(t, perm, rg.N())
			h, err := rg.Permute(perm)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
			got := Bandwidth(h)
			// RCM must undo the relabelling: back to about the
			// natural bandwidth, far below the random one.
			if got > natural*3/2 || got*4 > random {
				t.Fatalf("RCM bandwidth %d; natural %d, relabelled %d", got, natural, random)
			}
			if !slices.Equal(perm, RCM(rg)) {
				t.Fatal("RCM is not deterministic")
			}
		})
	}
}

func mustElements(t testing.TB, m *Mesh) *Graph {
	g, err := FromElements(m, ElementOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRCMPathAndComponents(t *testing.T) {
	// A path 0-1-...-9 under a random labelling goes back to bandwidth 1,
	// and separate components (with isolated vertices) stay valid.
	var edges []Pair
	for i := range 9 {
		edges = append(edges, Pair{int32(i), int32(i + 1)})
	}
	edges = append(edges, Pair{12, 13}, Pair{13, 14}, Pair{14, 12})
	g, err := FromEdges(16, edges)
	if err != nil {
		t.Fatal(err)
	}
	rg, _ := Relabel(g, 5)
	perm := RCM(rg)
	checkPerm(t, perm, 16)
	h, _ := rg.Permute(perm)
	if bw := Bandwidth(h); bw != 2 { // the path gives 1, the triangle 2
		t.Fatalf("bandwidth %d after RCM, want 2", bw)
	}
	if got := RCM(&Graph{}); len(got) != 0 {
		t.Fatalf("RCM of an empty graph: %v", got)
	}
}

func TestHilbertKeyIsACurve(t *testing.T) {
	for _, dim := range []int{2, 3} {
		const b = 3
		side := 1 << b
		total := 1
		for range dim {
			total *= side
		}
		byKey := make([][3]int, total)
		seen := make([]bool, total)
		for c := range total {
			var x [3]uint64
			r := c
			for a := range dim {
				x[a] = uint64(r % side)
				r /= side
			}
			p := [3]int{int(x[0]), int(x[1]), int(x[2])}
			k := hilbertKey(x[:dim], b)
			if k >= uint64(total) || seen[k] {
				t.Fatalf("dim %d: point %v has key %d, out of range or repeated", dim, p, k)
			}
			seen[k] = true
			byKey[k] = p
		}
		for k := 1; k < total; k++ {
			d := 0
			for a := range 3 {
				d += max(byKey[k][a]-byKey[k-1][a], byKey[k-1][a]-byKey[k][a])
			}
			if d != 1 {
				t.Fatalf("dim %d: keys %d and %d are at %v and %v, not neighbours", dim, k-1, k, byKey[k-1], byKey[k])
			}
		}
	}
}

func TestRadixSortByKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOf(rapid.Uint64()).Draw(t, "keys")
		if rapid.Bool().Draw(t, "narrow") {
			for i := range keys {
				keys[i] &= 0xf000_0000_00ff
			}
		}
		ids := make([]int32, len(keys))
		for i := range ids {
			ids[i] = int32(i)
		}
		want := slices.Clone(ids)
		slices.SortStableFunc(want, func(a, b int32) int {
			switch {
			case keys[a] < keys[b]:
				return -1
			case keys[a] > keys[b]:
				return 1
			}
			return 0
		})
		orig := slices.Clone(keys)
		radixSortByKey(keys, ids)
		if !slices.Equal(ids, want) {
			t.Fatalf("ids %v, want %v", ids, want)
		}
		for i, id := range ids {
			if keys[i] != orig[id] {
				t.Fatalf("key %d moved apart from its id", i)
			}
		}
	})
}

// meanLogGap is the mean of log2(1+|u−v|) over the edges: small when
// neighbours share cache lines, about log2(n) for a random order.
func meanLogGap(g *Graph) float64 {
	s := 0.0
	for v := range g.N() {
		for _, u := range g.Neighbors(int32(v)) {
			s += math.Log2(1 + math.Abs(float64(int(u)-v)))
		}
	}
	return s / float64(g.NumEdges())
}

func TestLocalityOrder(t *testing.T) {
	noCoords := func(g *Graph) *Graph {
		return &Graph{Offsets: g.Offsets, Adj: g.Adj}
	}
	tests := []struct {
		name string
		g    *Graph
	}{
		{"hex27 16³ hilbert", Hex27Graph(16, 16, 16)},
		{"tet 12³ hilbert", mustElements(t, StructuredTet(12, 12, 12))},
		{"quad 40x30 hilbert", mustElements(t, StructuredQuad(40, 30))},
		{"hex27 16³ bisection", noCoords(Hex27Graph(16, 16, 16))},
		{"grid7 20³ bisection", noCoords(Grid7Graph(20, 20, 20))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rg, _ := Relabel(tc.g, 3)
			perm := LocalityOrder(rg)
			checkPerm(t, perm, rg.N())
			h, err := rg.Permute(perm)
			if err != nil {
				t.Fatal(err)
			}
			random, got, natural := meanLogGap(rg), meanLogGap(h), meanLogGap(tc.g)
			// Measured: the order recovers about natural locality
			// (within 1.5 bits) from random (about log2 n), which is
			// 3 bits (8×) or more worse.
			t.Logf("mean log2 gap %.2f; natural %.2f, random %.2f", got, natural, random)
			if got > natural+1.5 || got > random-3 {
				t.Fatalf("mean log2 gap %.2f; natural %.2f, random %.2f", got, natural, random)
			}
			if !slices.Equal(perm, LocalityOrder(rg)) {
				t.Fatal("LocalityOrder is not deterministic")
			}
		})
	}
	if got := LocalityOrder(&Graph{}); len(got) != 0 {
		t.Fatalf("LocalityOrder of an empty graph: %v", got)
	}
}

// neighbourSum is the access pattern the orderings are for: every vertex
// reads a value of each neighbour.
func neighbourSum(g *Graph, x []float64) float64 {
	s := 0.0
	for v := range g.N() {
		for _, u := range g.Neighbors(int32(v)) {
			s += x[u]
		}
	}
	return s
}

func BenchmarkNeighbourSum(b *testing.B) {
	base := Hex27Graph(96, 96, 96)
	random, _ := Relabel(base, 1)
	for _, order := range []string{"natural", "random", "rcm", "locality"} {
		g := base
		switch order {
		case "random":
			g = random
		case "rcm":
			g, _ = random.Permute(RCM(random))
		case "locality":
			g, _ = random.Permute(LocalityOrder(random))
		}
		x := make([]float64, g.N())
		b.Run(order, func(b *testing.B) {
			b.SetBytes(g.NumEdges() * 4)
			for b.Loop() {
				neighbourSum(g, x)
			}
		})
	}
}

func BenchmarkRCMHex64(b *testing.B) {
	g, _ := Relabel(Hex27Graph(64, 64, 64), 1)
	for b.Loop() {
		RCM(g)
	}
}

func TestOrdersArePermutations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(t, "n")
		var edges []Pair
		if n > 0 {
			// Sparse enough to leave isolated vertices and several components.
			edges = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Pair {
				return Pair{int32(rapid.IntRange(0, n-1).Draw(t, "u")), int32(rapid.IntRange(0, n-1).Draw(t, "v"))}
			}), 0, 2*n).Draw(t, "edges")
		}
		g, err := FromEdges(n, edges)
		if err != nil {
			t.Fatal(err)
		}
		for name, order := range map[string]func(*Graph) []int32{"RCM": RCM, "LocalityOrder": LocalityOrder} {
			perm := order(g)
			checkPerm(t, perm, n)
			prev := runtime.GOMAXPROCS(1)
			serial := order(g)
			runtime.GOMAXPROCS(prev)
			if !slices.Equal(perm, serial) {
				t.Fatalf("%s differs with one thread", name)
			}
		}
	})
}
