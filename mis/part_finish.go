package mis

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// The partitioned rounds stall as Parallel's do on priorities that chain
// the greedy order (values rising along a path, x + εy on a grid): one
// round per link, each with its exchanges. Every part therefore ends each
// round with a sum of the undecided vertices, and all parts see the same
// counts, the ones Parallel sees on the whole graph: after the same slow
// rounds they hand the rest to the serial greedy together. The rest goes
// to part 0, which runs greedyFinish on it and sends each part the
// decisions on its vertices. After a complete round no undecided vertex
// lies within the distance of a member, so visiting the undecided ones in
// key order continues the greedy exactly: the set is the greedy set for
// any part count, and the parts agree on when to hand over.

// finishRoot is the part that runs the serial finish.
const finishRoot = 0

// maxFinishMessage bounds one part's share of the remainder (MPI counts
// are C ints); a larger share makes the parts keep to the rounds.
var maxFinishMessage = 1 << 30

// endRound is every part's last step of a round: left is the number of
// its own undecided vertices. It reports whether any are left on any part,
// and whether the serial finish should decide them now.
func (s *partState) endRound(ctx context.Context, left int) (more, stalled bool, err error) {
	v := s.outcome(false, left)
	if err := s.ex.Allreduce(ctx, Sum, v); err != nil {
		// This part's share of the count is given (an MPI collective
		// cannot be withdrawn): a final agreement would be one
		// collective more than the parts that end with this count.
		s.ex.Abort(ctx, s.abortPeers(), err)
		return false, false, agreedError{err}
	}
	if err := s.failure(v); err != nil {
		return false, false, agreedError{err}
	}
	before := s.undone
	s.undone = v[2]
	if v[2] == 0 {
		return false, false, nil
	}
	return true, s.watch.stalled(before, v[2]) && !s.finishRefused, nil
}

// finishSerial decides the undecided owned vertices in active through the
// serial greedy on part finishRoot. It returns false, with nothing decided,
// when the parts agree that part finishRoot cannot hold the remainder;
// they then go on with rounds.
func (s *partState) finishSerial(ctx context.Context, active []int32) (bool, error) {
	msg, entries := s.encodeRemainder(active)
	size := []int64{int64(len(active)), entries, int64(len(msg))}
	if err := s.ex.Allreduce(ctx, Sum, size); err != nil {
		return false, err
	}
	refuse := []int64{0}
	if len(msg) > maxFinishMessage {
		refuse[0] = 1
	}
	if s.me == finishRoot {
		// The messages, the id list, the edge lists and the graph.
		need := size[2] + 28*(size[0]+size[1]) + 48*size[1]
		if mesh.CheckMemory("RunPart", fmt.Sprintf("the serial finish of %d vertices", size[0]), need, 0) != nil {
			refuse[0] = 1
		}
	}
	if err := s.ex.Allreduce(ctx, Max, refuse); err != nil {
		return false, err
	}
	if refuse[0] != 0 {
		s.finishRefused = true
		return false, nil
	}
	var peers []int
	if s.me == finishRoot {
		for q := range s.parts {
			if q != finishRoot {
				peers = append(peers, q)
			}
		}
	} else {
		peers = []int{finishRoot}
	}
	s.finishPeers = peers
	send := make([][]byte, len(peers))
	if s.me != finishRoot {
		send[0] = msg
		s.finishBytes += int64(len(msg))
	}
	recv, err := s.ex.Exchange(ctx, peers, send)
	if err != nil {
		return false, err
	}
	var flags []byte
	if s.me == finishRoot {
		msgs := append([][]byte{msg}, recv...)
		out, err := s.greedyRemainder(msgs)
		if err != nil {
			return false, err
		}
		flags, send = out[0], out[1:]
		for _, b := range send {
			s.finishBytes += int64(len(b))
		}
	} else {
		send[0] = nil
	}
	recv, err = s.ex.Exchange(ctx, peers, send)
	if err != nil {
		return false, err
	}
	if s.me != finishRoot {
		flags = recv[0]
	}
	if len(flags) != (len(active)+7)/8 {
		return false, fmt.Errorf("mis: part %d: the serial finish sent %d bytes of flags for %d vertices", s.me, len(flags), len(active))
	}
	for i, v := range active {
		s.state[v] = pOut
		if flags[i/8]>>(i%8)&1 != 0 {
			s.state[v] = pIn
		}
	}
	s.finishVertices = int64(len(active))
	return true, nil
}

// encodeRemainder lists the undecided owned vertices for the serial
// finish: a count, then for each its global id (as the gap from the last,
// ids increase), its key, and the global ids of the neighbours the finish
// needs, as zigzag offsets from its own. At distance 1 those are the
// undecided neighbours; at distance 2 all of them, since two undecided
// vertices may be two edges apart through a decided one. It returns the
// message and the number of neighbours listed.
func (s *partState) encodeRemainder(active []int32) ([]byte, int64) {
	b := binary.AppendUvarint(nil, uint64(len(active)))
	prev, entries := int32(-1), int64(0)
	for _, v := range active {
		gv := s.gid[v]
		b = binary.AppendUvarint(b, uint64(gv-prev))
		prev = gv
		b = binary.LittleEndian.AppendUint64(b, s.key[v])
		nb := s.neighbors(v)
		n := 0
		for _, u := range nb {
			if s.dist == 2 || s.state[u] == pUndone {
				n++
			}
		}
		b = binary.AppendUvarint(b, uint64(n))
		for _, u := range nb {
			if s.dist == 2 || s.state[u] == pUndone {
				b = binary.AppendVarint(b, int64(s.gid[u])-int64(gv))
			}
		}
		entries += int64(n)
	}
	return b, entries
}

// remainder is the gathered rest of the graph: the undecided vertices of
// every part in message order, with their keys and listed neighbours.
type remainder struct {
	gid   []int32
	key   []uint64
	off   []int64
	adj   []int32
	count []int // vertices per message
}

func (r *remainder) decode(q int, m []byte) error {
	bad := func() error {
		return fmt.Errorf("mis: part %d: malformed remainder from part %d for the serial finish", finishRoot, q)
	}
	rd := reader{b: m}
	n := rd.uvarint()
	if rd.err != nil || n > uint64(len(m)) {
		return bad()
	}
	prev := int64(-1)
	for range n {
		gv := prev + int64(rd.uvarint())
		if rd.err != nil || len(rd.b) < 8 || gv <= prev || gv > 1<<31-1 {
			return bad()
		}
		prev = gv
		k := binary.LittleEndian.Uint64(rd.b)
		rd.b = rd.b[8:]
		deg := rd.uvarint()
		if rd.err != nil || deg > uint64(len(rd.b)) {
			return bad()
		}
		for range deg {
			d, w := binary.Varint(rd.b)
			u := gv + d
			if w <= 0 || u < 0 || u > 1<<31-1 {
				return bad()
			}
			rd.b = rd.b[w:]
			r.adj = append(r.adj, int32(u))
		}
		r.gid = append(r.gid, int32(gv))
		r.key = append(r.key, k)
		r.off = append(r.off, int64(len(r.adj)))
	}
	if rd.err != nil || len(rd.b) != 0 {
		return bad()
	}
	r.count = append(r.count, int(n))
	return nil
}

// greedyRemainder runs the serial greedy over the remainders of all parts
// (msgs[q] from part q: finishRoot is 0, and its peers come in order) and
// returns each part's
// flags, one bit per listed vertex, in the same order.
func (s *partState) greedyRemainder(msgs [][]byte) ([][]byte, error) {
	r := remainder{off: []int64{0}}
	for q, m := range msgs {
		if err := r.decode(q, m); err != nil {
			return nil, err
		}
	}
	// Local indices: the sorted ids of the vertices and their neighbours.
	ids := append(slices.Clone(r.gid), r.adj...)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	local := func(v int32) int32 {
		i, _ := slices.BinarySearch(ids, v)
		return int32(i)
	}
	b := mesh.NewBuilder(len(ids))
	keys := make([]uint64, len(ids))
	order := make([]int32, len(r.gid))
	for i, gv := range r.gid {
		v := local(gv)
		order[i] = v
		keys[v] = r.key[i]
		for _, u := range r.adj[r.off[i]:r.off[i+1]] {
			b.Add(v, local(u))
		}
	}
	g := b.Graph()
	sorted := slices.Clone(order)
	sortByKey(sorted, keys)
	in := make([]bool, len(ids))
	greedyFinish(g, sorted, s.dist, in, make([]bool, len(ids)))
	out := make([][]byte, len(msgs))
	at := 0
	for q, n := range r.count {
		f := make([]byte, (n+7)/8)
		for i := range n {
			if in[order[at+i]] {
				f[i/8] |= 1 << (i % 8)
			}
		}
		out[q] = f
		at += n
	}
	return out, nil
}
