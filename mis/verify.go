package mis

import (
	"fmt"

	"github.com/misgrid/misgrid/mesh"
)

// VerifyError names the vertex that breaks independence or maximality.
type VerifyError struct {
	Vertex int32  // the offending vertex
	Other  int32  // the conflicting set member, or -1
	Msg    string // what is wrong
}

func (e *VerifyError) Error() string {
	if e.Other >= 0 {
		return fmt.Sprintf("mis: vertex %d: %s (vertex %d)", e.Vertex, e.Msg, e.Other)
	}
	return fmt.Sprintf("mis: vertex %d: %s", e.Vertex, e.Msg)
}

// Verify checks that in marks a maximal independent set of g at distance
// dist (1 or 2): no two members within dist of each other, and every
// non-member within dist of a member. It reports the first violation.
func Verify(g *mesh.Graph, in []bool, dist int) error {
	if err := g.ValidateStructure(); err != nil {
		return fmt.Errorf("mis: verify: %w", err)
	}
	n := g.N()
	if len(in) != n {
		return fmt.Errorf("mis: verify: set has %d flags for %d vertices", len(in), n)
	}
	if dist != 1 && dist != 2 {
		return fmt.Errorf("mis: verify: distance %d not supported", dist)
	}
	// covered[v] = a member within dist of v (or v itself), or -1.
	covered := make([]int32, n)
	for i := range covered {
		covered[i] = -1
	}
	for v := int32(0); int(v) < n; v++ {
		if !in[v] {
			continue
		}
		covered[v] = v
		for _, u := range g.Neighbors(v) {
			if in[u] {
				return &VerifyError{Vertex: v, Other: u, Msg: "member has a member neighbour"}
			}
			covered[u] = v
			if dist == 2 {
				for _, w := range g.Neighbors(u) {
					if w != v && in[w] {
						return &VerifyError{Vertex: v, Other: w, Msg: "member is at distance 2 from another member"}
					}
					covered[w] = v
				}
			}
		}
	}
	for v := range covered {
		if covered[v] < 0 {
			return &VerifyError{Vertex: int32(v), Other: -1, Msg: fmt.Sprintf("not in the set and no member within distance %d: set is not maximal", dist)}
		}
	}
	return nil
}
