package misgpu

import (
	"math/rand/v2"
	"slices"
)

// pendingModel is Pending of part.cu on the host: the calls of a
// boundary kernel over a list of m entries, each scanning only what the
// call before it left pending. Block b of a grid of grid blocks owns
// segment b of each half of the list and its count in each half of
// the counts, as the kernel keeps them. The warps of a block keep their
// entries in any order, so end shuffles each block's.
type pendingModel struct {
	m, grid, call int
	pend          []int32
	cnt           []uint32
	rng           *rand.Rand
	scanned       []int // the entries each call scanned
}

func newPendingModel(m, grid int, rng *rand.Rand) *pendingModel {
	return &pendingModel{m: m, grid: grid, pend: make([]int32, 2*m), cnt: make([]uint32, 2*grid), rng: rng}
}

// segment is block b's segment of a half: its first entry and size.
func (p *pendingModel) segment(b int) (first, size int) {
	chunk := (p.m + p.grid - 1) / p.grid
	return b * chunk, max(0, min(chunk, p.m-b*chunk))
}

// begin starts a call: it returns each block's entries.
func (p *pendingModel) begin() [][]int32 {
	c, total := p.call, 0
	in := make([][]int32, p.grid)
	for b := range in {
		first, size := p.segment(b)
		if c == 0 {
			for t := range size {
				in[b] = append(in[b], int32(first+t))
			}
		} else {
			n := int(p.cnt[(c&1)*p.grid+b])
			if n > size {
				panic("a block's pending count past its segment")
			}
			in[b] = slices.Clone(p.pend[(c&1)*p.m+first:][:n])
		}
		total += len(in[b])
	}
	p.scanned = append(p.scanned, total)
	return in
}

// end stores what each block keeps pending in its segment of the other
// half, and its count.
func (p *pendingModel) end(kept [][]int32) {
	c := p.call
	for b, k := range kept {
		first, size := p.segment(b)
		if len(k) > size {
			panic("a block keeps more than its segment holds")
		}
		p.rng.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] })
		copy(p.pend[((c+1)&1)*p.m+first:], k)
		p.cnt[((c+1)&1)*p.grid+b] = uint32(len(k))
	}
	p.call++
}

// undecidedGroups counts the groups of 16 ghosts with one undecided.
func undecidedGroups(st []uint8) int {
	n := 0
	for i := 0; i < len(st); i += 16 {
		if slices.ContainsFunc(st[i:min(i+16, len(st))], func(x uint8) bool { return x&3 == 0 }) {
			n++
		}
	}
	return n
}
