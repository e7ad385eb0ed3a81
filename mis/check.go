package mis

import (
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/mesh"
)

// checkRun checks the arguments of a run on keys: a graph whose structure
// can be indexed, one key per vertex, and a supported distance.
func checkRun(who string, g *mesh.Graph, keys []uint64, dist int) error {
	if g == nil {
		return fmt.Errorf("mis: %s: nil graph", who)
	}
	if dist != 1 && dist != 2 {
		return fmt.Errorf("mis: %s: distance %d not supported (want 1 or 2)", who, dist)
	}
	if len(keys) != g.N() {
		return fmt.Errorf("mis: %s: %d keys for %d vertices", who, len(keys), g.N())
	}
	if err := g.ValidateStructure(); err != nil {
		return fmt.Errorf("mis: %s: %w", who, err)
	}
	return nil
}

// errNilAggregates is returned for a nil *Aggregates.
var errNilAggregates = errors.New("mis: nil aggregates")
