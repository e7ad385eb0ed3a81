package mis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Exchanger moves the messages of a partitioned MIS between parts. Each
// part has its own Exchanger; all of them together form a group of Parts()
// members. The partitioned driver (RunPart) calls the methods of one
// Exchanger from one goroutine only, and every part calls the collectives
// (Alltoall, Allreduce) in the same order.
//
// Three implementations fit this shape: the in-process group of
// NewLocalGroup (one goroutine per part, channels), package mis/mpi (one
// rank per part, built with the mpi tag), and a multi-GPU driver on one
// host that stages the same host buffers between devices. Messages are
// plain bytes, so an implementation never needs to know what they mean.
type Exchanger interface {
	// Part is this member's index in [0, Parts()).
	Part() int
	// Parts is the size of the group.
	Parts() int
	// Exchange sends send[i] to part peers[i] and receives one message
	// from each peers[i], returned in the same order. Two parts that name
	// each other in their k-th Exchange with each other are paired, so
	// both sides must agree on when they talk (the driver guarantees it).
	// The returned slices stay valid until the next call; send may be
	// reused as soon as Exchange returns.
	Exchange(ctx context.Context, peers []int, send [][]byte) ([][]byte, error)
	// Alltoall sends send[q] to every part q and returns what each part
	// sent to this one (len Parts()).
	Alltoall(ctx context.Context, send []int64) ([]int64, error)
	// Allreduce combines vals element-wise over all parts, in place. All
	// parts pass slices of the same length.
	Allreduce(ctx context.Context, op ReduceOp, vals []int64) error
	// Abort tells the other parts that this one failed with err, so that
	// they stop waiting for it. peers are the parts this one still
	// exchanges with; an implementation may reach further (the in-process
	// group cancels every member at once). After Abort, only Allreduce
	// may still be called, for the final agreement.
	Abort(ctx context.Context, peers []int, err error)
}

// ReduceOp is the combining operation of Exchanger.Allreduce.
type ReduceOp int

const (
	// Max keeps the largest value.
	Max ReduceOp = iota
	// Sum adds the values.
	Sum
)

func (op ReduceOp) apply(dst, src []int64) {
	for i, x := range src {
		switch op {
		case Max:
			dst[i] = max(dst[i], x)
		case Sum:
			dst[i] += x
		}
	}
}

// DefaultTimeout bounds every wait of the in-process exchanger when no
// timeout is given. A part that waits longer for a peer or a collective
// returns ErrTimeout. It is generous because a part that finishes early
// waits in the final agreement for the slowest part.
const DefaultTimeout = 2 * time.Minute

// ErrTimeout is wrapped by errors of waits that ran past their timeout.
var ErrTimeout = errors.New("timed out")

// ErrAborted is wrapped by errors that report another part's failure.
var ErrAborted = errors.New("another part failed")

// LocalGroup is an in-process exchanger group: one member per part, each
// used by its own goroutine. When a member aborts, the whole group is
// cancelled, so every other member's pending and later waits fail at once
// with an error that names the failed part.
type LocalGroup struct {
	parts   int
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelCauseFunc
	chans   []chan []byte // chans[from*parts+to], created on first use
	mu      sync.Mutex
	coll    *localColl
}

// NewLocalGroup returns a group of parts in-process exchangers. Every wait
// fails after timeout (DefaultTimeout when zero or negative).
func NewLocalGroup(parts int, timeout time.Duration) (*LocalGroup, error) {
	if parts < 1 {
		return nil, fmt.Errorf("mis: local exchanger group of %d parts, want at least 1", parts)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &LocalGroup{parts: parts, timeout: timeout, ctx: ctx, cancel: cancel,
		chans: make([]chan []byte, parts*parts)}, nil
}

// Member returns the exchanger of part p.
func (g *LocalGroup) Member(p int) Exchanger { return &localMember{g: g, part: p} }

// Close releases the group: any member still waiting fails.
func (g *LocalGroup) Close() { g.cancel(errors.New("mis: exchanger group closed")) }

// channel returns the channel from part a to part b. Capacity 2 suffices:
// a sender can run at most one exchange ahead of its receiver, because it
// cannot finish an exchange without the receiver's message of that step.
func (g *LocalGroup) channel(a, b int) chan []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := a*g.parts + b
	if g.chans[i] == nil {
		g.chans[i] = make(chan []byte, 2)
	}
	return g.chans[i]
}

type localMember struct {
	g    *LocalGroup
	part int
}

func (m *localMember) Part() int  { return m.part }
func (m *localMember) Parts() int { return m.g.parts }

// wait blocks on ch until it delivers, the caller's or the group's
// context ends, or the timeout passes.
func (m *localMember) wait(ctx context.Context, ch <-chan struct{}, what string) error {
	t := time.NewTimer(m.g.timeout)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mis: part %d: %s: %w", m.part, what, context.Cause(ctx))
	case <-m.g.ctx.Done():
		return fmt.Errorf("mis: part %d: %s: %w", m.part, what, context.Cause(m.g.ctx))
	case <-t.C:
		return fmt.Errorf("mis: part %d: %s: no answer within %v: %w", m.part, what, m.g.timeout, ErrTimeout)
	}
}

func (m *localMember) Exchange(ctx context.Context, peers []int, send [][]byte) ([][]byte, error) {
	if len(send) != len(peers) {
		return nil, fmt.Errorf("mis: part %d: exchange with %d peers but %d messages", m.part, len(peers), len(send))
	}
	for i, q := range peers {
		if q < 0 || q >= m.g.parts || q == m.part {
			return nil, fmt.Errorf("mis: part %d: exchange with invalid peer %d", m.part, q)
		}
		// The channel has room (see channel), so this never blocks; the
		// copy frees the caller to reuse its buffer at once.
		select {
		case m.g.channel(m.part, q) <- slices.Clone(send[i]):
		case <-m.g.ctx.Done():
			return nil, fmt.Errorf("mis: part %d: send to part %d: %w", m.part, q, context.Cause(m.g.ctx))
		}
	}
	recv := make([][]byte, len(peers))
	for i, q := range peers {
		ch := m.g.channel(q, m.part)
		t := time.NewTimer(m.g.timeout)
		select {
		case b := <-ch:
			recv[i] = b
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("mis: part %d: receive from part %d: %w", m.part, q, context.Cause(ctx))
		case <-m.g.ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("mis: part %d: receive from part %d: %w", m.part, q, context.Cause(m.g.ctx))
		case <-t.C:
			return nil, fmt.Errorf("mis: part %d: receive from part %d: no message within %v: %w", m.part, q, m.g.timeout, ErrTimeout)
		}
		t.Stop()
	}
	return recv, nil
}

// localColl is one collective operation in flight: members deposit their
// contribution, the last one combines them and closes done.
type localColl struct {
	kind    string
	arrived int
	in      [][]int64
	out     [][]int64
	done    chan struct{}
}

// collective runs one collective: deposit, then wait for the rest.
func (m *localMember) collective(ctx context.Context, kind string, vals []int64, combine func(in [][]int64) [][]int64) ([]int64, error) {
	g := m.g
	g.mu.Lock()
	c := g.coll
	if c == nil {
		c = &localColl{kind: kind, in: make([][]int64, g.parts), done: make(chan struct{})}
		g.coll = c
	}
	if c.kind != kind {
		g.mu.Unlock()
		err := fmt.Errorf("mis: part %d called %s while other parts are in %s", m.part, kind, c.kind)
		g.cancel(err)
		return nil, err
	}
	c.in[m.part] = slices.Clone(vals)
	c.arrived++
	if c.arrived == g.parts {
		c.out = combine(c.in)
		g.coll = nil
		close(c.done)
	}
	g.mu.Unlock()
	if err := m.wait(ctx, c.done, kind); err != nil {
		return nil, err
	}
	return c.out[m.part], nil
}

func (m *localMember) Alltoall(ctx context.Context, send []int64) ([]int64, error) {
	P := m.g.parts
	if len(send) != P {
		return nil, fmt.Errorf("mis: part %d: alltoall of %d values, want %d", m.part, len(send), P)
	}
	return m.collective(ctx, "alltoall", send, func(in [][]int64) [][]int64 {
		out := make([][]int64, P)
		for q := range out {
			out[q] = make([]int64, P)
			for p := range in {
				out[q][p] = in[p][q]
			}
		}
		return out
	})
}

func (m *localMember) Allreduce(ctx context.Context, op ReduceOp, vals []int64) error {
	n := len(vals)
	res, err := m.collective(ctx, fmt.Sprintf("allreduce(%d)", n), vals, func(in [][]int64) [][]int64 {
		acc := slices.Clone(in[0])
		for _, x := range in[1:] {
			op.apply(acc, x)
		}
		out := make([][]int64, len(in))
		for i := range out {
			out[i] = acc
		}
		return out
	})
	if err != nil {
		return err
	}
	copy(vals, res)
	return nil
}

// Abort cancels the whole group: in one process there is no reason to
// make the others wait for a message that will never come. The final
// agreement (an Allreduce) then fails at once on every member.
func (m *localMember) Abort(_ context.Context, _ []int, err error) {
	m.g.cancel(fmt.Errorf("%w: part %d: %v", ErrAborted, m.part, err))
}
