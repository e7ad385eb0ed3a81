package mis

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// PriorityKind selects how vertex priorities are formed.
type PriorityKind int

const (
	// Boundary ranks corner > edge > face > interior (from Graph.Class),
	// then by hash. Graphs without classes are classified by degree
	// deficit first (mesh.ClassifyByDegree). It is the zero value: coarse
	// grids that keep the corners and edges of the domain are what misgrid
	// is for, and it works on any graph.
	Boundary PriorityKind = iota
	// Hash orders vertices by a seeded hash of their id alone: no
	// geometry, the cheapest keys.
	Hash
	// Degree puts low-degree vertices first (as ECL-MIS does), then hash.
	Degree
	// User takes Priority.Values: higher values first, then hash.
	User
)

func (k PriorityKind) String() string {
	switch k {
	case Hash:
		return "hash"
	case Boundary:
		return "boundary"
	case Degree:
		return "degree"
	case User:
		return "user"
	}
	return fmt.Sprintf("PriorityKind(%d)", int(k))
}

// ParsePriorityKind converts "hash", "boundary", "degree" or "user".
func ParsePriorityKind(s string) (PriorityKind, error) {
	for k := Boundary; k <= User; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("mis: unknown priority %q (want hash, boundary, degree or user)", s)
}

// Priority is the policy that orders vertices. The zero value is Boundary
// with seed 0.
type Priority struct {
	Kind PriorityKind
	Seed uint64
	// Values holds one value per vertex for Kind == User; higher first.
	Values []float64
}

// Hash32 is the seeded vertex hash that breaks every tie. For a fixed seed
// it is a bijection of the 32-bit id, so (primary, Hash32) never ties and
// the priority order is total without falling back to the id. Every
// backend (CPU, GPU kernels, partitioned ranks) computes exactly this.
func Hash32(v int32, seed uint64) uint32 {
	x := uint32(v) ^ uint32(seed)
	x += uint32(seed>>32) * 0x9e3779b9
	// lowbias32 (Chris Wellons): xor-shift and odd multiplies, each
	// invertible, so the whole map is a bijection.
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

// Key combines a 32-bit primary rank (higher first) with the hash.
// Keys of distinct vertices are distinct; the larger key wins.
func Key(primary uint32, v int32, seed uint64) uint64 {
	return uint64(primary)<<32 | uint64(Hash32(v, seed))
}

// Primaries returns the 32-bit primary rank of every vertex under p, or nil
// when the kind has none (Hash). Exposed so that other backends (GPU,
// partitioned) compute keys exactly as the CPU does.
func Primaries(g *mesh.Graph, p Priority) ([]uint32, error) {
	if g == nil {
		return nil, errors.New("mis: nil graph")
	}
	n := g.N()
	switch p.Kind {
	case Hash:
		return nil, nil
	case Boundary:
		cls := g.Class
		if cls == nil {
			cls = mesh.ClassifyByDegree(g)
		}
		if len(cls) != n {
			return nil, fmt.Errorf("mis: boundary priority: %d classes for %d vertices", len(cls), n)
		}
		prim := make([]uint32, n)
		for v, c := range cls {
			prim[v] = uint32(c)
		}
		return prim, nil
	case Degree:
		maxd := g.MaxDegree()
		prim := make([]uint32, n)
		for v := range prim {
			prim[v] = uint32(maxd - g.Degree(int32(v)))
		}
		return prim, nil
	case User:
		if len(p.Values) != n {
			return nil, fmt.Errorf("mis: user priority: %d values for %d vertices", len(p.Values), n)
		}
		for v, x := range p.Values {
			if math.IsNaN(x) {
				return nil, fmt.Errorf("mis: user priority: value of vertex %d is NaN", v)
			}
		}
		// Rank distinct values so any float order maps onto uint32 ranks.
		vals := slices.Clone(p.Values)
		slices.Sort(vals)
		vals = slices.Compact(vals)
		prim := make([]uint32, n)
		for v, x := range p.Values {
			r, _ := slices.BinarySearch(vals, x)
			prim[v] = uint32(r)
		}
		return prim, nil
	}
	return nil, fmt.Errorf("mis: unknown priority kind %d", int(p.Kind))
}

// Keys returns the priority key of every vertex: larger keys come first in
// the greedy order. All keys are distinct.
func Keys(g *mesh.Graph, p Priority) ([]uint64, error) {
	prim, err := Primaries(g, p)
	if err != nil {
		return nil, err
	}
	keys := make([]uint64, g.N())
	for v := range keys {
		var pr uint32
		if prim != nil {
			pr = prim[v]
		}
		keys[v] = Key(pr, int32(v), p.Seed)
	}
	return keys, nil
}
