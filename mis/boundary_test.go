package mis_test

import (
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// TestBoundaryPriorityKeepsCorners: with Boundary priority, every geometric
// corner of a generated mesh is in the distance-1 MIS, in natural and in
// relabelled order. Corners are never adjacent on these meshes, and they
// outrank every other class, so the greedy takes each before a neighbour
// could block it; a backend or classification bug shows here.
func TestBoundaryPriorityKeepsCorners(t *testing.T) {
	meshes := []struct {
		name    string
		m       *mesh.Mesh
		corners int
	}{
		{"quad-5x7", mesh.StructuredQuad(5, 7), 4},
		{"tri-6x4", mesh.StructuredTri(6, 4), 4},
		{"hex-5x4x6", mesh.StructuredHex(5, 4, 6), 8},
		{"tet-4x5x3", mesh.StructuredTet(4, 5, 3), 8},
		{"hex-9", mesh.StructuredHex(9, 9, 9), 8},
	}
	for _, tc := range meshes {
		g, err := mesh.FromElements(tc.m, mesh.ElementOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g.Class, err = mesh.Classify(tc.m, mesh.ClassifyOptions{}); err != nil {
			t.Fatal(err)
		}
		r, _ := mesh.Relabel(g, 42)
		for _, order := range []struct {
			name string
			g    *mesh.Graph
		}{{"natural", g}, {"relabelled", r}} {
			for _, seed := range []uint64{0, 1, 99} {
				name := fmt.Sprintf("%s/%s/seed%d", tc.name, order.name, seed)
				res, err := mis.Compute(order.g, mis.Options{Priority: mis.Priority{Kind: mis.Boundary, Seed: seed}, Device: mis.CPU})
				if err != nil {
					t.Fatal(err)
				}
				found := 0
				for v, c := range order.g.Class {
					if c != mesh.Corner {
						continue
					}
					found++
					if !res.In[v] {
						t.Errorf("%s: corner vertex %d (coords %v) is not in the MIS", name, v, order.g.Coords[v*order.g.Dim:(v+1)*order.g.Dim])
					}
				}
				if found != tc.corners {
					t.Errorf("%s: %d corner vertices classified, want %d", name, found, tc.corners)
				}
			}
		}
	}
}
