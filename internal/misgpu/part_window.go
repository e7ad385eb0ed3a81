package misgpu

import "fmt"

// Ghost windows. Where parts are contiguous ranges of global ids, the
// ghosts a part keeps of one neighbour lie in a narrow range of that
// neighbour's ids (a slab's face on a mesh, nearly the whole range on a
// random graph). A window lays such ghosts out densely: local id From+j
// is global id First+j and the owner's local id OwnerLocal+j, for every
// j < Len, ghost or not. The kernels then compute a ghost's global id
// (for its hash, on every neighbour a sweep reads) and its owner's slot
// (part_return) instead of loading them from the tables, which on a
// random graph are as large as the states and evict them from L2. An id
// of the window that is no ghost (a hole) has no row, no sender and no
// reader; its state stays undecided, so it never goes back either.

// MaxWindows is the most ghost windows of a part (PART_WINDOWS of
// part.cu); the ghosts of further neighbours go to the tables.
const MaxWindows = 3

// Window is a run of local ids that map to global ids and owner slots by
// an offset.
type Window struct {
	From       int    // first local id
	Len        int    // local ids
	First      uint32 // global id of From
	Owner      int    // owner part
	OwnerLocal int64  // owner's local id of From
}

// noWindow is a window start no local id reaches (the kernels' unused
// windows).
const noWindow = 1<<32 - 1

// WindowsEnd is the local id past the last window: the ghosts from there
// on are in the tables (GID from GIDFrom, Home from WindowsEnd).
func (s *PartSpec) WindowsEnd() int {
	end := GhostFrom(s.Own)
	for _, w := range s.Windows {
		end = max(end, w.From+w.Len)
	}
	return end
}

// checkWindows checks that the windows follow each other from the first
// ghost on, within the local ids, and that the tables start past them.
func (s *PartSpec) checkWindows(slots int) error {
	if len(s.Windows) > MaxWindows {
		return fmt.Errorf("%d ghost windows, at most %d", len(s.Windows), MaxWindows)
	}
	at := GhostFrom(s.Own)
	for i, w := range s.Windows {
		if w.From != at || w.Len < 1 || uint64(w.First)+uint64(w.Len) > 1<<32 || w.OwnerLocal < 0 || w.Owner < 0 {
			return fmt.Errorf("ghost window %d (local ids %d+%d, global %d) does not follow the ghosts before it", i, w.From, w.Len, w.First)
		}
		at += w.Len
	}
	if at > slots || len(s.Windows) > 0 && (s.GIDFrom != at || len(s.Home) != slots-at) {
		return fmt.Errorf("ghost windows end at local id %d, the tables start at %d of %d local ids", at, s.GIDFrom, slots)
	}
	return nil
}

// windowsOnly says whether every ghost of the part lies in a window
// (none in the tables).
func (s *PartSpec) windowsOnly() bool { return s.WindowsEnd() == len(s.Offsets)-1 }

// IdentityIDs says whether every local id of the part is its global id
// (GlobalID(v) == v): base 0, no windows, no table.
func (s *PartSpec) IdentityIDs() bool {
	return s.Base == 0 && len(s.Windows) == 0 && s.GIDFrom >= len(s.Offsets)-1
}

// gidWindows returns the kernels' ghost windows (Params.gw of mis.cu):
// From<<32 | (First-From) mod 2^32 each, noWindow<<32 for none.
func (s *PartSpec) gidWindows() [MaxWindows]uint64 {
	var gw [MaxWindows]uint64
	for k := range gw {
		gw[k] = noWindow << 32
		if k < len(s.Windows) {
			w := s.Windows[k]
			gw[k] = uint64(w.From)<<32 | uint64(w.First-uint32(w.From))
		}
	}
	return gw
}

// imageWindows is the ghost windows of the image the parts of specs
// run: where there are several and none has a ghost in the tables, the
// most windows of one of them, 1 for part1w.cu's image, 2 for
// part2w.cu's and 3 for part3w.cu's, whose vhash takes a select a window
// and no table check (GlobalID gives the same ids there, the table
// holding none); 1 for a single part whose ids are the global ones
// unless keepIDs passes it the table (its base 0 and no window map every
// id to itself there); else 0, part.cu's image, which tests for a table
// on every hash: the one part in id order ran its MIS-1 sweeps 14 %
// longer in it (15 % more instructions), at the engine's pace in
// part1w.cu's.
func imageWindows(specs []*PartSpec, keepIDs bool) int {
	if len(specs) == 1 && specs[0].IdentityIDs() && !keepIDs {
		return 1
	}
	if len(specs) < 2 {
		return 0
	}
	most := 1
	for _, s := range specs {
		if !s.windowsOnly() {
			return 0
		}
		most = max(most, len(s.Windows))
	}
	return most
}

// GlobalID is the global id whose hash the kernels take for local id v
// (vhash of mis.cu in part.cu's image, step for step): Base+v, or in the
// last window that v reaches First plus the offset; from GIDFrom on the
// table GID.
func (s *PartSpec) GlobalID(v int) uint32 {
	d := s.Base
	for _, w := range s.gidWindows() {
		if uint32(v) >= uint32(w>>32) {
			d = uint32(w)
		}
	}
	if v >= s.GIDFrom {
		return s.GID[v-s.GIDFrom]
	}
	return uint32(v) + d
}

// returnWindows returns part_return's windows: each one's first ghost
// (local id less GhostFrom; noWindow for none) and home word
// (Owner<<PART_SLOT_BITS | OwnerLocal).
func (s *PartSpec) returnWindows() (from [MaxWindows]uint32, home [MaxWindows]uint64) {
	gf := GhostFrom(s.Own)
	for k := range from {
		from[k] = noWindow
		if k < len(s.Windows) {
			w := s.Windows[k]
			from[k], home[k] = uint32(w.From-gf), uint64(w.Owner)<<slotBits|uint64(w.OwnerLocal)
		}
	}
	return from, home
}

// HomeWord is where part_return gives ghost i (local id GhostFrom()+i)
// back: Owner<<PART_SLOT_BITS | the owner's local id, computed in a
// window, else home[i - windows' ghosts] (the uploaded Home), step for
// step as the kernel does.
func (s *PartSpec) HomeWord(i int, home []uint64) uint64 {
	end := s.WindowsEnd() - GhostFrom(s.Own)
	if i >= end {
		return home[i-end]
	}
	from, hb := s.returnWindows()
	d := uint64(0)
	for k := range from {
		if uint32(i) >= from[k] {
			d = hb[k] + uint64(uint32(i)-from[k])
		}
	}
	return d
}

// homeWords packs Home as part_return reads it.
func (s *PartSpec) homeWords() []uint64 {
	home := make([]uint64, len(s.Home))
	for i, h := range s.Home {
		home[i] = uint64(h.Part)<<slotBits | uint64(h.Local)
	}
	return home
}

// HomeOf is ghost i's home as a slot: Home's entry past the windows.
func (s *PartSpec) HomeOf(i int) Slot {
	if end := s.WindowsEnd() - GhostFrom(s.Own); i >= end {
		return s.Home[i-end]
	}
	d := s.HomeWord(i, nil)
	return Slot{Part: int(d >> slotBits), Local: int64(d & (1<<slotBits - 1))}
}
