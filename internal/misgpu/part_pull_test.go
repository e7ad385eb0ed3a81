package misgpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// pullModel runs part_pull's threads (part.cu) over one segment, step
// for step: src is the neighbour's whole allocation (word-aligned at
// both ends, as the device's is), s0 the offset of the segment's first
// byte in it, and st this part's states. The blocks of the segment take
// per*block words at a time in any order; a read of src outside the
// allocation fails the test. It returns the bytes of src read.
func pullModel(t *testing.T, st, src []byte, s0, dst, n int, back bool, per, block int, rng *rand.Rand) int {
	word := func(b []byte, at int) uint32 {
		if at < 0 || at+4 > len(b) || at%4 != 0 {
			t.Fatalf("part_pull reads word %d of a %d-byte allocation", at, len(b))
		}
		return uint32(b[at]) | uint32(b[at+1])<<8 | uint32(b[at+2])<<16 | uint32(b[at+3])<<24
	}
	read := 0
	w1 := (dst + n + 3) >> 2
	for _, blk := range rng.Perm(per) {
		for c0 := dst>>2 + blk*block*pullUnroll; c0 < w1; c0 += per * block * pullUnroll {
			for u := range pullUnroll {
				w0 := c0 + u*block
				pullChunk(t, st, src, s0, dst, n, back, w0, w1, block, word, &read)
			}
		}
	}
	return read
}

// pullChunk is one of a thread's PULL_WORDS steps, over the block's
// words from w0 on.
func pullChunk(t *testing.T, st, src []byte, s0, dst, n int, back bool, w0, w1, block int, word func([]byte, int) uint32, read *int) {
	m, cur, need := make([]uint32, block), make([]uint32, block), make([]bool, block)
	for x := range block {
		w := w0 + x
		for j := range 4 {
			if i := 4*w + j; w < w1 && i >= dst && i-dst < n {
				m[x] |= 0xff << (8 * j)
			}
		}
		if m[x] != 0 {
			cur[x] = word(st, 4*w)
		}
		need[x] = ^(cur[x]|cur[x]>>1)&m[x]&0x01010101 != 0
	}
	lo := make([]uint32, block)
	for x := range block {
		prev := x%32 > 0 && need[x-1] // __shfl_up_sync
		a := s0 + 4*(w0+x) - dst
		if al := a &^ 3; (need[x] || prev) && al+4 > s0 && al < s0+n {
			lo[x] = word(src, al)
			*read += 4
		}
	}
	for x := range block {
		w := w0 + x
		a := s0 + 4*w - dst
		al, sh := a&^3, uint(a&3)*8
		var hi uint32
		if x%32 != 31 {
			hi = lo[x+1] // __shfl_down_sync
		} else if need[x] && sh != 0 && al+8 > s0 && al+4 < s0+n {
			hi = word(src, al+4)
			*read += 4
		}
		if !need[x] {
			continue
		}
		v := lo[x]
		if sh != 0 {
			v = uint32((uint64(hi)<<32 | uint64(lo[x])) >> sh)
		}
		v &= m[x]
		add := v & 0x03030303
		if back {
			add = v & 0x02020202 &^ ((v & 0x01010101) << 1)
		}
		for j := range 4 {
			st[4*w+j] |= byte(add >> (8 * j))
		}
	}
}

// state is STATE of mis.cu: IN wins over OUT.
func state(b byte) byte {
	if b&1 != 0 {
		return 1
	}
	return b & 2
}

// TestPartPullModel: whatever the alignment of the two sides, the
// segment's length and the grid, part_pull gives each undecided byte of
// the segment its neighbour's state (forward) or its OUT (back), leaves
// every decided one in its state and every byte outside the segment as
// it was, reads only words that hold a byte of the segment, and reads
// none for words whose bytes are all decided. The bytes of both sides
// are facts of one greedy set: each vertex is IN or OUT, and a side
// knows it (IN may carry OUT too) or not yet.
func TestPartPullModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 600 {
		n := 1 + rng.IntN(300)
		if c%50 == 0 {
			n = 32*4*3 + rng.IntN(9) // several warps' words
		}
		s0, dst := rng.IntN(9), rng.IntN(13)
		src := make([]byte, (s0+n+rng.IntN(2)*4+3)&^3)
		st := make([]byte, (dst+n+8+3)&^3)
		for i := range st {
			st[i] = byte(rng.IntN(4))
		}
		back, known := c%2 == 1, c%3 == 0 // known: every byte here decided
		want := append([]byte(nil), st...)
		for i := range n {
			truth := byte(1 + rng.IntN(2))
			fact := func() byte {
				if truth == 1 {
					return 1 | byte(rng.IntN(2))<<1 // IN may carry OUT
				}
				return 2
			}
			st[dst+i], src[s0+i] = 0, 0
			if known || rng.IntN(2) == 0 {
				st[dst+i] = fact()
			}
			if rng.IntN(2) == 0 {
				src[s0+i] = fact()
			}
			want[dst+i] = state(st[dst+i])
			if want[dst+i] == 0 && (!back || src[s0+i] == 2) {
				want[dst+i] = state(src[s0+i])
			}
		}
		before := append([]byte(nil), st...)
		read := pullModel(t, st, src, s0, dst, n, back, 1+rng.IntN(3), 32*(1+rng.IntN(3)), rng)
		for i := range st {
			got, w := st[i], before[i]
			if i >= dst && i < dst+n {
				got, w = state(st[i]), want[i]
			}
			if got != w {
				t.Fatalf("case %d (s0 %d dst %d len %d back %v): byte %d is %d, want %d", c, s0, dst, n, back, i, got, w)
			}
		}
		if known && read != 0 {
			t.Fatalf("case %d: %d bytes read where every byte was decided", c, read)
		}
	}
}

// TestPullSegments: each part reads every window it keeps from the
// window's owner and gives back every window others keep of it; parts
// with classes or ghosts in the tables do not pull.
func TestPullSegments(t *testing.T) {
	g := GhostFrom
	mk := func() []*PartSpec {
		a := &PartSpec{Own: 10, Offsets: make([]int64, g(10)+4+1), GIDFrom: g(10) + 4,
			Windows: []Window{{From: g(10), Len: 4, First: 10, Owner: 1, OwnerLocal: 0}}}
		b := &PartSpec{Own: 8, Base: 10, Offsets: make([]int64, g(8)+3+1), GIDFrom: g(8) + 3,
			Windows: []Window{{From: g(8), Len: 3, First: 7, Owner: 0, OwnerLocal: 7}}}
		return []*PartSpec{a, b}
	}
	specs := mk()
	got := fmt.Sprint(PullSegments(specs, 0), PullSegments(specs, 1))
	want := fmt.Sprint([]PullSegment{{From: 1, Src: 0, Dst: int64(g(10)), Len: 4}, {From: 1, Src: int64(g(8)), Dst: 7, Len: 3, Back: true}},
		[]PullSegment{{From: 0, Src: 7, Dst: int64(g(8)), Len: 3}, {From: 0, Src: int64(g(10)), Dst: 0, Len: 4, Back: true}})
	if got != want {
		t.Errorf("segments %s, want %s", got, want)
	}
	words, err := pullWords(PullSegments(specs, 1), func(r int) uint64 { return uint64(r+1) << 40 })
	if err != nil || len(words) != 4 || words[0] != 1<<40+7 || words[3]>>63 != 1 || uint32(words[3]) != 0 || words[3]>>32&(1<<31-1) != 4 {
		t.Errorf("words %x, %v", words, err)
	}
	for name, f := range map[string]func(b *PartSpec){
		"classes": func(b *PartSpec) { b.Class = make([]uint8, len(b.Offsets)-1) },
		"ranks":   func(b *PartSpec) { b.Prim = make([]uint32, len(b.Offsets)-1) },
		"tables":  func(b *PartSpec) { b.GIDFrom--; b.Windows[0].Len-- },
	} {
		specs := mk()
		f(specs[1])
		if s := PullSegments(specs, 0); s != nil {
			t.Errorf("%s: segments %v, want none", name, s)
		}
	}
	if s := PullSegments(mk()[:1], 0); s != nil {
		t.Errorf("one part: segments %v, want none", s)
	}
}

// TestImageWindows: parts of at most one window each and no ghost in the
// tables run part1w.cu's image, of at most two part2w.cu's, and so does
// a single part whose ids are the global ones; a third window, a ghost
// in the tables or a single part of other ids run part.cu's.
func TestImageWindows(t *testing.T) {
	g := GhostFrom
	mk := func() []*PartSpec {
		a := &PartSpec{Own: 10, Offsets: make([]int64, g(10)+4+1), GIDFrom: g(10) + 4,
			Windows: []Window{{From: g(10), Len: 4, First: 10, Owner: 1}}}
		b := &PartSpec{Own: 8, Base: 10, Offsets: make([]int64, g(8)+3+1), GIDFrom: g(8) + 3,
			Windows: []Window{{From: g(8), Len: 3, First: 7, Owner: 0, OwnerLocal: 7}}}
		return []*PartSpec{a, b}
	}
	// windows gives part 0 k windows of one ghost each.
	windows := func(k int) func(s []*PartSpec) []*PartSpec {
		return func(s []*PartSpec) []*PartSpec {
			s[0].Windows = nil
			for j := range k {
				s[0].Windows = append(s[0].Windows, Window{From: g(10) + j, Len: 1, First: 10 + uint32(j), Owner: 1, OwnerLocal: int64(j)})
			}
			s[0].Offsets = make([]int64, g(10)+k+1)
			s[0].GIDFrom = g(10) + k
			return s
		}
	}
	for _, c := range []struct {
		name string
		f    func(s []*PartSpec) []*PartSpec
		want int
	}{
		{"one window each", func(s []*PartSpec) []*PartSpec { return s }, 1},
		{"two windows", windows(2), 2},
		{"three windows", windows(3), 3},
		{"one part", func(s []*PartSpec) []*PartSpec { return s[:1] }, 0},
		{"one part in id order", func(s []*PartSpec) []*PartSpec {
			return []*PartSpec{{Own: 10, Offsets: make([]int64, g(10)+1), GIDFrom: g(10)}}
		}, 1},
		{"tables", func(s []*PartSpec) []*PartSpec {
			s[1].GIDFrom--
			s[1].Windows[0].Len--
			s[1].GID, s[1].Home = []uint32{9}, []Slot{{Part: 0, Local: 9}}
			return s
		}, 0},
	} {
		s := c.f(mk())
		for q, p := range s {
			if err := p.checkWindows(len(p.Offsets) - 1); err != nil {
				t.Fatalf("%s: part %d: %v", c.name, q, err)
			}
		}
		if got := imageWindows(s, false); got != c.want {
			name, _ := partImage(got)
			t.Errorf("%s: image of %d windows (%s), want %d", c.name, got, name, c.want)
		}
		// The id table a single part keeps is read in part.cu's image
		// only; with several parts the option changes no image.
		want := c.want
		if len(s) == 1 {
			want = 0
		}
		if got := imageWindows(s, true); got != want {
			t.Errorf("%s, ids kept: image of %d windows, want %d", c.name, got, want)
		}
	}
}
