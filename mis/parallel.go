package mis

import (
	"sync"

	"github.com/misgrid/misgrid/mesh"
)

const (
	undecided uint8 = iota
	decided
)

// Parallel computes the greedy MIS with workers goroutines, in rounds: an
// undecided vertex joins when its key is the largest among the undecided
// vertices within distance dist, and leaves when a vertex within dist has
// joined. A vertex that joins in some round has no undecided vertex of
// larger key nearby, so every vertex the greedy would visit before it is
// already decided; by induction the rounds build exactly the greedy set.
//
// Rounds follow the chains of the greedy order, so priorities that order
// vertices along long chains (values increasing along a path, or x + εy on
// a grid) would take one round per link. When rounds keep deciding less
// than 1/64 of the vertices left, Parallel decides the rest by the serial
// greedy, which gives the same set: every undecided vertex has no member
// within dist, so visiting them in key order continues the greedy exactly.
//
// Each phase reads arrays that no worker writes in that phase, so the
// result does not depend on scheduling, and the race detector stays quiet.
// It fails when keys does not hold one key per vertex, dist is not 1 or 2,
// or g's structure is broken (mesh.Graph.ValidateStructure).
func Parallel(g *mesh.Graph, keys []uint64, dist, workers int) (*Result, error) {
	if err := checkRun("Parallel", g, keys, dist); err != nil {
		return nil, err
	}
	return parallelMasked(g, keys, dist, workers, nil), nil
}

// A round is slow when it decides less than 1/slowFraction of the
// undecided vertices while at least slowMinActive are left; after
// slowRounds slow rounds in a row, the serial greedy finishes. Below
// slowMinActive rounds are cheap whatever they decide. Tests change both
// to make every run finish serially.
const slowRounds = 2

var slowFraction, slowMinActive = 64, 1 << 12

// stallWatch counts slow rounds in a row; the partitioned drivers use it
// on the global counts, so they hand over after the same round as
// Parallel whatever the parts.
type stallWatch struct{ slow int }

// stalled records a round that left left of before undecided vertices and
// reports whether the serial greedy should now finish.
func (w *stallWatch) stalled(before, left int64) bool {
	if left >= int64(slowMinActive) && before-left < before/int64(slowFraction) {
		w.slow++
	} else {
		w.slow = 0
	}
	return w.slow == slowRounds
}

// parallelMasked runs Parallel on the subgraph induced by the vertices with
// exclude[v] false (exclude may be nil): excluded vertices start decided
// and outside the set, so they neither join nor block.
func parallelMasked(g *mesh.Graph, keys []uint64, dist, workers int, exclude []bool) *Result {
	n := g.N()
	if workers < 1 {
		workers = 1
	}
	p := &parRun{g: g, keys: keys, workers: workers,
		state: make([]uint8, n), in: make([]bool, n)}
	p.active = make([]int32, 0, n)
	for v := range n {
		if exclude != nil && exclude[v] {
			p.state[v] = decided
			continue
		}
		p.active = append(p.active, int32(v))
	}
	if dist == 2 {
		p.m1 = make([]int32, n)
		p.near = make([]bool, n)
		p.live = make([]int32, n)
		for i := range p.live {
			p.live[i] = int32(i)
		}
	}
	p.cands = make([][]int32, workers)
	rounds := 0
	var watch stallWatch
	for len(p.active) > 0 {
		rounds++
		before := len(p.active)
		if dist == 2 {
			p.round2()
		} else {
			p.round1()
		}
		if watch.stalled(int64(before), int64(len(p.active))) {
			p.finishSerial(dist)
		}
	}
	size := 0
	for _, b := range p.in {
		if b {
			size++
		}
	}
	return &Result{In: p.in, Size: size, Rounds: rounds, Backend: "cpu"}
}

// finishSerial decides the undecided vertices by the serial greedy.
func (p *parRun) finishSerial(dist int) {
	blocked := make([]bool, len(p.state))
	for v, s := range p.state {
		blocked[v] = s != undecided
	}
	sortByKey(p.active, p.keys)
	greedyFinish(p.g, p.active, dist, p.in, blocked)
	p.active = p.active[:0]
}

type parRun struct {
	g       *mesh.Graph
	keys    []uint64
	workers int
	state   []uint8
	in      []bool
	active  []int32   // undecided vertices
	live    []int32   // distance 2: vertices with an undecided vertex in their closed neighbourhood
	m1      []int32   // distance 2: best undecided vertex in the closed neighbourhood
	near    []bool    // distance 2: a joined vertex is in the closed neighbourhood
	cands   [][]int32 // per-worker candidates of this round
}

// parallelGrain is the shortest list worth splitting across goroutines;
// tests lower it so that small graphs exercise the split.
var parallelGrain = 4096

// each runs f over list split into one contiguous chunk per worker.
func (p *parRun) each(list []int32, f func(w int, part []int32)) {
	w := p.workers
	if len(list) < parallelGrain || w == 1 {
		f(0, list)
		return
	}
	var wg sync.WaitGroup
	chunk := (len(list) + w - 1) / w
	for i := 0; i < w; i++ {
		lo, hi := i*chunk, min((i+1)*chunk, len(list))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(i int, part []int32) {
			defer wg.Done()
			f(i, part)
		}(i, list[lo:hi])
	}
	wg.Wait()
}

// join marks this round's candidates as members and decided.
func (p *parRun) join() {
	for i, c := range p.cands {
		for _, v := range c {
			p.in[v] = true
			p.state[v] = decided
		}
		p.cands[i] = c[:0]
	}
}

// eachCand runs f over every worker's candidate list in parallel, then
// empties the lists.
func (p *parRun) eachCand(f func(c []int32)) {
	var wg sync.WaitGroup
	for i, c := range p.cands {
		if len(c) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(c)
		}()
		p.cands[i] = c[:0]
	}
	wg.Wait()
}

// compact drops decided vertices from the active list.
func (p *parRun) compact() {
	a := p.active[:0]
	for _, v := range p.active {
		if p.state[v] == undecided {
			a = append(a, v)
		}
	}
	p.active = a
}

func (p *parRun) round1() {
	g, keys, state := p.g, p.keys, p.state
	p.each(p.active, func(w int, part []int32) {
		for _, v := range part {
			kv := keys[v]
			best := true
			for _, u := range g.Neighbors(v) {
				if state[u] == undecided && keys[u] > kv {
					best = false
					break
				}
			}
			if best {
				p.cands[w] = append(p.cands[w], v)
			}
		}
	})
	p.join()
	in := p.in
	p.each(p.active, func(_ int, part []int32) {
		for _, v := range part {
			if state[v] != undecided {
				continue
			}
			for _, u := range g.Neighbors(v) {
				if in[u] {
					state[v] = decided
					break
				}
			}
		}
	})
	p.compact()
}

func (p *parRun) round2() {
	g, keys, state, m1 := p.g, p.keys, p.state, p.m1
	// m1[v]: the largest-key undecided vertex in v's closed neighbourhood.
	p.each(p.live, func(_ int, part []int32) {
		for _, v := range part {
			best, bk := int32(-1), uint64(0)
			if state[v] == undecided {
				best, bk = v, keys[v]
			}
			for _, u := range g.Neighbors(v) {
				if state[u] == undecided {
					if k := keys[u]; best < 0 || k > bk {
						best, bk = u, k
					}
				}
			}
			m1[v] = best
		}
	})
	// v is the best within distance 2 when it is the best of every closed
	// neighbourhood it belongs to.
	p.each(p.active, func(w int, part []int32) {
		for _, v := range part {
			if m1[v] != v {
				continue
			}
			best := true
			for _, u := range g.Neighbors(v) {
				if m1[u] != v {
					best = false
					break
				}
			}
			if best {
				p.cands[w] = append(p.cands[w], v)
			}
		}
	})
	// Candidates are pairwise at least three edges apart (each is the
	// best of the other's 2-ball otherwise), so their closed
	// neighbourhoods are disjoint and the workers mark them without
	// sharing a slot. near only ever turns true, so it is never reset.
	near := p.near
	p.eachCand(func(c []int32) {
		for _, v := range c {
			p.in[v] = true
			state[v] = decided
			near[v] = true
			for _, u := range g.Neighbors(v) {
				near[u] = true
			}
		}
	})
	p.each(p.active, func(_ int, part []int32) {
		for _, v := range part {
			if state[v] != undecided {
				continue
			}
			if near[v] {
				state[v] = decided
				continue
			}
			for _, u := range g.Neighbors(v) {
				if near[u] {
					state[v] = decided
					break
				}
			}
		}
	})
	p.compact()
	// A vertex stays live while its closed neighbourhood holds an
	// undecided vertex; m1 already said which do (before this round's
	// decisions, a superset, which is safe).
	l := p.live[:0]
	for _, v := range p.live {
		if m1[v] >= 0 {
			l = append(l, v)
		}
	}
	p.live = l
}
