package mistest

import (
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Greedy returns mis.Greedy's set, failing tb on an error: the reference
// for tests whose graph and keys are known to be good.
func Greedy(tb testing.TB, g *mesh.Graph, keys []uint64, dist int) *mis.Result {
	tb.Helper()
	r, err := mis.Greedy(g, keys, dist)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Parallel is Greedy for mis.Parallel.
func Parallel(tb testing.TB, g *mesh.Graph, keys []uint64, dist, workers int) *mis.Result {
	tb.Helper()
	r, err := mis.Parallel(g, keys, dist, workers)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
