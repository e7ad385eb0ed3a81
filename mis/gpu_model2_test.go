package mis

import (
	"cmp"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// This file checks the rules of the cursor MIS-2 kernels (mis2c.cuh)
// without a GPU, the way gpu_model_test.go does for the others: every
// closed neighbourhood N[w] is sorted by decreasing key once, a ball
// walks its sorted row with a cursor past vertices that read OUT, and
// each vertex counts down the balls that still have to reach it; the
// ball that brings the count to zero lets it join. Neighbour states
// may be read stale; the count and the join are atomics on the true
// values.

type cursorModel struct {
	g    *mesh.Graph
	keys []uint64
	srow [][]int32 // N[w] by decreasing key
	st   []uint8
	ch   []int32 // the champion ball w has reached (srow[w][cur[w]]), or bNone / bCovP
	cur  []int32
	cnt  []int32 // balls of N[v] that have not reached v yet
	old  [][]uint8
	rng  *rand.Rand
	// joined are the members whose two-hop push is pending.
	joined []int32
	stats  cursorStats
}

type cursorStats struct {
	sweeps   int
	walked   int64 // state reads of the walks
	advances int64 // walks
	champs   int64 // champion state reads of the ball passes
	pushed   int64 // two-hop OR targets
	liveSeen []int
}

func newCursorModel(g *mesh.Graph, keys []uint64, rng *rand.Rand) *cursorModel {
	n := g.N()
	m := &cursorModel{g: g, keys: keys, rng: rng, srow: make([][]int32, n), st: make([]uint8, n),
		ch: make([]int32, n), cur: make([]int32, n), cnt: make([]int32, n)}
	for w := range n {
		r := append([]int32{int32(w)}, g.Neighbors(int32(w))...)
		slices.SortFunc(r, func(a, b int32) int { return cmp.Compare(keys[b], keys[a]) })
		m.srow[w] = r
		m.cnt[w] = int32(len(r))
	}
	return m
}

// reach records that ball w has reached vertex c at position p of its
// row, and lets c join when w was the last ball of N[c] to get there.
func (m *cursorModel) reach(w, c, p int32) {
	m.ch[w], m.cur[w] = c, p
	m.cnt[c]--
	if m.cnt[c] == 0 && m.st[c] == mUnd {
		// atomicCAS UND -> IN: only an undecided vertex joins.
		m.st[c] = mIn
		m.joined = append(m.joined, c)
	}
}

func (m *cursorModel) read(u int32) uint8 {
	if i := m.rng.IntN(len(m.old) + 1); i > 0 {
		return m.old[i-1][u]
	}
	return m.st[u]
}

// push ORs OUT into the two-hop neighbourhood of a member and settles the
// balls around it.
func (m *cursorModel) push(c int32) {
	m.ch[c] = bCovP
	for _, u := range m.g.Neighbors(c) {
		if m.st[u] != mIn {
			m.st[u] = mOut
		}
		m.ch[u] = bCovP
		for _, x := range m.g.Neighbors(u) {
			m.stats.pushed++
			if m.st[x] != mIn {
				m.st[x] = mOut
			}
		}
	}
}

func (m *cursorModel) pushJoined() {
	for _, c := range m.joined {
		m.push(c)
	}
	m.joined = m.joined[:0]
}

// advance walks ball w past its champion, which read OUT.
func (m *cursorModel) advance(w int32) {
	r := m.srow[w]
	m.stats.advances++
	for p := m.cur[w] + 1; p < int32(len(r)); p++ {
		m.stats.walked++
		switch m.read(r[p]) {
		case mIn:
			// A member's push settles the ball (or has).
			m.ch[w] = bCovP
			return
		case mUnd:
			// Perhaps stale: the ball waits on it.
			m.reach(w, r[p], p)
			return
		}
	}
	m.ch[w] = bNone
}

func (m *cursorModel) run(chunk int) []bool {
	n := m.g.N()
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	// The first kernel: every ball reaches its top vertex.
	m.rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	for lo := 0; lo < n; lo += chunk {
		for _, w := range order[lo:min(lo+chunk, n)] {
			m.reach(w, m.srow[w][0], 0)
		}
		m.pushJoined()
	}
	for sweep := 1; ; sweep++ {
		if sweep > 4*n+8 {
			panic("cursor model did not converge")
		}
		m.stats.sweeps = sweep
		m.rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		live := 0
		for lo := 0; lo < n; lo += chunk {
			m.old = append([][]uint8{slices.Clone(m.st)}, m.old[:min(len(m.old), 3)]...)
			for _, w := range order[lo:min(lo+chunk, n)] {
				c := m.ch[w]
				if c < 0 {
					continue
				}
				live++
				m.stats.champs++
				switch m.st[c] {
				case mOut:
					m.advance(w)
				case mIn:
					m.ch[w] = bCovP
				}
			}
			// The warp pushes its new members before its next chunk.
			m.pushJoined()
		}
		m.stats.liveSeen = append(m.stats.liveSeen, live)
		if live == 0 {
			break
		}
	}
	in := make([]bool, n)
	for v, s := range m.st {
		in[v] = s == mIn
	}
	return in
}

func TestCursorModelMatchesGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for name, g := range modelGraphs(t) {
		for _, kind := range []PriorityKind{Hash, Boundary, Degree} {
			keys, err := Keys(g, Priority{Kind: kind, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			want := Greedy(g, keys, 2).In
			for _, chunk := range []int{1, 7, 64, max(g.N(), 1)} {
				m := newCursorModel(g, keys, rng)
				got := m.run(chunk)
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("%s %v chunk %d: vertex %d: model %v, greedy %v", name, kind, chunk, i, got[i], want[i])
				}
				for v, s := range m.st {
					if s == mUnd {
						t.Fatalf("%s %v chunk %d: vertex %d undecided at the end", name, kind, chunk, v)
					}
				}
			}
		}
	}
}

// TestCursorModelStats prints the work of the cursor rules on mid-size
// benchmark-like graphs (MISGRID_MODEL_STATS=1).
func TestCursorModelStats(t *testing.T) {
	if os.Getenv("MISGRID_MODEL_STATS") == "" {
		t.Skip("set MISGRID_MODEL_STATS=1")
	}
	rel, _ := mesh.Relabel(mesh.Hex27Graph(40, 40, 40), 5)
	gs := map[string]*mesh.Graph{
		"hex27-40":  mesh.Hex27Graph(40, 40, 40),
		"hex27-rel": rel,
		"grid7-50":  mesh.Grid7Graph(50, 50, 50),
		"random":    mesh.RandomGraph(250000, 16, 1),
	}
	for name, g := range gs {
		for _, kind := range []PriorityKind{Hash, Degree} {
			keys, _ := Keys(g, Priority{Kind: kind})
			m := newCursorModel(g, keys, rand.New(rand.NewPCG(1, 1)))
			in := m.run(2048)
			roots := 0
			for _, b := range in {
				if b {
					roots++
				}
			}
			nnz := float64(g.NumEdges() + int64(g.N()))
			s := m.stats
			t.Logf("%s %v: n %d roots %d sweeps %d walk %.1f, walked %.2f nnz, champs %.2f n, pushed %.2f nnz; live %v",
				name, kind, g.N(), roots, s.sweeps, float64(s.walked)/float64(s.advances), float64(s.walked)/nnz, float64(s.champs)/float64(g.N()), float64(s.pushed)/nnz, s.liveSeen)
		}
	}
}
