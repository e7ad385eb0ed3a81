package misgpu_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"

	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// This file checks the rules of MIS-2 by key buckets (mis2b.cuh) without
// a GPU, the way gpu_model_test.go checks the ball sweeps: candidates are
// decided in chunks that read the states as they were when the chunk
// began, or older ones read earlier in the same launch (stale L1 lines;
// L1 is clean at each launch), and write in random order.

// bucketModel is one run of the bucket launches on a graph.
type bucketModel struct {
	g    *mesh.Graph
	keys []uint64
	st   []uint8
	old  [][]uint8 // states read earlier in this launch, newest first
	rng  *rand.Rand
	// noWait breaks the rules on purpose (a candidate that saw no member
	// joins even when a larger vertex within distance 2 is undecided),
	// to show that the test can fail.
	noWait bool
	// larger reads only the states of larger keys and pushes OUT into
	// smaller ones only (mis2bs).
	larger bool
	// hashOnly compares keys by their hash alone (the hash kernels of
	// the second stage of a split run).
	hashOnly bool
}

// key is v's key as the kernel of the current stage sees it.
func (m *bucketModel) key(v int32) uint64 {
	if m.hashOnly {
		return uint64(uint32(m.keys[v]))
	}
	return m.keys[v]
}

// read returns u's state as a load in a scan may see it.
func (m *bucketModel) read(snap []uint8, u int32, fresh bool) uint8 {
	if !fresh {
		if i := m.rng.IntN(len(m.old) + 1); i > 0 {
			return m.old[i-1][u]
		}
	}
	return snap[u]
}

// scan mirrors the two-hop scan of mis2b_batch: it returns whether a
// member was seen and a larger undecided vertex (-1 for none; the one of
// largest hash, as the kernel keeps).
func (m *bucketModel) scan(snap []uint8, v int32, fresh bool) (hit bool, top int32) {
	top = -1
	rows := append([]int32{v}, m.g.Neighbors(v)...)
	for _, u := range rows {
		for _, x := range m.g.Neighbors(u) {
			if x == v || m.larger && m.key(x) < m.key(v) {
				continue
			}
			s := m.read(snap, x, fresh)
			switch {
			case s == mIn:
				hit = true
			case s == mUnd && m.key(x) > m.key(v):
				if top < 0 || uint32(m.keys[x]) > uint32(m.keys[top]) {
					top = x
				}
			}
		}
	}
	return hit, top
}

type bucketWrite struct {
	v   int32
	val uint8
	or  bool // an atomic OR of OUT (pushes): a member stays a member
}

// decide returns the writes of candidate v after a scan, and whether it
// waits (with the vertex it waits on).
func (m *bucketModel) decide(snap []uint8, v int32, fresh bool) ([]bucketWrite, int32, bool) {
	hit, top := m.scan(snap, v, fresh)
	if m.noWait {
		top = -1
	}
	switch {
	case hit:
		return []bucketWrite{{v: v, val: mOut}}, -1, false
	case top >= 0:
		return nil, top, true
	}
	w := []bucketWrite{{v: v, val: mIn}}
	for _, u := range append([]int32{v}, m.g.Neighbors(v)...) {
		for _, x := range m.g.Neighbors(u) {
			if x != v && (!m.larger || m.key(x) < m.key(v)) {
				w = append(w, bucketWrite{v: x, val: mOut, or: true})
			}
		}
	}
	return w, -1, false
}

func (m *bucketModel) apply(ws []bucketWrite) {
	m.rng.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	for _, w := range ws {
		switch {
		case w.or:
			if m.st[w.v] != mIn {
				m.st[w.v] = mOut
			}
		case m.st[w.v] != mUnd && m.st[w.v] != w.val:
			panic("a vertex changed its decision")
		default:
			m.st[w.v] = w.val
		}
	}
}

// launch runs one bucket launch with threshold lo and returns how many
// candidates still wait at its end.
func (m *bucketModel) launch(lo uint64, chunk int, retry bool) int {
	n := m.g.N()
	m.old = m.old[:0]
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	m.rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	type pend struct{ v, x int32 }
	var waits []pend
	for at := 0; at < n; at += chunk {
		// The tile pass reads fresh states (ld.cg); the scans of the
		// chunk read this snapshot or older ones of the launch.
		snap := slices.Clone(m.st)
		var ws []bucketWrite
		for _, v := range order[at:min(at+chunk, n)] {
			if snap[v] != mUnd || m.key(v) < lo {
				continue
			}
			w, x, wait := m.decide(snap, v, false)
			ws = append(ws, w...)
			if wait {
				waits = append(waits, pend{v, x})
			}
		}
		m.apply(ws)
		m.old = append([][]uint8{snap}, m.old[:min(len(m.old), 3)]...)
	}
	if !retry {
		return len(waits)
	}
	for round := 0; round < 8 && len(waits) > 0; round++ {
		snap := slices.Clone(m.st)
		var keep []pend
		var ws []bucketWrite
		for _, p := range waits {
			switch {
			case snap[p.v] != mUnd, snap[p.x] == mIn:
			case snap[p.x] == mUnd:
				keep = append(keep, p)
			default:
				w, x, wait := m.decide(snap, p.v, true)
				ws = append(ws, w...)
				if wait {
					keep = append(keep, pend{p.v, x})
				}
			}
		}
		m.apply(ws)
		waits = keep
	}
	return len(waits)
}

// drain runs launches with threshold lo until one leaves nothing
// waiting.
func (m *bucketModel) drain(lo uint64, chunk int, retry bool) {
	for i := 0; m.launch(lo, chunk, retry) > 0; i++ {
		if i > 2*m.g.N()+8 {
			panic("bucket model did not converge")
		}
	}
}

// split says how runBucketModel runs class keys: in one stage (0), in
// two as useBuckets does (1), or with the second stage taking over
// before the first has drained (-1, a broken rule).
type split int

// runBucketModel runs the launches of sweepRun for b buckets: one per
// threshold, then launches over every key until one leaves nothing
// waiting. With sp it splits the run as useBuckets does: the classes
// above 0 to the end first, then class 0 by hash keys. It returns the
// set.
func runBucketModel(g *mesh.Graph, keys []uint64, b, chunk int, retry, noWait, perClass, larger bool, sp split, rng *rand.Rand) []bool {
	n := g.N()
	m := &bucketModel{g: g, keys: keys, st: make([]uint8, n), rng: rng, noWait: noWait, larger: larger && sp == 0}
	var counts []int64
	if len(keys) > 0 && slices.Max(keys)>>32 < misgpu.MaxSmallRanks {
		counts = make([]int64, misgpu.MaxSmallRanks)
		for _, k := range keys {
			counts[k>>32]++
		}
	}
	if sp != 0 && counts != nil {
		for _, lo := range misgpu.AboveClass0(misgpu.BucketThresholds(b, 2, counts, true)) {
			m.launch(lo, chunk, retry)
		}
		if sp > 0 {
			m.drain(1<<32, chunk, retry)
		}
		m.hashOnly, m.larger = true, larger
		counts = nil
	}
	for _, lo := range misgpu.BucketThresholds(b, 2, counts, perClass) {
		m.launch(lo, chunk, retry)
	}
	m.drain(0, chunk, retry)
	in := make([]bool, n)
	for v, s := range m.st {
		if s == mUnd {
			panic("undecided vertex at the end")
		}
		in[v] = s == mIn
	}
	return in
}

func TestBucketModelMatchesGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, g := range testgraphs.Small() {
		for _, kind := range []mis.PriorityKind{mis.Hash, mis.Boundary, mis.Degree} {
			keys, err := mis.Keys(g, mis.Priority{Kind: kind, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			want := mistest.Greedy(t, g, keys, 2).In
			for _, b := range []int{1, 4, 12} {
				for _, chunk := range []int{1, 16, max(g.N(), 1)} {
					for _, retry := range []bool{false, true} {
						// Both kinds of thresholds and of scans, without
						// a product of all options.
						perClass, larger := retry, !retry && chunk > 1
						for _, sp := range []split{0, 1} {
							got := runBucketModel(g, keys, b, chunk, retry, false, perClass, larger, sp, rng)
							if i := testgraphs.FirstDiff(got, want); i >= 0 {
								t.Fatalf("%s %v buckets %d chunk %d retry %v split %d: vertex %d: model %v, greedy %v", name, kind, b, chunk, retry, sp, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// The model must go wrong with a rule broken on purpose, so the test
// above can fail: without the wait rule; and with a split run whose
// second stage starts before the classes above 0 are all decided (the
// drain between the stages is what makes hash keys enough there; one
// bucket per class leaves waits at the end of the first stage).
func TestBucketModelCatchesBrokenRules(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *mesh.Graph
		kind mis.PriorityKind
		// run returns the model's set, with the rule intact or broken.
		run func(g *mesh.Graph, keys []uint64, broken bool, rng *rand.Rand) []bool
	}{
		{"wait rule", mesh.Hex27Graph(6, 6, 6), mis.Hash, func(g *mesh.Graph, keys []uint64, broken bool, rng *rand.Rand) []bool {
			return runBucketModel(g, keys, 1, max(g.N(), 1), false, broken, false, false, 0, rng)
		}},
		{"split drain", mesh.Hex27Graph(7, 6, 5), mis.Degree, func(g *mesh.Graph, keys []uint64, broken bool, rng *rand.Rand) []bool {
			sp := split(1)
			if broken {
				sp = -1
			}
			return runBucketModel(g, keys, 1, 16, false, false, true, true, sp, rng)
		}},
	} {
		rng := rand.New(rand.NewPCG(7, 8))
		keys, err := mis.Keys(c.g, mis.Priority{Kind: c.kind, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		want := mistest.Greedy(t, c.g, keys, 2).In
		if i := testgraphs.FirstDiff(c.run(c.g, keys, false, rng), want); i >= 0 {
			t.Fatalf("%s: the model with the rule intact differs at vertex %d", c.name, i)
		}
		if !goesWrong(want, func() []bool { return c.run(c.g, keys, true, rng) }) {
			t.Fatalf("%s: the model returned the greedy set with the rule broken", c.name)
		}
	}
}

// goesWrong reports whether run, a model with a rule broken on purpose,
// returns a set other than want or panics: a broken rule may also make
// a vertex change its decision, which the model reports by panicking.
func goesWrong(want []bool, run func() []bool) (wrong bool) {
	defer func() {
		if recover() != nil {
			wrong = true
		}
	}()
	return testgraphs.FirstDiff(run(), want) >= 0
}
