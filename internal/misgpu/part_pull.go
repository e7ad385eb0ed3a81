package misgpu

import (
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// Pulls. Where every ghost of every part lies in a window (ranges in id
// order, with ghosts of at most MaxWindows neighbours), the keys are
// hashes (the states hold no class bits, so a state byte means the same
// on every part) and each part reaches its neighbours' memory, a part
// reads after each of its launches what its neighbours decided
// (part_pull) instead of being sent it: a window is a contiguous run of
// the owner's state bytes, read over the link a line at a time, where
// part_send and part_return store and OR a byte or a word at a time.
// On a random graph, whose boundary is nearly every vertex, those were
// millions of single stores and atomics over NVLink a run. A pull reads
// the words of a window that still hold a byte the reader has not
// decided, so its bytes fall as the run goes on. MIS-1's persistent
// tails spin on their ghosts and cannot pull: a tail stores each
// boundary vertex it decides into its neighbours' ghosts itself, and
// what a part decided before its tail reaches them by a push of its
// windows (part_pull run the other way: the neighbour's states written
// from this part's) just before the tail starts. Pulls read whole lines
// over the link where part_send, which kept the forward direction
// before, stored a byte at a time.

// PullSegment is a run of another part's state bytes that a part reads
// after each launch: Len bytes from local id Src of part From meet the
// reader's states from local id Dst on. Forward: Src..Src+Len are From's
// owned vertices that the reader keeps in a window at Dst. Back: they are
// From's window of the reader's owned vertices, Dst their first.
type PullSegment struct {
	From     int
	Src, Dst int64
	Len      int
	Back     bool
}

// PullSegments returns what part q of specs reads in each pull: a
// forward segment for each of its windows and a back segment for each
// window of another part that holds q's vertices. It returns nil when
// some part cannot pull: a ghost in the tables, or keys with classes or
// ranks (the states' class bits may differ between parts).
func PullSegments(specs []*PartSpec, q int) []PullSegment {
	if !pullable(specs) {
		return nil
	}
	var out []PullSegment
	for _, w := range specs[q].Windows {
		out = append(out, PullSegment{From: w.Owner, Src: w.OwnerLocal, Dst: int64(w.From), Len: w.Len})
	}
	for r, s := range specs {
		for _, w := range s.Windows {
			if r != q && w.Owner == q {
				out = append(out, PullSegment{From: r, Src: int64(w.From), Dst: w.OwnerLocal, Len: w.Len, Back: true})
			}
		}
	}
	return out
}

// pullable says whether the parts of specs can all pull.
func pullable(specs []*PartSpec) bool {
	if len(specs) < 2 {
		return false
	}
	for _, s := range specs {
		if !s.hashKeys() || !s.windowsOnly() {
			return false
		}
	}
	return true
}

// pullWords packs segments as part_pull reads them: the address of the
// first byte read, then back<<63 | len<<32 | dst.
func pullWords(segs []PullSegment, base func(part int) uint64) ([]uint64, error) {
	out := make([]uint64, 0, 2*len(segs))
	for _, g := range segs {
		if g.Len <= 0 || g.Len >= 1<<31 || g.Dst < 0 || g.Dst+int64(g.Len) > 1<<32-4 {
			return nil, fmt.Errorf("pull segment of %d bytes at local id %d", g.Len, g.Dst)
		}
		w := uint64(g.Len)<<32 | uint64(g.Dst)
		if g.Back {
			w |= 1 << 63
		}
		out = append(out, base(g.From)+uint64(g.Src), w)
	}
	return out, nil
}

// preparePulls sets up part_pull on every part, where reach says each
// part reaches each neighbour's memory (and is reached by it), and
// reports whether the parts pull.
func (pp *Parts) preparePulls(reach [][]bool) (bool, error) {
	o := pp.opts
	if o.Push || o.Mailboxes || o.Pairs {
		return false, nil
	}
	specs := make([]*PartSpec, len(pp.ps))
	for q, p := range pp.ps {
		specs[q] = p.spec
	}
	if !pullable(specs) {
		return false, nil
	}
	// MIS-1's persistent tails wait, spinning on their ghosts, for the
	// decisions of their neighbours' launches before and during their
	// own, which they cannot pull: where they run, each part pushes its
	// windows before its tail (or with SendForward, part_send stores
	// the decisions after every launch, and the parts pull only what
	// goes back).
	tails := pp.tailSends && o.Dist == 1
	sendsToo := tails && o.SendForward
	segs := make([][]PullSegment, len(pp.ps))
	for q := range pp.ps {
		for _, g := range PullSegments(specs, q) {
			if !reach[g.From][q] || !reach[q][g.From] {
				return false, nil
			}
			if g.Back || !sendsToo {
				segs[q] = append(segs[q], g)
			}
		}
	}
	if tails && !sendsToo {
		if err := pp.preparePushes(segs); err != nil {
			return false, err
		}
	}
	for q, p := range pp.ps {
		p.pullsAll = !sendsToo
		if len(segs[q]) == 0 {
			continue
		}
		var err error
		if p.pull, p.pullGrid, err = pp.uploadSegments(q, segs[q]); err != nil {
			return false, err
		}
		p.pullSegs = int32(len(segs[q]))
	}
	return true, nil
}

// uploadSegments uploads segs, read by part_pull launched on part q, as
// the kernel reads them (pullWords, the parts' state arrays as their
// addresses), and returns them with the launch's grid.
func (pp *Parts) uploadSegments(q int, segs []PullSegment) (*cuda.Buffer, uint32, error) {
	p := pp.ps[q]
	words, err := pullWords(segs, func(r int) uint64 { return uint64(pp.ps[r].dg.ws.st.Ptr()) })
	if err != nil {
		return nil, 0, fmt.Errorf("part %d: %w", q, err)
	}
	b, err := upload(p, words)
	if err != nil {
		return nil, 0, err
	}
	return b, pullGrid(p, segs), nil
}

// pullUnroll is the words a thread of part_pull takes at a time
// (PULL_WORDS in part.cu).
const pullUnroll = 4

// pullGrid is part_pull's grid over segs: blocks for the longest, for
// each segment.
func pullGrid(p *part, segs []PullSegment) uint32 {
	most := 0
	for _, g := range segs {
		most = max(most, g.Len)
	}
	n := len(segs)
	return gridShare(p.l, "part_pull", (int64(most+7)/4+pullUnroll-1)/pullUnroll, n) * uint32(n)
}

// windowPush is a part's push of its vertices into one neighbour's
// windows of them: part_pull launched by the owner, with the
// neighbour's states as those it writes and the owner's as those it
// reads.
type windowPush struct {
	st, seg *cuda.Buffer
	nseg    int32
	grid    uint32
}

// preparePushes gives each part the forward segments its neighbours
// pull from it (segs), as pushes into each neighbour's states.
func (pp *Parts) preparePushes(segs [][]PullSegment) error {
	for q, p := range pp.ps {
		p.pushes = nil
		for t, to := range pp.ps {
			var mine []PullSegment
			for _, g := range segs[t] {
				if !g.Back && g.From == q {
					mine = append(mine, g)
				}
			}
			if len(mine) == 0 {
				continue
			}
			seg, grid, err := pp.uploadSegments(q, mine)
			if err != nil {
				return err
			}
			p.pushes = append(p.pushes, windowPush{st: to.dg.ws.st, seg: seg, nseg: int32(len(mine)), grid: grid})
		}
	}
	return nil
}

// beforeTail queues what a part does before its MIS-1 tail: where the
// tail sends (part1_tail), the push of its windows, so that the
// neighbours' tails, which spin on their ghosts, see what it decided
// before it. It says whether it queued a push.
func (pr *partRun) beforeTail() (bool, error) {
	if pr == nil || !pr.tailSends {
		return false, nil
	}
	return len(pr.p.pushes) > 0, pr.pushWindows()
}

// pushWindows queues the part's pushes of its windows into its
// neighbours' states: before its tail (beforeTail), or after every
// launch where it runs none (exchange).
func (pr *partRun) pushWindows() error {
	p := pr.p
	for _, w := range p.pushes {
		if err := p.l.Launch(nil, "part_pull", w.grid, w.st, w.seg, w.nseg, p.bytes); err != nil {
			return err
		}
	}
	return nil
}
