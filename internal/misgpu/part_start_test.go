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
// and opening it still lets them go.
func TestStartGate(t *testing.T) {
	for _, c := range []struct {
		name  string
		open  bool
		spin  time.Duration
		delay time.Duration
	}{
		{"open", true, gateSpin, 0},
		{"shut", false, gateSpin, 0},
		{"blocking", true, 0, time.Millisecond},
		{"past the bound", true, time.Millisecond, 5 * time.Millisecond},
		{"shut past the bound", false, time.Millisecond, 5 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newStartGate(3)
			g.spin = c.spin
			var wg sync.WaitGroup
			went := make([]bool, 3)
			seen := make([]time.Time, 3)
			for i := range went {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if g.wait() {
						went[i], seen[i] = true, g.start
					}
				}()
			}
			time.Sleep(c.delay)
			if c.open {
				g.open()
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
			}
		})
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
