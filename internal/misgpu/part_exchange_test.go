package misgpu

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// exchangeBlock is the body and the blocks block b of a part_exchange
// launch of grid blocks runs (part.cu): part_send's block b below sgrid,
// else part_return's block b-sgrid of grid-sgrid.
func exchangeBlock(b, sgrid, grid int) (send bool, blk, of int) {
	if b < sgrid {
		return true, b, sgrid
	}
	return false, b - sgrid, grid - sgrid
}

// exchangeState is what part_send and part_return read and write over a
// run: a part's owned and ghost states, its boundary and ghosts' homes,
// and what reached its neighbours.
type exchangeState struct {
	st, gst, back []uint8
	sent          []bool
	stores        map[uint64]uint8
	owners        [][]uint8
	fill          []uint32
	sends, rets   *pendingModel
	bytes, backs  int
}

// TestPartExchangeModel: part_exchange, part_send's and part_return's
// blocks in one launch in any order, leaves what the two launches leave
// (states, stores, ghosts given back, pending lists and their scans) at
// every call of a run.
func TestPartExchangeModel(t *testing.T) {
	const own, ghosts, parts = 200, 90, 3
	rng := rand.New(rand.NewPCG(9, 10))
	var list []int32
	ofs := []int32{0}
	var slot []uint64
	next := make([]uint64, parts)
	for v := range int32(own) {
		if rng.IntN(3) == 0 {
			continue
		}
		list = append(list, v)
		for q := range uint64(parts) {
			if rng.IntN(2) == 0 {
				slot = append(slot, q<<slotBits|next[q])
				next[q]++
			}
		}
		ofs = append(ofs, int32(len(slot)))
	}
	home := make([]uint64, ghosts)
	for g := range home {
		home[g] = uint64(g%parts)<<slotBits | uint64(g)
	}
	spec := &PartSpec{Own: own}
	rbase := []bool{true, true, false}
	fresh := func(sgrid, rgrid int) *exchangeState {
		x := &exchangeState{st: make([]uint8, own), gst: make([]uint8, ghosts), back: make([]uint8, (ghosts+15)/16*16),
			sent: make([]bool, len(list)), stores: map[uint64]uint8{}, fill: make([]uint32, parts),
			sends: newPendingModel(len(list), sgrid, rand.New(rand.NewPCG(1, 1))),
			rets:  newPendingModel((ghosts+15)/16, rgrid, rand.New(rand.NewPCG(2, 2)))}
		for range parts {
			x.owners = append(x.owners, make([]uint8, ghosts+4))
		}
		return x
	}
	const sgrid, rgrid = 3, 2
	two, one := fresh(sgrid, rgrid), fresh(sgrid, rgrid)
	or := func(x *exchangeState) func(uint64, uint32) {
		return func(word uint64, bits uint32) {
			q, l := word>>slotBits, word&(1<<slotBits-1)
			if rbase[q] {
				for j := range uint64(4) {
					x.owners[q][l+j] |= uint8(bits >> (8 * j))
				}
			}
		}
	}
	for call := range 6 {
		for v := range two.st {
			if two.st[v]&3 == 0 && (rng.IntN(3) == 0 || call == 5) {
				two.st[v] = uint8(1 + rng.IntN(2))
			}
		}
		for g := range two.gst {
			if two.gst[g]&3 == 0 && (rng.IntN(3) == 0 || call == 5) {
				two.gst[g] = uint8(1 + rng.IntN(2))
			}
		}
		copy(one.st, two.st)
		copy(one.gst, two.gst)
		// Two launches.
		two.bytes += sendModel(two.st, nil, list, two.sent, ofs, slot, two.fill, nil, two.stores, 1, two.sends)
		r, _ := returnModel(spec, ghosts, two.gst, two.back, home, rbase, two.owners, two.rets)
		two.backs += r
		// One: the launch's blocks in any order.
		sb, rb := one.sends.begin(), one.rets.begin()
		skept, rkept := make([][]int32, len(sb)), make([][]int32, len(rb))
		for _, b := range rng.Perm(sgrid + rgrid) {
			send, blk, of := exchangeBlock(b, sgrid, sgrid+rgrid)
			if send && of == len(sb) {
				one.bytes += sendWarps(one.st, nil, list, one.sent, ofs, slot, one.fill, nil, one.stores, 1, sb[blk], &skept[blk])
			} else if !send && of == len(rb) {
				returnGroups(spec, ghosts, one.gst, one.back, home, rbase, rb[blk], &rkept[blk], &one.backs, or(one))
			} else {
				t.Fatalf("block %d of %d runs a body of %d blocks", b, sgrid+rgrid, of)
			}
		}
		one.sends.end(skept)
		one.rets.end(rkept)
		if !slices.Equal(one.sent, two.sent) || !maps.Equal(one.stores, two.stores) || !slices.Equal(one.back, two.back) ||
			one.bytes != two.bytes || one.backs != two.backs || !slices.EqualFunc(one.owners, two.owners, slices.Equal) ||
			!slices.Equal(one.sends.scanned, two.sends.scanned) || !slices.Equal(one.rets.scanned, two.rets.scanned) {
			t.Fatalf("call %d: one launch leaves %d bytes sent, %d given back, scans %v %v; two launches %d, %d, %v %v",
				call, one.bytes, one.backs, one.sends.scanned, one.rets.scanned, two.bytes, two.backs, two.sends.scanned, two.rets.scanned)
		}
	}
	if two.bytes == 0 || two.backs == 0 || slices.Contains(two.sent, false) {
		t.Fatalf("the run sent %d bytes and gave %d ghosts back, some boundary vertex unsent: it tests nothing", two.bytes, two.backs)
	}
}

// TestReturnsPolicy: the ghosts' OUT goes back to their owners only
// where the parts push and no MIS-1 tail sends, unless turned off.
func TestReturnsPolicy(t *testing.T) {
	for _, c := range []struct {
		dist             int
		pulls, tailSends bool
		noReturns        bool
		want             bool
	}{
		{1, false, false, false, true},
		{1, false, true, false, false},
		{1, true, false, false, false},
		{2, false, false, false, true},
		{2, false, true, false, true},
		{2, true, false, false, false},
		{2, false, false, true, false},
	} {
		pp := &Parts{opts: PartsOptions{Dist: c.dist, NoReturns: c.noReturns}, pulls: c.pulls, tailSends: c.tailSends}
		if got := pp.returns(); got != c.want {
			t.Errorf("%+v: returns %v", c, got)
		}
	}
}
