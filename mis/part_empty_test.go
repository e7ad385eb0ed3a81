package mis

import (
	"context"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// A partition with an empty part gives the whole graph's set with the zero
// options (boundary priority), with classes and without: the empty part
// has no classes to give and follows the others.
func TestPartitionedEmptyPartBoundary(t *testing.T) {
	for _, classes := range []bool{true, false} {
		g := mesh.Hex27Graph(6, 6, 6)
		if !classes {
			g.Class = nil
		}
		part := make([]int32, g.N())
		for v := range part {
			if v >= g.N()/2 {
				part[v] = 2 // part 1 holds no vertex
			}
		}
		want, err := Compute(g, Options{Device: CPU})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ComputePartitioned(context.Background(), g, PartOptions{Partition: part})
		if err != nil {
			t.Fatalf("classes %v: %v", classes, err)
		}
		if !slices.Equal(got.In, want.In) {
			t.Errorf("classes %v: the partitioned set differs from Compute's", classes)
		}
	}
}
