package mis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// windowCase is a graph of two ranges, [0,20) and [20,40), each a path,
// joined by the cross edges.
func windowCase(t *testing.T, cross []mesh.Pair) *mesh.Graph {
	var edges []mesh.Pair
	for v := int32(0); v < 39; v++ {
		if v != 19 {
			edges = append(edges, mesh.Pair{U: v, V: v + 1})
		}
	}
	g, err := mesh.FromEdges(40, append(edges, cross...))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGhostWindows checks the rule that gives a neighbour's ghosts a
// window on both of its sides, and that the kernels' global ids and
// homes (PartSpec.GlobalID, HomeOf) and the driver's model give the
// greedy set with windows as with every ghost in the tables: ghosts
// {20,22,24} of part 0 take a window of 5 ids with 2 holes, {0,1,2} of
// part 1 one of 3, and {20,30,39} (20 ids for 3 ghosts) and {0,9,19} stay
// in the tables.
func TestGhostWindows(t *testing.T) {
	for _, c := range []struct {
		name  string
		cross []mesh.Pair
		lens  [2][]int // at distance 1, the windows' lengths of each part
	}{
		{"dense", []mesh.Pair{{U: 0, V: 20}, {U: 1, V: 22}, {U: 2, V: 24}}, [2][]int{{5}, {3}}},
		{"sparse", []mesh.Pair{{U: 0, V: 20}, {U: 9, V: 30}, {U: 19, V: 39}}, [2][]int{nil, nil}},
	} {
		g := windowCase(t, c.cross)
		for _, dist := range []int{1, 2} {
			keys, _ := Keys(g, Priority{Kind: Degree, Seed: 1<<40 | 9})
			want := greedy(g, keys, dist)
			for _, windows := range []int{misgpu.MaxWindows, 0} {
				name := fmt.Sprintf("%s/d%d/windows%d", c.name, dist, windows)
				ps, err := layoutParts(g, 2, nil, keys, dist, nil, windows)
				if err != nil {
					t.Fatal(err)
				}
				checkLayout(t, name, g, ps, dist, keys)
				for q, p := range ps {
					var lens []int
					for _, w := range p.spec.Windows {
						lens = append(lens, w.Len)
					}
					if dist == 1 && windows > 0 && !slices.Equal(lens, c.lens[q]) {
						t.Errorf("%s part %d: windows of %v ids, want %v", name, q, lens, c.lens[q])
					}
					if windows == 0 && len(lens) > 0 {
						t.Errorf("%s part %d: windows where none may be", name, q)
					}
				}
				for mode := range 3 {
					m := &partModel{ps: ps, dist: dist, keys: keys, rng: rand.New(rand.NewPCG(uint64(mode), 7)),
						returns: mode > 0, immediate: mode == 2}
					in := m.run(t)
					for v, w := range want.In {
						if in[int32(v)] != w {
							t.Fatalf("%s mode %d: vertex %d in=%v, greedy says %v", name, mode, v, in[int32(v)], w)
						}
					}
				}
			}
		}
	}
}

// TestGhostWindowRule: on the test graphs in five ranges, every window
// holds at least half ghosts and only its owner's ids, and a neighbour
// whose ghosts are in the tables has them spread over more than twice
// their number of ids, or its part has all the windows it may; each of
// the three happens (windows with holes, sparse ghosts, the cap).
func TestGhostWindowRule(t *testing.T) {
	var holes, sparse, capped int
	for _, c := range mgpuGraphs() {
		keys, _ := Keys(c.g, Priority{Seed: 3})
		for _, dist := range []int{1, 2} {
			ps, err := layoutParts(c.g, 5, nil, keys, dist, nil, misgpu.MaxWindows)
			if err != nil {
				t.Fatal(err)
			}
			r := ContiguousRanges(c.g.N(), 5)
			ownerOf := func(v int32) int {
				q, _ := slices.BinarySearch(r, v+1)
				return q - 1
			}
			for q, p := range ps {
				name := fmt.Sprintf("%s/d%d part %d", c.name, dist, q)
				s := &p.spec
				windowed := map[int]bool{}
				for _, w := range s.Windows {
					n := 0
					for _, u := range p.global[w.From : w.From+w.Len] {
						if u >= 0 {
							n++
						}
					}
					first, last := int32(w.First), int32(w.First)+int32(w.Len)-1
					if 2*n < w.Len || ownerOf(first) != w.Owner || ownerOf(last) != w.Owner || int32(r[w.Owner])+int32(w.OwnerLocal) != first {
						t.Fatalf("%s: window %+v holds %d ghosts", name, w, n)
					}
					windowed[w.Owner] = true
					if n < w.Len {
						holes++
					}
				}
				tabled := map[int][]int32{}
				for _, u := range p.global[s.WindowsEnd():] {
					tabled[ownerOf(u)] = append(tabled[ownerOf(u)], u)
				}
				for o, us := range tabled {
					span := int(slices.Max(us)-slices.Min(us)) + 1
					switch {
					case windowed[o]:
						t.Fatalf("%s: ghosts of part %d both in a window and in the tables", name, o)
					case span > 2*len(us):
						sparse++
					case len(s.Windows) == misgpu.MaxWindows:
						capped++
					default:
						t.Fatalf("%s: %d ghosts of part %d over %d ids in the tables", name, len(us), o, span)
					}
				}
			}
		}
	}
	if holes == 0 || sparse == 0 || capped == 0 {
		t.Errorf("windows with holes %d, neighbours with sparse ghosts %d, neighbours past the cap %d: each should happen", holes, sparse, capped)
	}
}
