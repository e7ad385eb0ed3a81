package mis

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/misgrid/misgrid/mesh"
)

// buildKeys computes the key of every owned vertex exactly as Keys does on
// the whole graph, then fetches the ghosts' primary ranks from their
// owners. Hash priorities need no communication at all.
func (s *partState) buildKeys(ctx context.Context, l *Local, p Priority) error {
	prim := make([]uint32, len(s.gid))
	usePrimary, useClass, err := s.agreeSources(ctx, l, p)
	if err != nil {
		return err
	}
	switch {
	case usePrimary:
		copy(prim, l.Primary)
	case p.Kind == Boundary && useClass:
		for i, c := range l.Class {
			prim[i] = uint32(c)
		}
	case p.Kind == Boundary:
		if err := s.classifyByDegree(ctx, prim); err != nil {
			return err
		}
	case p.Kind == Degree:
		maxd, err := s.maxDegree(ctx)
		if err != nil {
			return err
		}
		for v := range s.nOwn {
			prim[v] = uint32(maxd - (s.off[v+1] - s.off[v]))
		}
	}
	if p.Kind != Hash || usePrimary {
		send := make([][]byte, len(s.peers))
		for k, lst := range s.sendList {
			var b []byte
			for _, v := range lst {
				b = binary.AppendUvarint(b, uint64(prim[v]))
			}
			send[k] = b
			s.setupBytes += int64(len(b))
		}
		recv, err := s.ex.Exchange(ctx, s.peers, send)
		if err != nil {
			return err
		}
		for k, lst := range s.recvList {
			r := reader{b: recv[k]}
			for _, g := range lst {
				prim[g] = uint32(r.uvarint())
			}
			if r.err != nil || len(r.b) != 0 {
				return fmt.Errorf("mis: part %d: malformed priority message from part %d", s.me, s.peers[k])
			}
		}
	}
	s.key = make([]uint64, len(s.gid))
	for i, v := range s.gid {
		s.key[i] = Key(prim[i], v, p.Seed)
	}
	return nil
}

// agreeSources has the parts agree on where primary ranks come from, so
// that all take the same branch of buildKeys and its collectives: primary
// ranks (Local.Primary) from every part or from none, and for Boundary,
// classes (Local.Class) from every part or from none, since a mix would
// rank vertices by two rules. A part without rows has nothing to give and
// follows the others, whatever its nil slices say.
func (s *partState) agreeSources(ctx context.Context, l *Local, p Priority) (usePrimary, useClass bool, err error) {
	has := make([]int64, 4) // with Primary, without, with Class, without
	if s.nOwn > 0 {
		has[boolIndex(l.Primary == nil)] = 1
		has[2+boolIndex(l.Class == nil)] = 1
	}
	if err := s.ex.Allreduce(ctx, Max, has); err != nil {
		return false, false, err
	}
	usePrimary = has[0] == 1
	if usePrimary && has[1] == 1 {
		return false, false, agreedError{fmt.Errorf("mis: part %d: some parts have Local.Primary and some do not", s.me)}
	}
	useClass = has[2] == 1
	if p.Kind == Boundary && !usePrimary && useClass && has[3] == 1 {
		return false, false, agreedError{fmt.Errorf("mis: part %d: some parts have Local.Class and some do not", s.me)}
	}
	return usePrimary, useClass, nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// classifyByDegree is mesh.ClassifyByDegree over the distributed graph:
// the global largest degree and the largest log ratio are reduced over
// the parts, then every part classifies its rows with the same formula,
// so the classes (and keys) match the whole-graph ones bit for bit.
func (s *partState) classifyByDegree(ctx context.Context, prim []uint32) error {
	deg := func(v int) float64 { return float64(s.off[v+1] - s.off[v]) }
	maxd, err := s.maxDegree(ctx)
	if err != nil {
		return err
	}
	md := float64(maxd)
	lmax := 0.0
	for v := range s.nOwn {
		lmax = max(lmax, math.Log((md+1)/(deg(v)+1)))
	}
	// Non-negative floats order as their bit patterns do.
	lm := []int64{int64(math.Float64bits(lmax))}
	if err := s.ex.Allreduce(ctx, Max, lm); err != nil {
		return err
	}
	lmax = math.Float64frombits(uint64(lm[0]))
	if lmax == 0 {
		return nil
	}
	for v := range s.nOwn {
		l := math.Log((md + 1) / (deg(v) + 1))
		c := math.Round(3 * l / lmax)
		prim[v] = uint32(mesh.Class(min(max(c, 0), 3)))
	}
	return nil
}

// maxDegree is the largest degree over all parts.
func (s *partState) maxDegree(ctx context.Context) (int64, error) {
	maxd := []int64{0}
	for v := range s.nOwn {
		maxd[0] = max(maxd[0], s.off[v+1]-s.off[v])
	}
	err := s.ex.Allreduce(ctx, Max, maxd)
	return maxd[0], err
}
