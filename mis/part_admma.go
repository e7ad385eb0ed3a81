package mis

import (
	"cmp"
	"context"
	"slices"
)

// runADMMA is the partition-based algorithm of M. Adams, "A parallel
// maximal independent set algorithm" (1998), as this package reads it.
// Each part takes its undecided vertices serially, in a static order:
// vertices on the part boundary first, then by the priority key (the
// Boundary priority gives corner > edge > face > interior). In an outer
// iteration a part makes one pass and then exchanges the states of its
// boundary vertices with its neighbours.
//
//   - Rule 1: a vertex with a neighbour on another part may be selected
//     only when every such neighbour on a higher-numbered part has been
//     deleted; neighbours on lower-numbered parts wait for it instead.
//   - Rule 2: a vertex is not selected while a neighbour on its own part
//     that comes earlier in the part's order is undecided, so the part's
//     boundary-first order is kept; selecting a vertex deletes its
//     undecided neighbours on the part at once, and the owners of the
//     others delete them when the news arrives.
//
// Together the rules make the set the greedy set of the total order
// (part, boundary first, key), which is why it passes Verify and why it
// depends on the partition. A boundary vertex waits only for the parts
// that meet it, so on a well-partitioned mesh a few outer iterations
// suffice, whatever the number of parts.
func (s *partState) runADMMA(ctx context.Context) error {
	n := s.nOwn
	order := make([]int32, n)
	for v := range order {
		order[v] = int32(v)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if ba, bb := s.boundary(a), s.boundary(b); ba != bb {
			if ba {
				return -1
			}
			return 1
		}
		return cmp.Compare(s.key[b], s.key[a])
	})
	rank := make([]int32, n)
	for i, v := range order {
		rank[v] = int32(i)
	}
	st := s.state
	todo := order
	ghostUndone := len(s.gid) - n
	var pending []int32
	for len(todo) > 0 {
		s.outer++
		s.newRound()
		for _, v := range todo {
			if st[v] != pUndone || !s.admmaFree(v, rank) {
				continue
			}
			st[v] = pIn
			pending = append(pending, v)
			for _, u := range s.neighbors(v) {
				if int(u) < n && st[u] == pUndone {
					st[u] = pOut
					pending = append(pending, u)
				}
			}
		}
		if err := s.sendChanges(ctx, pending, false, &ghostUndone); err != nil {
			return err
		}
		pending = pending[:0]
		// Vertices next to a ghost that was selected elsewhere.
		for _, v := range todo {
			if st[v] != pUndone {
				continue
			}
			for _, u := range s.neighbors(v) {
				if int(u) >= n && st[u] == pIn {
					st[v] = pOut
					pending = append(pending, v)
					break
				}
			}
		}
		todo = compactUndone(todo, st)
	}
	if len(s.active) == 0 {
		return nil
	}
	return s.sendChanges(ctx, pending, true, &ghostUndone)
}

// admmaFree applies Rules 1 and 2 to the undecided vertex v.
func (s *partState) admmaFree(v int32, rank []int32) bool {
	n := int32(s.nOwn)
	for _, u := range s.neighbors(v) {
		if s.state[u] != pUndone {
			continue
		}
		if u >= n {
			if int(s.ghostPart[u-n]) > s.me {
				return false
			}
		} else if rank[u] < rank[v] {
			return false
		}
	}
	return true
}

// sendChanges sends the new states of the boundary vertices in changed
// (selected or deleted) and applies the peers' news to the ghosts.
func (s *partState) sendChanges(ctx context.Context, changed []int32, done bool, ghostUndone *int) error {
	slices.Sort(changed)
	s.clearOut()
	s.collectValues(changed, func(v int32) int64 {
		if s.state[v] == pIn {
			return 1
		}
		return 0
	})
	s.encode(true)
	if err := s.step(ctx, done); err != nil {
		return err
	}
	return s.decodeAll(true, func(g int32, x uint64) error {
		st := pOut
		if x == 1 {
			st = pIn
		}
		return s.setGhost(g, st, ghostUndone)
	})
}
