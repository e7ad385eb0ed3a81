package mis

import (
	"context"
	"fmt"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// Run computes the MIS from scratch on the prepared parts.
//
// Distance 1 between parts that reach each other's memory has no
// exchange step: each round is one sweep per part, which stores its
// boundary decisions straight into the neighbours' ghost slots (see
// part_sweep1v). Otherwise:
//
// Each round queues, on every part's stream, the phase kernels over the
// owned vertices and the gathers of the boundary states each neighbour
// keeps as ghosts; then every part copies its gathered states straight
// into its neighbours' ghost slots, once the neighbour's phase is done
// (so no kernel ever reads a slot being written), and each neighbour's
// next phase waits for those copies. The host only queues work and, every
// batch of rounds, reads the undecided counts. The decision rules are the
// monotone greedy rules, so the set is the greedy one; the round-by-round
// exchanges make it also independent of timing.
func (m *MultiGPU) Run(ctx context.Context) (*MultiGPUResult, error) {
	start := time.Now()
	for q, d := range m.devs {
		if err := m.reset(d); err != nil {
			return nil, m.fail(q, err)
		}
	}
	for q, d := range m.devs {
		if err := d.stream.Synchronize(); err != nil {
			return nil, m.fail(q, err)
		}
	}
	t0 := time.Now()
	rounds := 0
	m.prev = -1
	last := make([]int64, m.batch) // counter slot of each round's last sweep
	for done, b := false, 0; !done; b++ {
		if err := ctx.Err(); err != nil {
			return nil, m.fail(-1, err)
		}
		if rounds > m.n+2 {
			return nil, m.fail(-1, fmt.Errorf("no progress after %d rounds", rounds))
		}
		half := int64(b%2) * slotHalf
		for q, d := range m.devs {
			v, _ := d.undone.View(4*half, 4*slotHalf)
			if err := v.MemsetAsync32(0, d.stream); err != nil {
				return nil, m.fail(q, err)
			}
		}
		next := half
		for i := range m.batch {
			if q, err := m.round(rounds+i, &next); err != nil {
				return nil, m.fail(q, err)
			}
			last[i] = next - 1
		}
		for q, d := range m.devs {
			// One copy of the batch's counters, then one wait per device.
			if err := d.undone.CopyToHostAsync(d.counts, 4*half, 4*half, 4*(next-half), d.stream); err != nil {
				return nil, m.fail(q, err)
			}
		}
		for q, d := range m.devs {
			if err := d.stream.Synchronize(); err != nil {
				return nil, m.fail(q, err)
			}
		}
		for i := 0; i < m.batch && !done; i++ {
			left := uint32(0)
			for _, d := range m.devs {
				left += cuda.HostSlice[uint32](d.counts)[last[i]]
			}
			if left == 0 {
				done, rounds = true, rounds+i+1
			}
		}
		if !done {
			rounds += m.batch
		}
	}
	elapsed := time.Since(t0)
	res := &MultiGPUResult{Parts: len(m.parts), Time: elapsed}
	res.In = make([]bool, m.n)
	for q, p := range m.parts {
		st := make([]uint8, max(p.own, 1))
		if err := cuda.CopyToHost(st, m.devs[q].st, 0); err != nil {
			return nil, m.fail(q, err)
		}
		for i, v := range p.global {
			if st[i] == pIn {
				res.In[v] = true
				res.Size++
			}
		}
	}
	per := int64(1)
	if m.dist == 2 {
		per = 10
	}
	for _, l := range m.links {
		res.BytesPerRound += per * l.n
		kind := l.kind
		if m.direct {
			kind += " direct"
		}
		res.Links = append(res.Links, fmt.Sprintf("%d→%d %s", l.from, l.to, kind))
	}
	res.BytesPerRun = res.BytesPerRound * int64(rounds)
	if m.direct {
		res.BytesPerRun = res.BytesPerRound
		res.BytesPerRound = (res.BytesPerRun + int64(rounds) - 1) / int64(rounds)
	}
	res.Rounds = rounds
	res.Backend = "multi-gpu"
	res.Elapsed = time.Since(start)
	return res, nil
}

// fail waits for whatever is still queued, so that Close can free the
// memory, and names the part whose call failed.
func (m *MultiGPU) fail(q int, err error) error {
	for _, d := range m.devs {
		d.stream.Synchronize()
	}
	if q < 0 {
		return fmt.Errorf("mis: multi-GPU: %w", err)
	}
	return fmt.Errorf("mis: multi-GPU part %d on device %d: %w", q, m.opts.Devices[q], err)
}

func (m *MultiGPU) reset(d *devPart) error {
	if err := d.st.MemsetAsync8(0, d.stream); err != nil {
		return err
	}
	if m.dist == 2 {
		if err := d.near.MemsetAsync8(0, d.stream); err != nil {
			return err
		}
		// Unknown ball champions block every join until computed.
		if err := d.m1.MemsetAsync32(^uint32(0), d.stream); err != nil {
			return err
		}
	}
	return nil
}

func blocks(n int64) cuda.Dim3 { return cuda.Dim3{X: uint32((n + 255) / 256)} }

// launch starts a kernel of part q over n threads (nothing when n is 0).
func (m *MultiGPU) launch(q, r int, name string, n int64, args ...any) error {
	if n == 0 {
		return nil
	}
	d := m.devs[q]
	cfg := cuda.Launch{Grid: blocks(n), Block: cuda.Dim3{X: 256}, Stream: d.stream}
	if m.opts.inject != nil && m.opts.inject(q, r) {
		cfg.Block.X = 1 << 20 // refused by the driver: an injected device error
	}
	return d.l.Function(name).Launch(cfg, args...)
}

// round queues one round on every part, counting its sweeps into the
// slots from *next on; on failure it returns the part.
func (m *MultiGPU) round(r int, next *int64) (int, error) {
	if m.dist == 1 {
		for range m.sweeps {
			slot := *next
			for q, p := range m.parts {
				d := m.devs[q]
				var prev *cuda.Buffer
				if m.prev >= 0 {
					prev = m.slot(d, m.prev)
				}
				if err := m.launch(q, r, "part_sweep1v", int64(p.own), d.off, d.adj, d.gown, d.gghost, d.prim,
					d.rofs, d.raddr, int32(p.own), d.base, uint32(m.seed), uint32(m.seed>>32), d.st, prev, m.slot(d, slot)); err != nil {
					return q, err
				}
			}
			m.prev = slot
			*next++
		}
		if m.direct {
			return -1, nil
		}
		return m.exchange(r, false)
	}
	slot := *next
	*next++
	for q, p := range m.parts {
		d := m.devs[q]
		if err := m.launch(q, r, "part_ball2", int64(p.own), d.off, d.adj, d.key, d.st, int32(p.own), d.m1, d.near); err != nil {
			return q, err
		}
	}
	if q, err := m.exchange(r, true); err != nil {
		return q, err
	}
	for q, p := range m.parts {
		d := m.devs[q]
		if err := m.launch(q, r, "part_decide2", int64(p.own), d.off, d.adj, d.key, d.st, d.m1, d.near, int32(p.own), m.slot(d, slot)); err != nil {
			return q, err
		}
	}
	return m.exchange(r, false)
}

func (m *MultiGPU) slot(d *devPart, slot int64) *cuda.Buffer {
	b, _ := d.undone.View(4*slot, 4)
	return b
}

// exchange gathers and copies the boundary states (ball: the champions
// and near flags of distance 2) from every part to its neighbours.
func (m *MultiGPU) exchange(r int, ball bool) (int, error) {
	for _, l := range m.links {
		s := m.devs[l.from]
		if ball {
			if err := m.launch(l.from, r, "part_gather8", l.n, s.near, l.list, int32(l.n), l.n8); err != nil {
				return l.from, err
			}
			if err := m.launch(l.from, r, "part_gather64", l.n, s.m1, l.list, int32(l.n), l.b64); err != nil {
				return l.from, err
			}
		} else if err := m.launch(l.from, r, "part_gather8", l.n, s.st, l.list, int32(l.n), l.b8); err != nil {
			return l.from, err
		}
	}
	for q, d := range m.devs {
		if err := d.done.Record(d.stream); err != nil {
			return q, err
		}
	}
	for _, l := range m.links {
		s, t := m.devs[l.from], m.devs[l.to]
		// The neighbour has finished reading its ghosts for this phase.
		if err := s.stream.WaitEvent(t.done); err != nil {
			return l.from, err
		}
		for _, c := range l.copies(s, t, ball) {
			var err error
			if l.kind == "staged" {
				err = c.src.CopyToHostAsync(l.stage, c.stageOff, 0, c.n, s.stream)
			} else {
				err = cuda.CopyPeerAsync(c.dst, c.dstOff, c.src, 0, c.n, s.stream)
			}
			if err != nil {
				return l.from, err
			}
		}
	}
	for q, d := range m.devs {
		if err := d.pushed.Record(d.stream); err != nil {
			return q, err
		}
	}
	for _, l := range m.links {
		s, t := m.devs[l.from], m.devs[l.to]
		if err := t.stream.WaitEvent(s.pushed); err != nil {
			return l.to, err
		}
		if l.kind != "staged" {
			continue
		}
		for _, c := range l.copies(s, t, ball) {
			if err := c.dst.CopyFromHostAsync(c.dstOff, l.stage, c.stageOff, c.n, t.stream); err != nil {
				return l.to, err
			}
		}
	}
	return -1, nil
}

type linkCopy struct {
	src, dst         *cuda.Buffer
	dstOff, stageOff int64
	n                int64
}

// copies lists the arrays one exchange moves over link l.
func (l *gpuLink) copies(s, t *devPart, ball bool) []linkCopy {
	if !ball {
		return []linkCopy{{src: l.b8, dst: t.st, dstOff: l.dstOff, n: l.n}}
	}
	return []linkCopy{
		{src: l.n8, dst: t.near, dstOff: l.dstOff, stageOff: l.n, n: l.n},
		{src: l.b64, dst: t.m1, dstOff: 8 * l.dstOff, stageOff: 2 * l.n, n: 8 * l.n},
	}
}
