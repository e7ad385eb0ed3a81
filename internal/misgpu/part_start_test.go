package misgpu

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestStartGate: every goroutine waiting at the gate goes once it opens
// and sees the time it opened; a shut gate runs none; a gate whose
// goroutines yield longer than the bound blocks them on the channel,
// and opening it still lets them go; a yielding gate opens only once
// every goroutine has arrived, even those that come after open was
// called; a gate of no goroutines opens at once.
func TestStartGate(t *testing.T) {
	for _, c := range []struct {
		name        string
		open        bool
		spin        time.Duration
		delay, late time.Duration // before open; before each goroutine's wait
	}{
		{"open", true, gateSpin, 0, 0},
		{"shut", false, gateSpin, 0, 0},
		{"blocking", true, 0, time.Millisecond, 0},
		{"past the bound", true, time.Millisecond, 5 * time.Millisecond, 0},
		{"shut past the bound", false, time.Millisecond, 5 * time.Millisecond, 0},
		{"late arrivals", true, time.Second, 0, 2 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			const parts = 3
			g := newStartGate(parts)
			g.spin = c.spin
			var wg sync.WaitGroup
			went := make([]bool, parts)
			seen, came := make([]time.Time, parts), make([]time.Time, parts)
			for i := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(c.late)
					came[i] = time.Now()
					if g.wait() {
						went[i], seen[i] = true, g.start
					}
				}()
			}
			time.Sleep(c.delay)
			var opened time.Time
			if c.open {
				g.open(time.Now())
				opened = time.Now()
			} else {
				g.shut()
			}
			wg.Wait()
			for i := range went {
				if went[i] != c.open {
					t.Errorf("goroutine %d went %v, want %v", i, went[i], c.open)
				}
				if c.open && !seen[i].Equal(g.start) {
					t.Errorf("goroutine %d saw the start %v, want %v", i, seen[i], g.start)
				}
				if c.open && c.spin > 0 && c.delay < c.spin && came[i].After(opened) {
					t.Errorf("goroutine %d arrived %v after the gate opened", i, came[i].Sub(opened))
				}
			}
		})
	}
}

// TestStartGateOfNone: a gate with no goroutines (a single part, run on
// the caller's) opens without waiting for any.
func TestStartGateOfNone(t *testing.T) {
	g := newStartGate(waiters(1))
	g.spin = time.Second
	t0 := time.Now()
	g.open(time.Now())
	if d := time.Since(t0); d > 100*time.Millisecond {
		t.Errorf("open took %v", d)
	}
	if g.start.Before(t0) || g.start.After(time.Now()) {
		t.Errorf("start %v outside the call to open", g.start)
	}
}

// TestStartGateSpinsOnlyWithSpareProcs: the gate yields only where every
// part has a P beside the caller's.
func TestStartGateSpinsOnlyWithSpareProcs(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if g := newStartGate(procs); g.spin != 0 {
		t.Errorf("%d parts on %d Ps spin %v, want 0", procs, procs, g.spin)
	}
	if g := newStartGate(procs - 1); g.spin != gateSpin {
		t.Errorf("%d parts on %d Ps spin %v, want %v", procs-1, procs, g.spin, gateSpin)
	}
}
