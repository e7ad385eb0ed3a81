package mis

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// The hierarchy built on the GPU is the host's, level by level: the same
// graphs (with the roots' coordinates, classes and Dirichlet flags), the
// same sets and the same aggregates, for every priority and distance.
func TestGPUHierarchyMatchesCPU(t *testing.T) {
	needGPU(t)
	hex := mesh.Hex27Graph(20, 20, 20) // classes and coordinates
	bare := mesh.RandomGraph(30000, 12, 5)
	relabelled, _ := mesh.Relabel(mesh.Hex27Graph(16, 16, 16), 3)
	fixed := *hex
	fixed.Dirichlet = make([]bool, hex.N())
	for v := range fixed.Dirichlet {
		fixed.Dirichlet[v] = v%13 == 0
	}
	user := make([]float64, bare.N())
	for v := range user {
		user[v] = float64(v % 97)
	}
	for _, c := range []struct {
		name string
		g    *mesh.Graph
		p    Priority
	}{
		{"hex27-20 boundary", hex, Priority{}},
		{"hex27-20 hash", hex, Priority{Kind: Hash, Seed: 7}},
		{"hex27-20 Dirichlet flags", &fixed, Priority{}},
		{"hex27-16 relabelled degree", relabelled, Priority{Kind: Degree}},
		{"random boundary by degree", bare, Priority{}},
		{"random user", bare, Priority{Kind: User, Values: user}},
	} {
		for _, dist := range []int{1, 2} {
			name := fmt.Sprintf("%s d%d", c.name, dist)
			o := HierarchyOptions{Distance: dist, Priority: c.p, MinVertices: 8, Device: CPU}
			want, err := Hierarchy(c.g, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Device = GPU
			got, err := Hierarchy(c.g, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := sameLevels(got, want); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func sameLevels(got, want []Level) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d levels, the host has %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !slices.Equal(g.Graph.Offsets, w.Graph.Offsets) || !slices.Equal(g.Graph.Adj, w.Graph.Adj) ||
			!slices.Equal(g.Graph.Class, w.Graph.Class) || !slices.Equal(g.Graph.Coords, w.Graph.Coords) ||
			!slices.Equal(g.Graph.Dirichlet, w.Graph.Dirichlet) {
			return fmt.Errorf("level %d: the graph differs", i)
		}
		if !slices.Equal(g.Set.In, w.Set.In) || g.Set.Size != w.Set.Size {
			return fmt.Errorf("level %d: the set differs (%d members, host %d)", i, g.Set.Size, w.Set.Size)
		}
		if (g.Agg == nil) != (w.Agg == nil) {
			return errors.New("aggregates on one side only")
		}
		if g.Agg != nil && (!slices.Equal(g.Agg.Of, w.Agg.Of) || !slices.Equal(g.Agg.Roots, w.Agg.Roots) || g.Agg.N != w.Agg.N) {
			return fmt.Errorf("level %d: the aggregates differ", i)
		}
	}
	return nil
}
