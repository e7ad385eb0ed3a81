package mis_test

import (
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Exported functions return errors for bad arguments where they used to
// panic or, for Greedy with short keys, return a set that is not maximal
// (issue 21, item 12).
func TestBadArgumentsAreErrors(t *testing.T) {
	g := mesh.Grid7Graph(4, 3, 2)
	keys, err := mis.Keys(g, mis.Priority{})
	if err != nil {
		t.Fatal(err)
	}
	broken := &mesh.Graph{Offsets: []int64{0, 1, 2}, Adj: []int32{1, 7}}
	short := keys[:g.N()-1]
	agg := &mis.Aggregates{Of: make([]int32, g.N()), Roots: []int32{0}, N: 1}
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"Parallel short keys", func() error { _, err := mis.Parallel(g, short, 1, 2); return err }, "23 keys for 24 vertices"},
		{"Greedy short keys", func() error { _, err := mis.Greedy(g, short, 1); return err }, "23 keys for 24 vertices"},
		{"Greedy long keys", func() error { _, err := mis.Greedy(g, append(keys, 1), 2); return err }, "25 keys"},
		{"Greedy distance", func() error { _, err := mis.Greedy(g, keys, 3); return err }, "distance 3"},
		{"Parallel distance", func() error { _, err := mis.Parallel(g, keys, 0, 1); return err }, "distance 0"},
		{"Greedy nil graph", func() error { _, err := mis.Greedy(nil, nil, 1); return err }, "nil graph"},
		{"Parallel broken graph", func() error { _, err := mis.Parallel(broken, []uint64{1, 2}, 1, 1); return err }, "Adj[1] = 7 out of range"},
		{"Greedy broken graph", func() error { _, err := mis.Greedy(broken, []uint64{1, 2}, 2); return err }, "out of range"},
		{"Compute broken graph", func() error { _, err := mis.Compute(broken, mis.Options{Device: mis.CPU}); return err }, "out of range"},
		{"Color broken graph", func() error { _, err := mis.Color(broken, mis.Options{}); return err }, "out of range"},
		{"Verify broken graph", func() error { return mis.Verify(broken, []bool{true, false}, 1) }, "out of range"},
		{"Aggregate broken graph", func() error { _, err := mis.Aggregate(broken, []bool{true, false}); return err }, "out of range"},
		{"Keys nil graph", func() error { _, err := mis.Keys(nil, mis.Priority{Kind: mis.Boundary}); return err }, "nil graph"},
		{"Primaries nil graph", func() error { _, err := mis.Primaries(nil, mis.Priority{Kind: mis.Degree}); return err }, "nil graph"},
		{"CoarseGraph nil aggregates", func() error { _, err := mis.CoarseGraph(g, nil); return err }, "nil aggregates"},
		{"CoarseGraph nil graph", func() error { _, err := mis.CoarseGraph(nil, agg); return err }, "nil graph"},
		{"CoarseGraph short", func() error {
			_, err := mis.CoarseGraph(g, &mis.Aggregates{Of: []int32{0}, Roots: []int32{0}, N: 1})
			return err
		}, "1 aggregate ids for 24 vertices"},
		{"CoarseGraph id range", func() error {
			bad := &mis.Aggregates{Of: make([]int32, g.N()), Roots: []int32{0}, N: 1}
			bad.Of[5] = 3
			_, err := mis.CoarseGraph(g, bad)
			return err
		}, "vertex 5 is in aggregate 3"},
		{"CoarseGraph root range", func() error {
			_, err := mis.CoarseGraph(g, &mis.Aggregates{Of: make([]int32, g.N()), Roots: []int32{99}, N: 1})
			return err
		}, "root 99"},
	}
	for _, c := range cases {
		err := c.call()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if c, err := mis.CoarseGraph(g, agg); err != nil || c.N() != 1 {
		t.Errorf("CoarseGraph with one aggregate: %v, %v", c, err)
	}
}
