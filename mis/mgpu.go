package mis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/kernels"
	"github.com/misgrid/misgrid/mesh"
)

// MultiGPUOptions configures the partitioned MIS over several GPUs of one
// host. The zero value runs a distance-1 hash-priority MIS with one part
// per visible device.
type MultiGPUOptions struct {
	Distance int // 1 or 2; 0 means 1
	Priority Priority
	// Devices gives the device ordinal of each part; a device may appear
	// several times (each part gets its own context object and stream,
	// which lets one GPU check the multi-part logic). Nil: one part per
	// visible device.
	Devices []int
	// Partition gives the part of each vertex; nil means contiguous
	// ranges (the MG-MIS split).
	Partition []int32
	// For tests. staged forces the exchange through pinned host memory
	// even where the devices reach each other (the fallback path). batch
	// is the number of rounds queued between checks of the undecided
	// counts (0: 4 at distance 1, 8 at distance 2). sweeps is the number
	// of in-place sweeps each part makes between two exchanges at
	// distance 1 where the states travel through the host (0: 2;
	// decisions are monotone, so a part may sweep on while it is blocked
	// only on stale ghosts). inject, when it returns true for (part,
	// round), makes that part's kernel launch fail in the driver.
	staged bool
	batch  int
	sweeps int
	inject func(part, round int) bool
}

// MultiGPUResult is the set found and the cost of the exchanges.
type MultiGPUResult struct {
	Result
	Parts int
	// BytesPerRound is what all parts copy to their neighbours in one
	// round: every boundary state each exchange (distance 1: one byte per
	// ghost; distance 2: ten bytes, states plus ball champions and
	// flags). Distance 1 between parts that reach each other's memory
	// has no exchanges: each ghost's byte is stored once per run
	// (BytesPerRun), and BytesPerRound is that spread over the rounds.
	BytesPerRound int64
	// BytesPerRun is what all parts send to their neighbours in the run.
	BytesPerRun int64
	// Links says how the parts' copies travel: "same device", "peer",
	// "staged", one per ordered pair of neighbouring parts.
	Links []string
	// Time is the device time of the run (state initialisation, every
	// round, all devices synchronised), measured on the host.
	Time time.Duration
}

// mgpuLive counts device and pinned allocations of multi-GPU runs that
// are not yet freed; tests check it returns to zero after a failure.
var mgpuLive atomic.Int64

// MultiGPU is a graph laid out over several GPUs, ready to run the MIS
// repeatedly (benchmarks). Close frees everything on every device.
type MultiGPU struct {
	opts  MultiGPUOptions
	dist  int
	n     int
	parts []*gpuPart
	devs  []*devPart
	links []*gpuLink
	batch int
	// sweeps per round at distance 1; prev is the counter slot of the
	// last sweep queued (-1: none yet in this run).
	sweeps int
	prev   int64
	seed   uint64
	// direct: distance 1 where every link reaches its neighbour's memory;
	// the sweeps store boundary decisions straight into the neighbours'
	// ghost slots and there are no exchange steps.
	direct bool
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
// exchange links.
func NewMultiGPU(g *mesh.Graph, opts MultiGPUOptions) (*MultiGPU, error) {
	if g == nil {
		return nil, errors.New("mis: multi-GPU: nil graph")
	}
	o := Options{Distance: opts.Distance, Priority: opts.Priority}
	dist, err := o.distance()
	if err != nil {
		return nil, err
	}
	if err := cuda.Available(); err != nil {
		return nil, fmt.Errorf("mis: multi-GPU: %w", err)
	}
	if opts.Devices == nil {
		nd, err := cuda.DeviceCount()
		if err != nil {
			return nil, fmt.Errorf("mis: multi-GPU: %w", gpu.Unavailable(err))
		}
		for d := range nd {
			opts.Devices = append(opts.Devices, d)
		}
	}
	if len(opts.Devices) == 0 {
		return nil, fmt.Errorf("mis: multi-GPU: %w: no device to run on", ErrNoGPU)
	}
	keys, err := Keys(g, opts.Priority)
	if err != nil {
		return nil, err
	}
	parts, err := layoutParts(g, len(opts.Devices), opts.Partition, keys)
	if err != nil {
		return nil, err
	}
	m := &MultiGPU{opts: opts, dist: dist, n: g.N(), parts: parts, batch: opts.batch, sweeps: 1, seed: opts.Priority.Seed}
	if dist == 1 {
		m.sweeps = opts.sweeps
		if m.sweeps <= 0 {
			m.sweeps = 2
		}
	}
	if m.batch <= 0 {
		m.batch = 4
		if dist == 2 {
			m.batch = 8
		}
	}
	// Each batch's counters live in one half of the slot ring.
	m.sweeps = min(m.sweeps, slotHalf)
	m.batch = min(m.batch, slotHalf/m.sweeps)
	if err := m.setup(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// devPart is what one part holds on its device.
type devPart struct {
	ctx    *cuda.Context
	l      *gpu.Loader // the part kernels, with the part's stream
	stream *cuda.Stream
	done   *cuda.Event // this part's phase kernels and gathers are queued before it
	pushed *cuda.Event // this part's copies to its neighbours
	batch  [2]*cuda.Event

	off, adj, key, st, m1, near *cuda.Buffer
	// gown (nil for a contiguous range starting at base), gghost: global
	// ids of the owned vertices and ghosts; prim: the keys' primary ranks
	// (nil for hash priority). The distance-1 sweep hashes on the fly.
	gown, gghost, prim *cuda.Buffer
	// rofs, raddr: for direct stores (MultiGPU.direct), the device
	// addresses of the other parts' ghost slots of each owned vertex.
	rofs, raddr *cuda.Buffer
	base        uint32
	undone      *cuda.Buffer // one counter per sweep, 2*slotHalf slots
	counts      *cuda.HostBuffer

	bufs  []*cuda.Buffer
	hosts []*cuda.HostBuffer
}

// gpuLink carries the boundary states of part from to part to.
type gpuLink struct {
	from, to int
	n        int64
	list     *cuda.Buffer // on from: owned ids, in to's ghost order
	b8, b64  *cuda.Buffer // gather buffers on from
	n8       *cuda.Buffer // gather buffer for near flags (distance 2)
	stage    *cuda.HostBuffer
	dstOff   int64 // first ghost slot on to
	kind     string
}

func (d *devPart) alloc(bytes int64) (*cuda.Buffer, error) {
	b, err := d.ctx.Alloc(max(bytes, 8))
	if err != nil {
		return nil, err
	}
	mgpuLive.Add(1)
	d.bufs = append(d.bufs, b)
	return b, nil
}

func (d *devPart) upload(data any, bytes int64) (*cuda.Buffer, error) {
	b, err := d.alloc(bytes)
	if err != nil || bytes == 0 {
		return b, err
	}
	switch x := data.(type) {
	case []int64:
		err = cuda.CopyToDevice(b, 0, x)
	case []int32:
		err = cuda.CopyToDevice(b, 0, x)
	case []uint64:
		err = cuda.CopyToDevice(b, 0, x)
	case []uint32:
		err = cuda.CopyToDevice(b, 0, x)
	}
	return b, err
}

// slotHalf is the number of counter slots one batch uses; the next batch
// uses the other half, so a sweep can still read its predecessor's count.
const slotHalf = 64

var partKernels = []string{"part_sweep1v", "part_ball2", "part_decide2", "part_gather8", "part_gather64"}

func (m *MultiGPU) setup() error {
	m.devs = make([]*devPart, len(m.parts))
	for q, p := range m.parts {
		dev, err := cuda.GetDevice(m.opts.Devices[q])
		if err != nil {
			return fmt.Errorf("mis: multi-GPU part %d: %w", q, gpu.Unavailable(err))
		}
		c, err := dev.PrimaryContext()
		if err != nil {
			return fmt.Errorf("mis: multi-GPU part %d: %w", q, gpu.Unavailable(err))
		}
		d := &devPart{ctx: c}
		m.devs[q] = d
		if err := d.init(p, m.dist); err != nil {
			return fmt.Errorf("mis: multi-GPU part %d on device %d: %w", q, m.opts.Devices[q], err)
		}
	}
	for from, p := range m.parts {
		for to, list := range p.send {
			if list == nil {
				continue
			}
			l, err := m.link(from, to, list)
			if err != nil {
				return fmt.Errorf("mis: multi-GPU link %d→%d: %w", from, to, err)
			}
			m.links = append(m.links, l)
		}
	}
	if m.dist == 1 && !m.opts.staged {
		m.direct = true
		for _, l := range m.links {
			m.direct = m.direct && l.kind != "staged"
		}
	}
	if !m.direct {
		return nil
	}
	m.sweeps = 1
	if m.opts.batch <= 0 {
		m.batch = 8
	}
	for from, d := range m.devs {
		if err := m.remoteSlots(from, d); err != nil {
			return fmt.Errorf("mis: multi-GPU part %d: %w", from, err)
		}
	}
	return nil
}

// remoteSlots uploads, for each owned vertex of part from, the device
// addresses of the ghost slots other parts keep of it (CSR by vertex).
func (m *MultiGPU) remoteSlots(from int, d *devPart) error {
	p := m.parts[from]
	ofs := make([]int32, p.own+1)
	for _, l := range m.links {
		if l.from != from {
			continue
		}
		for _, v := range m.parts[from].send[l.to] {
			ofs[v+1]++
		}
	}
	for i := range p.own {
		ofs[i+1] += ofs[i]
	}
	addr := make([]uint64, ofs[p.own])
	fill := append([]int32(nil), ofs[:p.own]...)
	for _, l := range m.links {
		if l.from != from {
			continue
		}
		base := uint64(m.devs[l.to].st.Ptr()) + uint64(l.dstOff)
		for i, v := range m.parts[from].send[l.to] {
			addr[fill[v]] = base + uint64(i)
			fill[v]++
		}
	}
	var err error
	if d.rofs, err = d.upload(ofs, 4*int64(len(ofs))); err != nil {
		return err
	}
	d.raddr, err = d.upload(addr, 8*int64(len(addr)))
	return err
}

func (d *devPart) init(p *gpuPart, dist int) error {
	var err error
	if d.l, err = gpu.New(d.ctx, false, kernels.Part, partKernels); err != nil {
		return err
	}
	d.stream = d.l.Stream
	for _, e := range []**cuda.Event{&d.done, &d.pushed, &d.batch[0], &d.batch[1]} {
		if *e, err = d.ctx.NewEvent(); err != nil {
			return err
		}
	}
	nl := int64(p.local())
	if d.off, err = d.upload(p.offsets, 8*int64(len(p.offsets))); err != nil {
		return err
	}
	// 16 bytes of slack: the distance-1 sweep reads rows 16 bytes at a
	// time up to the next 16-byte boundary.
	if d.adj, err = d.alloc(4*int64(len(p.adj)) + 16); err != nil {
		return err
	}
	if len(p.adj) > 0 {
		if err = cuda.CopyToDevice(d.adj, 0, p.adj); err != nil {
			return err
		}
	}
	gown, base, prim := p.keyParts()
	if gown != nil {
		if d.gown, err = d.upload(gown, 4*int64(len(gown))); err != nil {
			return err
		}
	}
	d.base = base
	if d.gghost, err = d.upload(p.ghostIDs, 4*int64(len(p.ghostIDs))); err != nil {
		return err
	}
	if prim != nil {
		if d.prim, err = d.upload(prim, 4*int64(len(prim))); err != nil {
			return err
		}
	}
	if d.key, err = d.upload(p.keys, 8*nl); err != nil {
		return err
	}
	if d.st, err = d.alloc(nl); err != nil {
		return err
	}
	if dist == 2 {
		if d.m1, err = d.alloc(8 * nl); err != nil {
			return err
		}
		if d.near, err = d.alloc(nl); err != nil {
			return err
		}
	}
	if d.undone, err = d.alloc(4 * 2 * slotHalf); err != nil {
		return err
	}
	d.counts, err = d.ctx.AllocHost(4 * 2 * slotHalf)
	if err != nil {
		return err
	}
	mgpuLive.Add(1)
	d.hosts = append(d.hosts, d.counts)
	return nil
}

// link prepares the copies from part from to part to: directly within a
// device or between peers, else staged through pinned host memory.
func (m *MultiGPU) link(from, to int, list []int32) (*gpuLink, error) {
	src, dst := m.devs[from], m.devs[to]
	n := int64(len(list))
	l := &gpuLink{from: from, to: to, n: n,
		dstOff: int64(m.parts[to].own) + int64(m.parts[to].ghostOff[from])}
	var err error
	if l.list, err = src.upload(list, 4*n); err != nil {
		return nil, err
	}
	if l.b8, err = src.alloc(n); err != nil {
		return nil, err
	}
	if m.dist == 2 {
		if l.b64, err = src.alloc(8 * n); err != nil {
			return nil, err
		}
		if l.n8, err = src.alloc(n); err != nil {
			return nil, err
		}
	}
	sd, dd := src.ctx.Device(), dst.ctx.Device()
	peer := false
	if sd.Ordinal() != dd.Ordinal() && !m.opts.staged {
		a, err := sd.CanAccessPeer(dd)
		if err != nil {
			return nil, err
		}
		b, err := dd.CanAccessPeer(sd)
		if err != nil {
			return nil, err
		}
		if a && b {
			if err := src.ctx.EnablePeerAccess(dst.ctx); err != nil {
				return nil, err
			}
			if err := dst.ctx.EnablePeerAccess(src.ctx); err != nil {
				return nil, err
			}
			peer = true
		}
	}
	switch {
	case m.opts.staged || (sd.Ordinal() != dd.Ordinal() && !peer):
		l.kind = "staged"
		if l.stage, err = src.ctx.AllocHost(max(10*n, 8)); err != nil {
			return nil, err
		}
		mgpuLive.Add(1)
		src.hosts = append(src.hosts, l.stage)
	case peer:
		l.kind = "peer"
	default:
		l.kind = "same device"
	}
	return l, nil
}

// Close frees every buffer, stream, event and module on every device and
// releases the contexts. It is idempotent.
func (m *MultiGPU) Close() error {
	var first error
	keep := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	for _, d := range m.devs {
		if d == nil || d.ctx == nil {
			continue
		}
		if d.stream != nil {
			// Errors of queued work were reported by Run; what matters
			// here is that nothing still uses the memory.
			d.stream.Synchronize()
		}
		for _, b := range d.bufs {
			keep(b.Free())
			mgpuLive.Add(-1)
		}
		for _, h := range d.hosts {
			keep(h.Free())
			mgpuLive.Add(-1)
		}
		d.bufs, d.hosts = nil, nil
		for _, e := range []*cuda.Event{d.done, d.pushed, d.batch[0], d.batch[1]} {
			keep(e.Close())
		}
		if d.l != nil {
			keep(d.l.Close())
		}
		keep(d.ctx.Close())
		d.ctx = nil
	}
	return first
}
