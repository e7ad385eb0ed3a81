package misgpu

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

const empty = ^uint64(0)

// sendModel is part_send on the host, warp by warp as the device runs
// it: per trip, each lane takes one boundary entry of those pm left
// pending (an undecided one stays pending); the lanes that write to one
// mailbox reserve their places with one add (the leader's) and write at
// the leader's base plus their rank among those lanes. It returns each
// mailbox's pairs (tagged with epoch) and the stores into state arrays.
// xcls, when not nil, gives the class bits of each listed vertex.
func sendModel(st, xcls []uint8, list []int32, sent []bool, ofs []int32, slot []uint64, fill []uint32,
	boxes map[uint64][]uint64, stores map[uint64]uint8, epoch uint32, pm *pendingModel) (bytes int) {
	blocks := pm.begin()
	kept := make([][]int32, len(blocks))
	defer func() { pm.end(kept) }()
	for blk, entries := range blocks {
		bytes += sendWarps(st, xcls, list, sent, ofs, slot, fill, boxes, stores, epoch, entries, &kept[blk])
	}
	return bytes
}

// sendWarps is one block of sendModel: its entries, 32 lanes a trip.
func sendWarps(st, xcls []uint8, list []int32, sent []bool, ofs []int32, slot []uint64, fill []uint32,
	boxes map[uint64][]uint64, stores map[uint64]uint8, epoch uint32, entries []int32, kept *[]int32) (bytes int) {
	for i0 := 0; i0 < len(entries); i0 += 32 {
		type lane struct {
			k, cnt int32
			x      uint8
		}
		var ls [32]lane
		most := int32(0)
		for ln := range 32 {
			if i0+ln >= len(entries) {
				continue
			}
			i := int(entries[i0+ln])
			if sent[i] {
				continue
			}
			if st[list[i]]&3 == 0 {
				*kept = append(*kept, int32(i))
				continue
			}
			s := st[list[i]]
			sent[i] = true
			state := s & 2
			if s&1 != 0 {
				state = 1
			}
			cls := s &^ 3
			if xcls != nil {
				cls = xcls[i] << 2
			}
			ls[ln] = lane{ofs[i], ofs[i+1] - ofs[i], cls | state}
			most = max(most, ls[ln].cnt)
		}
		for j := range most {
			// __match_any_sync over the target mailbox, then one add
			// per group (its leader's) and a write at base + rank.
			groups := map[uint64]uint32{}
			for ln, l := range ls {
				if j < l.cnt && slot[l.k+j]&mailboxBit != 0 {
					groups[(slot[l.k+j]&^mailboxBit)>>slotBits] |= 1 << ln
				}
			}
			base := map[uint64]uint32{}
			for q, peers := range groups {
				base[q] = fill[q]
				fill[q] += uint32(bits.OnesCount32(peers))
			}
			for ln, l := range ls {
				if j >= l.cnt {
					continue
				}
				d := slot[l.k+j]
				q, loc := (d&^mailboxBit)>>slotBits, d&(1<<slotBits-1)
				if d&mailboxBit == 0 {
					stores[q<<slotBits|loc] = l.x
					bytes++
					continue
				}
				at := base[q] + uint32(bits.OnesCount32(groups[q]&(1<<ln-1)))
				if boxes[q][at] != empty {
					panic("a mailbox place written twice")
				}
				boxes[q][at] = uint64(epoch)<<epochShift | loc<<8 | uint64(l.x)
				bytes += 8
			}
		}
	}
	return bytes
}

// TestPartSendModel: every decided boundary vertex reaches every ghost
// slot of it exactly once, as a store or as a pair, over calls made as
// the states get decided, and the mailbox counts add up to the pairs;
// the class bits are the sender's own, or those the host gives.
func TestPartSendModel(t *testing.T) {
	for _, withClasses := range []bool{false, true} {
		t.Run(fmt.Sprintf("classes=%v", withClasses), func(t *testing.T) { partSendModel(t, withClasses) })
	}
}

func partSendModel(t *testing.T, withClasses bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, parts = 300, 4
	list := make([]int32, 0, n)
	for v := range int32(n) {
		if rng.IntN(3) > 0 {
			list = append(list, v)
		}
	}
	ofs := []int32{0}
	var slot []uint64
	want := map[[2]uint64]int32{} // (part, slot) -> vertex
	next := make([]uint64, parts)
	for _, v := range list {
		for q := range uint64(parts) {
			if rng.IntN(2) == 0 {
				continue
			}
			d := q<<slotBits | next[q]
			if q%2 == 1 {
				d |= mailboxBit
			}
			want[[2]uint64{q, next[q]}] = v
			next[q]++
			slot = append(slot, d)
		}
		ofs = append(ofs, int32(len(slot)))
	}
	st := make([]uint8, n)
	var xcls []uint8
	if withClasses {
		// A sender with ranks too large for the state byte keeps no
		// class bits; its neighbours key the ghosts by these.
		xcls = make([]uint8, len(list))
		for i := range xcls {
			xcls[i] = uint8(rng.IntN(maxSmallRanks))
		}
	}
	sent := make([]bool, len(list))
	fill := make([]uint32, parts)
	boxes := map[uint64][]uint64{}
	for q := range uint64(parts) {
		boxes[q] = slices.Repeat([]uint64{empty}, int(next[q]))
	}
	stores := map[uint64]uint8{}
	got := map[[2]uint64]uint8{}
	pm := newPendingModel(len(list), 3, rng)
	var unsent []int // entries not sent before each call
	for round := 0; round < 7; round++ {
		for v := range st {
			if st[v] == 0 && (rng.IntN(3) == 0 || round == 6) {
				st[v] = uint8(rng.IntN(4))<<2 | uint8(1+rng.IntN(2))
			}
		}
		unsent = append(unsent, len(slices.DeleteFunc(slices.Clone(sent), func(x bool) bool { return x })))
		sendModel(st, xcls, list, sent, ofs, slot, fill, boxes, stores, 7, pm)
	}
	// Each call scans only the entries still unsent: its first call
	// every one.
	if !slices.Equal(pm.scanned, unsent) || unsent[0] != len(list) || unsent[1] >= len(list) {
		t.Fatalf("calls scanned %v entries, with %v unsent before them", pm.scanned, unsent)
	}
	for k, x := range stores {
		got[[2]uint64{k >> slotBits, k & (1<<slotBits - 1)}] = x
	}
	for q := range uint64(parts) {
		pairs := boxes[q][:fill[q]]
		if slices.Contains(pairs, empty) || q%2 == 1 && fill[q] != uint32(next[q]) {
			t.Fatalf("mailbox %d: a hole below its fill count %d (of %d places)", q, fill[q], next[q])
		}
		for _, p := range pairs {
			if p>>epochShift != 7 {
				t.Fatalf("mailbox %d: pair %#x without the run's epoch", q, p)
			}
			k := [2]uint64{q, p >> 8 & (1<<32 - 1)}
			if _, dup := got[k]; dup {
				t.Fatalf("slot %v sent twice", k)
			}
			got[k] = uint8(p)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d slots reached, want %d", len(got), len(want))
	}
	at := map[int32]int{}
	for i, v := range list {
		at[v] = i
	}
	for k, v := range want {
		x := st[v]
		if xcls != nil {
			x = xcls[at[v]]<<2 | st[v]&3
		}
		if got[k] != x {
			t.Fatalf("slot %v holds %#x, vertex %d is %#x", k, got[k], v, x)
		}
	}
}

// recvModel is part_recv_at and part_recv on the host: the pairs from
// the first one not applied up to the published count (at most cap)
// are applied when they carry the run's epoch and a slot of the part;
// the first that does not is where the next call starts.
func recvModel(box []uint64, filled, cap uint32, at *[3]uint32, st []uint8, epoch uint32) {
	from := at[2]
	to := min(max(filled, from), cap)
	at[0], at[1], at[2] = from, to, to
	for i := from; i < to; i++ {
		p := box[i]
		l := uint32(p >> 8)
		if uint32(p>>epochShift) != epoch || int(l) >= len(st) {
			at[2] = min(at[2], i)
			continue
		}
		st[l] = uint8(p)
	}
}

// TestPartRecvModel: a mailbox in memory that earlier runs and another
// graph's mailboxes filled, whose count runs ahead of its pairs and
// starts out stale (beyond the mailbox), with pairs that land in any
// order: the receiver applies every pair of the run exactly as sent,
// never one of another run, never a slot out of range, and ends with
// all of them applied.
func TestPartRecvModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const slots, pairs, epoch = 300, 200, 9
	box := make([]uint64, pairs)
	for i := range box {
		// Another graph's pairs (slots out of range) and this layout's
		// from the last run (other states): both must stay unapplied.
		box[i] = uint64(epoch-1)<<epochShift | uint64(rng.IntN(1<<31))<<8 | 1
		if i%3 == 0 {
			box[i] = uint64(epoch-1)<<epochShift | uint64(rng.IntN(slots))<<8 | 2
		}
	}
	// The run's pairs: distinct ghost slots, IN or OUT.
	want := make([]uint64, pairs)
	for i, l := range rng.Perm(slots)[:pairs] {
		want[i] = uint64(epoch)<<epochShift | uint64(l)<<8 | uint64(1+rng.IntN(2))
	}
	st := make([]uint8, slots)
	var at [3]uint32
	// A stale count from an earlier run, beyond the mailbox: nothing of
	// it may be applied.
	filled := uint32(5000)
	recvModel(box, filled, pairs, &at, st, epoch)
	if at[2] != 0 || slices.ContainsFunc(st, func(x uint8) bool { return x != 0 }) {
		t.Fatalf("pairs of another run applied (at %v)", at)
	}
	written := 0
	for written < pairs || at[2] < pairs {
		if written < pairs {
			// A launch's sends: the count covers them at once, while
			// the pairs themselves land in any order, some later.
			k := min(pairs, written+1+rng.IntN(20))
			landed := rng.Perm(k - written)
			for _, j := range landed[:len(landed)/2] {
				box[written+j] = want[written+j]
			}
			recvModel(box, uint32(k), pairs, &at, st, epoch)
			for _, j := range landed[len(landed)/2:] {
				box[written+j] = want[written+j]
			}
			written, filled = k, uint32(k)
		}
		recvModel(box, filled, pairs, &at, st, epoch)
		for l, x := range st {
			if x != 0 && !slices.ContainsFunc(want, func(p uint64) bool { return uint32(p>>8) == uint32(l) && uint8(p) == x }) {
				t.Fatalf("slot %d holds %d, which no pair of the run says", l, x)
			}
		}
	}
	for _, p := range want {
		if l := uint32(p >> 8); st[l] != uint8(p) {
			t.Fatalf("slot %d holds %d, want %d", l, st[l], uint8(p))
		}
	}
}

// returnModel is part_return on the host, sixteen ghosts a thread as
// the kernel takes them: each ghost found OUT and not given back yet is
// marked, and runs of them that go to one state word of one owner are
// ORed in together where rbase reaches the owner. It returns the ghosts
// given back and the atomics that took. A ghost's home is s's: in a
// window, computed (HomeWord, the kernel's arithmetic), past them
// home's entry. A thread takes the groups of 16 that pm left pending,
// and keeps pending those that hold an undecided ghost.
func returnModel(s *PartSpec, nghost int, st, back []uint8, home []uint64, rbase []bool, owners [][]uint8,
	pm *pendingModel) (returned, atomics int) {
	or := func(word uint64, bits uint32) {
		q, l := word>>slotBits, word&(1<<slotBits-1)
		if !rbase[q] {
			return
		}
		atomics++
		for j := range uint64(4) {
			owners[q][l+j] |= uint8(bits >> (8 * j))
		}
	}
	blocks := pm.begin()
	kept := make([][]int32, len(blocks))
	for blk, groups := range blocks {
		returnGroups(s, nghost, st, back, home, rbase, groups, &kept[blk], &returned, or)
	}
	pm.end(kept)
	return returned, atomics
}

// returnGroups is one block of returnModel: its groups of 16 ghosts.
func returnGroups(s *PartSpec, nghost int, st, back []uint8, home []uint64, rbase []bool, groups []int32, kept *[]int32,
	returned *int, or func(word uint64, bits uint32)) {
	for _, i := range groups {
		word, bits := ^uint64(0), uint32(0)
		keep := false
		for j := range 16 {
			g := 16*int(i) + j
			keep = keep || g < nghost && st[g]&3 == 0
			if g >= nghost || back[g] != 0 || st[g]&1 != 0 || st[g]&2 == 0 {
				continue
			}
			back[g] = 1
			d := s.HomeWord(g, home)
			if rbase[d>>slotBits] {
				*returned++
			}
			if wd := d &^ 3; wd != word {
				if bits != 0 {
					or(word, bits)
				}
				word, bits = wd, 0
			}
			bits |= 2 << (8 * (d & 3))
		}
		if bits != 0 {
			or(word, bits)
		}
		if keep {
			*kept = append(*kept, i)
		}
	}
}

// storeModel is part_store on the host (part1_tail's sends): a decided
// vertex with a boundary index and not sent yet stores its byte into
// every ghost slot of it.
func storeModel(at []int32, xcls []uint8, ofs []int32, slot []uint64, sent []bool, v int32, s uint8, stores map[uint64]uint8) int {
	i := at[v]
	if i < 0 || sent[i] {
		return 0
	}
	sent[i] = true
	state := s & 2
	if s&1 != 0 {
		state = 1
	}
	x := s&^3 | state
	if xcls != nil {
		x = xcls[i]<<2 | state
	}
	for _, d := range slot[ofs[i]:ofs[i+1]] {
		stores[d] = x
	}
	return int(ofs[i+1] - ofs[i])
}

// TestPartReturnModel: over launches that decide ghosts at random, every
// ghost that is OUT goes back to its owner exactly once where the owner
// is reachable, never where it is not, and an undecided or IN ghost
// never does; with the run of owner 0 in two windows (homes computed),
// the returns and atomics are those of the homes all in the table.
func TestPartReturnModel(t *testing.T) {
	const ghosts, run = 203, 100
	home := make([]uint64, ghosts)
	// A run of consecutive ids of owner 0, not word-aligned, as a range
	// partition gives; the rest scattered over owners 1 and 2 (2 not
	// reachable).
	perm := rand.New(rand.NewPCG(5, 6)).Perm(2 * 128)
	for g := range home {
		if g < run {
			home[g] = uint64(g + 2)
		} else {
			q := 1 + perm[g-run]%2
			home[g] = uint64(q)<<slotBits | uint64(perm[g-run]/2)
		}
	}
	tables := &PartSpec{Own: 128}
	windows := &PartSpec{Own: 128, Windows: []Window{{From: 128, Len: 60, OwnerLocal: 2}, {From: 188, Len: run - 60, OwnerLocal: 62}}}
	var got [2][3]int
	for i, s := range []*PartSpec{tables, windows} {
		h := home
		if s.Windows != nil {
			h = home[run:]
		}
		got[i] = returnRuns(t, s, ghosts, home, h)
	}
	if got[0] != got[1] {
		t.Fatalf("returns, atomics and members at the owners: %v with the table, %v with windows", got[0], got[1])
	}
}

// returnRuns runs returnModel over launches that decide ghosts at
// random, with s's windows and the table past them, and checks each
// ghost's owner against want (every ghost's home). It returns the returns, atomics
// and OUT ghosts at the owners.
func returnRuns(t *testing.T, s *PartSpec, ghosts int, want, table []uint64) [3]int {
	rng := rand.New(rand.NewPCG(5, 6))
	const parts, own = 3, 128
	owners := make([][]uint8, parts)
	for q := range owners {
		owners[q] = make([]uint8, own)
	}
	rbase := []bool{true, true, false}
	st := make([]uint8, ghosts)
	back := make([]uint8, (ghosts+15)/16*16)
	total, atomics := 0, 0
	pm := newPendingModel((ghosts+15)/16, 4, rng)
	var open []int // groups with an undecided ghost at each call
	for launch := 0; launch < 8; launch++ {
		for g := range st {
			if st[g]&3 == 0 && rng.IntN(3) == 0 {
				st[g] = uint8(rng.IntN(64))<<2 | uint8(1+rng.IntN(2))
			}
		}
		r, a := returnModel(s, ghosts, st, back, table, rbase, owners, pm)
		total, atomics = total+r, atomics+a
		open = append(open, undecidedGroups(st))
	}
	// Each call scans the groups the call before found undecided: its
	// first call every one.
	if pm.scanned[0] != pm.m || !slices.Equal(pm.scanned[1:], open[:len(open)-1]) || open[len(open)-1] >= pm.m {
		t.Fatalf("calls scanned %v groups, with %v undecided after each", pm.scanned, open)
	}
	n := 0
	for g, x := range st {
		q, l := want[g]>>slotBits, want[g]&(1<<slotBits-1)
		out := x&3 == 2
		if out && rbase[q] {
			n++
		}
		if got := owners[q][l] == 2; got != (out && rbase[q]) {
			t.Fatalf("ghost %d (state %#x) is %#x at its owner %d", g, x, owners[q][l], q)
		}
	}
	if total != n || n == 0 {
		t.Fatalf("%d returns, want %d", total, n)
	}
	if atomics >= total {
		t.Fatalf("%d atomics for %d returns: ghosts of one state word do not go together", atomics, total)
	}
	return [3]int{total, atomics, n}
}

// TestPartStoreModel: a tail's sends and part_send's after it reach
// every ghost slot of every boundary vertex exactly once, with the
// class bits the host gives.
func TestPartStoreModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 200
	at := make([]int32, n)
	var list []int32
	ofs := []int32{0}
	var slot []uint64
	for v := range int32(n) {
		at[v] = -1
		if rng.IntN(2) == 0 {
			at[v] = int32(len(list))
			list = append(list, v)
			for k := range 1 + rng.IntN(3) {
				slot = append(slot, uint64(k)<<slotBits|uint64(len(slot)))
			}
			ofs = append(ofs, int32(len(slot)))
		}
	}
	xcls := make([]uint8, len(list))
	for i := range xcls {
		xcls[i] = uint8(rng.IntN(64))
	}
	st := make([]uint8, n)
	sent := make([]bool, len(list))
	stores := map[uint64]uint8{}
	bytes := 0
	// The tail decides vertices one by one and sends each at once; the
	// pass over a vertex repeats while others are undecided.
	for pass := 0; pass < 4; pass++ {
		for v := range int32(n) {
			if st[v] == 0 && rng.IntN(2) == 0 {
				st[v] = uint8(1 + rng.IntN(2))
			}
			if st[v] != 0 {
				bytes += storeModel(at, xcls, ofs, slot, sent, v, st[v], stores)
			}
		}
	}
	for v := range st {
		if st[v] == 0 {
			st[v] = 2
		}
	}
	// part_send after the tail: what the tail left. Its next call scans
	// nothing.
	pm := newPendingModel(len(list), 5, rng)
	for range 2 {
		bytes += sendModel(st, xcls, list, sent, ofs, slot, make([]uint32, 3), map[uint64][]uint64{}, stores, 1, pm)
	}
	if pm.scanned[1] != 0 {
		t.Fatalf("part_send's second call scanned %d entries, all of them sent", pm.scanned[1])
	}
	if bytes != len(slot) || len(stores) != len(slot) {
		t.Fatalf("%d bytes stored into %d slots, want %d", bytes, len(stores), len(slot))
	}
	for i, v := range list {
		for _, d := range slot[ofs[i]:ofs[i+1]] {
			if want := xcls[i]<<2 | st[v]; stores[d] != want {
				t.Fatalf("slot %#x of vertex %d holds %#x, want %#x", d, v, stores[d], want)
			}
		}
	}
}
