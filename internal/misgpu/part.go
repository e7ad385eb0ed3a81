package misgpu

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
)

// A graph split into parts, each on a device, runs the engine on every
// part at once (RunParts): the same plans and kernels as one graph, built
// so that a part hashes global ids (part.cu), plus the boundary: after
// every launch a part sends the boundary vertices it decided to the
// parts that keep them as ghosts. The parts never wait for each other;
// decisions are monotone facts of the greedy set, so a late ghost only
// delays a decision, and each part runs until its own vertices are all
// decided.

// PartSpec is one part in the layout its device holds: owned vertices at
// local ids 0..Own-1, padding to a whole tile, then the ghosts from
// GhostFrom() on (the vertices of other parts within the distance).
type PartSpec struct {
	Device int // device ordinal
	Own    int
	// Offsets and Adj are the rows of local ids 0..len(Offsets)-2 in
	// local ids: the owned vertices', empty rows for the padding, and
	// at distance 2 those of the ghosts one hop away (the others empty).
	Offsets []int64
	Adj     []int32
	MaxDeg  int64
	// GID holds the global id of each local id from GIDFrom on; below
	// GIDFrom local id v is global id Base+v, or in a window the
	// window's (GIDFrom 0: GID holds all).
	GID     []uint32
	GIDFrom int
	Base    uint32
	// Windows (part_window.go) follow each other from GhostFrom() on;
	// the ghosts past them are in the tables GID and Home.
	Windows []Window
	// Class (class keys) or Prim (rank keys) per local id, or neither
	// (hash keys).
	Class []uint8
	Prim  []uint32
	// Send lists the owned vertices other parts keep as ghosts; the
	// ghost slots of Send[i] are To[Ofs[i]:Ofs[i+1]].
	Send []int32
	Ofs  []int32
	To   []Slot
	// Home gives each ghost's owner and the owner's local id past the
	// windows (ghost WindowsEnd()+i at Home[i]): where a ghost this part
	// pushed OUT into is given back (part_return).
	Home []Slot
}

// Slot is a ghost slot: a local id of a part.
type Slot struct {
	Part  int
	Local int64
}

// GhostFrom is the local id of a part's first ghost: own rounded up to a
// whole tile, so that the engine's tiles hold owned vertices only.
func GhostFrom(own int) int { return int(padded(own)) }

// PartsOptions configures RunParts.
type PartsOptions struct {
	Dist int
	Seed uint64
	Key  Key // KeyClass needs PartSpec.Class, KeyPrim PartSpec.Prim
	// Mailboxes sends through pinned host memory even where the parts
	// reach each other's memory (tests of that path).
	Mailboxes bool
	// Push sends the boundary's decisions with part_send and
	// part_return even where the parts could pull them (part_pull.go;
	// benchmarks and tests of that path).
	Push bool
	// Pairs sends (slot, state) pairs into a mailbox in the receiver's
	// memory where the parts reach each other's, written a warp's run at
	// a time, instead of storing each state byte in its ghost slot.
	Pairs bool
	// Tail keeps MIS-1's persistent tail when there are several parts.
	// A tail that waits on a ghost spins until its pass bound, since its
	// neighbour's decisions are sent after that part's own tail.
	Tail bool
	// NoTailSends keeps MIS-1's persistent tail off on several parts
	// even where it could send its boundary decisions itself (every part
	// reached over peer access or on one device, whose tails then split
	// the device).
	NoTailSends bool
	// NoReturns keeps the OUT a part pushes into its ghosts from going
	// back to their owners (part_return).
	NoReturns bool
	// SendForward keeps part_send after every launch where the parts
	// pull and MIS-1's tails send, instead of pulling both ways and
	// pushing the windows once before the tail (benchmarks).
	SendForward bool
	// Trace times every launch and send of each part with events
	// (PartsResult.Trace).
	Trace bool
	// SplitExchange launches part_send and part_return apart instead of
	// as one part_exchange, and KeepIDs passes the id table even where
	// a part's local ids are its global ids, and runs a single part in
	// part.cu's image, which reads it (benchmarks of both).
	SplitExchange, KeepIDs bool
	// Tune, when not nil, adjusts each part's tuning after the driver's
	// rules (the developers' benchmarks).
	Tune func(*Tuning)
	// Inject, when it returns true for (part, launch), makes that part's
	// boundary launch fail (tests).
	Inject func(part, launch int) bool
}

// Parts is a split graph on its devices, ready to run repeatedly.
type Parts struct {
	opts  PartsOptions
	ps    []*part
	links []string
	// tailSends: MIS-1's tail runs on several parts and sends its
	// boundary decisions itself (part1_tail).
	tailSends bool
	// pulls: each part reads its neighbours' decisions (part_pull)
	// instead of being sent them.
	pulls bool
}

// part is one part on its device.
type part struct {
	spec *PartSpec
	l    *gpu.Loader
	dg   *Graph
	ctx  *cuda.Context
	// gid: the global ids; list, sent, ofs, slot: the boundary and its
	// slots (part_send); bases: where each part's slots live, its state
	// array or this part's mailbox to it; fill: the pairs in each
	// mailbox; bytes: the bytes sent in the run.
	gid, list, sent, ofs, slot, bases, fill, bytes *cuda.Buffer
	// xcls: the class bits each boundary vertex carries in its
	// neighbours' ghosts (sendClasses), or nil.
	xcls *cuda.Buffer
	// at: each owned vertex's index in the boundary list, or -1 (the
	// tail's sends); home, rbase, back: each ghost's owner slot, each
	// owner's state array (0 where unreachable), and the ghosts given
	// back in the run (part_return).
	at, home, rbase, back *cuda.Buffer
	returns               bool // some ghost goes back to its owner
	// sendPend, backPend: the boundary entries and the groups of 16
	// ghosts still pending at the last part_send and part_return, two
	// halves each, and each block's count of them in sendCnt and backCnt
	// (Pending in part.cu); every call of a run takes the grid sendGrid
	// and backGrid.
	sendPend, sendCnt, backPend, backCnt *cuda.Buffer
	sendGrid, backGrid                   uint32
	// pull: the segments part_pull reads (part_pull.go), pullSegs of
	// them over pullGrid blocks; pullsAll: the part pulls both ways, and
	// neither part_send nor part_return runs (else, where MIS-1's tails
	// send, it pulls only what goes back and part_send sends the rest).
	pull     *cuda.Buffer
	pullsAll bool
	pullSegs int32
	pullGrid uint32
	// pushes: before MIS-1's tail, the windows of this part's vertices
	// that its neighbours pull, written into their states (part_pull.go).
	pushes []windowPush
	// sharers: the parts on this part's device (its own included).
	sharers int
	// windows: the part runs the image of that many windows
	// (imageWindows).
	windows int
	// fill, published for the receivers once the sends are done: in
	// pinned host memory for mailboxes there, in device memory for
	// mailboxes in a peer's.
	pubHost *cuda.HostBuffer
	pubDev  *cuda.Buffer
	inbox   []inbox
	bufs    []*cuda.Buffer
	hosts   []*cuda.HostBuffer
}

// inbox is a mailbox another part fills for this one.
type inbox struct {
	box, filled uintptr      // the pairs, and the sender's published count of them
	cap         int64        // the most pairs
	at          *cuda.Buffer // the range of pairs to apply and the first not applied (part_recv_at)
}

// liveParts counts the device and pinned allocations of Parts not yet
// freed; tests check that it returns to zero after a failure.
var liveParts atomic.Int64

// LiveAllocations returns the allocations of Parts not yet freed.
func LiveAllocations() int64 { return liveParts.Load() }

func partKernels() []string {
	return append(Kernels(), "mis2b_p2", "part_send", "part_recv_at", "part_recv", "part_ghosts", "part_prefix", "part_return",
		"part_exchange", "part_pull", partTailName(0), partTailName(1), partTailName(2))
}

// partTailName is the MIS-1 tail that sends its boundary decisions
// itself (part1_tail in part.cu).
func partTailName(pk Key) string { return fmt.Sprintf("part1_tail_p%d", pk) }

// NewParts uploads every part to its device and prepares the links.
func NewParts(specs []*PartSpec, o PartsOptions) (*Parts, error) {
	if o.Dist != 1 && o.Dist != 2 {
		return nil, fmt.Errorf("distance %d (want 1 or 2)", o.Dist)
	}
	pp := &Parts{opts: o}
	windows := imageWindows(specs, o.KeepIDs)
	for q, s := range specs {
		p, err := newPart(s, windows)
		if p != nil {
			pp.ps = append(pp.ps, p)
		}
		if err != nil {
			pp.Close()
			return nil, fmt.Errorf("part %d on device %d: %w", q, s.Device, err)
		}
	}
	if err := pp.connect(); err != nil {
		pp.Close()
		return nil, err
	}
	return pp, nil
}

func newPart(s *PartSpec, windows int) (*part, error) {
	// A loader of its own: the part's stream, and its own lock.
	l, err := partLoader(s.Device, windows)
	if err != nil {
		return nil, gpu.Unavailable(err)
	}
	p := &part{spec: s, ctx: l.Ctx, l: l, windows: windows}
	slots := len(s.Offsets) - 1
	if slots < GhostFrom(s.Own) || slots > 1<<31-1 {
		return p, fmt.Errorf("%d local ids for %d owned vertices", slots, s.Own)
	}
	if err := s.checkWindows(slots); err != nil {
		return p, err
	}
	// m counts the rows of the ghosts one hop away too (distance 2), and
	// so does the part's plan (prepare's Shape): the random graph's parts
	// look twice as dense as the graph and take the balanced bucket
	// kernels of 27-point rows, fewer launches, each with its pulls. With
	// the engine's plan for their own rows instead they took 1.914-1.931
	// ms against 1.866-1.874 (two H200s, the builds in turn twice).
	p.dg = &Graph{l: p.l, n: s.Own, m: int64(len(s.Adj)), owned: true, maxDeg: s.MaxDeg}
	liveParts.Add(1)
	if err := p.dg.upload(s.Offsets, s.Adj, nil); err != nil {
		return p, err
	}
	if err := zeroAdjTail(p.dg); err != nil {
		return p, err
	}
	ws := &p.dg.ws
	np := padded(slots)
	if ws.st, err = p.ctx.Alloc(max(np, tile)); err != nil {
		return p, err
	}
	if !s.hashKeys() {
		if ws.cls, err = p.ctx.Alloc(np); err != nil {
			return p, err
		}
	}
	if s.Prim != nil {
		if ws.prim, err = p.ctx.Alloc(4 * np); err != nil {
			return p, err
		}
	}
	if p.gid, err = upload(p, s.GID); err != nil {
		return p, err
	}
	if p.list, err = upload(p, s.Send); err != nil {
		return p, err
	}
	if p.ofs, err = upload(p, s.Ofs); err != nil {
		return p, err
	}
	if xc := sendClasses(s); xc != nil {
		if p.xcls, err = upload(p, xc); err != nil {
			return p, err
		}
	}
	if len(s.Send) > 0 {
		if p.at, err = upload(p, sendIndex(s)); err != nil {
			return p, err
		}
	}
	if p.back, err = p.alloc(padded(slots - GhostFrom(s.Own))); err != nil {
		return p, err
	}
	if p.sent, err = p.alloc(int64(len(s.Send))); err != nil {
		return p, err
	}
	groups := (int64(slots-GhostFrom(s.Own)) + 15) / 16
	p.sendGrid = p.l.Grid("part_send", int64(len(s.Send)), blockSize)
	p.backGrid = p.l.Grid("part_return", groups, blockSize)
	for _, b := range []struct {
		buf   **cuda.Buffer
		bytes int64
	}{{&p.sendPend, 8 * int64(len(s.Send))}, {&p.sendCnt, 8 * int64(p.sendGrid)}, {&p.backPend, 8 * groups}, {&p.backCnt, 8 * int64(p.backGrid)}} {
		if *b.buf, err = p.alloc(b.bytes); err != nil {
			return p, err
		}
	}
	if p.bytes, err = p.alloc(8); err != nil {
		return p, err
	}
	return p, nil
}

// zeroAdjTail zeroes the adjacency's padding after its last entry. The
// 16-byte row loads (load_row8 in shared.cuh) read it with the last row,
// and MIS-2's bucket scans (mis2b_batch) compute the key of every entry
// of a load, inside the row or not; a part's keys hash global ids, a
// lookup by the entry (Params.gid). Memory from the allocator holds what
// earlier runs left, so an entry read there indexed past the ids: an
// illegal address, on the device that ran other work before.
func zeroAdjTail(dg *Graph) error {
	tail := 4 * dg.m
	if tail >= dg.adj.Size() {
		return nil
	}
	v, err := dg.adj.View(tail, dg.adj.Size()-tail)
	if err != nil {
		return err
	}
	if err := v.MemsetAsync8(0, dg.l.Stream); err != nil {
		return err
	}
	return dg.l.Stream.Synchronize()
}

// sendIndex returns each owned vertex's index in s.Send, or -1.
func sendIndex(s *PartSpec) []int32 {
	at := make([]int32, s.Own)
	for v := range at {
		at[v] = -1
	}
	for i, v := range s.Send {
		at[v] = int32(i)
	}
	return at
}

// hashKeys says whether the part's keys are hashes alone: it has
// neither classes nor ranks.
func (s *PartSpec) hashKeys() bool { return s.Class == nil && s.Prim == nil }

// sendClasses returns the class byte of each boundary vertex of s as a
// neighbour keeps it (the class, or a primary below maxSmallRanks, which
// smallRanks puts there), or nil when the keys have no primary. Parts
// may differ in whether their primaries fit the state byte, so the
// sender cannot take the bits from its own states.
func sendClasses(s *PartSpec) []uint8 {
	if s.hashKeys() || len(s.Send) == 0 {
		return nil
	}
	out := make([]uint8, len(s.Send))
	for i, v := range s.Send {
		switch {
		case s.Class != nil:
			out[i] = s.Class[v] & (maxSmallRanks - 1)
		case s.Prim[v] < maxSmallRanks:
			out[i] = uint8(s.Prim[v])
		}
	}
	return out
}

func (p *part) alloc(bytes int64) (*cuda.Buffer, error) {
	b, err := p.ctx.Alloc(max(bytes, 8))
	if err != nil {
		return nil, err
	}
	liveParts.Add(1)
	p.bufs = append(p.bufs, b)
	return b, nil
}

// upload copies data into a new buffer of p's.
func upload[T cuda.Word](p *part, data []T) (*cuda.Buffer, error) {
	b, err := p.alloc(int64(len(data)) * int64(unsafe.Sizeof(*new(T))))
	if err != nil || len(data) == 0 {
		return b, err
	}
	return b, cuda.CopyToDevice(b, 0, data)
}

func (p *part) allocHost(bytes int64) (*cuda.HostBuffer, error) {
	h, err := p.ctx.AllocHost(max(bytes, 8))
	if err != nil {
		return nil, err
	}
	liveParts.Add(1)
	p.hosts = append(p.hosts, h)
	return h, nil
}

func hostPtr(h *cuda.HostBuffer) uintptr { return uintptr(unsafe.Pointer(&h.Bytes()[0])) }

// Links says how each part reaches each neighbour: "FROM→TO kind".
func (pp *Parts) Links() []string { return pp.links }

// Close frees everything on every device. It is idempotent.
func (pp *Parts) Close() error {
	var errs []error
	// Every part first: a part's sends store into its neighbours'
	// memory, so no part's memory goes while any stream may still run.
	// Errors of queued work were reported by the run.
	for _, p := range pp.ps {
		if p.ctx != nil && p.l != nil {
			p.l.Stream.Synchronize()
		}
	}
	for _, p := range pp.ps {
		if p.ctx == nil {
			continue
		}
		if p.dg != nil {
			errs = append(errs, p.dg.Close())
			liveParts.Add(-1)
		}
		for _, b := range p.bufs {
			errs = append(errs, b.Free())
			liveParts.Add(-1)
		}
		for _, h := range p.hosts {
			errs = append(errs, h.Free())
			liveParts.Add(-1)
		}
		p.bufs, p.hosts = nil, nil
		// The context is the device layer's, kept for the next runs.
		errs = append(errs, putLoader(p.l, p.windows))
		p.ctx = nil
	}
	return errors.Join(errs...)
}
