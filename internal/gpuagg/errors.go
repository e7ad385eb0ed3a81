package gpuagg

import "fmt"

// SetError says why a set cannot be aggregated. Its text is exactly
// mis.Aggregate's (distance 2) or the distance-1 aggregation's for the
// same set, and it names the same vertex: the first one the host's
// sequential pass would stop at.
type SetError struct {
	Vertex int32
	// Roots, for a set that is not distance-2 independent: the root that
	// holds Vertex first and the root that meets it next.
	Roots    [2]int32
	Conflict bool // not distance-2 independent; else not maximal
	Distance int
}

func (e *SetError) Error() string {
	switch {
	case e.Conflict:
		return fmt.Sprintf("mis: aggregate: vertex %d is next to roots %d and %d: the set is not a distance-2 independent set", e.Vertex, e.Roots[0], e.Roots[1])
	case e.Distance == 1:
		return fmt.Sprintf("mis: aggregate: vertex %d has no member neighbour: the set is not maximal", e.Vertex)
	}
	return fmt.Sprintf("mis: aggregate: vertex %d has no root within distance 2: the set is not maximal", e.Vertex)
}

const none = ^uint64(0)

// setError turns a level's two error words into the host's error.
// conflict is the smallest (root index, row position) key where a root
// met a vertex already held (distance 2 only), unassigned the smallest
// vertex left without an aggregate; look reads the few device words
// needed to name the vertex and the roots.
func setError(conflict, unassigned uint64, dist int, look lookup) error {
	if conflict != none {
		a, pos := int32(conflict>>32), int64(conflict&0xffffffff)
		r, err := look.root(a)
		if err != nil {
			return err
		}
		u, err := look.neighbour(r, pos)
		if err != nil {
			return err
		}
		holder := u
		if in, err := look.member(u); err != nil {
			return err
		} else if !in {
			// Not a root: the first root to claim u is its smallest
			// adjacent one, which phase one kept.
			b, err := look.phaseOne(u)
			if err != nil {
				return err
			}
			if holder, err = look.root(b); err != nil {
				return err
			}
		}
		return &SetError{Vertex: u, Roots: [2]int32{holder, r}, Conflict: true, Distance: dist}
	}
	if unassigned != none {
		return &SetError{Vertex: int32(unassigned), Distance: dist}
	}
	return nil
}

// lookup reads single values of a level that an error message needs.
type lookup interface {
	root(a int32) (int32, error)
	neighbour(v int32, pos int64) (int32, error)
	member(v int32) (bool, error)
	phaseOne(v int32) (int32, error)
}
