package gpuagg

import (
	"math/rand/v2"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// The models below follow the kernels of agg.cu step by step on the host:
// one function per kernel, the same loops, the same tie rules. Atomic
// operations happen in an order drawn from rng, so that a result that
// depended on the order of a device's atomics would differ between runs
// of the model tests.

const (
	modelNone      = ^uint32(0)
	modelModeSlots = 16 // MODE_SLOTS
)

type model struct {
	g    *mesh.Graph
	in   []uint8
	dist int
	rng  *rand.Rand
	// blocks and threads of the scans' fixed grid, and the shared-memory
	// row capacities of coarse_rows (ROW_CAP) and coarse_block (BLK_CAP);
	// tests shrink them to reach every branch on small graphs.
	blocks, threads, rowCap, blockCap int

	p1         []uint32
	roots      []int32
	nc         int64
	err1, err2 uint64
	of, mcnt   []int32
	ub         []int64
	mptr, mem  []int32
	base       []int64
	scratch    []int32
	cnt, ovf   []int32
	ovf2       []int32
	coff       []int64
	cadj       []int32
	maxdc      int64
}

// modelScan is scan_reduce, scan_top and scan_down over a fixed grid.
func (m *model) modelScan(length int64, load func(int64) int64, store func(int64, int64)) int64 {
	g := int64(m.blocks)
	chunk := (length + g - 1) / g
	part := make([]int64, g)
	span := func(b int64) (int64, int64) {
		lo := min(length, b*chunk)
		return lo, min(length, lo+chunk)
	}
	for b := range g {
		lo, hi := span(b)
		for i := lo; i < hi; i++ {
			part[b] += load(i)
		}
	}
	var total int64
	for b := range g {
		part[b], total = total, total+part[b]
	}
	for b := range g {
		lo, hi := span(b)
		carry := part[b]
		for t := lo; t < hi; t += int64(m.threads) { // one block-wide step
			var e int64
			for i := t; i < min(hi, t+int64(m.threads)); i++ {
				store(i, carry+e)
				e += load(i)
			}
			carry += e
		}
	}
	return total
}

// rank is rank_reduce, scan_top and rank_down.
func (m *model) rank() {
	n := int64(m.g.N())
	m.p1 = make([]uint32, n)
	m.roots = make([]int32, n)
	m.mcnt = make([]int32, n)
	m.ub = make([]int64, n+1)
	for i := range m.mcnt { // memory the kernels never cleared
		m.mcnt[i], m.ub[i] = -7, -7
	}
	load := func(v int64) int64 {
		if v < n && m.in[v] != 0 {
			return 1
		}
		return 0
	}
	m.nc = m.modelScan(n, load, func(v, e int64) {
		if m.in[v] != 0 {
			m.p1[v] = uint32(e)
			m.roots[e] = int32(v)
			m.mcnt[e], m.ub[e] = 0, 0
		} else {
			m.p1[v] = modelNone
		}
	})
}

// claim: every root lowers p1 of its non-member neighbours, roots in an
// arbitrary order.
func (m *model) claim() {
	for _, a := range m.rng.Perm(int(m.nc)) {
		r := m.roots[a]
		for _, u := range m.g.Neighbors(r) {
			if m.in[u] == 0 {
				m.p1[u] = min(m.p1[u], uint32(a))
			}
		}
	}
}

func (m *model) conflicts() {
	for a := int64(0); a < m.nc; a++ {
		r := m.roots[a]
		for pos, u := range m.g.Neighbors(r) {
			if u != r && m.p1[u] != uint32(a) {
				m.err1 = min(m.err1, uint64(a)<<32|uint64(pos))
			}
		}
	}
}

// mode is the device function of the same name.
func (m *model) mode(row []int32) uint32 {
	var ka [modelModeSlots]uint32
	var kc [modelModeSlots]int
	nk, over := 0, false
	for _, u := range row {
		x := m.p1[u]
		if x == modelNone {
			continue
		}
		j := 0
		for j < nk && ka[j] != x {
			j++
		}
		switch {
		case j < nk:
			kc[j]++
		case nk < modelModeSlots:
			ka[nk], kc[nk] = x, 1
			nk++
		default:
			over = true
		}
	}
	best, bc := modelNone, 0
	if !over {
		for j := range nk {
			if kc[j] > bc || (kc[j] == bc && ka[j] < best) {
				best, bc = ka[j], kc[j]
			}
		}
		return best
	}
	for _, u := range row {
		x := m.p1[u]
		if x == modelNone || x == best {
			continue
		}
		c := 0
		for _, q := range row {
			if m.p1[q] == x {
				c++
			}
		}
		if c > bc || (c == bc && x < best) {
			best, bc = x, c
		}
	}
	return best
}

func (m *model) assign() {
	n := m.g.N()
	m.of = make([]int32, n)
	for _, v := range m.rng.Perm(n) {
		a := m.p1[v]
		row := m.g.Neighbors(int32(v))
		if a == modelNone && m.dist == 2 {
			a = m.mode(row)
		}
		m.of[v] = int32(a)
		if a == modelNone {
			m.err2 = min(m.err2, uint64(v))
			continue
		}
		m.mcnt[a]++
		m.ub[a] += int64(len(row))
	}
}

// scanAgg is agg_reduce and agg_down over the nc+1 slots of x.
func (m *model) scanAgg(x func(int64) int64, y func(int64, int64)) int64 {
	return m.modelScan(m.nc+1, func(i int64) int64 {
		if i < m.nc {
			return x(i)
		}
		return 0
	}, y)
}

func (m *model) members() {
	m.mptr = make([]int32, m.nc+1)
	m.base = make([]int64, m.nc+1)
	m.scanAgg(func(i int64) int64 { return int64(m.mcnt[i]) }, func(i, e int64) { m.mptr[i] = int32(e) })
	m.scanAgg(func(i int64) int64 { return m.ub[i] }, func(i, e int64) { m.base[i] = e })
	m.mem = make([]int32, len(m.of))
	for _, v := range m.rng.Perm(len(m.of)) {
		a := m.of[v]
		if a < 0 {
			continue
		}
		m.mcnt[a]--
		m.mem[m.mptr[a]+m.mcnt[a]] = int32(v)
	}
}

// coarseRows is coarse_rows: the warp's flattened walk over its members'
// rows (32 members a group, the owner of each entry found by the same
// binary search over the lanes' inclusive degree sums), a set of at most
// rowCap foreign aggregates, sorted.
func (m *model) coarseRows() {
	m.scratch = make([]int32, m.g.NumEdges())
	for i := range m.scratch {
		m.scratch[i] = -9
	}
	m.cnt = make([]int32, m.nc)
	m.ovf = m.ovf[:0]
	for a := int64(0); a < m.nc; a++ {
		set := map[int32]bool{}
		m0, m1 := m.mptr[a], m.mptr[a+1]
		over := false
		for g := m0; g < m1 && !over; g += 32 {
			var s [32]int64
			var d, incl [32]int
			for lane := range int32(32) {
				if g+lane < m1 {
					v := m.mem[g+lane]
					s[lane] = m.g.Offsets[v]
					d[lane] = int(m.g.Offsets[v+1] - s[lane])
				}
				incl[lane] = d[lane]
				if lane > 0 {
					incl[lane] += incl[lane-1]
				}
			}
			tot := incl[31]
			for p0 := 0; p0 < tot && !over; p0 += 32 {
				var batch []int32
				for lane := range 32 {
					p := p0 + lane
					lo := 0
					for step := 16; step > 0; step >>= 1 {
						if incl[lo+step-1] <= p {
							lo += step
						}
					}
					lo = min(lo, 31)
					if p < tot {
						b := m.of[m.g.Adj[s[lo]+int64(p-(incl[lo]-d[lo]))]]
						if b != int32(a) && b >= 0 {
							batch = append(batch, b)
						}
					}
				}
				for _, i := range m.rng.Perm(len(batch)) { // lanes insert in any order
					set[batch[i]] = true
				}
				over = len(set) >= m.rowCap
			}
		}
		if over {
			m.cnt[a] = 0
			m.ovf = append(m.ovf, int32(a))
			continue
		}
		m.writeRow(int32(a), set)
	}
	m.rng.Shuffle(len(m.ovf), func(i, j int) { m.ovf[i], m.ovf[j] = m.ovf[j], m.ovf[i] })
}

// writeRow writes a row set that fits in shared memory, sorted, at the
// aggregate's scratch base.
func (m *model) writeRow(a int32, set map[int32]bool) {
	row := make([]int32, 0, len(set))
	for b := range set {
		row = append(row, b)
	}
	slices.Sort(row)
	copy(m.scratch[m.base[a]:], row)
	m.cnt[a] = int32(len(row))
	m.maxdc = max(m.maxdc, int64(len(row)))
}

// coarseBlock is coarse_block: the same set over a whole block, with
// room for blockCap entries, sorted; larger rows go on to coarseOverflow.
func (m *model) coarseBlock() {
	m.ovf2 = m.ovf2[:0]
	for _, a := range m.ovf {
		set := map[int32]bool{}
		for _, v := range m.mem[m.mptr[a]:m.mptr[a+1]] {
			if len(set) >= m.blockCap {
				break
			}
			for _, u := range m.g.Neighbors(v) {
				if b := m.of[u]; b != a && b >= 0 {
					set[b] = true
				}
			}
		}
		if len(set) >= m.blockCap {
			m.cnt[a] = 0
			m.ovf2 = append(m.ovf2, a)
			continue
		}
		m.writeRow(a, set)
	}
	m.rng.Shuffle(len(m.ovf2), func(i, j int) { m.ovf2[i], m.ovf2[j] = m.ovf2[j], m.ovf2[i] })
}

// coarseOverflow is coarse_overflow: raw list, the all-ascending sorting
// network with slots past the end left alone, duplicates dropped.
func (m *model) coarseOverflow() {
	for _, a := range m.ovf2 {
		seg := m.scratch[m.base[a]:m.base[a+1]]
		var raw []int32
		for _, v := range m.mem[m.mptr[a]:m.mptr[a+1]] {
			for _, u := range m.g.Neighbors(v) {
				if b := m.of[u]; b != a && b >= 0 {
					raw = append(raw, b)
				}
			}
		}
		m.rng.Shuffle(len(raw), func(i, j int) { raw[i], raw[j] = raw[j], raw[i] })
		k := int64(copy(seg, raw))
		p := int64(1)
		for p < k {
			p <<= 1
		}
		swap := func(lo, hi int64) {
			if hi < k && seg[lo] > seg[hi] {
				seg[lo], seg[hi] = seg[hi], seg[lo]
			}
		}
		for size := int64(2); size <= p; size <<= 1 {
			half := size >> 1
			for c := range p / 2 {
				swap(c/half*size+c%half, c/half*size+size-1-c%half)
			}
			for j := half >> 1; j > 0; j >>= 1 {
				for c := range p / 2 {
					lo := c/j*2*j + c%j
					swap(lo, lo+j)
				}
			}
		}
		w := int64(0)
		for q := range k {
			if q == 0 || seg[q] != seg[q-1] {
				seg[w] = seg[q]
				w++
			}
		}
		m.cnt[a] = int32(w)
		m.maxdc = max(m.maxdc, w)
	}
}

// compact is the coff scan and compact: the coarse graph with the
// roots' data.
func (m *model) compact() *mesh.Graph {
	m.coff = make([]int64, m.nc+1)
	nnz := m.scanAgg(func(i int64) int64 { return int64(m.cnt[i]) }, func(i, e int64) { m.coff[i] = e })
	m.cadj = make([]int32, nnz)
	c := &mesh.Graph{Offsets: m.coff, Adj: m.cadj}
	g := m.g
	if g.Class != nil {
		c.Class = make([]mesh.Class, m.nc)
	}
	if g.Dirichlet != nil {
		c.Dirichlet = make([]bool, m.nc)
	}
	if g.Coords != nil {
		c.Dim, c.Coords = g.Dim, make([]float64, int(m.nc)*g.Dim)
	}
	for a := range m.nc {
		copy(m.cadj[m.coff[a]:], m.scratch[m.base[a]:m.base[a]+int64(m.cnt[a])])
		r := int(m.roots[a])
		if c.Class != nil {
			c.Class[a] = g.Class[r]
		}
		if c.Dirichlet != nil {
			c.Dirichlet[a] = g.Dirichlet[r]
		}
		copy(c.Coords[int(a)*g.Dim:int(a+1)*g.Dim], g.Coords[r*g.Dim:(r+1)*g.Dim])
	}
	return c
}

// modelLevel runs the kernels' models in the order Coarsen launches them.
func modelLevel(g *mesh.Graph, in []bool, dist int, rng *rand.Rand, grid [4]int) (of, roots []int32, coarse *mesh.Graph, err error) {
	m := &model{g: g, dist: dist, rng: rng, blocks: grid[0], threads: grid[1], rowCap: grid[2], blockCap: grid[3], err1: uint64(none), err2: uint64(none)}
	m.in = make([]uint8, len(in))
	for v, x := range in {
		if x {
			m.in[v] = uint8(1 + rng.IntN(255)) // any non-zero byte is a member
		}
	}
	m.rank()
	m.claim()
	if dist == 2 {
		m.conflicts()
	}
	m.assign()
	if err := setError(m.err1, m.err2, dist, modelLookup{m}); err != nil {
		return nil, nil, nil, err
	}
	m.members()
	m.coarseRows()
	m.coarseBlock()
	m.coarseOverflow()
	coarse = m.compact()
	return m.of, m.roots[:m.nc], coarse, nil
}

type modelLookup struct{ m *model }

func (l modelLookup) root(a int32) (int32, error) { return l.m.roots[a], nil }
func (l modelLookup) neighbour(v int32, pos int64) (int32, error) {
	return l.m.g.Adj[l.m.g.Offsets[v]+pos], nil
}
func (l modelLookup) member(v int32) (bool, error)    { return l.m.in[v] != 0, nil }
func (l modelLookup) phaseOne(v int32) (int32, error) { return int32(l.m.p1[v]), nil }

// csrBounds is csr_bounds: the smallest row whose offsets or neighbours
// leave the buffers (or loop to itself), or -1, and the largest degree of
// the good rows.
func csrBounds(off []int64, adj []int32) (bad int64, maxdeg int64) {
	n, m := int64(len(off)-1), int64(len(adj))
	bad = -1
	for v := n - 1; v >= 0; v-- { // any order: the smallest wins
		b, e := off[v], off[v+1]
		ok := b >= 0 && e >= b && e <= m && (v != 0 || b == 0) && (v != n-1 || e == m)
		for k := b; ok && k < e; k++ {
			u := int64(adj[k])
			ok = u >= 0 && u < n && u != v
		}
		if !ok {
			bad = v
		} else {
			maxdeg = max(maxdeg, e-b)
		}
	}
	return bad, maxdeg
}
