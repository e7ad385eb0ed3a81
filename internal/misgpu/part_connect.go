package misgpu

import (
	"fmt"
	"slices"
)

// How the parts reach each other: each part's state array straight
// over peer access or on one device, else a mailbox of pairs in pinned
// host memory; the slots of the boundary, and where a ghost goes back
// to its owner.

// mailboxBit is PART_MAILBOX of part.cu, slotBits PART_SLOT_BITS.
const (
	mailboxBit = 1 << 63
	slotBits   = 40
	epochShift = 40 // PART_EPOCH_SHIFT
)

// connect decides how each part reaches each other (its state array
// straight where the devices reach each other's memory, else a pinned
// mailbox) and uploads the slots of the boundary.
func (pp *Parts) connect() error {
	k := len(pp.ps)
	// reach[from][to]: the part from stores into to's state array
	// (not through a mailbox in host memory).
	reach := make([][]bool, k)
	// The tail sends where every part stores into its neighbours'
	// states (peer access or one device). A tail waits, through other
	// parts, on the others' tails, so the tails of one device must run
	// at once: each takes its share of what fits there (sharers), else
	// one that waits on another not yet resident spins to its bound.
	pp.tailSends = k > 1 && !pp.opts.Mailboxes && !pp.opts.Pairs && !pp.opts.NoTailSends
	devices := map[int]int{}
	for _, p := range pp.ps {
		devices[p.spec.Device]++
	}
	for _, p := range pp.ps {
		p.sharers = devices[p.spec.Device]
	}
	for from, p := range pp.ps {
		reach[from] = make([]bool, k)
		bases := make([]uint64, k)
		count := make([]int64, k)
		for _, t := range p.spec.To {
			count[t.Part]++
		}
		mailbox := make([]bool, k)
		for to, t := range pp.ps {
			if count[to] == 0 {
				continue
			}
			kind, err := pp.reach(p, t)
			if err != nil {
				return fmt.Errorf("link %d→%d: %w", from, to, err)
			}
			reach[from][to] = kind != "mailbox"
			pp.tailSends = pp.tailSends && kind != "mailbox"
			bases[to] = uint64(t.dg.ws.st.Ptr())
			if kind == "mailbox" || pp.opts.Pairs {
				if bases[to], err = pp.mailbox(p, t, kind, count[to]); err != nil {
					return err
				}
				mailbox[to] = true
				if kind != "mailbox" {
					kind += " pairs"
				}
			}
			pp.links = append(pp.links, fmt.Sprintf("%d→%d %s", from, to, kind))
		}
		slots := make([]uint64, len(p.spec.To))
		for i, t := range p.spec.To {
			slots[i] = uint64(t.Part)<<slotBits | uint64(t.Local)
			if mailbox[t.Part] {
				slots[i] |= mailboxBit
			}
		}
		var err error
		if p.slot, err = upload(p, slots); err != nil {
			return err
		}
		if p.bases, err = upload(p, bases); err != nil {
			return err
		}
		if p.fill, err = p.alloc(4 * int64(k)); err != nil {
			return err
		}
	}
	var err error
	if pp.pulls, err = pp.preparePulls(reach); err != nil {
		return err
	}
	if pp.pulls {
		for i := range pp.links {
			pp.links[i] += " pull"
		}
	}
	for to, t := range pp.ps {
		if err := pp.homes(t, to, reach); err != nil {
			return err
		}
	}
	return nil
}

// homes uploads where part t (number to) gives its ghosts back: the
// owner slots of those past the windows, and each owner's state array
// where the owner stores into t's directly (then t reaches the owner's
// memory too) and the returns pay, else 0.
func (pp *Parts) homes(t *part, to int, reach [][]bool) error {
	s := t.spec
	home := s.homeWords()
	rbase := make([]uint64, len(pp.ps))
	for q, o := range pp.ps {
		if reach[q][to] && pp.returns() {
			rbase[q] = uint64(o.dg.ws.st.Ptr())
			t.returns = len(s.Offsets)-1 > GhostFrom(s.Own)
		}
	}
	var err error
	if t.home, err = upload(t, home); err != nil {
		return err
	}
	t.rbase, err = upload(t, rbase)
	return err
}

// returns says whether the parts give the OUT they push into their
// ghosts back to the owners (part_return). Not where they pull: a pull
// reads the owners' states as they are. Nor where MIS-1's tails send:
// the owner's tail learns of its vertex's OUT from the neighbour's
// member, which the neighbour's tail sends anyway, and each launch's
// returns cost more than the earlier news saves (5-7 % of a run on
// relabelled hex27 and the refined Gmsh part by locality, on two GPUs
// and on one). At MIS-2 an OUT is what the owner's blocking two hops
// away is made of, and only the return brings it.
func (pp *Parts) returns() bool {
	return !pp.opts.NoReturns && !pp.pulls && !(pp.tailSends && pp.opts.Dist == 1)
}

// mailbox makes the mailbox of pairs part p sends part t, of n pairs at
// most: in pinned host memory when kind is "mailbox", else in t's memory.
// It returns the address of the pairs.
func (pp *Parts) mailbox(p, t *part, kind string, n int64) (uint64, error) {
	k := int64(len(pp.ps))
	q := slices.Index(pp.ps, t)
	in := inbox{cap: n}
	var err error
	if kind == "mailbox" {
		if p.pubHost == nil {
			if p.pubHost, err = p.allocHost(4 * k); err != nil {
				return 0, err
			}
		}
		box, err := p.allocHost(8 * n)
		if err != nil {
			return 0, err
		}
		in.box, in.filled = hostPtr(box), hostPtr(p.pubHost)+4*uintptr(q)
	} else {
		if p.pubDev == nil {
			if p.pubDev, err = p.alloc(4 * k); err != nil {
				return 0, err
			}
		}
		box, err := t.alloc(8 * n)
		if err != nil {
			return 0, err
		}
		in.box, in.filled = box.Ptr(), p.pubDev.Ptr()+4*uintptr(q)
	}
	if in.at, err = t.alloc(16); err != nil {
		return 0, err
	}
	t.inbox = append(t.inbox, in)
	return uint64(in.box), nil
}

// reach says how part p stores into part t: "same device", "peer"
// (access enabled both ways) or "mailbox".
func (pp *Parts) reach(p, t *part) (string, error) {
	sd, td := p.ctx.Device(), t.ctx.Device()
	switch {
	case pp.opts.Mailboxes:
		return "mailbox", nil
	case sd.Ordinal() == td.Ordinal():
		return "same device", nil
	}
	a, err := sd.CanAccessPeer(td)
	if err != nil {
		return "", err
	}
	b, err := td.CanAccessPeer(sd)
	if err != nil {
		return "", err
	}
	if !a || !b {
		return "mailbox", nil
	}
	if err := p.ctx.EnablePeerAccess(t.ctx); err != nil {
		return "", err
	}
	if err := t.ctx.EnablePeerAccess(p.ctx); err != nil {
		return "", err
	}
	return "peer", nil
}
