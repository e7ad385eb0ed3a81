package misgpu_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"

	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// This file checks the algorithm of the GPU kernels (internal/kernels/mis.cu)
// without a GPU: a Go transcription of one vertex visit, run in sweeps
// whose visits are grouped in chunks that all read the state as it was
// when the chunk began and then write in random order. That is the worst
// the device's asynchronous sweeps can do (stale reads, late and
// reordered writes), so the model returning the greedy set on many graphs
// is evidence that the kernels' decision rules are exact.

const (
	mUnd, mIn, mOut = 0, 1, 2
	bCov, bNone     = -1, -2
	bUnk, bCovP     = -3, -4
)

type modelWrite struct {
	ball   bool
	ball2  bool // the runner-up of a ball (ball2 in mis.cu)
	v      int32
	val    int32
	or     bool // an atomic OR of the OUT bit: a member stays a member
	ifOpen bool // ball write decided on a stale read (pushes)
}

type model struct {
	g    *mesh.Graph
	keys []uint64
	st   []uint8
	ball []int32
	// ball2 is the runner-up beside each champion; only the ball's own
	// visitor uses it, so it is never read stale.
	ball2 []int32
	// Older states, newest first: a neighbour read may return any of
	// them, as a stale L1 line would (the tile pass reads fresh values).
	oldSt   [][]uint8
	oldBall [][]int32
	rng     *rand.Rand
	first   bool // the first sweep: rescans read no states or balls
	// band: the sweep visits for decisions only vertices whose hash (the
	// low 32 bits of the key) is at least band, as in_band in mis.cu.
	band uint32
	// redAll: a member ORs OUT into every neighbour without reading it
	// (KF_RED|KF_ALL in mis.cu).
	redAll bool
}

func (m *model) inBand(v int32) bool { return m.band == 0 || uint32(m.keys[v]) >= m.band }

// nst and nball read a neighbour's state or ball, possibly stale.
func (m *model) nst(u int32) uint8 {
	if i := m.rng.IntN(len(m.oldSt) + 1); i > 0 {
		return m.oldSt[i-1][u]
	}
	return m.st[u]
}

func (m *model) nball(u int32) int32 {
	if i := m.rng.IntN(len(m.oldBall) + 1); i > 0 {
		return m.oldBall[i-1][u]
	}
	return m.ball[u]
}

// visit1 mirrors mis1_visit: it reads from m (the snapshot) and returns
// the writes, and whether v stays undecided.
func (m *model) visit1(v int32) ([]modelWrite, bool) {
	if m.st[v] != mUnd {
		return nil, false
	}
	if !m.inBand(v) {
		return nil, true
	}
	dec := mIn
	for _, u := range m.g.Neighbors(v) {
		if m.keys[u] < m.keys[v] {
			continue
		}
		su := m.nst(u)
		if su == mIn {
			dec = mOut
			break
		}
		if su == mUnd {
			dec = mUnd
			break
		}
	}
	if dec == mUnd {
		return nil, true
	}
	w := []modelWrite{{v: v, val: int32(dec)}}
	if dec == mIn && m.redAll {
		for _, u := range m.g.Neighbors(v) {
			w = append(w, modelWrite{v: u, val: mOut, or: true})
		}
	} else if dec == mIn {
		for _, u := range m.g.Neighbors(v) {
			if m.nst(u) == mUnd {
				w = append(w, modelWrite{v: u, val: mOut})
			}
		}
	}
	return w, false
}

// visit2 mirrors mis2_visit and the tile pass before it.
func (m *model) visit2(w int32) ([]modelWrite, bool) {
	sw, bw := m.st[w], m.ball[w]
	if sw != mUnd && (bw == bNone || bw == bCovP) {
		return nil, false
	}
	var champ uint8
	if bw >= 0 {
		champ = m.st[bw]
	}
	// A ball whose champion left is rescanned in a band sweep only when
	// the champion was in the band, unless the runner-up takes over.
	canPromote := false
	if bw >= 0 && champ == mOut {
		r2 := m.ball2[w]
		canPromote = r2 == bNone || (r2 >= 0 && m.st[r2] != mOut)
	}
	work := bw == bUnk || bw == bCov || (bw >= 0 && champ == mIn) ||
		(bw >= 0 && champ == mOut && (canPromote || m.inBand(bw))) || (sw == mUnd && bw == w && m.inBand(w))
	if !work {
		return nil, true
	}
	var out []modelWrite
	und := sw == mUnd
	nb := bw
	if bw >= 0 && champ == mIn {
		nb = bCov
	}
	rescan := bw == bUnk || (bw >= 0 && champ == mOut)
	if bw >= 0 && champ == mOut {
		r2 := m.ball2[w]
		s2 := uint8(mOut)
		if r2 >= 0 {
			s2 = m.nst(r2)
		}
		if r2 == bNone || (r2 >= 0 && s2 != mOut) {
			rescan = false
			switch {
			case r2 == bNone:
				nb = bNone
			case s2 == mIn:
				nb = bCov
			default:
				nb = r2
				out = append(out, modelWrite{ball2: true, v: w, val: bUnk})
			}
		}
	}
	cov, allMe := false, true
	if rescan {
		anyIn := sw == mIn
		id, id2 := int32(-1), int32(-1)
		if und {
			id = w
		}
		for _, u := range m.g.Neighbors(w) {
			su := m.nst(u)
			if m.first {
				su = mUnd
			}
			switch su {
			case mIn:
				anyIn = true
			case mUnd:
				if id < 0 || m.keys[u] > m.keys[id] {
					id, id2 = u, id
				} else if id2 < 0 || m.keys[u] > m.keys[id2] {
					id2 = u
				}
			}
			if und && !m.first {
				bu := m.nball(u)
				cov = cov || bu == bCov || bu == bCovP
				allMe = allMe && bu == w
			}
		}
		if m.first {
			allMe = false
		}
		switch {
		case anyIn:
			nb = bCov
		case id < 0:
			nb = bNone
		default:
			nb = id
			r2 := id2
			if r2 < 0 {
				r2 = bNone
			}
			out = append(out, modelWrite{ball2: true, v: w, val: r2})
		}
	} else if und && nb == w {
		for _, u := range m.g.Neighbors(w) {
			bu := m.nball(u)
			cov = cov || bu == bCov || bu == bCovP
			allMe = allMe && bu == w
			if cov || !allMe {
				break
			}
		}
	}
	if nb == bCov {
		// The member itself may be in N(w): the kernel ORs the OUT bit,
		// which leaves a member a member.
		for _, u := range m.g.Neighbors(w) {
			if m.nst(u) == mUnd {
				out = append(out, modelWrite{v: u, val: mOut, or: true})
			}
		}
		if und {
			out = append(out, modelWrite{v: w, val: mOut})
		}
		und = false
		nb = bCovP
	}
	if nb != bw {
		out = append(out, modelWrite{ball: true, v: w, val: nb})
	}
	if !und {
		return out, true
	}
	if cov {
		return append(out, modelWrite{v: w, val: mOut}), true
	}
	if nb != w || !allMe {
		return out, true
	}
	out = append(out, modelWrite{v: w, val: mIn}, modelWrite{ball: true, v: w, val: bCovP})
	for _, u := range m.g.Neighbors(w) {
		if m.nst(u) == mUnd {
			out = append(out, modelWrite{v: u, val: mOut})
		}
		if bu := m.nball(u); bu != bCov && bu != bCovP {
			out = append(out, modelWrite{ball: true, v: u, val: bCov, ifOpen: true})
		}
	}
	return out, false
}

// runModel returns the set and the number of sweeps.
func runModel(g *mesh.Graph, keys []uint64, dist, chunk int, rng *rand.Rand) ([]bool, int) {
	return runModelBands(g, keys, dist, chunk, 0, rng)
}

// runModelBands runs the model with the first sweeps in bands of the
// hash (sweepRun.band with one sweep per band) and, with bands, MIS-1
// members pushing OUT without reads, as the kernels' defaults do.
func runModelBands(g *mesh.Graph, keys []uint64, dist, chunk, bands int, rng *rand.Rand) ([]bool, int) {
	n := g.N()
	m := &model{g: g, keys: keys, st: make([]uint8, n), ball: make([]int32, n), ball2: make([]int32, n)}
	for i := range m.ball {
		m.ball[i], m.ball2[i] = bUnk, bUnk
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	snap := &model{g: g, keys: keys, rng: rng, redAll: bands > 1}
	for sweep := 0; ; sweep++ {
		if sweep > 4*n+8 {
			panic("model did not converge")
		}
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		snap.first = sweep == 0
		snap.band = 0
		if i := sweep - (dist - 1); bands > 1 && i >= 0 && i < bands-1 {
			snap.band = uint32((uint64(bands) - 1 - uint64(i)) << 32 / uint64(bands))
		}
		live := 0
		for lo := 0; lo < n; lo += chunk {
			if snap.st != nil {
				snap.oldSt = append([][]uint8{snap.st}, snap.oldSt[:min(len(snap.oldSt), 3)]...)
				snap.oldBall = append([][]int32{snap.ball}, snap.oldBall[:min(len(snap.oldBall), 3)]...)
			}
			snap.st = slices.Clone(m.st)
			snap.ball = slices.Clone(m.ball)
			snap.ball2 = slices.Clone(m.ball2)
			var writes []modelWrite
			for _, v := range order[lo:min(lo+chunk, n)] {
				var w []modelWrite
				var in bool
				if dist == 1 {
					w, in = snap.visit1(v)
				} else {
					w, in = snap.visit2(v)
				}
				if in {
					live++
				}
				writes = append(writes, w...)
			}
			rng.Shuffle(len(writes), func(i, j int) { writes[i], writes[j] = writes[j], writes[i] })
			for _, w := range writes {
				switch {
				case w.ball2:
					m.ball2[w.v] = w.val
				case w.ball && w.ifOpen:
					// The kernel checks and writes without an atomic:
					// the check saw an open ball in the snapshot.
					m.ball[w.v] = w.val
				case w.ball:
					m.ball[w.v] = w.val
				case w.or:
					if m.st[w.v] != mIn {
						m.st[w.v] = mOut
					}
				default:
					// A plain store, decided on a read that may be stale:
					// it must never contradict a decision.
					if m.st[w.v] != mUnd && m.st[w.v] != uint8(w.val) {
						panic("a vertex changed its decision")
					}
					m.st[w.v] = uint8(w.val)
				}
			}
		}
		if live == 0 {
			in := make([]bool, n)
			for v, s := range m.st {
				if s == mUnd {
					panic("undecided vertex at the end")
				}
				in[v] = s == mIn
			}
			return in, sweep
		}
	}
}

func TestGPUModelMatchesGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	graphs := testgraphs.Small()
	for name, g := range graphs {
		for _, kind := range []mis.PriorityKind{mis.Hash, mis.Boundary, mis.Degree} {
			keys, err := mis.Keys(g, mis.Priority{Kind: kind, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			for dist := 1; dist <= 2; dist++ {
				want := mistest.Greedy(t, g, keys, dist).In
				for _, chunk := range []int{1, 7, 64, max(g.N(), 1)} {
					for _, bands := range []int{0, 4} {
						got, _ := runModelBands(g, keys, dist, chunk, bands, rng)
						if i := testgraphs.FirstDiff(got, want); i >= 0 {
							t.Fatalf("%s %v dist %d chunk %d bands %d: vertex %d: model %v, greedy %v", name, kind, dist, chunk, bands, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
