package mis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// MultiGPUOptions configures the partitioned MIS over several GPUs of one
// host. The zero value runs a distance-1 hash-priority MIS with one part
// per visible device.
type MultiGPUOptions struct {
	Distance int // 1 or 2; 0 means 1
	Priority Priority
	// Devices gives the device ordinal of each part; a device may appear
	// several times (each part gets its own stream, which lets one GPU
	// check the multi-part logic). Nil: one part per visible device.
	Devices []int
	// Partition gives the part of each vertex; nil means contiguous
	// ranges. LocalityPartition gives compact parts for graphs whose
	// numbering has lost locality.
	Partition []int32
	// Order, when not nil, orders the vertices within each part by
	// Order[v] (LocalityPartition's order) instead of by id; the set is
	// the same.
	Order []int32
	// For tests and benchmarks. mailboxes sends through pinned host
	// memory even where the devices reach each other's memory (the
	// fallback path); pairs sends pairs into mailboxes in the peers'
	// memory instead of storing bytes (misgpu.PartsOptions.Pairs); tail
	// keeps MIS-1's persistent tail on several parts
	// (misgpu.PartsOptions.Tail); noTailSends and noReturns turn off
	// the tail that sends by itself and the ghosts given back
	// (misgpu.PartsOptions); inject, when it returns true for (part,
	// launch), makes that part's launch fail in the driver; tables
	// keeps every ghost's global id and home in the tables, with no
	// ghost windows (misgpu.Window); split launches the sends and the
	// returns apart (misgpu.PartsOptions.SplitExchange); push sends
	// where the parts could pull (misgpu.PartsOptions.Push);
	// sendForward sends forward beside MIS-1's tails where the parts
	// pull (misgpu.PartsOptions.SendForward).
	mailboxes, pairs, tail, noTailSends, noReturns, tables, split, push, sendForward bool
	inject                                                                           func(part, launch int) bool
}

// MultiGPUResult is the set found and the cost of the exchanges.
type MultiGPUResult struct {
	Result
	Parts int
	// BytesPerRun is what the parts sent each other in the run: each
	// boundary vertex's state once to every part that keeps it as a
	// ghost (one byte stored straight into a neighbour's memory, or an
	// 8-byte pair through a pinned host mailbox), and the ghosts a part
	// found OUT given back to their owners where it reaches their
	// memory (4 bytes per atomic OR, one per state word of an owner).
	// BytesPerRound is that spread over the rounds.
	BytesPerRound, BytesPerRun int64
	// Links says how each part reaches each neighbour: "same device",
	// "peer" (stores over the link) or "mailbox" (pinned host memory).
	Links []string
	// Plans names the engine's kernels each part ran.
	Plans []string
	// Time is the device time of the run (every part's launches and
	// checks, all devices synchronised), measured on the host; the
	// serial finish of a stalled run is not in it (Elapsed has it).
	Time time.Duration
	// Stalled says the rounds stopped paying (a priority that chains the
	// greedy order along the graph decides one link per round), and the
	// serial greedy finished from the members decided so far. The set is
	// the same either way.
	Stalled bool
}

// MultiGPU is a graph laid out over several GPUs, ready to run the MIS
// repeatedly (benchmarks). Close frees everything on every device.
type MultiGPU struct {
	opts  MultiGPUOptions
	dist  int
	g     *mesh.Graph
	keys  []uint64 // for the serial finish of a stalled run
	parts []*gpuPart
	pp    *misgpu.Parts
}

// ComputeMultiGPU runs the MIS of g over the GPUs of opts. The set is the
// one Greedy returns, whatever the number of parts or devices.
func ComputeMultiGPU(ctx context.Context, g *mesh.Graph, opts MultiGPUOptions) (*MultiGPUResult, error) {
	m, err := NewMultiGPU(g, opts)
	if err != nil {
		return nil, err
	}
	res, err := m.Run(ctx)
	if cerr := m.Close(); err == nil && cerr != nil {
		return nil, cerr
	}
	return res, err
}

// NewMultiGPU splits g, uploads each part to its device and prepares the
// links between them. Each part runs the engine of Compute on its
// vertices, with the keys of their global ids, so that the parts rank
// every vertex alike; after every launch a part sends the boundary
// vertices it decided to the parts that keep them as ghosts, and gives
// the ghosts its own members made OUT back to their owners.
func NewMultiGPU(g *mesh.Graph, opts MultiGPUOptions) (*MultiGPU, error) {
	if g == nil {
		return nil, errors.New("mis: multi-GPU: nil graph")
	}
	o := Options{Distance: opts.Distance, Priority: opts.Priority}
	dist, err := o.distance()
	if err != nil {
		return nil, err
	}
	if opts.Devices == nil {
		nd, err := gpu.Count()
		if err != nil {
			return nil, fmt.Errorf("mis: multi-GPU: %w", err)
		}
		for d := range nd {
			opts.Devices = append(opts.Devices, d)
		}
	}
	if len(opts.Devices) == 0 {
		return nil, fmt.Errorf("mis: multi-GPU: %w: no device to run on", ErrNoGPU)
	}
	if opts.Order != nil && len(opts.Order) != g.N() {
		return nil, fmt.Errorf("mis: multi-GPU: an order of %d entries for %d vertices", len(opts.Order), g.N())
	}
	keys, err := Keys(g, opts.Priority)
	if err != nil {
		return nil, err
	}
	windows := misgpu.MaxWindows
	if opts.tables {
		windows = 0
	}
	parts, err := layoutParts(g, len(opts.Devices), opts.Partition, keys, dist, opts.Order, windows)
	if err != nil {
		return nil, err
	}
	specs := make([]*misgpu.PartSpec, len(parts))
	for q, p := range parts {
		p.spec.Device = opts.Devices[q]
		specs[q] = &p.spec
	}
	po := misgpu.PartsOptions{Dist: dist, Seed: opts.Priority.Seed, Mailboxes: opts.mailboxes, Pairs: opts.pairs, Tail: opts.tail,
		NoTailSends: opts.noTailSends, NoReturns: opts.noReturns, Inject: opts.inject, SplitExchange: opts.split, Push: opts.push,
		SendForward: opts.sendForward}
	pp, err := misgpu.NewParts(specs, po)
	if err != nil {
		return nil, fmt.Errorf("mis: multi-GPU %w", err)
	}
	return &MultiGPU{opts: opts, dist: dist, g: g, keys: keys, parts: parts, pp: pp}, nil
}

// Run computes the MIS from scratch on the prepared parts. When the
// rounds stop paying (a priority that chains the greedy order along the
// graph decides one link per round), the run stops and the serial greedy
// finishes from the members decided so far, as Compute's engine does.
func (m *MultiGPU) Run(ctx context.Context) (*MultiGPUResult, error) {
	start := time.Now()
	r, err := m.pp.Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("mis: multi-GPU %w", err)
	}
	res := &MultiGPUResult{Parts: len(m.parts), Time: r.Time, Stalled: r.Stalled, Links: m.pp.Links(), Plans: r.Plans}
	res.In, res.Size = m.gather(r.In)
	if r.Stalled {
		// The states hold a valid prefix of the greedy order: every
		// member is one of the greedy set, and finishGreedy blocks
		// their balls itself.
		res.Size += finishGreedy(m.g, m.keys, m.dist, res.In)
	}
	res.Rounds, res.BytesPerRun = r.Rounds, r.Bytes
	res.BytesPerRound = (r.Bytes + int64(r.Rounds) - 1) / int64(max(r.Rounds, 1))
	res.Backend = "multi-gpu"
	res.Elapsed = time.Since(start)
	return res, nil
}

// gather places the parts' flags at their global ids and counts the
// members, on all CPUs: on tens of millions of vertices one loop took
// longer than the run.
func (m *MultiGPU) gather(in [][]bool) ([]bool, int) {
	out := make([]bool, m.g.N())
	var size atomic.Int64
	for q, p := range m.parts {
		parallelRows(len(in[q]), func(lo, hi int) {
			n := 0
			for i, x := range in[q][lo:hi] {
				if x {
					out[p.global[lo+i]] = true
					n++
				}
			}
			size.Add(int64(n))
		})
	}
	return out, int(size.Load())
}

// Close frees everything on every device. It is idempotent.
func (m *MultiGPU) Close() error { return m.pp.Close() }
