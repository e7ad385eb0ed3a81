package mis

import (
	"context"
	"slices"
)

// runExact2 is round2 of Parallel on one part. Distance 2 needs what the
// neighbouring parts know about vertices two hops away, and it travels
// through the shared vertices in four phases per round:
//
//  1. m1[v], the best undecided vertex in v's closed neighbourhood, for
//     the live owned vertices; changed values of boundary vertices go out.
//  2. v joins when it is the m1 of itself and of every neighbour (ghost
//     neighbours' m1 came in phase 1); joins go out.
//  3. near[v]: a member in v's closed neighbourhood; new ones go out.
//  4. v leaves when it or a neighbour is near a member; leaves go out.
//
// A part stays until its own vertices and its ghosts are all decided:
// only then are the m1 and near values it relays final.
func (s *partState) runExact2(ctx context.Context) error {
	st, key, gid := s.state, s.key, s.gid
	nl := len(gid)
	m1 := make([]int32, nl) // global id of the best undecided vertex, or -1
	for i := range m1 {
		m1[i] = -1
	}
	sent := make([]int32, s.nOwn) // m1 the peers last heard; -2 for never
	for i := range sent {
		sent[i] = -2
	}
	near := make([]bool, nl)
	active := make([]int32, s.nOwn)
	for v := range active {
		active[v] = int32(v)
	}
	live := slices.Clone(active)
	ghostUndone := nl - s.nOwn
	var changed, cands, nearNew, outs []int32
	busy := func() bool { return len(active) > 0 || ghostUndone > 0 }
	return s.runRounds(ctx, &active, busy, func() error {
		s.newRound()
		changed = changed[:0]
		for _, v := range live {
			best := int32(-1)
			if st[v] == pUndone {
				best = v
			}
			for _, u := range s.neighbors(v) {
				if st[u] == pUndone && (best < 0 || key[u] > key[best]) {
					best = u
				}
			}
			g := int32(-1)
			if best >= 0 {
				g = gid[best]
			}
			m1[v] = g
			if s.boundary(v) && sent[v] != g {
				sent[v] = g
				changed = append(changed, v)
			}
		}
		s.clearOut()
		s.collectValues(changed, func(v int32) int64 { return encodeM1(m1[v], gid[v]) })
		s.encode(true)
		if err := s.step(ctx, false); err != nil {
			return err
		}
		if err := s.decodeAll(true, func(g int32, x uint64) error {
			m1[g] = decodeM1(x, gid[g])
			return nil
		}); err != nil {
			return err
		}

		cands = cands[:0]
		for _, v := range active {
			me := gid[v]
			if m1[v] != me {
				continue
			}
			best := true
			for _, u := range s.neighbors(v) {
				if m1[u] != me {
					best = false
					break
				}
			}
			if best {
				cands = append(cands, v)
			}
		}
		for _, v := range cands {
			st[v] = pIn
		}
		if err := s.exchangeStates(ctx, cands, pIn, &ghostUndone); err != nil {
			return err
		}

		nearNew = nearNew[:0]
		for _, v := range live {
			if near[v] {
				continue
			}
			nb := st[v] == pIn
			for _, u := range s.neighbors(v) {
				if nb {
					break
				}
				nb = st[u] == pIn
			}
			if nb {
				near[v] = true
				if s.boundary(v) {
					nearNew = append(nearNew, v)
				}
			}
		}
		s.clearOut()
		s.collect(nearNew)
		s.encode(false)
		if err := s.step(ctx, false); err != nil {
			return err
		}
		if err := s.decodeAll(false, func(g int32, _ uint64) error {
			near[g] = true
			return nil
		}); err != nil {
			return err
		}

		outs = outs[:0]
		for _, v := range active {
			if st[v] != pUndone {
				continue
			}
			nb := near[v]
			for _, u := range s.neighbors(v) {
				if nb {
					break
				}
				nb = near[u]
			}
			if nb {
				st[v] = pOut
				outs = append(outs, v)
			}
		}
		if err := s.exchangeStates(ctx, outs, pOut, &ghostUndone); err != nil {
			return err
		}
		active = compactUndone(active, st)
		// As in Parallel: a vertex whose closed neighbourhood held no
		// undecided vertex at the start of the round never will again.
		l := live[:0]
		for _, v := range live {
			if m1[v] >= 0 {
				l = append(l, v)
			}
		}
		live = l
		return nil
	})
}

// encodeM1 packs m1 of vertex v (a global id near v on meshes, or -1) as
// a small unsigned number: 0 for none, else 1 + zigzag(m1 - v).
func encodeM1(m1, v int32) int64 {
	if m1 < 0 {
		return 0
	}
	d := int64(m1) - int64(v)
	return 1 + (d<<1 ^ d>>63)
}

func decodeM1(x uint64, v int32) int32 {
	if x == 0 {
		return -1
	}
	z := x - 1
	d := int64(z>>1) ^ -int64(z&1)
	return int32(int64(v) + d)
}
