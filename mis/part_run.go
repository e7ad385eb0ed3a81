package mis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// RunPart computes this part's share of a partitioned MIS: it owns the
// rows of l and talks to the other parts through ex. Every part of the
// group calls RunPart with its own Local and the same options (Parts and
// Partition are ignored: l and ex describe the partition).
//
// In Exact mode the set is the greedy set of the whole graph under
// opts.Priority, computed with global vertex ids, so keys need no
// communication; the parts run the phases of Parallel and exchange only
// the state changes of their boundary vertices, in one message per
// neighbouring part per phase.
//
// When any part fails (invalid input, an exchanger error, a timeout),
// every part returns an error: the failing part tells its neighbours with
// Abort, and a final agreement (an Allreduce) tells the rest.
func RunPart(ctx context.Context, ex Exchanger, l *Local, opts PartOptions) (*LocalResult, error) {
	if ex == nil {
		return nil, fmt.Errorf("mis: RunPart: nil exchanger")
	}
	s, err := newPartState(ctx, ex, l, &opts)
	if err != nil {
		return nil, err
	}
	switch {
	case opts.Mode == ADMMA:
		err = s.runADMMA(ctx)
	case s.dist == 2:
		err = s.runExact2(ctx)
	default:
		err = s.runExact1(ctx)
	}
	return s.finish(ctx, err, opts.Mode)
}

// finish agrees with every other part on the outcome and sums the
// figures. A part that failed tells its neighbours first; a part that
// learned of a failure from endRound's count has agreed already.
func (s *partState) finish(ctx context.Context, runErr error, mode PartMode) (*LocalResult, error) {
	if _, agreed := errors.AsType[agreedError](runErr); agreed {
		return nil, runErr
	}
	if runErr != nil {
		s.ex.Abort(ctx, s.abortPeers(), runErr)
	}
	v := s.outcome(runErr != nil, 0)
	if err := s.ex.Allreduce(ctx, Sum, v); err != nil {
		if runErr != nil {
			return nil, runErr
		}
		return nil, err
	}
	if runErr != nil {
		return nil, runErr
	}
	if err := s.failure(v); err != nil {
		return nil, err
	}
	size := int64(0)
	in := make([]bool, s.nOwn)
	for v := range s.nOwn {
		if s.state[v] == pIn {
			in[v] = true
			size++
		}
	}
	hi := []int64{int64(s.rounds), int64(s.outer), int64(len(s.bytes))}
	if err := s.ex.Allreduce(ctx, Max, hi); err != nil {
		return nil, err
	}
	sum := make([]int64, 5+hi[2])
	sum[0], sum[1], sum[2], sum[3], sum[4] = size, s.messages, s.setupBytes, s.finishVertices, s.finishBytes
	copy(sum[5:], s.bytes)
	if err := s.ex.Allreduce(ctx, Sum, sum); err != nil {
		return nil, err
	}
	r := &LocalResult{In: in, Size: int(sum[0]), Rounds: int(hi[0])}
	r.Parts = s.parts
	r.Messages, r.SetupBytes = sum[1], sum[2]
	r.FinishVertices, r.FinishBytes = sum[3], sum[4]
	r.BytesPerRound = sum[5:]
	if mode == ADMMA {
		r.OuterIterations = int(hi[1])
		r.Rounds = r.OuterIterations
	}
	return r, nil
}

// outcome is the vector of the collective that ends every round and the
// run (summed over the parts): failed parts, the sum of their indices
// plus one, undecided vertices. The two share one shape, so that a part
// that failed mid-round and meets the others' end of the round in its
// final agreement matches their collective, and all learn of the failure.
func (s *partState) outcome(failed bool, left int) []int64 {
	v := []int64{0, 0, int64(left)}
	if failed {
		v[0], v[1] = 1, int64(s.me)+1
	}
	return v
}

// failure reads a summed outcome: an error wrapping ErrAborted when some
// part failed.
func (s *partState) failure(v []int64) error {
	switch {
	case v[0] == 0:
		return nil
	case v[0] == 1:
		return fmt.Errorf("mis: part %d: %w: part %d failed", s.me, ErrAborted, v[1]-1)
	}
	return fmt.Errorf("mis: part %d: %w: %d parts failed", s.me, ErrAborted, v[0])
}

// abortPeers are the parts a failing part tells: its active peers, and
// during the serial finish the parts it exchanges with there.
func (s *partState) abortPeers() []int {
	ps := s.activePeers()
	for _, q := range s.finishPeers {
		if !slices.Contains(ps, q) {
			ps = append(ps, q)
		}
	}
	return ps
}

func (s *partState) activePeers() []int {
	ps := make([]int, len(s.active))
	for i, k := range s.active {
		ps[i] = s.peers[k]
	}
	return ps
}

// clearOut starts a message to every active peer: the header byte, then
// nothing.
func (s *partState) clearOut() {
	for _, k := range s.active {
		s.out[k] = append(s.out[k][:0], 0)
		s.pos[k] = s.pos[k][:0]
		s.val[k] = s.val[k][:0]
	}
}

// collect adds the copies of each boundary vertex in list (increasing
// local index) to the position lists of their slots.
func (s *partState) collect(list []int32) {
	for _, v := range list {
		for c := s.cOff[v]; c < s.cOff[v+1]; c++ {
			k := s.cSlot[c]
			s.pos[k] = append(s.pos[k], s.cPos[c])
		}
	}
}

// collectValues is collect with one value per vertex, sent beside it.
func (s *partState) collectValues(list []int32, val func(v int32) int64) {
	for _, v := range list {
		x := val(v)
		for c := s.cOff[v]; c < s.cOff[v+1]; c++ {
			k := s.cSlot[c]
			s.pos[k] = append(s.pos[k], s.cPos[c])
			s.val[k] = append(s.val[k], x)
		}
	}
}

// encode writes the collected positions (and values, when withVal) of
// every active slot: a count, then position deltas, as uvarints. Lists
// come out increasing because send lists and change lists both follow
// local index order.
func (s *partState) encode(withVal bool) {
	for _, k := range s.active {
		b := binary.AppendUvarint(s.out[k], uint64(len(s.pos[k])))
		prev := int32(-1)
		for i, p := range s.pos[k] {
			b = binary.AppendUvarint(b, uint64(p-prev))
			prev = p
			if withVal {
				b = binary.AppendUvarint(b, uint64(s.val[k][i]))
			}
		}
		s.out[k] = b
	}
}

// decode reads one received message of positions (and values): f gets
// the ghost local index of each entry.
func (s *partState) decode(i int, withVal bool, f func(g int32, val uint64) error) error {
	k := s.rslots[i]
	lst := s.recvList[k]
	r := reader{b: s.rmsgs[i]}
	n := r.uvarint()
	if n > uint64(len(lst)) {
		return fmt.Errorf("mis: part %d: message from part %d lists %d vertices, the halo has %d", s.me, s.peers[k], n, len(lst))
	}
	p := int64(-1)
	for range n {
		p += int64(r.uvarint())
		var x uint64
		if withVal {
			x = r.uvarint()
		}
		if r.err != nil || p < 0 || p >= int64(len(lst)) {
			return fmt.Errorf("mis: part %d: malformed message from part %d", s.me, s.peers[k])
		}
		if err := f(lst[p], x); err != nil {
			return err
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return fmt.Errorf("mis: part %d: malformed message from part %d", s.me, s.peers[k])
	}
	return nil
}

// decodeAll runs decode over every message of the last step.
func (s *partState) decodeAll(withVal bool, f func(g int32, val uint64) error) error {
	for i := range s.rslots {
		if err := s.decode(i, withVal, f); err != nil {
			return err
		}
	}
	return nil
}

// step sends the prepared messages to the active peers and receives
// theirs. done tells the peers that this part leaves: neither side sends
// to the other again. Peers that announce the same are dropped after
// their message is read.
func (s *partState) step(ctx context.Context, done bool) error {
	s.sendPeers = s.sendPeers[:0]
	s.sendMsgs = s.sendMsgs[:0]
	var sent int64
	for _, k := range s.active {
		s.out[k][0] = 0
		if done {
			s.out[k][0] = flagDone
		}
		s.sendPeers = append(s.sendPeers, s.peers[k])
		s.sendMsgs = append(s.sendMsgs, s.out[k])
		sent += int64(len(s.out[k]))
	}
	if len(s.bytes) == 0 {
		s.bytes = append(s.bytes, 0)
	}
	s.bytes[len(s.bytes)-1] += sent
	s.messages += int64(len(s.sendPeers))
	recv, err := s.ex.Exchange(ctx, s.sendPeers, s.sendMsgs)
	if err != nil {
		return err
	}
	s.rslots = append(s.rslots[:0], s.active...)
	s.rmsgs = s.rmsgs[:0]
	keep := s.active[:0]
	for i, k := range s.rslots {
		m := recv[i]
		if len(m) == 0 {
			return fmt.Errorf("mis: part %d: empty message from part %d", s.me, s.peers[k])
		}
		s.rmsgs = append(s.rmsgs, m[1:])
		if m[0]&flagDone == 0 {
			keep = append(keep, k)
		}
	}
	s.active = keep
	return nil
}

// newRound opens the byte count of a new round.
func (s *partState) newRound() {
	s.rounds++
	s.bytes = append(s.bytes, 0)
}

// leave announces to every active peer that this part is finished.
func (s *partState) leave(ctx context.Context) error {
	if len(s.active) == 0 {
		return nil
	}
	s.clearOut()
	s.encode(false)
	return s.step(ctx, true)
}

// setGhost records a state change of a ghost that its owner reported.
func (s *partState) setGhost(g int32, st uint8, undone *int) error {
	if s.state[g] != pUndone {
		return fmt.Errorf("mis: part %d: vertex %d reported decided twice", s.me, s.gid[g])
	}
	s.state[g] = st
	*undone--
	return nil
}

// runExact1 is round1 of Parallel on one part: candidates (largest key
// among undecided neighbours) join, the joins of boundary vertices go to
// the neighbouring parts, neighbours of members leave, and the leaves go
// out too. A part leaves once all its vertices are decided: its
// neighbours then know every state they need from it.
func (s *partState) runExact1(ctx context.Context) error {
	st, key := s.state, s.key
	active := make([]int32, s.nOwn)
	for v := range active {
		active[v] = int32(v)
	}
	ghostUndone := len(s.gid) - s.nOwn
	var cands, outs []int32
	busy := func() bool { return len(active) > 0 }
	return s.runRounds(ctx, &active, busy, func() error {
		s.newRound()
		cands = cands[:0]
		for _, v := range active {
			kv, best := key[v], true
			for _, u := range s.neighbors(v) {
				if st[u] == pUndone && key[u] > kv {
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
		outs = outs[:0]
		for _, v := range active {
			if st[v] != pUndone {
				continue
			}
			for _, u := range s.neighbors(v) {
				if st[u] == pIn {
					st[v] = pOut
					outs = append(outs, v)
					break
				}
			}
		}
		if err := s.exchangeStates(ctx, outs, pOut, &ghostUndone); err != nil {
			return err
		}
		active = compactUndone(active, st)
		return nil
	})
}

// runRounds drives the rounds of the exact modes: round runs while busy
// says this part has work, and once it has none the part leaves its
// peers; but every part ends every round (endRound) until no vertex is
// undecided anywhere, since all take part in the count and in the serial
// finish that a stall hands over to. active holds the part's undecided
// vertices.
func (s *partState) runRounds(ctx context.Context, active *[]int32, busy func() bool, round func() error) error {
	left := false
	for {
		if busy() {
			if err := round(); err != nil {
				return err
			}
		} else if !left {
			if err := s.leave(ctx); err != nil {
				return err
			}
			left = true
		}
		more, stalled, err := s.endRound(ctx, len(*active))
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if stalled {
			done, err := s.finishSerial(ctx, *active)
			if err != nil {
				return err
			}
			if done {
				*active = (*active)[:0]
				break
			}
		}
	}
	if left {
		return nil
	}
	return s.leave(ctx)
}

// exchangeStates sends the boundary vertices of list, which all just took
// state st, and applies the same news from the peers to the ghosts.
func (s *partState) exchangeStates(ctx context.Context, list []int32, st uint8, ghostUndone *int) error {
	s.clearOut()
	s.collect(list)
	s.encode(false)
	if err := s.step(ctx, false); err != nil {
		return err
	}
	return s.decodeAll(false, func(g int32, _ uint64) error { return s.setGhost(g, st, ghostUndone) })
}

func compactUndone(list []int32, st []uint8) []int32 {
	a := list[:0]
	for _, v := range list {
		if st[v] == pUndone {
			a = append(a, v)
		}
	}
	return a
}
