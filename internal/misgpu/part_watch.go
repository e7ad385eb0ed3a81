package misgpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// partsWatch bounds a run of several parts. A part may wait on its
// neighbours' decisions for any number of sweeps, so its own live count
// says nothing about whether the run still pays; the parts are judged
// together. A round is over once every part still running has checked
// its live count since the last round; the total over the parts then goes
// through the engine's rule (stallWatch, with "no vertex settled" slow
// even below 64 live vertices). When the rounds stop paying every part
// stops at its next check, and the caller finishes with the serial
// greedy from the members decided so far (the same set). Stopping the
// parts together matters: a part that stopped alone would leave its
// neighbours waiting on vertices that nobody decides any more.
//
// A part whose own count did not fall since its last check waits, before
// it queues more sweeps, until every other running part has checked
// since (its neighbours have to move first, and on a shared device its
// sweeps would only slow them), or until all of them wait too, so that
// one part always runs.
//
// Every round either settles a vertex or counts as slow, and two slow
// rounds in a row after stallFrom sweeps stop the run, so a run takes at
// most stallFrom + 3·(n+1) rounds on n vertices; more is a bug, which
// the hard bound turns into an error instead of a hang.
type partsWatch struct {
	mu      sync.Mutex
	live    []uint32 // each part's live count at its last check
	pass    []int    // each part's sweeps queued at its last check
	seq     []int    // each part's checks
	fresh   []bool   // the part checked since the last round
	running []bool
	waiting []bool
	total   uint32 // the total live count at the end of the last round
	rounds  int
	limit   int // the most rounds
	checks  int // the most checks of one part: the rounds, and one per vertex it settles
	slow    int
	stopped bool
	err     error         // the first part's failure: the others stop with errAborted
	changed chan struct{} // closed at every check, end and failure
}

// partsWatchWait bounds a part's wait for its neighbours, in case a
// neighbour's batch takes that long (the bound still holds: a part's
// checks are counted).
const partsWatchWait = 2 * time.Second

func newPartsWatch(own []int) *partsWatch {
	k, n := len(own), 0
	w := &partsWatch{live: make([]uint32, k), pass: make([]int, k), seq: make([]int, k), fresh: make([]bool, k),
		running: make([]bool, k), waiting: make([]bool, k), changed: make(chan struct{})}
	for q, c := range own {
		w.running[q] = c > 0
		w.live[q] = uint32(min(c, 1<<32-1))
		n += c
	}
	w.limit = stallFrom + 3*(n+1)
	w.checks = w.limit + n
	return w
}

// notify wakes the waiting parts. The caller holds w.mu.
func (w *partsWatch) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Limit is the most rounds a run may take before the watch calls it a
// bug.
func (w *partsWatch) Limit() int { return w.limit }

// check takes part q's live count after pass sweeps. It says whether the
// part stops (the rounds stopped paying), or an error: another part
// failed, ctx ended, or the hard bound was passed. prev is the part's
// count at its previous check (at first its vertex count); checks
// counts its checks.
func (w *partsWatch) check(ctx context.Context, q, pass int, live, prev uint32, checks int) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return false, errAborted
	}
	if checks > w.checks {
		return false, fmt.Errorf("part %d: %d checks of its live count (%d undecided) without an end, more than the bound %d (a bug)",
			q, checks, live, w.checks)
	}
	w.live[q], w.pass[q], w.fresh[q] = live, pass, true
	w.seq[q]++
	err := w.round()
	w.notify()
	if err != nil || w.stopped || live < prev {
		return w.stopped, err
	}
	seen := slices.Clone(w.seq)
	w.waiting[q] = true
	defer func() { w.waiting[q] = false }()
	t := time.NewTimer(partsWatchWait)
	defer t.Stop()
	for {
		if w.err != nil {
			return false, errAborted
		}
		if w.stopped || w.moved(q, seen) {
			return w.stopped, nil
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			// A neighbour's batch takes that long: sweep again rather
			// than wait on (the checks stay bounded).
			w.mu.Lock()
			return w.stopped, nil
		case <-ctx.Done():
			w.mu.Lock()
			return false, ctx.Err()
		}
		w.mu.Lock()
	}
}

// moved says whether every running part but q has checked since seen,
// or waits. The caller holds w.mu.
func (w *partsWatch) moved(q int, seen []int) bool {
	for p, r := range w.running {
		if r && p != q && w.seq[p] == seen[p] && !w.waiting[p] {
			return false
		}
	}
	return true
}

// round ends the round when every running part has checked since the
// last one. The caller holds w.mu.
func (w *partsWatch) round() error {
	total, pass := uint32(0), -1
	for q, r := range w.running {
		if !r {
			continue
		}
		if !w.fresh[q] {
			return nil
		}
		total += w.live[q]
		if pass < 0 || w.pass[q] < pass {
			pass = w.pass[q]
		}
	}
	clear(w.fresh)
	w.rounds++
	prev := w.total
	w.total = total
	if w.rounds > 1 && pass >= stallFrom && !w.stopped {
		if prev-min(prev, total) < max(prev/64, 1) {
			w.slow++
		} else {
			w.slow = 0
		}
		w.stopped = w.slow >= 2
	}
	if w.rounds > w.limit {
		return fmt.Errorf("the parts did not settle after %d rounds (%d vertices undecided), more than the bound %d (a bug)",
			w.rounds, total, w.limit)
	}
	return nil
}

// done says that part q has stopped: it settled its vertices, stopped
// with the others, or failed (err not nil, and not errAborted). The
// other parts stop when one fails.
func (w *partsWatch) done(q int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running[q] = false
	if err != nil && !errors.Is(err, errAborted) && w.err == nil {
		w.err = err
	}
	if w.err == nil {
		// A round may have waited on this part only.
		w.round()
	}
	w.notify()
}
