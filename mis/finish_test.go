package mis

import (
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mesh"
)

// finishGreedy completes the members of any prefix of the greedy order
// into the greedy set: what a stalled GPU run leaves is such a prefix.
func TestFinishGreedyFromPrefix(t *testing.T) {
	for name, g := range map[string]*mesh.Graph{
		"hex27-8":   mesh.Hex27Graph(8, 8, 8),
		"random-2k": mesh.RandomGraph(2000, 9, 4),
		"path-500":  testgraphs.Path(500),
	} {
		keys, err := Keys(g, Priority{Kind: Hash, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		order := Order(keys)
		for _, dist := range []int{1, 2} {
			want := greedy(g, keys, dist)
			for _, k := range []int{0, 1, g.N() / 3, g.N() - 1, g.N()} {
				in, blocked := make([]bool, g.N()), make([]bool, g.N())
				size := greedyFinish(g, order[:k], dist, in, blocked)
				size += finishGreedy(g, keys, dist, in)
				if !slices.Equal(in, want.In) || size != want.Size {
					t.Errorf("%s d%d from a prefix of %d: %d members, want %d (first difference at %d)",
						name, dist, k, size, want.Size, testgraphs.FirstDiff(in, want.In))
				}
			}
		}
	}
}

// Priorities that chain the greedy order along the graph take one sweep
// per link; the GPU stops sweeping when sweeps stop paying and the host
// finishes, with the greedy set and a bounded number of sweeps.
func TestGPUChainPriorities(t *testing.T) {
	needGPU(t)
	path := testgraphs.Path(100_000)
	rising := make([]float64, path.N())
	for v := range rising {
		rising[v] = float64(v)
	}
	grid := mesh.StructuredQuad(300, 300)
	gg, err := mesh.FromElements(grid, mesh.ElementOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tilted := make([]float64, gg.N())
	for v := range tilted {
		tilted[v] = grid.Coords[2*v] + 1e-3*grid.Coords[2*v+1]
	}
	for _, c := range []struct {
		name string
		g    *mesh.Graph
		vals []float64
	}{{"rising path", path, rising}, {"x+1e-3y quad grid", gg, tilted}} {
		for _, dist := range []int{1, 2} {
			p := Priority{Kind: User, Values: c.vals}
			keys, err := Keys(c.g, p)
			if err != nil {
				t.Fatal(err)
			}
			want := greedy(c.g, keys, dist)
			got, err := Compute(c.g, Options{Distance: dist, Priority: p, Device: GPU})
			name := fmt.Sprintf("%s d%d", c.name, dist)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if i := testgraphs.FirstDiff(got.In, want.In); i >= 0 || got.Size != want.Size {
				t.Errorf("%s: differs from the greedy set at vertex %d (%d members, want %d)", name, i, got.Size, want.Size)
			}
			if got.Backend != "gpu" || got.Rounds > 10_000 { // without the stall: one sweep per link, 50,000 on the path
				t.Errorf("%s: backend %s, %d sweeps: the stall did not stop the sweeps", name, got.Backend, got.Rounds)
			}
		}
	}
}
