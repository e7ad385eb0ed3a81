package mis

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// directModel runs the rounds of a direct-store run (MultiGPU.direct) on
// the host, with the rules of part.cu's kernels (part_visit1, part_ball2
// and part_decide2 with a Remote): the parts advance in a random order,
// each a kernel at a time over its vertices in a random order, and the
// stores into other parts' ghosts land late, a random part of each
// queue at a time (in the order each part made them, as on the device).
// It returns the set and the bytes stored.
type directModel struct {
	ps    []*gpuPart
	dist  int
	st    [][]uint8
	m1    [][]uint64
	near  [][]uint8
	slots [][][]int64 // per part, per owned vertex: part<<slotBits | ghost slot
	queue [][]func()  // per receiving part, stores not yet landed
	sent  int64
	rng   *rand.Rand
}

func newDirectModel(ps []*gpuPart, dist int, seed uint64) *directModel {
	m := &directModel{ps: ps, dist: dist, rng: rand.New(rand.NewPCG(seed, 1)), queue: make([][]func(), len(ps))}
	for q, p := range ps {
		m.st = append(m.st, make([]uint8, p.local()))
		m1 := make([]uint64, p.local())
		for i := range m1 {
			m1[i] = ^uint64(0)
		}
		m.m1 = append(m.m1, m1)
		m.near = append(m.near, make([]uint8, p.local()))
		sl := make([][]int64, p.own)
		for to, list := range p.send {
			off := int64(ps[to].own) + int64(ps[to].ghostOff[q])
			for i, v := range list {
				sl[v] = append(sl[v], int64(to)<<slotBits|(off+int64(i)))
			}
		}
		m.slots = append(m.slots, sl)
	}
	return m
}

// tell queues the store of value x of v (owned by q) into array arr of
// every ghost slot of v: 0 states, 1 champion keys, 2 near flags.
func (m *directModel) tell(q int, v int32, arr int, x uint64) {
	for _, s := range m.slots[q][v] {
		to, l := int(s>>slotBits), s&(1<<slotBits-1)
		switch arr {
		case 0:
			m.queue[to] = append(m.queue[to], func() { m.st[to][l] = uint8(x) })
			m.sent++
		case 1:
			m.queue[to] = append(m.queue[to], func() { m.m1[to][l] = x })
			m.sent += 8
		default:
			m.queue[to] = append(m.queue[to], func() { m.near[to][l] = uint8(x) })
			m.sent++
		}
	}
}

func (m *directModel) land(all bool) {
	for to, qu := range m.queue {
		k := len(qu)
		if !all {
			k = m.rng.IntN(k + 1)
		}
		for _, f := range qu[:k] {
			f()
		}
		m.queue[to] = qu[k:]
	}
}

// sweep1 is part_sweep1v on part q: the chunks of 8 row entries, a
// member in a chunk first, then an undecided larger key.
func (m *directModel) sweep1(q int) int {
	p, st, left := m.ps[q], m.st[q], 0
	for _, v := range m.rng.Perm(p.own) {
		if st[v] != 0 {
			continue
		}
		row := p.adj[p.offsets[v]:p.offsets[v+1]]
		dec, wait := uint8(pIn), false
		for c := 0; c < len(row) && !wait && dec == pIn; c += 8 {
			hin, hund := false, false
			for _, u := range row[c:min(c+8, len(row))] {
				hin = hin || st[u] == pIn
				hund = hund || st[u] == 0 && p.keys[u] > p.keys[v]
			}
			if hin {
				dec = pOut
			} else if hund {
				wait = true
			}
		}
		if wait {
			left++
			continue
		}
		st[v] = dec
		m.tell(q, int32(v), 0, uint64(dec))
		if dec != pIn {
			continue
		}
		for _, u := range row {
			if int(u) < p.own && st[u] == 0 {
				st[u] = pOut
				m.tell(q, u, 0, uint64(pOut))
			}
		}
	}
	return left
}

// ball2 and decide2 are part_ball2 and part_decide2 on part q.
func (m *directModel) ball2(q int) {
	p, st, m1, near := m.ps[q], m.st[q], m.m1[q], m.near[q]
	for _, w := range m.rng.Perm(p.own) {
		if near[w] != 0 {
			continue
		}
		mx, nr := uint64(0), st[w] == pIn
		if st[w] != pOut {
			mx = p.keys[w]
		}
		for _, u := range p.adj[p.offsets[w]:p.offsets[w+1]] {
			if st[u] == pIn {
				nr = true
			} else if st[u] == 0 {
				mx = max(mx, p.keys[u])
			}
		}
		if nr {
			m.tell(q, int32(w), 2, 1)
		} else if mx != m1[w] {
			m.tell(q, int32(w), 1, mx)
		}
		m1[w] = mx
		if nr {
			near[w] = 1
		}
	}
}

func (m *directModel) decide2(q int) int {
	p, st, m1, near, left := m.ps[q], m.st[q], m.m1[q], m.near[q], 0
	for _, v := range m.rng.Perm(p.own) {
		if st[v] != 0 {
			continue
		}
		out, champ := near[v] != 0, m1[v] == p.keys[v]
		for _, w := range p.adj[p.offsets[v]:p.offsets[v+1]] {
			out = out || near[w] != 0
			champ = champ && m1[w] == p.keys[v]
		}
		switch {
		case out:
			st[v] = pOut
			m.tell(q, int32(v), 0, uint64(pOut))
		case champ:
			st[v] = pIn
			m.tell(q, int32(v), 0, uint64(pIn))
		default:
			left++
		}
	}
	return left
}

func (m *directModel) run(t *testing.T) map[int32]bool {
	left := make([]int, len(m.ps))
	for q, p := range m.ps {
		left[q] = p.own
	}
	for steps := 0; ; steps++ {
		total := 0
		for _, l := range left {
			total += l
		}
		if total == 0 {
			break
		}
		if steps > 100000 {
			t.Fatal("the direct-store model makes no progress")
		}
		q := m.rng.IntN(len(m.ps))
		if m.dist == 1 {
			left[q] = m.sweep1(q)
		} else {
			m.ball2(q)
			left[q] = m.decide2(q)
		}
		m.land(false)
	}
	m.land(true)
	in := map[int32]bool{}
	for q, p := range m.ps {
		for i, v := range p.global {
			if m.st[q][i] == pIn {
				in[v] = true
			}
		}
	}
	return in
}

// TestDirectStoresAreGreedy checks that the direct stores give the greedy
// set however the parts' rounds interleave and however late the stores
// land, and that every ghost ends up holding its owner's state.
func TestDirectStoresAreGreedy(t *testing.T) {
	for _, c := range mgpuGraphs() {
		for _, dist := range []int{1, 2} {
			for _, pr := range []Priority{{Seed: 11}, {Kind: Degree}} {
				keys, err := Keys(c.g, pr)
				if err != nil {
					t.Fatal(err)
				}
				want := greedy(c.g, keys, dist)
				for _, k := range []int{2, 3, 5} {
					for seed := range uint64(3) {
						hashed := seed == 1
						name := fmt.Sprintf("%s/d%d/%v/k%d/seed%d", c.name, dist, pr.Kind, k, seed)
						ps, err := layoutParts(c.g, k, mgpuPartition(c.g.N(), k, hashed), keys)
						if err != nil {
							t.Fatal(err)
						}
						m := newDirectModel(ps, dist, seed)
						in := m.run(t)
						for v, w := range want.In {
							if in[int32(v)] != w {
								t.Fatalf("%s: vertex %d in=%v, greedy says %v", name, v, in[int32(v)], w)
							}
						}
						for q, p := range ps {
							for i, u := range p.ghostIDs {
								o := ps[ownerOf(ps, u)]
								if got, own := m.st[q][p.own+i], m.st[ownerOf(ps, u)][localOf(o, u)]; got != own {
									t.Fatalf("%s: part %d's ghost of %d holds %d, its owner %d", name, q, u, got, own)
								}
							}
						}
						if k > 1 && m.sent == 0 {
							t.Fatalf("%s: no store between parts", name)
						}
					}
				}
			}
		}
	}
}

func ownerOf(ps []*gpuPart, v int32) int {
	for q, p := range ps {
		if localOf(p, v) >= 0 {
			return q
		}
	}
	return -1
}

func localOf(p *gpuPart, v int32) int {
	for i, g := range p.global {
		if g == v {
			return i
		}
	}
	return -1
}
