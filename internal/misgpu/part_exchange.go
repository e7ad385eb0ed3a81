package misgpu

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// partRun is what a part adds to the engine's run (exec.go): the
// arguments of the global ids, and after every launch the boundary.
type partRun struct {
	p      *part
	q      int
	extra  []any
	inject func(part, launch int) bool
	stop   *atomic.Bool
	ctx    context.Context
	watch  *partsWatch
	epoch  uint32 // the tag of this run's mailbox pairs (part.cu)
	// tailSends: the run's MIS-1 tail is part1_tail, launched as sweep
	// tailAt. split: part_send and part_return go apart
	// (PartsOptions.SplitExchange).
	tailSends, split bool
	tailAt           int
	trace            *partTrace
	// queued: Parts.Run queued the first launch (queueFirst), holding
	// the part's lock, which unlock releases.
	queued bool
	unlock func()
	last   uint32 // the live count at the last check (at first the part's vertices)
	checks int
	// sends and backs count this run's part_send and part_return calls
	// (their pending lists: Pending in part.cu).
	sends, backs int32
}

// check hands the live count after pass sweeps to the parts' watch and
// says whether the part stops.
func (pr *partRun) check(pass int, live uint32) (bool, error) {
	pr.checks++
	t := time.Now()
	stop, err := pr.watch.check(pr.ctx, pr.q, pass, live, pr.last, pr.checks)
	pr.trace.checked(time.Since(t))
	pr.last = live
	return stop, err
}

// args appends the part's arguments to a launch of the engine.
func (pr *partRun) args(a []any) []any {
	if pr == nil {
		return a
	}
	return append(a, pr.extra...)
}

// after queues, after launch pass: the pairs the mailboxes of this part
// hold, the send of what the launch decided on the boundary and the
// ghosts given back (one launch where the part does both), and the
// publication of the mailboxes' fill counts.
func (pr *partRun) after(pass int) error {
	if pr == nil {
		return nil
	}
	if pr.stop.Load() {
		return errAborted
	}
	if err := pr.ctx.Err(); err != nil {
		return err
	}
	if err := pr.trace.mark(pr.p.l.Stream); err != nil {
		return err
	}
	if err := pr.receive(); err != nil {
		return err
	}
	if err := pr.exchange(pass); err != nil {
		return err
	}
	return pr.trace.mark(pr.p.l.Stream)
}

// returnArgs are part_return's arguments: the part's ghosts.
func (pr *partRun) returnArgs() ([]any, error) {
	p := pr.p
	s := p.spec
	gf := GhostFrom(s.Own)
	ng := int64(len(s.Offsets) - 1 - gf)
	// Sixteen ghosts a thread, from the first ghost's tile on.
	gst, err := p.dg.ws.st.View(int64(gf), (ng+15)/16*16)
	if err != nil {
		return nil, err
	}
	from, home := s.returnWindows()
	return []any{gst, int32(ng), p.back, p.home, p.rbase, p.bytes, int32(s.WindowsEnd() - gf),
		from[0], home[0], from[1], home[1], from[2], home[2], p.backPend, p.backCnt, pr.backs}, nil
}

// tailArgs appends the part's arguments to the launch of MIS-1's tail:
// those of every launch, and for part1_tail its sends.
func (pr *partRun) tailArgs(a []any) []any {
	a = pr.args(a)
	if pr == nil || !pr.tailSends {
		return a
	}
	p := pr.p
	return append(a, p.at, p.xcls, p.ofs, p.slot, p.bases, p.sent, p.bytes)
}

// receive queues the application of the pairs in the part's mailboxes.
func (pr *partRun) receive() error {
	p, l := pr.p, pr.p.l
	for _, in := range p.inbox {
		if err := l.Launch(nil, "part_recv_at", 1, in.filled, in.at, uint32(in.cap)); err != nil {
			return err
		}
		if err := l.Launch(nil, "part_recv", l.Grid("part_recv", in.cap, blockSize), in.box, in.at, p.dg.ws.st, pr.epoch,
			uint32(len(p.spec.Offsets)-1)); err != nil {
			return err
		}
	}
	return nil
}

// exchange queues part_pull where the parts pull (and part_send too
// unless part.pullsAll: PartsOptions.SendForward), else part_send (the
// boundary's decisions), part_return (the ghosts given back), or both
// as one part_exchange, then the publication of the mailboxes' fill
// counts.
func (pr *partRun) exchange(pass int) error {
	p, l := pr.p, pr.p.l
	n := int64(len(p.spec.Send))
	if (n > 0 || p.pull != nil) && pr.inject != nil && pr.inject(pr.q, pass) {
		// Refused by the driver: an injected device error.
		return l.Function("part_send").Launch(cuda.Launch{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1 << 20}, Stream: l.Stream})
	}
	if p.pull != nil {
		// What a pull reads is the neighbours' and what it ORs into the
		// states a fact, so it need not wait for the launch before it:
		// it starts as that launch's last blocks do.
		if err := l.LaunchOverlap(nil, "part_pull", p.pullGrid, p.dg.ws.st, p.pull, p.pullSegs, p.bytes); err != nil {
			return err
		}
	}
	if !pr.tailSends {
		// A part without a tail pushes after every launch: a
		// neighbour's tail may wait on what it decides.
		if err := pr.pushWindows(); err != nil {
			return err
		}
	}
	if p.pullsAll {
		return nil
	}
	var args []any
	name, grid := "", uint32(0)
	if n > 0 {
		args = append(args, p.dg.ws.st, p.xcls, p.list, int32(n), p.sent, p.ofs, p.slot, p.bases, p.fill, p.bytes,
			pr.epoch, p.sendPend, p.sendCnt, pr.sends)
		name, grid = "part_send", p.sendGrid
	}
	ns := len(args)
	if p.returns {
		ra, err := pr.returnArgs()
		if err != nil {
			return err
		}
		args = append(args, ra...)
		name, grid = "part_return", grid+p.backGrid
	}
	switch {
	case n > 0 && p.returns && pr.split:
		if err := l.Launch(nil, "part_send", p.sendGrid, args[:ns]...); err != nil {
			return err
		}
		name, grid, args = "part_return", p.backGrid, args[ns:]
	case n > 0 && p.returns:
		name, args = "part_exchange", append(args, p.sendGrid)
	case name == "":
		return nil
	}
	if err := pr.launchExchange(pass, name, grid, args); err != nil {
		return err
	}
	if p.returns {
		pr.backs++
	}
	if n == 0 {
		return nil
	}
	pr.sends++
	// Published once the sends are done, so that a receiver that sees a
	// count sees its pairs.
	if p.pubHost != nil {
		if err := p.fill.CopyToHostAsync(p.pubHost, 0, 0, p.fill.Size(), l.Stream); err != nil {
			return err
		}
	}
	if p.pubDev != nil {
		return cuda.CopyPeerAsync(p.pubDev, 0, p.fill, 0, p.fill.Size(), l.Stream)
	}
	return nil
}

// launchExchange queues the exchange kernel name after launch pass.
// Before a part1_tail, which sweeps queues in one batch with the sweeps
// before it, part_send after every sweep but the last need not wait for
// that sweep: a vertex it decides after part_send scanned it stays in
// the pending list, and the send before the tail, queued plainly, takes
// what is left, so the neighbours' tails see every decision of the
// sweeps. Everywhere else a part may stop after any launch, and its
// last exchange must see all it decided.
func (pr *partRun) launchExchange(pass int, name string, grid uint32, args []any) error {
	p := pr.p
	if name == "part_send" && pass+1 < pr.tailAt && p.pubHost == nil && p.pubDev == nil {
		return p.l.LaunchOverlap(nil, name, grid, args...)
	}
	return p.l.Launch(nil, name, grid, args...)
}

// extra is what a part adds to every launch of the engine: how its
// kernels find the global ids of its local ids (PART_PARAMS of mis.cu).
// A part whose local ids are its global ids (one part, ids in id order)
// passes no id table: vhash then hashes the local id, as the engine's
// image does, without the comparisons that find a part's global id on
// every neighbour a sweep keys (a quarter of MIS-1's sweep time on
// hex27 256³).
func (p *part) extra(keepIDs bool) []any {
	gw := p.spec.gidWindows()
	gid := p.gid
	if p.spec.IdentityIDs() && !keepIDs {
		gid = nil
	}
	return []any{gid, p.spec.Base, int32(p.spec.GIDFrom), gw[0], gw[1], gw[2]}
}
