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
	nl := len(s.gid)
	x := &exact2{s: s, m1: make([]int32, nl), sent: make([]int32, s.nOwn), near: make([]bool, nl)}
	for i := range x.m1 {
		x.m1[i] = -1
	}
	for i := range x.sent {
		x.sent[i] = -2
	}
	active := make([]int32, s.nOwn)
	for v := range active {
		active[v] = int32(v)
	}
	x.live = slices.Clone(active)
	x.ghostUndone = nl - s.nOwn
	busy := func() bool { return len(active) > 0 || x.ghostUndone > 0 }
	return s.runRounds(ctx, &active, busy, func() error {
		s.newRound()
		if err := x.bestNear(ctx); err != nil {
			return err
		}
		if err := x.join(ctx, active); err != nil {
			return err
		}
		if err := x.nearMembers(ctx); err != nil {
			return err
		}
		if err := x.leave(ctx, active); err != nil {
			return err
		}
		active = compactUndone(active, s.state)
		// As in Parallel: a vertex whose closed neighbourhood held no
		// undecided vertex at the start of the round never will again.
		l := x.live[:0]
		for _, v := range x.live {
			if x.m1[v] >= 0 {
				l = append(l, v)
			}
		}
		x.live = l
		return nil
	})
}

// exact2 is the state of runExact2 across rounds; its methods are the
// round's four phases.
type exact2 struct {
	s           *partState
	m1          []int32 // global id of the best undecided vertex, or -1
	sent        []int32 // m1 the peers last heard; -2 for never
	near        []bool
	live        []int32 // owned vertices whose m1 may still change
	ghostUndone int
	// Lists reused every round.
	changed, cands, nearNew, outs []int32
}

// bestNear is phase 1: m1 of the live vertices, changes of boundary
// vertices sent, the ghosts' m1 received.
func (x *exact2) bestNear(ctx context.Context) error {
	s, st, key, gid := x.s, x.s.state, x.s.key, x.s.gid
	x.changed = x.changed[:0]
	for _, v := range x.live {
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
		x.m1[v] = g
		if s.boundary(v) && x.sent[v] != g {
			x.sent[v] = g
			x.changed = append(x.changed, v)
		}
	}
	s.clearOut()
	s.collectValues(x.changed, func(v int32) int64 { return encodeM1(x.m1[v], gid[v]) })
	s.encode(true)
	if err := s.step(ctx, false); err != nil {
		return err
	}
	return s.decodeAll(true, func(g int32, v uint64) error {
		x.m1[g] = decodeM1(v, gid[g])
		return nil
	})
}

// join is phase 2: v joins when it is the m1 of itself and of every
// neighbour.
func (x *exact2) join(ctx context.Context, active []int32) error {
	s, gid := x.s, x.s.gid
	x.cands = x.cands[:0]
	for _, v := range active {
		me := gid[v]
		if x.m1[v] != me {
			continue
		}
		best := true
		for _, u := range s.neighbors(v) {
			if x.m1[u] != me {
				best = false
				break
			}
		}
		if best {
			x.cands = append(x.cands, v)
		}
	}
	for _, v := range x.cands {
		s.state[v] = pIn
	}
	return s.exchangeStates(ctx, x.cands, pIn, &x.ghostUndone)
}

// nearMembers is phase 3: near for the live vertices, new ones of
// boundary vertices sent, the ghosts' received.
func (x *exact2) nearMembers(ctx context.Context) error {
	s, st := x.s, x.s.state
	x.nearNew = x.nearNew[:0]
	for _, v := range x.live {
		if x.near[v] {
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
			x.near[v] = true
			if s.boundary(v) {
				x.nearNew = append(x.nearNew, v)
			}
		}
	}
	s.clearOut()
	s.collect(x.nearNew)
	s.encode(false)
	if err := s.step(ctx, false); err != nil {
		return err
	}
	return s.decodeAll(false, func(g int32, _ uint64) error {
		x.near[g] = true
		return nil
	})
}

// leave is phase 4: undecided v leaves when it or a neighbour is near a
// member.
func (x *exact2) leave(ctx context.Context, active []int32) error {
	s, st := x.s, x.s.state
	x.outs = x.outs[:0]
	for _, v := range active {
		if st[v] != pUndone {
			continue
		}
		nb := x.near[v]
		for _, u := range s.neighbors(v) {
			if nb {
				break
			}
			nb = x.near[u]
		}
		if nb {
			st[v] = pOut
			x.outs = append(x.outs, v)
		}
	}
	return s.exchangeStates(ctx, x.outs, pOut, &x.ghostUndone)
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
