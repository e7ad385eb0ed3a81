//go:build mpi

package mpi

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/misgrid/misgrid/mis"
)

// Options configures a Comm.
type Options struct {
	// Timeout bounds each wait: for a neighbour's message, for a send to
	// complete, for a collective. A rank that finishes early waits in the
	// final agreement for the slowest one, so allow for that.
	// mis.DefaultTimeout when zero.
	Timeout time.Duration
}

// idle backs off while nothing happens: a few yields, then sleeps of
// growing length up to a millisecond, so that oversubscribed ranks leave
// each other the cores. It fails when the context ends or the deadline
// passes.
func (c *Comm) idle(ctx context.Context, n *int, progress bool, deadline time.Time) error {
	if progress {
		*n = 0
		return nil
	}
	*n++
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if time.Now().After(deadline) {
		return fmt.Errorf("nothing within %v: %w", c.timeout, mis.ErrTimeout)
	}
	if *n < 32 {
		runtime.Gosched()
		return nil
	}
	time.Sleep(min(time.Duration(*n-32)*20*time.Microsecond, time.Millisecond))
	return nil
}
