package mistest

import (
	"context"
	"errors"
	"time"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// FaultyExchanger wraps an exchanger and breaks its FailAt-th Exchange:
// with Stall zero the call fails, otherwise it sleeps for Stall first (a
// hung part). The fault tests of every exchanger use it.
type FaultyExchanger struct {
	mis.Exchanger
	FailAt int
	Stall  time.Duration
	calls  int
}

// Exchange counts the calls and injects the fault.
func (f *FaultyExchanger) Exchange(ctx context.Context, peers []int, send [][]byte) ([][]byte, error) {
	f.calls++
	if f.calls == f.FailAt {
		if f.Stall == 0 {
			return nil, errors.New("injected fault")
		}
		time.Sleep(f.Stall)
	}
	return f.Exchanger.Exchange(ctx, peers, send)
}

// Grid27 is the bare 27-point graph of an n³ hex mesh: mesh.Hex27Graph
// without coordinates or classes, so boundary priorities fall back to
// the degree classes as they would for a matrix.
func Grid27(n int) *mesh.Graph {
	g := mesh.Hex27Graph(n, n, n)
	g.Dim, g.Coords, g.Class = 0, nil, nil
	return g
}
