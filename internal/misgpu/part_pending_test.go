package misgpu

import (
	"math/rand/v2"
	"slices"
)

// pendingModel is Pending of part.cu on the host: the calls of a
// boundary kernel over a list of m entries, each scanning only what the
// call before it left pending, with the ring of counts and the two
// halves of the list as the kernel keeps them. The warps of a call
// append what they keep in any order, so end shuffles it.
type pendingModel struct {
	m, call int
	pend    []int32
	cnt     [pendingCounts]uint32
	rng     *rand.Rand
	scanned []int // the entries each call scanned
}

func newPendingModel(m int, rng *rand.Rand) *pendingModel {
	return &pendingModel{m: m, pend: make([]int32, 2*m), rng: rng}
}

// begin starts a call: it zeroes the count the next call appends to and
// returns the entries this one scans.
func (p *pendingModel) begin() []int32 {
	c := p.call
	p.cnt[(c+2)%pendingCounts] = 0
	if c == 0 {
		in := make([]int32, p.m)
		for i := range in {
			in[i] = int32(i)
		}
		p.scanned = append(p.scanned, p.m)
		return in
	}
	n := int(p.cnt[c%pendingCounts])
	if n > p.m {
		panic("a pending count past the list")
	}
	p.scanned = append(p.scanned, n)
	return append([]int32(nil), p.pend[(c&1)*p.m:][:n]...)
}

// end appends the entries the call keeps pending to the other half.
func (p *pendingModel) end(kept []int32) {
	c := p.call
	p.rng.Shuffle(len(kept), func(i, j int) { kept[i], kept[j] = kept[j], kept[i] })
	out, n := p.pend[((c+1)&1)*p.m:], &p.cnt[(c+1)%pendingCounts]
	for _, i := range kept {
		if int(*n) >= p.m {
			panic("more entries pending than the list holds")
		}
		out[*n] = i
		*n++
	}
	p.call++
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
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
