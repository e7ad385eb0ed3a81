package misgpu

import (
	"fmt"
	"sync"

	"github.com/misgrid/misgrid/internal/gpu"
)

// flags copies every part's set into in, the parts at once: parts on
// different devices copy over their own links, and on tens of millions
// of vertices one copy after the other took milliseconds after a run
// of one. Parts of one device take turns at its context's staging
// ring (gpu.Loader.Stage).
func (pp *Parts) flags(in [][]bool) error {
	errs := make([]error, len(pp.ps))
	var wg sync.WaitGroup
	for q, p := range pp.ps {
		wg.Go(func() { in[q], errs[q] = p.flags() })
	}
	wg.Wait()
	for q, err := range errs {
		if err != nil {
			return pp.fail(q, err)
		}
	}
	return nil
}

// flags turns part p's states into its set and copies it back. Only once
// every part is done: a neighbour still running ORs OUT into the states
// of the ghosts it gives back (part_return), which would turn a flag of 0
// into one that reads as a member.
func (p *part) flags() ([]bool, error) {
	unlock, err := p.dg.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if p.dg.n == 0 {
		return []bool{}, nil
	}
	m, err := p.dg.members()
	if err != nil {
		return nil, p.l.Fail(err)
	}
	return m.In, nil
}

// GhostStates copies part q's ghost state bytes back (ghost i, local id
// GhostFrom(own)+i, at index i): what the boundary kernels left there,
// for checks between runs. The owned states are the set's flags once a
// run is done (flags).
func (pp *Parts) GhostStates(q int) ([]uint8, error) {
	if q < 0 || q >= len(pp.ps) {
		return nil, fmt.Errorf("part %d of %d", q, len(pp.ps))
	}
	p := pp.ps[q]
	gf := GhostFrom(p.spec.Own)
	out := make([]uint8, max(len(p.spec.Offsets)-1-gf, 0))
	if len(out) == 0 {
		return out, nil
	}
	unlock, err := p.dg.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return out, gpu.StageFrom(p.l, p.l.Stream, out, p.dg.ws.st, int64(gf))
}
