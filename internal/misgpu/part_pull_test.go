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
// allocation fails the test.
func pullModel(t *testing.T, st, src []byte, s0, dst, n int, back bool, per, block int, rng *rand.Rand) {
	word := func(b []byte, at int) uint32 {
		if at < 0 || at+4 > len(b) || at%4 != 0 {
			t.Fatalf("part_pull reads word %d of a %d-byte allocation", at, len(b))
		}
		return uint32(b[at]) | uint32(b[at+1])<<8 | uint32(b[at+2])<<16 | uint32(b[at+3])<<24
	}
	w1 := (dst + n + 3) >> 2
	for _, blk := range rng.Perm(per) {
		for w0 := dst>>2 + blk*block; w0 < w1; w0 += per * block {
			lo := make([]uint32, block)
			for x := range block {
				a := s0 + 4*(w0+x) - dst
				al := a &^ 3
				if al+4 > s0 && al < s0+n {
					lo[x] = word(src, al)
				}
			}
			for x := range block {
				w := w0 + x
				a := s0 + 4*w - dst
				al, sh := a&^3, uint(a&3)*8
				var hi uint32
				if x%32 != 31 {
					hi = lo[x+1] // __shfl_down_sync
				} else if sh != 0 && al+8 > s0 && al+4 < s0+n {
					hi = word(src, al+4)
				}
				if w >= w1 {
					continue
				}
				v := lo[x]
				if sh != 0 {
					v = uint32((uint64(hi)<<32 | uint64(lo[x])) >> sh)
				}
				m := uint32(0)
				for j := range 4 {
					if i := 4*w + j; i >= dst && i-dst < n {
						m |= 0xff << (8 * j)
					}
				}
				v &= m
				add := v & 0x03030303
				if back {
					add = v & 0x02020202 &^ ((v & 0x01010101) << 1)
				}
				for j := range 4 {
					st[4*w+j] |= byte(add >> (8 * j))
				}
			}
		}
	}
}

// TestPartPullModel: whatever the alignment of the two sides, the
// segment's length and the grid, part_pull gives each byte of the
// segment its neighbour's state (forward) or its OUT (back, never onto
// a byte the neighbour holds as IN, IN|OUT or undecided), touches no
// byte outside it, and reads only words that hold a byte of it.
func TestPartPullModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for c := range 400 {
		n := 1 + rng.IntN(300)
		if c%50 == 0 {
			n = 32*4*3 + rng.IntN(9) // several warps' words
		}
		s0 := rng.IntN(9)
		src := make([]byte, (s0+n+rng.IntN(2)*4+3)&^3)
		for i := range src {
			src[i] = byte(rng.IntN(4)) // UND, IN, OUT, IN|OUT
		}
		dst := rng.IntN(13)
		st := make([]byte, (dst+n+8+3)&^3)
		for i := range st {
			if rng.IntN(3) == 0 {
				st[i] = byte(rng.IntN(3))
			}
		}
		back := c%2 == 1
		want := append([]byte(nil), st...)
		for i := range n {
			s := src[s0+i]
			switch {
			case !back:
				want[dst+i] |= s & 3
			case s == 2:
				want[dst+i] |= 2
			}
		}
		block := 32 * (1 + rng.IntN(3))
		per := 1 + rng.IntN(3)
		pullModel(t, st, src, s0, dst, n, back, per, block, rng)
		for i := range st {
			if st[i] != want[i] {
				t.Fatalf("case %d (s0 %d dst %d len %d back %v): byte %d is %d, want %d", c, s0, dst, n, back, i, st[i], want[i])
			}
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
