package misgpu

import (
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// Packed trades. Where the parts could pull (part_pull.go), each part
// instead packs after every launch the two state bits of the vertices
// its neighbours keep in windows, and of the ghosts in its own windows
// (the OUT its members pushed), and stores the words that changed since
// its last trade into the neighbour's inbox; the neighbour ORs its
// inboxes into its states after its own launches (part_trade). A pull
// read a byte per vertex over the link, a round trip for each line, and
// read every word that still held an undecided byte; a trade stores two
// bits per vertex, as posted writes, and only what changed, while the
// reads stay in each part's own memory. On a random graph, whose
// boundary is nearly every vertex, a pull read the whole other half's
// states after every launch.
//
// A trade carries what its sender knew when it packed, where a pull read
// the owner's states as they were: a decision reaches the neighbour at
// the sender's next trade, which follows the launch that made it.
// MIS-1's tails still spin on ghost bytes, so the windows are pushed as
// bytes before them (windowPush) either way.

// tradeSegment is one segment of a part's trade: the words it packs into
// a neighbour's inbox or unpacks from its own.
type tradeSegment struct {
	PullSegment
	pack bool
	// inbox: where the words go (its offset in the unpacking part's
	// trade buffer, of part inboxOf); last: this part's copy of what it
	// stored there (an offset in its trade buffer).
	inboxOf     int
	inbox, last int64
}

// tradeWords is the number of inbox words of segment g: one per 16 bytes
// of the unpacking part's states, from the 16-byte group of g.Dst on.
func tradeWords(g PullSegment) int64 { return (g.Dst%16 + int64(g.Len) + 15) / 16 }

// planTrades lays out the trades of parts whose pulls are segs (by
// reader): each part unpacks its own segments, and packs those of its
// neighbours that it is the owner of. It returns each part's segments
// and the bytes of its trade buffer (its inboxes, then its copies).
func planTrades(segs [][]PullSegment) ([][]tradeSegment, []int64) {
	out := make([][]tradeSegment, len(segs))
	size := make([]int64, len(segs))
	inbox := make([][]int64, len(segs))
	for q, ss := range segs {
		for _, g := range ss {
			inbox[q] = append(inbox[q], size[q])
			out[q] = append(out[q], tradeSegment{PullSegment: g, inboxOf: q, inbox: size[q]})
			size[q] += 4 * tradeWords(g)
		}
	}
	for t, ss := range segs {
		for i, g := range ss {
			q := g.From
			out[q] = append(out[q], tradeSegment{PullSegment: g, pack: true, inboxOf: t, inbox: inbox[t][i], last: size[q]})
			size[q] += 4 * tradeWords(g)
		}
	}
	return out, size
}

// tradeDescriptors packs segments as part_trade reads them (part.cu):
// the inbox's address, the copy's, first<<32 | len, and pack<<63 |
// back<<62 | dst. base gives each part's trade buffer.
func tradeDescriptors(segs []tradeSegment, base func(part int) uint64) ([]uint64, error) {
	out := make([]uint64, 0, 4*len(segs))
	for _, g := range segs {
		first, last := uint64(g.Dst), uint64(0)
		if g.pack {
			first, last = uint64(g.Src), base(g.From)+uint64(g.last)
		}
		if g.Len <= 0 || g.Src < 0 || g.Dst < 0 || g.Src+int64(g.Len) >= 1<<32 || g.Dst+int64(g.Len) >= 1<<32-16 {
			return nil, fmt.Errorf("trade segment of %d bytes at local id %d", g.Len, g.Dst)
		}
		flags := uint64(g.Dst)
		if g.pack {
			flags |= 1 << 63
		}
		if g.Back {
			flags |= 1 << 62
		}
		out = append(out, base(g.inboxOf)+uint64(g.inbox), last, first<<32|uint64(g.Len), flags)
	}
	return out, nil
}

// prepareTrades gives every part its trade: the segments of segs (each
// part's pulls) as inboxes it unpacks and words it packs for the others.
func (pp *Parts) prepareTrades(segs [][]PullSegment) error {
	plan, size := planTrades(segs)
	for q, p := range pp.ps {
		p.trade = nil
		if size[q] == 0 {
			continue
		}
		var err error
		if p.tradeBuf, err = p.alloc(size[q]); err != nil {
			return err
		}
	}
	for q, p := range pp.ps {
		if len(plan[q]) == 0 {
			continue
		}
		most := int64(0)
		for _, g := range plan[q] {
			most = max(most, tradeWords(g.PullSegment))
			if !g.pack && (g.Dst+int64(g.Len)+15)/16*16 > p.dg.ws.st.Size() {
				return fmt.Errorf("part %d: its states (%d bytes) do not hold the 16-byte groups of a window to %d", q, p.dg.ws.st.Size(), g.Dst+int64(g.Len))
			}
		}
		words, err := tradeDescriptors(plan[q], func(r int) uint64 { return uint64(pp.ps[r].tradeBuf.Ptr()) })
		if err != nil {
			return fmt.Errorf("part %d: %w", q, err)
		}
		if p.trade, err = upload(p, words); err != nil {
			return err
		}
		n := len(plan[q])
		p.tradeSegs, p.tradeGrid = int32(n), gridShare(p.l, "part_trade", most, n)*uint32(n)
	}
	return nil
}

// trade queues the part's packed trade after a launch.
func (pr *partRun) trade() error {
	p := pr.p
	return p.l.Launch(nil, "part_trade", p.tradeGrid, p.dg.ws.st, p.trade, p.tradeSegs, p.bytes)
}

// clearTrades zeroes the part's inboxes and copies before a run: a run
// starts from undecided states everywhere.
func (p *part) clearTrades(s *cuda.Stream) error {
	if p.tradeBuf == nil {
		return nil
	}
	return p.tradeBuf.MemsetAsync8(0, s)
}
