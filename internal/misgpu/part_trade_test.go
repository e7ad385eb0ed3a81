package misgpu

import (
	"math/rand/v2"
	"testing"
)

// tradeModel runs part_trade's threads (part.cu) over one segment, step
// for step: pack runs the sender's groups over its states src (the
// segment's first byte at s0), storing into inbox and its copy last;
// unpack the receiver's groups over st (the segment's first byte at
// dst). Reads of either side's states outside the words the kernel may
// touch fail the test.
type tradeModel struct {
	t           *testing.T
	s0, dst, n  int
	back        bool
	inbox, last []uint32
}

func newTradeModel(t *testing.T, s0, dst, n int, back bool) *tradeModel {
	w := tradeWords(PullSegment{Dst: int64(dst), Len: n})
	return &tradeModel{t: t, s0: s0, dst: dst, n: n, back: back, inbox: make([]uint32, w), last: make([]uint32, w)}
}

func word(t *testing.T, b []byte, at int) uint32 {
	if at < 0 || at+4 > len(b) || at%4 != 0 {
		t.Fatalf("part_trade reads word %d of a %d-byte allocation", at, len(b))
	}
	return uint32(b[at]) | uint32(b[at+1])<<8 | uint32(b[at+2])<<16 | uint32(b[at+3])<<24
}

func pack4(w uint32) uint32 {
	w &= 0x03030303
	w = (w | w>>6) & 0x000f000f
	return (w | w>>12) & 0xff
}

func unpack4(b uint32) uint32 {
	b &= 0xff
	b = (b | b<<12) & 0x000f000f
	return (b | b<<6) & 0x03030303
}

// pack runs part_pack_group over every group in the order of perm and
// returns the bytes stored.
func (m *tradeModel) pack(src []byte, perm []int) int {
	stored := 0
	for _, g := range perm {
		b := m.dst&^15 + 16*g
		in := uint32(0)
		for i := range 16 {
			if b+i >= m.dst && b+i < m.dst+m.n {
				in |= 1 << (2 * i)
			}
		}
		was := m.last[g]
		if (was|was>>1)&in == in {
			continue
		}
		sa := m.s0 - m.dst + b
		a0 := sa &^ 3
		var w [5]uint32
		for j := range 5 {
			if a := a0 + 4*j; a+4 > m.s0 && a < m.s0+m.n {
				w[j] = word(m.t, src, a)
			}
		}
		sh := uint(sa-a0) * 8
		x := uint32(0)
		for j := range 4 {
			x |= pack4(uint32((uint64(w[j+1])<<32|uint64(w[j]))>>sh)) << (8 * j)
		}
		x &= in * 3
		if x == was {
			continue
		}
		m.last[g], m.inbox[g] = x, x
		stored += 4
	}
	return stored
}

// unpack runs part_unpack_group over every group in the order of perm.
func (m *tradeModel) unpack(st []byte, perm []int) {
	for _, g := range perm {
		p := m.dst&^15 + 16*g
		var cur [4]uint32
		und := uint32(0)
		for j := range 4 {
			cur[j] = word(m.t, st, p+4*j)
			und |= ^(cur[j] | cur[j]>>1) & 0x01010101
		}
		x := m.inbox[g]
		if und == 0 || x == 0 {
			continue
		}
		for j := range 4 {
			v := unpack4(x >> (8 * j))
			if m.back {
				v &= 0x02020202 &^ ((v & 0x01010101) << 1)
			}
			v &= (^(cur[j] | cur[j]>>1) & 0x01010101) * 3
			for i := range 4 {
				st[p+4*j+i] |= byte(v >> (8 * i))
			}
		}
	}
}

// TestPartTradeModel: whatever the alignment of the two sides and the
// segment's length, as the sender's states get decided step by step,
// every trade leaves each undecided byte of the receiver's segment with
// the state the sender had packed (forward) or its OUT (back), every
// decided byte in its state and every byte outside the segment as it
// was; a trade stores only the words whose bits changed, none once the
// sender's segment is all decided and stored, and the bytes it reads
// lie within the words that overlap the segment.
func TestPartTradeModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for c := range 400 {
		n := 1 + rng.IntN(300)
		s0, dst := rng.IntN(13), rng.IntN(40)
		back := c%2 == 1
		src := make([]byte, (s0+n+rng.IntN(2)*4+3)&^3)
		st := make([]byte, (dst+n+15)&^15+16*rng.IntN(2))
		for i := range st {
			st[i] = byte(rng.IntN(4))
		}
		// truth: each vertex is IN or OUT; a side knows it or not yet.
		truth := make([]byte, n)
		for i := range n {
			truth[i] = byte(1 + rng.IntN(2))
			st[dst+i] = 0
			if rng.IntN(4) == 0 {
				st[dst+i] = truth[i]
			}
		}
		m := newTradeModel(t, s0, dst, n, back)
		groups := len(m.inbox)
		for step := range 4 {
			for i := range n {
				if src[s0+i] == 0 && (step == 3 || rng.IntN(3) == 0) {
					src[s0+i] = truth[i]
				}
			}
			before := append([]byte(nil), st...)
			stored := m.pack(src, rng.Perm(groups))
			changed := 0
			for g := range groups {
				if m.inbox[g] != 0 {
					changed++
				}
			}
			if step == 0 && stored != 4*changed {
				t.Fatalf("case %d: the first trade stored %d bytes for %d words with a decision", c, stored, changed)
			}
			m.unpack(st, rng.Perm(groups))
			for i := range st {
				want := before[i]
				if j := i - dst; j >= 0 && j < n && before[i] == 0 && (!back || src[s0+j] == 2) {
					want = src[s0+j]
				}
				if st[i] != want {
					t.Fatalf("case %d step %d (s0 %d dst %d len %d back %v): byte %d is %d, want %d", c, step, s0, dst, n, back, i, st[i], want)
				}
			}
		}
		if stored := m.pack(src, rng.Perm(groups)); stored != 0 {
			t.Fatalf("case %d: a trade after the last stored %d bytes", c, stored)
		}
	}
}

// TestPlanTrades: every segment a part unpacks has one part that packs
// it, the segment's owner, into the same inbox words; no two inboxes or
// copies of a part share a byte.
func TestPlanTrades(t *testing.T) {
	segs := [][]PullSegment{
		{{From: 1, Src: 0, Dst: 1024, Len: 300}, {From: 1, Src: 1100, Dst: 7, Len: 50, Back: true}},
		{{From: 0, Src: 700, Dst: 1100, Len: 324}, {From: 2, Src: 3, Dst: 1424, Len: 17}, {From: 0, Src: 1024, Dst: 0, Len: 300, Back: true}},
		{{From: 1, Src: 1400, Dst: 64, Len: 17}},
	}
	plan, size := planTrades(segs)
	type key struct{ part, inbox int64 }
	packed := map[key]PullSegment{}
	for q, ss := range plan {
		used := make([]bool, size[q])
		for _, g := range ss {
			at := g.inbox
			if g.pack {
				at = g.last
				if g.From != q {
					t.Fatalf("part %d packs a segment of part %d", q, g.From)
				}
				packed[key{int64(g.inboxOf), g.inbox}] = g.PullSegment
			}
			for b := at; b < at+4*tradeWords(g.PullSegment); b++ {
				if used[b] {
					t.Fatalf("part %d: byte %d of its trade buffer is used twice", q, b)
				}
				used[b] = true
			}
		}
	}
	for q, ss := range segs {
		for _, g := range ss {
			found := false
			for _, pg := range plan[q] {
				if !pg.pack && pg.PullSegment == g {
					found = packed[key{int64(q), pg.inbox}] == g
				}
			}
			if !found {
				t.Fatalf("part %d's segment %+v is not packed into its inbox", q, g)
			}
		}
	}
}
