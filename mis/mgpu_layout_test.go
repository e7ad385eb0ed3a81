package mis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// mgpuGraphs are the graphs of the multi-GPU tests: FE meshes, where
// contiguous ranges cut thin slabs, and random graphs, where every part
// meets every other.
func mgpuGraphs() []struct {
	name string
	g    *mesh.Graph
} {
	return []struct {
		name string
		g    *mesh.Graph
	}{
		{"hex27-7x6x5", mesh.Hex27Graph(7, 6, 5)},
		{"grid7-9x8x3", mesh.Grid7Graph(9, 8, 3)},
		{"random-600-d6", mesh.RandomGraph(600, 6, 3)},
		{"random-50-d2", mesh.RandomGraph(50, 2, 9)},
	}
}

func mgpuPartition(n, k int, hashed bool) []int32 {
	if !hashed {
		return nil
	}
	p := make([]int32, n)
	for v := range p {
		p[v] = int32(Hash32(int32(v), 5) % uint32(k))
	}
	return p
}

// layouts lays out every test graph in k parts five ways: contiguous
// ranges with ghost windows, with one window at most and with none (all
// in the tables), hashed parts, and a locality partition with its order.
func layouts(t *testing.T, g *mesh.Graph, k, dist int, keys []uint64) map[string][]*gpuPart {
	out := map[string][]*gpuPart{}
	lp, order, err := LocalityPartition(g, k)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		part, rank []int32
		windows    int
	}{
		"ranges": {nil, nil, misgpu.MaxWindows}, "ranges-1window": {nil, nil, 1}, "ranges-tables": {nil, nil, 0},
		"hashed": {mgpuPartition(g.N(), k, true), nil, misgpu.MaxWindows}, "locality": {lp, order, misgpu.MaxWindows},
	} {
		ps, err := layoutParts(g, k, c.part, keys, dist, c.rank, c.windows)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = ps
	}
	return out
}

// ball returns the vertices within dist of v, v excluded.
func ball(g *mesh.Graph, v int32, dist int) map[int32]bool {
	b := map[int32]bool{}
	for _, u := range g.Neighbors(v) {
		b[u] = true
		if dist == 2 {
			for _, w := range g.Neighbors(u) {
				b[w] = true
			}
		}
	}
	delete(b, v)
	return b
}

// TestLayoutParts checks the device layout: owned vertices cover the
// graph once, the ghosts of a part are exactly the other parts' vertices
// within the distance, rows (owned, and at distance 2 the near ghosts')
// name the graph's neighbours, keys rebuild from the global ids and
// primaries, and every ghost slot is in its owner's send list once.
func TestLayoutParts(t *testing.T) {
	for _, c := range mgpuGraphs() {
		keys, _ := Keys(c.g, Priority{Kind: Degree, Seed: 1<<40 | 9})
		for _, dist := range []int{1, 2} {
			for _, k := range []int{1, 2, 3, 5} {
				for lname, ps := range layouts(t, c.g, k, dist, keys) {
					name := fmt.Sprintf("%s/d%d/k%d/%s", c.name, dist, k, lname)
					checkLayout(t, name, c.g, ps, dist, keys)
				}
			}
		}
	}
}

func checkLayout(t *testing.T, name string, g *mesh.Graph, ps []*gpuPart, dist int, keys []uint64) {
	owner := slices.Repeat([]int{-1}, g.N())
	for q, p := range ps {
		for _, v := range p.global[:p.own] {
			if owner[v] >= 0 {
				t.Fatalf("%s: vertex %d owned twice", name, v)
			}
			owner[v] = q
		}
	}
	sent := map[[2]int64]int{}
	for q, p := range ps {
		s := &p.spec
		for i, v := range s.Send {
			for _, to := range s.To[s.Ofs[i]:s.Ofs[i+1]] {
				if got := ps[to.Part].global[to.Local]; got != p.global[v] {
					t.Fatalf("%s: part %d sends %d into a slot of %d", name, q, p.global[v], got)
				}
				sent[[2]int64{int64(to.Part), to.Local}]++
			}
		}
	}
	for q, p := range ps {
		gf, s := p.gf(), &p.spec
		want, near := map[int32]bool{}, map[int32]bool{}
		for _, v := range p.global[:p.own] {
			for u := range ball(g, v, dist) {
				if owner[u] != q {
					want[u] = true
				}
			}
			for _, u := range g.Neighbors(v) {
				near[u] = owner[u] != q
			}
		}
		ghosts := 0
		for _, u := range p.global[gf:] {
			if u >= 0 {
				ghosts++
			}
		}
		if ghosts != len(want) || len(s.Home) != len(p.global)-s.WindowsEnd() {
			t.Fatalf("%s part %d: %d ghosts, want %d", name, q, ghosts, len(want))
		}
		for i, u := range p.global {
			if i >= p.own && i < gf {
				continue
			}
			if u < 0 {
				checkHole(t, name, ps, q, i, owner, sent)
				continue
			}
			if i >= gf && (!want[u] || sent[[2]int64{int64(q), int64(i)}] != 1) {
				t.Fatalf("%s part %d: ghost %d (slot %d) not within the distance or not sent once", name, q, u, i)
			}
			if i >= gf {
				h := s.HomeOf(i - gf)
				if h.Part != owner[u] || h.Part == q || ps[h.Part].global[h.Local] != u || int(h.Local) >= ps[h.Part].own {
					t.Fatalf("%s part %d: ghost %d (slot %d) goes back to part %d local %d", name, q, u, i, h.Part, h.Local)
				}
			}
			var pr uint32
			if s.Prim != nil {
				pr = s.Prim[i]
			}
			if s.IdentityIDs() && u != int32(i) {
				t.Fatalf("%s part %d: local %d is global %d, yet the part claims identical ids", name, q, i, u)
			}
			if Key(pr, int32(s.GlobalID(i)), 1<<40|9) != keys[u] {
				t.Fatalf("%s part %d: local %d does not rebuild the key of %d", name, q, i, u)
			}
			if i >= p.own && !(dist == 2 && near[u]) {
				if s.Offsets[i+1] != s.Offsets[i] {
					t.Fatalf("%s part %d: local %d has a row", name, q, i)
				}
				continue
			}
			row := s.Adj[s.Offsets[i]:s.Offsets[i+1]]
			nb := g.Neighbors(u)
			if len(row) != len(nb) {
				t.Fatalf("%s part %d: row of %d has %d entries, want %d", name, q, u, len(row), len(nb))
			}
			for j, l := range row {
				if p.global[l] != nb[j] {
					t.Fatalf("%s part %d: row of %d names %d, want %d", name, q, u, p.global[l], nb[j])
				}
			}
		}
	}
}

// checkHole checks local id i of part q, a window's id that is no ghost:
// in a window, of the window's owner, with no row and no sender.
func checkHole(t *testing.T, name string, ps []*gpuPart, q, i int, owner []int, sent map[[2]int64]int) {
	s := &ps[q].spec
	in := false
	for _, w := range s.Windows {
		in = in || i >= w.From && i < w.From+w.Len && owner[s.GlobalID(i)] == w.Owner
	}
	if !in || s.Offsets[i+1] != s.Offsets[i] || sent[[2]int64{int64(q), int64(i)}] != 0 {
		t.Fatalf("%s part %d: local %d is neither a ghost nor a window's hole", name, q, i)
	}
}

// partModel runs the multi-GPU driver on the host: on each part the
// engine's rules (a vertex joins once every larger key within the
// distance is OUT, leaves once a member is within it, and a new member
// pushes OUT into its ball, ghosts included), and after each launch the
// sends of misgpu's part_send. The parts advance in a random order, a
// launch at a time over their vertices in a random order, and the sends
// land late, a random part of each receiver's queue at a time (in the
// order each part made them). With returns, each ghost a part finds OUT
// after its launch goes back to its owner once (part_return); with
// immediate, a boundary vertex is sent as soon as it is decided, within
// the launch (part1_tail). With pull, a part reads after each launch
// its segments (misgpu.PullSegments) instead, each byte of them or not
// at random (a read made before the byte changed), and nothing is sent;
// with sendsToo too (MIS-1's sending tails), the forward segments are
// not read but sent, at once with immediate. With pushes, a part also
// writes, after some of its launches, its vertices into the windows its
// neighbours keep of them (the push before MIS-1's tails: the
// neighbours' forward segments, the whole of each), landing late as the
// sends do.
// It returns the set and the bytes sent.
type partModel struct {
	ps                 []*gpuPart
	dist               int
	keys               []uint64
	st                 [][]uint8
	sent, back         [][]bool
	queue              [][]func()
	bytes, returned    int64
	rng                *rand.Rand
	returns, immediate bool
	pull               [][]misgpu.PullSegment // by part, when the parts pull
	sendsToo           bool                   // with pull: the forward segments go by sends
	pushes             bool                   // with pull: windows pushed by their owners too
	pulled, pushed     int64
	t                  *testing.T
}

func (m *partModel) launch(q int) int {
	p, st, left := m.ps[q], m.st[q], 0
	s := &p.spec
	// The kernels' global ids (vhash).
	key := func(l int32) uint64 { return m.keys[s.GlobalID(int(l))] }
	scan := func(v int32, f func(u int32)) {
		for _, u := range s.Adj[s.Offsets[v]:s.Offsets[v+1]] {
			f(u)
			if m.dist == 2 {
				for _, w := range s.Adj[s.Offsets[u]:s.Offsets[u+1]] {
					if w != v {
						f(w)
					}
				}
			}
		}
	}
	for _, i := range m.rng.Perm(p.own) {
		v := int32(i)
		if st[v] != 0 {
			continue
		}
		out, wait := false, false
		scan(v, func(u int32) {
			out = out || st[u] == pIn
			wait = wait || st[u] == 0 && key(u) > key(v)
		})
		switch {
		case out:
			st[v] = pOut
		case wait:
			left++
		default:
			st[v] = pIn
			scan(v, func(u int32) {
				if st[u] == 0 {
					st[u] = pOut
				}
			})
		}
		if m.immediate {
			m.send(q)
		}
	}
	if m.pull != nil {
		if m.sendsToo {
			m.send(q)
		}
		m.pullSegments(q)
		if m.pushes && m.rng.IntN(3) == 0 {
			m.push(q)
		}
		return left
	}
	m.send(q)
	if m.returns {
		m.giveBack(q)
	}
	return left
}

// pullSegments reads part q's segments as part_pull does, each byte or
// not at random; an OUT read back onto a member of q fails the test.
func (m *partModel) pullSegments(q int) {
	st := m.st[q]
	for _, g := range m.pull[q] {
		src := m.st[g.From]
		for j := range g.Len {
			s, d := src[g.Src+int64(j)], g.Dst+int64(j)
			if m.rng.IntN(2) == 0 {
				continue
			}
			switch {
			case !g.Back:
				if st[d] != 0 && s != 0 && st[d] != s && s != pIn {
					m.t.Fatalf("part %d reads state %d onto ghost %d in state %d", q, s, d, st[d])
				}
				if st[d] == 0 {
					st[d] = s
				}
			case s == pOut && st[d] == pIn:
				m.t.Fatalf("part %d reads OUT back onto its member %d", q, d)
			case s == pOut && st[d] == 0:
				st[d] = pOut
				m.pulled++
			}
		}
	}
}

// push queues the states of part q's vertices into every window another
// part keeps of them, as they are now (the owner's part_pull into the
// neighbour's states).
func (m *partModel) push(q int) {
	for t, segs := range m.pull {
		for _, g := range segs {
			if g.Back || g.From != q {
				continue
			}
			src := slices.Clone(m.st[q][g.Src : g.Src+int64(g.Len)])
			m.pushed++
			m.queue[t] = append(m.queue[t], func() {
				st := m.st[t]
				for j, s := range src {
					d := g.Dst + int64(j)
					if st[d] != 0 && s != 0 && st[d] != s && s != pIn {
						m.t.Fatalf("part %d pushes state %d onto ghost %d of part %d in state %d", q, s, d, t, st[d])
					}
					if st[d] == 0 {
						st[d] = s
					}
				}
			})
		}
	}
}

// send queues the boundary vertices of part q decided and not sent.
func (m *partModel) send(q int) {
	s, st := &m.ps[q].spec, m.st[q]
	for i, v := range s.Send {
		if m.sent[q][i] || st[v] == 0 {
			continue
		}
		m.sent[q][i] = true
		x := st[v]
		for _, to := range s.To[s.Ofs[i]:s.Ofs[i+1]] {
			m.queue[to.Part] = append(m.queue[to.Part], func() { m.st[to.Part][to.Local] = x })
			m.bytes++
		}
	}
}

// giveBack queues the OUT of part q's ghosts into their owners, once
// each; none may reach a member.
func (m *partModel) giveBack(q int) {
	p, st := m.ps[q], m.st[q]
	for i := range m.back[q] {
		if m.back[q][i] || st[p.gf()+i] != pOut {
			continue
		}
		h := p.spec.HomeOf(i) // part_return's home
		m.back[q][i] = true
		m.returned++
		m.queue[h.Part] = append(m.queue[h.Part], func() {
			switch m.st[h.Part][h.Local] {
			case 0:
				m.st[h.Part][h.Local] = pOut
			case pIn:
				m.t.Fatalf("part %d gives OUT back into member %d of part %d", q, p.global[p.gf()+i], h.Part)
			}
		})
	}
}

func (m *partModel) run(t *testing.T) map[int32]bool {
	m.t = t
	left := make([]int, len(m.ps))
	for q, p := range m.ps {
		m.st = append(m.st, make([]uint8, len(p.global)))
		m.sent = append(m.sent, make([]bool, len(p.spec.Send)))
		m.back = append(m.back, make([]bool, len(p.global)-p.gf()))
		left[q] = p.own
	}
	m.queue = make([][]func(), len(m.ps))
	for steps := 0; slices.Max(left) > 0; steps++ {
		if steps > 100000 {
			t.Fatal("the model makes no progress")
		}
		q := m.rng.IntN(len(m.ps))
		left[q] = m.launch(q)
		for to, qu := range m.queue {
			k := m.rng.IntN(len(qu) + 1)
			for _, f := range qu[:k] {
				f()
			}
			m.queue[to] = qu[k:]
		}
	}
	in := map[int32]bool{}
	for q, p := range m.ps {
		for i, v := range p.global[:p.own] {
			if m.st[q][i] == pIn {
				in[v] = true
			}
		}
	}
	return in
}

// TestPartModelIsGreedy: however the parts' launches interleave and
// however late the sends land, the parts find the greedy set, and each
// boundary state travels once to each part that keeps it; with the
// ghosts' OUT given back, none reaches a member, and with sends made as
// soon as a vertex is decided, the set is the same; so it is where the
// parts pull both ways, send as the tails do and push their windows.
func TestPartModelIsGreedy(t *testing.T) {
	returned, pulled, pushed := int64(0), int64(0), int64(0)
	for _, c := range mgpuGraphs() {
		for _, dist := range []int{1, 2} {
			for _, pr := range []Priority{{Seed: 11}, {Kind: Degree}, {Kind: Hash, Seed: 11}} {
				keys, err := Keys(c.g, pr)
				if err != nil {
					t.Fatal(err)
				}
				want := greedy(c.g, keys, dist)
				for _, k := range []int{1, 2, 3, 5} {
					for lname, ps := range layouts(t, c.g, k, dist, keys) {
						for mode := range 6 {
							name := fmt.Sprintf("%s/d%d/%v/k%d/%s/mode%d", c.name, dist, pr.Kind, k, lname, mode)
							m := &partModel{ps: ps, dist: dist, keys: keys, rng: rand.New(rand.NewPCG(uint64(k), uint64(dist))),
								returns: mode == 1 || mode == 2, immediate: mode == 2 || mode >= 4, sendsToo: mode == 4, pushes: mode == 5}
							if mode >= 3 {
								if m.pull = pullSegments(ps, m.sendsToo); m.pull == nil {
									continue
								}
							}
							in := m.run(t)
							returned += m.returned
							pulled += m.pulled
							pushed += m.pushed
							for v, w := range want.In {
								if in[int32(v)] != w {
									t.Fatalf("%s: vertex %d in=%v, greedy says %v", name, v, in[int32(v)], w)
								}
							}
							slots := int64(0)
							for _, p := range ps {
								slots += int64(len(p.spec.To))
							}
							if (m.pull == nil || m.sendsToo) && m.bytes != slots {
								t.Fatalf("%s: %d bytes sent for %d ghost slots", name, m.bytes, slots)
							}
						}
					}
				}
			}
		}
	}
	if returned == 0 {
		t.Error("no ghost went back to its owner")
	}
	if pulled == 0 {
		t.Error("no part pulled an OUT back")
	}
	if pushed == 0 {
		t.Error("no part pushed a window")
	}
}

// pullSegments returns each part's misgpu.PullSegments (only the back
// ones with backOnly), or nil where the parts do not pull.
func pullSegments(ps []*gpuPart, backOnly bool) [][]misgpu.PullSegment {
	specs := make([]*misgpu.PartSpec, len(ps))
	for q, p := range ps {
		specs[q] = &p.spec
	}
	var out [][]misgpu.PullSegment
	for q := range ps {
		g := misgpu.PullSegments(specs, q)
		if g == nil {
			return nil
		}
		if backOnly {
			g = slices.DeleteFunc(g, func(s misgpu.PullSegment) bool { return !s.Back })
		}
		out = append(out, g)
	}
	return out
}

// TestIdentityIDs: one part in id order passes no id table to the
// kernels (checkLayout checks that every such part's ids are the global
// ones); one with an order, and every part of several, does.
func TestIdentityIDs(t *testing.T) {
	g := mesh.Hex27Graph(6, 5, 4)
	keys, _ := Keys(g, Priority{Kind: Hash})
	for _, dist := range []int{1, 2} {
		for _, k := range []int{1, 2, 3} {
			ls := layouts(t, g, k, dist, keys)
			for name, ps := range ls {
				for q, p := range ps {
					want := k == 1 && name != "locality" // one part of a partition in id order too
					if got := p.spec.IdentityIDs(); got != want {
						t.Errorf("d%d %d parts %s: part %d IdentityIDs() = %v, want %v", dist, k, name, q, got, want)
					}
				}
			}
		}
	}
}

func TestLayoutPartsRejects(t *testing.T) {
	g := mesh.Hex27Graph(3, 3, 3)
	if _, err := layoutParts(g, 0, nil, make([]uint64, g.N()), 1, nil, misgpu.MaxWindows); err == nil {
		t.Error("0 parts accepted")
	}
	bad := slices.Repeat([]int32{0}, g.N())
	bad[5] = 4
	if _, err := layoutParts(g, 2, bad, make([]uint64, g.N()), 1, nil, misgpu.MaxWindows); err == nil {
		t.Error("partition entry out of range accepted")
	}
}

// TestLocalityPartitionCutsLess: on a relabelled mesh, ranges of the
// locality order cut far fewer edges than ranges of the ids.
func TestLocalityPartitionCutsLess(t *testing.T) {
	g, _ := mesh.Relabel(mesh.Hex27Graph(16, 16, 16), 3)
	cut := func(part []int32) int {
		c := 0
		for v := range g.N() {
			for _, u := range g.Neighbors(int32(v)) {
				if part[u] != part[v] {
					c++
				}
			}
		}
		return c
	}
	ranges := make([]int32, g.N())
	r := ContiguousRanges(g.N(), 4)
	for q := range 4 {
		for v := r[q]; v < r[q+1]; v++ {
			ranges[v] = int32(q)
		}
	}
	lp, _, err := LocalityPartition(g, 4)
	if err != nil {
		t.Fatal(err)
	}
	for q := range int32(4) {
		if c := slices.Index(lp, q); c < 0 {
			t.Fatalf("part %d is empty", q)
		}
	}
	if a, b := cut(lp), cut(ranges); 5*a > b {
		t.Errorf("locality partition cuts %d edges, id ranges %d", a, b)
	}
}
