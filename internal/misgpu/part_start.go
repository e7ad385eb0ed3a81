package misgpu

import (
	"runtime"
	"sync/atomic"
	"time"
)

// startGate starts the parts' goroutines together. A goroutine that
// blocks on a channel parks its OS thread, and waking that thread again
// took 35-64 µs on the GPU hosts: the parts' first launches started that
// far apart, and at MIS-1 the part that started first spun in its tail
// waiting for the other's decisions. So the parts wait by yielding
// (runtime.Gosched keeps the goroutine, and its thread, running), where
// the process has a P for each of them beside the caller's, and only for
// a bounded time; past it, or with fewer Ps, they block on the channel.
type startGate struct {
	state atomic.Int32 // gateWaiting, gateOpen or gateShut
	ch    chan struct{}
	spin  time.Duration
	start time.Time // set by open before it lets the goroutines go
}

const (
	gateWaiting int32 = iota
	gateOpen
	gateShut
)

// gateSpin bounds a part's yielding wait: the parts are started just
// before the contexts are synchronised, which waits for what the parts'
// preparations queued (tens of microseconds to a few milliseconds).
const gateSpin = 2 * time.Millisecond

// newStartGate returns a gate for parts goroutines.
func newStartGate(parts int) *startGate {
	g := &startGate{ch: make(chan struct{})}
	if runtime.GOMAXPROCS(0) > parts {
		g.spin = gateSpin
	}
	return g
}

// wait returns once the gate opens (true) or is shut (false).
func (g *startGate) wait() bool {
	if g.spin > 0 {
		deadline := time.Now().Add(g.spin)
		for i := 0; ; i++ {
			if s := g.state.Load(); s != gateWaiting {
				return s == gateOpen
			}
			if i%64 == 63 && time.Now().After(deadline) {
				break
			}
			runtime.Gosched()
		}
	}
	<-g.ch
	return g.state.Load() == gateOpen
}

// open lets the waiting goroutines go at g.start, now.
func (g *startGate) open() {
	g.start = time.Now()
	g.state.Store(gateOpen)
	close(g.ch)
}

// shut releases the waiting goroutines without running them.
func (g *startGate) shut() {
	g.state.Store(gateShut)
	close(g.ch)
}
