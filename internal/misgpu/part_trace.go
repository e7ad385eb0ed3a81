package misgpu

import (
	"fmt"
	"strings"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// partTrace times a part's run on its stream (PartsOptions.Trace): an
// event at the start, then two per launch, after the launch and after
// its exchange (sends, returns), so that the time between them splits
// into the launches, including the stream's idle time before a launch
// the host queued late (after a check of the live count), and the
// exchanges. It is for the developers' benchmarks: the events cost a
// little on every launch.
type partTrace struct {
	evs   []*cuda.Event
	n     int
	check []bool // per launch: a check of the live count came before it
	ahead bool   // a check since the last launch
	wait  time.Duration
	first time.Time // when the host queued the first event
	// issued is when the host had queued the first launch: a stream
	// idle at the first event waits that long for the launch, and the
	// trace counts the wait in the launch.
	issued time.Time
}

// traceEvents bounds the launches traced: the rest go untimed.
const traceEvents = 1024

func newPartTrace(ctx *cuda.Context) (*partTrace, error) {
	t := &partTrace{}
	for range traceEvents {
		ev, err := ctx.NewEvent()
		if err != nil {
			t.close()
			return nil, err
		}
		t.evs = append(t.evs, ev)
	}
	return t, nil
}

func (t *partTrace) close() {
	if t == nil {
		return
	}
	for _, ev := range t.evs {
		ev.Close()
	}
	t.evs = nil
}

// mark records the next event on s.
func (t *partTrace) mark(s *cuda.Stream) error {
	if t == nil || t.n >= len(t.evs) {
		return nil
	}
	if t.n%2 == 1 {
		t.check = append(t.check, t.ahead)
		t.ahead = false
	}
	if t.n == 0 {
		t.first = time.Now()
	}
	t.n++
	return t.evs[t.n-1].Record(s)
}

// queued notes that the first launch is queued (Parts.queueFirst).
func (t *partTrace) queued() {
	if t != nil {
		t.issued = time.Now()
	}
}

// checked notes a check of the live count that waited d for the other
// parts.
func (t *partTrace) checked(d time.Duration) {
	if t != nil {
		t.ahead = true
		t.wait += d
	}
}

// PartTrace is one part's timed run: per launch, its time (with the
// stream's idle time before it) and its exchange's; whether a check of
// the live count came before it; the host's time waiting on the other
// parts at checks; and the host's time from the run's start until it
// queued the part's first event (Lead), which with the stream's time
// and the part's wall time (PartsResult.PartTime) says what the host
// adds at each end; and the host's time to queue the first launch
// (Issue), which the first launch's time includes.
type PartTrace struct {
	Launch, Exchange  []time.Duration
	AfterCheck        []bool
	Wait, Lead, Issue time.Duration
}

// result reads the events once the part's stream is done.
func (t *partTrace) result() (PartTrace, error) {
	out := PartTrace{Wait: t.wait}
	if !t.issued.IsZero() {
		out.Issue = t.issued.Sub(t.first)
	}
	for i := 1; i+1 < t.n; i += 2 {
		l, err := cuda.Elapsed(t.evs[i-1], t.evs[i])
		if err != nil {
			return out, err
		}
		x, err := cuda.Elapsed(t.evs[i], t.evs[i+1])
		if err != nil {
			return out, err
		}
		out.Launch, out.Exchange = append(out.Launch, l), append(out.Exchange, x)
		out.AfterCheck = append(out.AfterCheck, t.check[i/2])
	}
	return out, nil
}

// String sums the trace up: launches, their time and that of those
// after a check, the exchanges', the host's waits, then each launch's
// and exchange's microseconds (* after a check).
func (t PartTrace) String() string {
	var l, lc, x time.Duration
	var b strings.Builder
	for i, d := range t.Launch {
		l += d
		x += t.Exchange[i]
		mark := ""
		if t.AfterCheck[i] {
			lc += d
			mark = "*"
		}
		fmt.Fprintf(&b, " %s%d/%d", mark, d.Microseconds(), t.Exchange[i].Microseconds())
	}
	return fmt.Sprintf("lead %.3f ms, first queued in %d µs, %d launches %.3f ms (after checks %.3f ms), exchanges %.3f ms, host waits %.3f ms:%s",
		ms(t.Lead), t.Issue.Microseconds(), len(t.Launch), ms(l), ms(lc), ms(x), ms(t.Wait), b.String())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
