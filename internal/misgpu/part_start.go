package misgpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// startGate starts the parts' goroutines together. A goroutine that
// blocks on a channel parks its OS thread, and waking that thread again
// took 35-64 µs on the GPU hosts: the parts' first launches started that
// far apart, and at MIS-1 the part that started first spun in its tail
// waiting for the other's decisions. So the goroutines start before the
// parts are prepared, and wait by yielding (runtime.Gosched keeps the
// goroutine, and its thread, running) where the process has a P for each
// of them beside the caller's, for a bounded time; past it, or with
// fewer Ps, they block on the channel. The gate opens once they have
// all arrived (within the same bound): a goroutine not yet running when
// it opened would start as late as a parked one.
type startGate struct {
	state   atomic.Int32 // gateWaiting, gateOpen or gateShut
	arrived atomic.Int32
	parts   int32
	ch      chan struct{}
	spin    time.Duration
	start   time.Time // the parts' clock, set by open before it lets the goroutines go
}

const (
	gateWaiting int32 = iota
	gateOpen
	gateShut
)

// gateSpin bounds a part's yielding wait, and open's wait for the parts
// to arrive: the parts' preparations take tens of microseconds to a few
// milliseconds.
const gateSpin = 5 * time.Millisecond

// newStartGate returns a gate for parts goroutines.
func newStartGate(parts int) *startGate {
	g := &startGate{ch: make(chan struct{}), parts: int32(parts)}
	if runtime.GOMAXPROCS(0) > parts {
		g.spin = gateSpin
	}
	return g
}

// wait returns once the gate opens (true) or is shut (false).
func (g *startGate) wait() bool {
	g.arrived.Add(1)
	if g.spin == 0 || !yieldUntil(g.spin, func() bool { return g.state.Load() != gateWaiting }) {
		<-g.ch
	}
	return g.state.Load() == gateOpen
}

// yieldUntil yields (runtime.Gosched) until done, for at most bound
// (read every 64 tries), and says whether done came true.
func yieldUntil(bound time.Duration, done func() bool) bool {
	deadline := time.Now().Add(bound)
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i%64 == 63 && time.Now().After(deadline) {
			return false
		}
		runtime.Gosched()
	}
}

// open lets the waiting goroutines go once they have all arrived (or
// the bound passed). The parts' times count from start, before open was
// called, so that a goroutine's late arrival is in them.
func (g *startGate) open(start time.Time) {
	g.start = start
	if g.spin > 0 {
		yieldUntil(g.spin, func() bool { return g.arrived.Load() >= g.parts })
	}
	g.state.Store(gateOpen)
	close(g.ch)
}

// shut releases the waiting goroutines without running them.
func (g *startGate) shut() {
	g.state.Store(gateShut)
	close(g.ch)
}

// partBody returns what part q's goroutine runs once the gate opened:
// the part's sweeps, its time from the gate's opening, its error.
func (pp *Parts) partBody(gate *startGate, runs []*run, res *PartsResult, watch *partsWatch, stop *atomic.Bool, errs []error) func(q int) {
	return func(q int) {
		var err error
		res.PartRounds[q], err = pp.ps[q].run(runs[q], func(err error) {
			res.PartTime[q] = runs[q].swept(gate.start)
			if err != nil {
				stop.Store(true)
			}
			watch.done(q, err)
		})
		if err != nil {
			errs[q] = err
			stop.Store(true)
		}
	}
}

// waiters is the number of goroutines that run parts parts: none for a
// single part, which runs on the caller's.
func waiters(parts int) int {
	if parts == 1 {
		return 0
	}
	return parts
}

// launch starts gate.parts goroutines, each waiting at the gate, then
// running body for its part.
func launch(gate *startGate, body func(q int)) *sync.WaitGroup {
	wg := &sync.WaitGroup{}
	for q := range int(gate.parts) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if gate.wait() {
				body(q)
			}
		}()
	}
	return wg
}
