package mis

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Vertex states of the partitioned drivers.
const (
	pUndone uint8 = iota
	pIn
	pOut
)

// partState is one part's view of the graph: its rows in local indices
// (owned vertices first, then ghosts, the off-part neighbours), the halo
// lists it shares with each neighbouring part, and the run's state.
type partState struct {
	ex    Exchanger
	me    int
	parts int
	dist  int

	nOwn      int
	gid       []int32 // global id of each local index
	off       []int64 // rows of the owned vertices, local indices
	adj       []int32
	ghostPart []int32 // owner of ghost nOwn+i

	// Halo: peers[k] is a neighbouring part; sendList[k] holds the owned
	// vertices it keeps as ghosts and recvList[k] the ghosts it owns, both
	// in increasing global id, so a position in a list names a vertex on
	// both sides without sending ids.
	peers    []int
	sendList [][]int32
	recvList [][]int32
	// copies of owned vertex v: (slot, position) pairs in
	// cSlot/cPos[cOff[v]:cOff[v+1]]; empty for interior vertices.
	cOff        []int32
	cSlot, cPos []int32

	key   []uint64
	state []uint8

	// Exchange buffers: active holds the slots of the peers still
	// talking; out[slot] is the next message to peers[slot].
	active    []int
	out       [][]byte
	pos       [][]int32 // per slot: positions of this message
	val       [][]int64 // per slot: values beside pos (distance-2 m1)
	rslots    []int     // slots of the last received messages
	rmsgs     [][]byte  // their payloads
	sendPeers []int
	sendMsgs  [][]byte

	rounds, outer int
	bytes         []int64 // per round
	messages      int64
	setupBytes    int64

	// Stall detection (part_finish.go): undecided vertices of all parts
	// before this round, the slow rounds so far, and whether the serial
	// finish was refused for lack of memory.
	undone         int64
	watch          stallWatch
	finishRefused  bool
	finishPeers    []int
	finishBytes    int64
	finishVertices int64
}

// header flags, the first byte of every message.
const flagDone byte = 1

// newPartState validates the part's input, builds its local view and the
// halo lists, and computes the keys of its owned and ghost vertices.
// Every part returns an error when any part's input is invalid.
func newPartState(ctx context.Context, ex Exchanger, l *Local, o *PartOptions) (*partState, error) {
	me, parts := ex.Part(), ex.Parts()
	s := &partState{ex: ex, me: me, parts: parts, dist: max(o.Distance, 1)}
	err := validateLocal(l, me, parts, o)
	if err == nil {
		s.undone = int64(l.N)
	}
	if err == nil {
		err = s.buildLocal(l)
	}
	if err := agree(ctx, ex, err); err != nil {
		return nil, err
	}
	err = s.buildHalo(ctx)
	if err == nil {
		err = s.buildKeys(ctx, l, o.Priority)
	}
	if err != nil {
		var ae agreedError
		if !errors.As(err, &ae) {
			ex.Abort(ctx, s.peers, err)
		}
		return nil, err
	}
	return s, nil
}

// buildLocal maps the rows to local indices: owned vertices first, in
// row order, then the ghosts in increasing global id.
func (s *partState) buildLocal(l *Local) error {
	var lo, hi int32
	rows := l.Rows
	if l.Ranges != nil {
		lo, hi = l.Ranges[s.me], l.Ranges[s.me+1]
		rows = nil
	}
	nOwn := len(l.Offsets) - 1
	// One pass maps owned neighbours and collects the entries that name
	// ghosts; only those need a second look once the ghosts are sorted.
	s.adj = make([]int32, len(l.Adj))
	var ghostAt []int64
	for i := range nOwn {
		for k := l.Offsets[i]; k < l.Offsets[i+1]; k++ {
			v := l.Adj[k]
			if v < 0 || int(v) >= l.N {
				return fmt.Errorf("mis: part %d: row %d (Adj[%d]): neighbour %d out of range [0,%d)", s.me, i, k, v, l.N)
			}
			j, own := v-lo, v >= lo && v < hi
			if rows != nil {
				var at int
				at, own = slices.BinarySearch(rows, v)
				j = int32(at)
			}
			if !own {
				ghostAt = append(ghostAt, k)
				continue
			}
			if int(j) == i {
				return fmt.Errorf("mis: part %d: row %d (Adj[%d]): self loop on vertex %d", s.me, i, k, v)
			}
			s.adj[k] = j
		}
	}
	ghosts := make([]int32, len(ghostAt))
	for i, k := range ghostAt {
		ghosts[i] = l.Adj[k]
	}
	slices.Sort(ghosts)
	ghosts = slices.Compact(ghosts)
	for _, k := range ghostAt {
		j, _ := slices.BinarySearch(ghosts, l.Adj[k])
		s.adj[k] = int32(nOwn + j)
	}
	s.nOwn = nOwn
	s.gid = make([]int32, nOwn+len(ghosts))
	for i := range nOwn {
		if rows != nil {
			s.gid[i] = rows[i]
		} else {
			s.gid[i] = lo + int32(i)
		}
	}
	copy(s.gid[nOwn:], ghosts)
	s.ghostPart = make([]int32, len(ghosts))
	for i, v := range ghosts {
		if l.Ranges != nil {
			// The owner is the last part whose range starts at or below v.
			q, _ := slices.BinarySearch(l.Ranges, v+1)
			s.ghostPart[i] = int32(q - 1)
			continue
		}
		j, ok := slices.BinarySearch(l.Ghosts, v)
		if !ok {
			return fmt.Errorf("mis: part %d: neighbour %d is neither a row nor listed in Ghosts", s.me, v)
		}
		s.ghostPart[i] = l.GhostParts[j]
	}
	s.off = l.Offsets
	s.state = make([]uint8, len(s.gid))
	return nil
}

func (s *partState) neighbors(v int32) []int32 { return s.adj[s.off[v]:s.off[v+1]] }

// buildHalo finds the neighbouring parts and agrees with each on the
// lists of shared vertices: every part sends each owner the ids it keeps
// as ghosts (the query), with the number of its edges to each, and the
// owner checks them against its own rows.
func (s *partState) buildHalo(ctx context.Context) error {
	need := make([][]int32, s.parts) // ghost local indices by owner
	for i, q := range s.ghostPart {
		need[q] = append(need[q], int32(s.nOwn+i))
	}
	cnt := make([]int64, s.parts)
	for q, lst := range need {
		cnt[q] = int64(len(lst))
	}
	got, err := s.ex.Alltoall(ctx, cnt)
	if err != nil {
		return err
	}
	var bad error
	for q := range s.parts {
		if (cnt[q] > 0) != (got[q] > 0) {
			bad = fmt.Errorf("mis: part %d keeps %d vertices of part %d as ghosts, part %d keeps %d of part %d: the graph is not symmetric across parts",
				s.me, cnt[q], q, q, got[q], s.me)
			break
		}
		if cnt[q] > 0 {
			s.peers = append(s.peers, q)
		}
	}
	if err := agree(ctx, s.ex, bad); err != nil {
		return err
	}
	// Edges from owned rows to each ghost: the owner must see as many.
	ghostDeg := make([]int64, len(s.gid)-s.nOwn)
	for _, u := range s.adj {
		if int(u) >= s.nOwn {
			ghostDeg[int(u)-s.nOwn]++
		}
	}
	send := make([][]byte, len(s.peers))
	s.recvList = make([][]int32, len(s.peers))
	for k, q := range s.peers {
		s.recvList[k] = need[q]
		b := binary.AppendUvarint(nil, uint64(len(need[q])))
		prev := int32(-1)
		for _, u := range need[q] {
			b = binary.AppendUvarint(b, uint64(s.gid[u]-prev))
			b = binary.AppendUvarint(b, uint64(ghostDeg[int(u)-s.nOwn]))
			prev = s.gid[u]
		}
		send[k] = b
		s.setupBytes += int64(len(b))
	}
	recv, err := s.ex.Exchange(ctx, s.peers, send)
	if err != nil {
		return err
	}
	s.sendList = make([][]int32, len(s.peers))
	for k, q := range s.peers {
		lst, err := s.decodeQuery(q, recv[k], got[q])
		if err != nil {
			bad = err
			break
		}
		s.sendList[k] = lst
	}
	if err := agree(ctx, s.ex, bad); err != nil {
		return err
	}
	s.buildCopies()
	s.active = make([]int, len(s.peers))
	for k := range s.active {
		s.active[k] = k
	}
	s.out = make([][]byte, len(s.peers))
	s.pos = make([][]int32, len(s.peers))
	s.val = make([][]int64, len(s.peers))
	return nil
}

// decodeQuery reads part q's list of the vertices it keeps as ghosts and
// returns their local indices, checking each against this part's rows.
func (s *partState) decodeQuery(q int, b []byte, want int64) ([]int32, error) {
	r := reader{b: b}
	n := r.uvarint()
	if r.err != nil || int64(n) != want || n > uint64(s.nOwn) {
		return nil, fmt.Errorf("mis: part %d: malformed halo query from part %d (%d entries, expected %d)", s.me, q, n, want)
	}
	lst := make([]int32, 0, n)
	prev := int64(-1)
	for range n {
		v := prev + int64(r.uvarint())
		deg := r.uvarint()
		if r.err != nil || v <= prev || v > math.MaxInt32 {
			return nil, fmt.Errorf("mis: part %d: malformed halo query from part %d", s.me, q)
		}
		prev = v
		i, ok := slices.BinarySearch(s.gid[:s.nOwn], int32(v))
		if !ok {
			return nil, fmt.Errorf("mis: part %d: part %d has an edge to vertex %d, which is not a row here", s.me, q, v)
		}
		var mine uint64
		for _, u := range s.neighbors(int32(i)) {
			if int(u) >= s.nOwn && int(s.ghostPart[int(u)-s.nOwn]) == q {
				mine++
			}
		}
		if mine != deg {
			return nil, fmt.Errorf("mis: part %d: vertex %d has %d neighbours on part %d, but part %d lists %d edges to it: the graph is not symmetric",
				s.me, v, mine, q, q, deg)
		}
		lst = append(lst, int32(i))
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("mis: part %d: malformed halo query from part %d: %d bytes left over", s.me, q, len(r.b))
	}
	return lst, nil
}

// buildCopies indexes, for each owned vertex, where it sits in the send
// lists, so that a change of state turns into one entry per copy.
func (s *partState) buildCopies() {
	s.cOff = make([]int32, s.nOwn+1)
	for _, lst := range s.sendList {
		for _, v := range lst {
			s.cOff[v+1]++
		}
	}
	for v := range s.nOwn {
		s.cOff[v+1] += s.cOff[v]
	}
	total := s.cOff[s.nOwn]
	s.cSlot = make([]int32, total)
	s.cPos = make([]int32, total)
	fill := slices.Clone(s.cOff[:s.nOwn])
	for k, lst := range s.sendList {
		for p, v := range lst {
			s.cSlot[fill[v]] = int32(k)
			s.cPos[fill[v]] = int32(p)
			fill[v]++
		}
	}
}

func (s *partState) boundary(v int32) bool { return s.cOff[v+1] > s.cOff[v] }

// reader decodes uvarints and remembers the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated message")
		return 0
	}
	r.b = r.b[n:]
	return x
}
