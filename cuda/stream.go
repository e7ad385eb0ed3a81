package cuda

import (
	"runtime"
	"sync"
	"time"
)

// Stream is a queue of device work. A nil *Stream means the context's
// legacy default stream.
type Stream struct {
	ctx     *Context
	h       streamHandle
	cleanup runtime.Cleanup

	mu     sync.Mutex
	closed bool
}

// NewStream creates a stream that does not synchronise with the default
// stream.
func (c *Context) NewStream() (*Stream, error) {
	h, err := c.handle("cuStreamCreate")
	if err != nil {
		return nil, err
	}
	s, r := drvStreamCreate(h, 1) // CU_STREAM_NON_BLOCKING
	if r != Success {
		return nil, check("cuStreamCreate", r)
	}
	st := &Stream{ctx: c, h: s}
	st.cleanup = runtime.AddCleanup(st, func(a streamRef) {
		if h, err := a.ctx.handle(""); err == nil {
			drvStreamDestroy(h, a.h)
		}
	}, streamRef{c, s})
	return st, nil
}

type streamRef struct {
	ctx *Context
	h   streamHandle
}

func (s *Stream) handle() streamHandle {
	if s == nil {
		var zero streamHandle
		return zero
	}
	return s.h
}

// Raw returns the CUstream handle.
func (s *Stream) Raw() uintptr { return streamToRaw(s.handle()) }

// Synchronize waits for the stream's queued work; errors of that work
// (a kernel that faulted) surface here.
func (s *Stream) Synchronize() error {
	h, err := s.ctx.handle("cuStreamSynchronize")
	if err != nil {
		return err
	}
	return check("cuStreamSynchronize", drvStreamSynchronize(h, s.h))
}

// Close destroys the stream after its work completes; it is idempotent.
func (s *Stream) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.cleanup.Stop()
	if s.ctx.Closed() {
		return nil
	}
	return check("cuStreamDestroy", drvStreamDestroy(s.ctx.h, s.h))
}

// Event marks a point in a stream, for timing and waiting.
type Event struct {
	ctx     *Context
	h       eventHandle
	cleanup runtime.Cleanup

	mu     sync.Mutex
	closed bool
}

// NewEvent creates an event that records time stamps.
func (c *Context) NewEvent() (*Event, error) {
	h, err := c.handle("cuEventCreate")
	if err != nil {
		return nil, err
	}
	e, r := drvEventCreate(h, 0)
	if r != Success {
		return nil, check("cuEventCreate", r)
	}
	ev := &Event{ctx: c, h: e}
	ev.cleanup = runtime.AddCleanup(ev, func(a eventRef) {
		if h, err := a.ctx.handle(""); err == nil {
			drvEventDestroy(h, a.h)
		}
	}, eventRef{c, e})
	return ev, nil
}

type eventRef struct {
	ctx *Context
	h   eventHandle
}

// Record captures the point in stream s reached by work queued so far.
func (e *Event) Record(s *Stream) error {
	h, err := e.ctx.handle("cuEventRecord")
	if err != nil {
		return err
	}
	return check("cuEventRecord", drvEventRecord(h, e.h, s.handle()))
}

// Synchronize waits until the recorded point is reached.
func (e *Event) Synchronize() error {
	h, err := e.ctx.handle("cuEventSynchronize")
	if err != nil {
		return err
	}
	return check("cuEventSynchronize", drvEventSynchronize(h, e.h))
}

// Done reports whether the recorded point has been reached.
func (e *Event) Done() (bool, error) {
	h, err := e.ctx.handle("cuEventQuery")
	if err != nil {
		return false, err
	}
	switch r := drvEventQuery(h, e.h); r {
	case Success:
		return true, nil
	case ErrorNotReady:
		return false, nil
	default:
		return false, check("cuEventQuery", r)
	}
}

// Elapsed returns the device time between two recorded events (resolution
// about half a microsecond).
func Elapsed(start, end *Event) (time.Duration, error) {
	h, err := start.ctx.handle("cuEventElapsedTime")
	if err != nil {
		return 0, err
	}
	ms, r := drvEventElapsed(h, start.h, end.h)
	if r != Success {
		return 0, check("cuEventElapsedTime", r)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Close destroys the event; it is idempotent.
func (e *Event) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.cleanup.Stop()
	if e.ctx.Closed() {
		return nil
	}
	return check("cuEventDestroy", drvEventDestroy(e.ctx.h, e.h))
}
