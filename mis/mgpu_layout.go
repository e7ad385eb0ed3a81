package mis

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// gpuPart is one part of the multi-GPU MIS in the layout its device
// holds (misgpu.PartSpec): owned vertices at local ids 0..own-1, padding
// to a whole tile, then the ghosts, the vertices of other parts within
// the distance (at distance 2 those one hop away with their rows). Where
// the parts are contiguous ranges of ids, the ghosts of up to
// misgpu.MaxWindows neighbours come first in windows, dense runs of the
// neighbour's ids (ghostWindows); the others follow: first those one hop
// away, then those two hops away. Owned vertices and each layer of
// ghosts are in increasing rank (the global id, or a locality order).
type gpuPart struct {
	own    int
	global []int32 // global id of each local id (padding, and window ids that are no ghosts: -1)
	spec   misgpu.PartSpec
}

// gf is the local id of the first ghost.
func (p *gpuPart) gf() int { return misgpu.GhostFrom(p.own) }

// layoutParts cuts g into the device layout of parts parts (contiguous
// ranges when partition is nil) for the MIS of distance dist. keys are
// the whole graph's keys; rank, when not nil, orders the vertices within
// a part (a vertex's position in a locality order). windows is the most
// ghost windows of a part (0: none, every ghost in the tables); a
// partition of ranges without rank has them.
func layoutParts(g *mesh.Graph, parts int, partition []int32, keys []uint64, dist int, rank []int32, windows int) ([]*gpuPart, error) {
	if err := checkSplit(g, parts, partition); err != nil {
		return nil, err
	}
	n := g.N()
	for v := range n {
		for _, u := range g.Neighbors(int32(v)) {
			if u < 0 || int(u) >= n {
				return nil, fmt.Errorf("mis: vertex %d has neighbour %d out of range [0,%d)", v, u, n)
			}
		}
	}
	owner := make([]int32, n)
	if partition == nil {
		r := ContiguousRanges(n, parts)
		for q := range parts {
			for v := r[q]; v < r[q+1]; v++ {
				owner[v] = int32(q)
			}
		}
	} else {
		copy(owner, partition)
	}
	byRank := func(a, b int32) int { return cmp.Compare(a, b) }
	if rank != nil {
		byRank = func(a, b int32) int { return cmp.Compare(rank[a], rank[b]) }
	}
	// start[q] is the first id of part q's range, where the parts are
	// ranges in id order (then the windows work).
	var start []int32
	if rank == nil && windows > 0 && slices.IsSorted(owner) {
		start = make([]int32, parts+1)
		for q := range start {
			i, _ := slices.BinarySearch(owner, int32(q))
			start[q] = int32(i)
		}
	}
	ps := make([]*gpuPart, parts)
	for q := range ps {
		ps[q] = &gpuPart{}
	}
	for v := range n {
		p := ps[owner[v]]
		p.global = append(p.global, int32(v))
		p.own++
	}
	// local[v] is v's local id on the part being built; mark says which
	// part wrote it, so the array is reused without clearing.
	local := make([]int32, n)
	mark := make([]int32, n)
	for v := range mark {
		mark[v] = -1
	}
	var err error
	parallelParts(ps, func(q int, p *gpuPart) {
		slices.SortFunc(p.global, byRank)
	})
	for q, p := range ps {
		l := partLayout{g: g, q: int32(q), owner: owner, local: local, mark: mark, start: start, windows: windows}
		if e := p.build(&l, keys, dist, byRank); e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return nil, err
	}
	boundary(ps, owner)
	return ps, nil
}

// parallelParts runs f on every part at once.
func parallelParts(ps []*gpuPart, f func(q int, p *gpuPart)) {
	var wg sync.WaitGroup
	for q, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(q, p)
		}()
	}
	wg.Wait()
}

// partLayout is what building part q needs of the whole graph: the
// owners, the range starts (nil: no windows) and the most windows, and
// scratch arrays of the graph's size.
type partLayout struct {
	g                  *mesh.Graph
	q                  int32
	owner, local, mark []int32
	start              []int32
	windows            int
}

// build lays out part q: its ghosts, rows and keys.
func (p *gpuPart) build(l *partLayout, keys []uint64, dist int, byRank func(a, b int32) int) error {
	g, q, local, mark := l.g, l.q, l.local, l.mark
	for i, v := range p.global {
		local[v], mark[v] = int32(i), q
	}
	layer := func(from []int32) []int32 {
		var found []int32
		for _, v := range from {
			for _, u := range g.Neighbors(v) {
				if mark[u] != q {
					mark[u] = q
					found = append(found, u)
				}
			}
		}
		slices.SortFunc(found, byRank)
		return found
	}
	gf := p.gf()
	near := layer(p.global)
	var far []int32
	if dist == 2 {
		far = layer(near)
	}
	wins, tabled := p.ghostWindows(l, near, far)
	// Local ids and global ids of the ghosts: the windows' (holes -1),
	// then the tables'.
	p.global = append(p.global, slices.Repeat([]int32{-1}, gf-p.own)...)
	for _, w := range wins {
		for j := range w.Len {
			u := int32(w.First) + int32(j)
			if mark[u] == q && l.owner[u] != q {
				local[u] = int32(len(p.global))
			} else {
				u = -1
			}
			p.global = append(p.global, u)
		}
	}
	for _, u := range tabled {
		local[u] = int32(len(p.global))
		p.global = append(p.global, u)
	}
	slots := len(p.global)
	if int64(slots) >= 1<<31 {
		return fmt.Errorf("mis: multi-GPU part %d holds %d vertices, more than 32-bit ids allow", q, slots)
	}
	s := &p.spec
	s.Own, s.Windows = p.own, wins
	// Rows: the owned vertices', and at distance 2 the near ghosts'.
	rows := make([]bool, slots)
	for i := range p.own {
		rows[i] = true
	}
	if dist == 2 {
		for _, u := range near {
			rows[local[u]] = true
		}
	}
	s.Offsets = make([]int64, slots+1)
	for i := range slots {
		s.Offsets[i+1] = s.Offsets[i]
		if rows[i] {
			d := int64(g.Degree(p.global[i]))
			s.Offsets[i+1] += d
			s.MaxDeg = max(s.MaxDeg, d)
		}
	}
	s.Adj = make([]int32, s.Offsets[slots])
	parallelRows(slots, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if !rows[i] {
				continue
			}
			row := s.Adj[s.Offsets[i]:s.Offsets[i+1]]
			for j, u := range g.Neighbors(p.global[i]) {
				row[j] = local[u]
			}
		}
	})
	p.keyParts(keys)
	return nil
}

// ghostWindows picks the windows of part l.q among its ghosts (near,
// then far at distance 2, each in rank order) and returns them with the
// ghosts left to the tables, in their order. Only parts that are ranges
// of ids have windows (l.start not nil). A neighbour's ghosts get a
// window, while there are fewer than l.windows, when the window would be
// at most twice as long as they are many: a hole costs a state byte, a
// row offset and a flag, and a ghost in the tables a 4-byte id and an
// 8-byte home, so the window never takes much more memory than the
// tables would.
func (p *gpuPart) ghostWindows(l *partLayout, near, far []int32) ([]misgpu.Window, []int32) {
	tabled := slices.Concat(near, far) // a copy: near stays whole
	if l.start == nil || len(tabled) == 0 {
		return nil, tabled
	}
	all := slices.Clone(tabled)
	slices.Sort(all)
	var wins []misgpu.Window
	from := p.gf()
	for i := 0; i < len(all) && len(wins) < min(l.windows, misgpu.MaxWindows); {
		o := l.owner[all[i]]
		j := i
		for j < len(all) && l.owner[all[j]] == o {
			j++
		}
		if span := int(all[j-1]-all[i]) + 1; span <= 2*(j-i) {
			wins = append(wins, misgpu.Window{From: from, Len: span, First: uint32(all[i]), Owner: int(o),
				OwnerLocal: int64(all[i] - l.start[o])})
			from += span
		}
		i = j
	}
	if len(wins) == 0 {
		return nil, tabled
	}
	inWindow := func(u int32) bool {
		for _, w := range wins {
			if uint32(u)-w.First < uint32(w.Len) {
				return true
			}
		}
		return false
	}
	return wins, slices.DeleteFunc(tabled, inWindow)
}

// keyParts gives what the engine needs to rebuild the keys of the part:
// global ids (an owned range from its first vertex where the ids are
// consecutive, and the windows, else every local id's) and the primaries (the upper words
// of the keys; nil when every key is a bare hash).
func (p *gpuPart) keyParts(keys []uint64) {
	s := &p.spec
	ids := func(from []int32) []uint32 {
		out := make([]uint32, len(from))
		for i, v := range from {
			out[i] = uint32(max(v, 0))
		}
		return out
	}
	contiguous := p.own > 0
	for i := 1; i < p.own && contiguous; i++ {
		contiguous = p.global[i] == p.global[i-1]+1
	}
	if contiguous {
		end := s.WindowsEnd()
		s.Base, s.GIDFrom, s.GID = uint32(p.global[0]), end, ids(p.global[end:])
	} else {
		s.GID = ids(p.global)
	}
	var prim []uint32
	for i, v := range p.global {
		if v < 0 || keys[v]>>32 == 0 {
			continue
		}
		if prim == nil {
			prim = make([]uint32, len(p.global))
		}
		prim[i] = uint32(keys[v] >> 32)
	}
	s.Prim = prim
}

// boundary fills each part's send lists (for each owned vertex, the
// ghost slots the other parts keep of it) and the homes of its ghosts
// past the windows.
func boundary(ps []*gpuPart, owner []int32) {
	type slot struct {
		v    int32 // owner's local id
		part int
		l    int64
	}
	sends := make([][]slot, len(ps))
	// The owner's local id of every owned vertex.
	local := make([]int32, len(owner))
	for _, p := range ps {
		for i, v := range p.global[:p.own] {
			local[v] = int32(i)
		}
	}
	for t, p := range ps {
		gf, end := p.gf(), p.spec.WindowsEnd()
		p.spec.Home = make([]misgpu.Slot, 0, len(p.global)-end)
		for i := gf; i < len(p.global); i++ {
			v := p.global[i]
			if v < 0 {
				continue // a window's hole
			}
			o := owner[v]
			sends[o] = append(sends[o], slot{local[v], t, int64(i)})
			if i >= end {
				p.spec.Home = append(p.spec.Home, misgpu.Slot{Part: int(o), Local: int64(local[v])})
			}
		}
	}
	parallelParts(ps, func(q int, p *gpuPart) {
		sl := sends[q]
		slices.SortStableFunc(sl, func(a, b slot) int { return cmp.Compare(a.v, b.v) })
		s := &p.spec
		s.Send, s.Ofs, s.To = nil, []int32{0}, make([]misgpu.Slot, len(sl))
		for i, x := range sl {
			if i == 0 || x.v != sl[i-1].v {
				if i > 0 {
					s.Ofs = append(s.Ofs, int32(i))
				}
				s.Send = append(s.Send, x.v)
			}
			s.To[i] = misgpu.Slot{Part: x.part, Local: x.l}
		}
		if len(sl) > 0 {
			s.Ofs = append(s.Ofs, int32(len(sl)))
		}
	})
}

// parallelRows runs f over [0,n) in chunks on all CPUs.
func parallelRows(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/65536))
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*k/w, n*(k+1)/w)
		}()
	}
	wg.Wait()
}

// LocalityPartition cuts g into parts ranges of mesh.LocalityOrder (a
// Hilbert curve through the coordinates, or without them a recursive
// bisection by breadth-first search): parts that are compact in space,
// whatever the numbering, so that few vertices lie on a boundary. It
// also returns the order, which ComputeMultiGPU takes as the order of
// the vertices within each part (MultiGPUOptions.Order).
func LocalityPartition(g *mesh.Graph, parts int) (partition, order []int32, err error) {
	if err := checkSplit(g, parts, nil); err != nil {
		return nil, nil, err
	}
	order = mesh.LocalityOrder(g)
	r := ContiguousRanges(g.N(), parts)
	partition = make([]int32, g.N())
	for v, pos := range order {
		q, _ := slices.BinarySearch(r, pos+1)
		partition[v] = int32(q - 1)
	}
	return partition, order, nil
}
