//go:build mpi

package mpi

/*
#include <mpi.h>

enum { mgTagData = 7301, mgTagAbort = 7302 };

static int mg_isend(MPI_Comm c, void *buf, int n, int dest, int tag, MPI_Request *r) {
	return MPI_Isend(buf, n, MPI_BYTE, dest, tag, c, r);
}
static int mg_iprobe(MPI_Comm c, int src, int *flag, int *count, int *tag) {
	MPI_Status st;
	int e = MPI_Iprobe(src, MPI_ANY_TAG, c, flag, &st);
	if (e != MPI_SUCCESS || !*flag) return e;
	*tag = st.MPI_TAG;
	return MPI_Get_count(&st, MPI_BYTE, count);
}
static int mg_recv(MPI_Comm c, void *buf, int n, int src, int tag) {
	return MPI_Recv(buf, n, MPI_BYTE, src, tag, c, MPI_STATUS_IGNORE);
}
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/misgrid/misgrid/mis"
)

// Exchange posts one send per peer and polls for each peer's message
// (MPI_Iprobe, then MPI_Recv of the probed size, so messages of any
// length need no size agreement), until all arrived and all sends
// completed, the context ends, or the timeout passes.
func (c *Comm) Exchange(ctx context.Context, peers []int, send [][]byte) ([][]byte, error) {
	if c.closed {
		return nil, c.errorf("exchange on a closed communicator")
	}
	n := len(peers)
	if len(send) != n {
		return nil, c.errorf("exchange with %d peers but %d messages", n, len(send))
	}
	c.grow(n)
	for i, q := range peers {
		if q < 0 || q >= c.size || q == c.rank {
			c.dropSends(i)
			return nil, c.errorf("exchange with invalid peer %d", q)
		}
		n := phaseBytes + len(send[i])
		if n > math.MaxInt32 {
			c.dropSends(i)
			return nil, c.errorf("exchange: a message of %d bytes to rank %d (MPI counts are C ints)", len(send[i]), q)
		}
		b := c.sendBuf(i, n)
		c.putPhase(b, send[i])
		mu.Lock()
		e := C.mg_isend(c.comm, b, C.int(n), C.int(q), C.mgTagData, &c.sreq[i])
		mu.Unlock()
		if e != C.MPI_SUCCESS {
			c.dropSends(i)
			return nil, c.errorf("MPI_Isend to rank %d: %s", q, errString(e))
		}
		c.sdone[i] = false
		c.have[i] = false
	}
	recv := make([][]byte, n)
	got, sent := 0, 0
	deadline := time.Now().Add(c.timeout)
	idle := 0
	for got < n || sent < n {
		progress := false
		for i, q := range peers {
			if c.have[i] {
				continue
			}
			b, tag, ok, err := c.probeRecv(q, i)
			if err != nil {
				c.dropSends(n)
				return nil, err
			}
			if !ok {
				continue
			}
			if tag == C.mgTagAbort {
				c.dropSends(n)
				return nil, fmt.Errorf("mis/mpi: rank %d: %w: rank %d: %s", c.rank, mis.ErrAborted, q, b)
			}
			recv[i], c.have[i] = b, true
			got++
			progress = true
		}
		for i := range n {
			if c.sdone[i] {
				continue
			}
			flag, e := test(&c.sreq[i])
			if e != C.MPI_SUCCESS {
				c.dropSends(n)
				return nil, c.errorf("MPI_Test of a send to rank %d: %s", peers[i], errString(e))
			}
			if flag {
				c.sdone[i] = true
				sent++
				progress = true
			}
		}
		if got == n && sent == n {
			break
		}
		if err := c.idle(ctx, &idle, progress, deadline); err != nil {
			c.dropSends(n)
			var late []int
			for i, q := range peers {
				if !c.have[i] {
					late = append(late, q)
				}
			}
			return nil, c.errorf("exchange (no message from ranks %v): %w", late, err)
		}
	}
	return recv, nil
}

// putPhase writes the phase header and msg into the C buffer b.
func (c *Comm) putPhase(b unsafe.Pointer, msg []byte) {
	dst := unsafe.Slice((*byte)(b), phaseBytes+len(msg))
	binary.LittleEndian.PutUint64(dst, c.phase)
	copy(dst[phaseBytes:], msg)
}

// probeRecv receives the next message of this phase from rank q into
// receive buffer i, if one has arrived, dropping those of earlier phases.
func (c *Comm) probeRecv(q, i int) (b []byte, tag C.int, ok bool, err error) {
	for {
		b, tag, ok, err = c.probeRecvAny(q, i)
		if err != nil || !ok {
			return nil, 0, false, err
		}
		if len(b) < phaseBytes {
			return nil, 0, false, c.errorf("a message of %d bytes from rank %d, shorter than its header", len(b), q)
		}
		if binary.LittleEndian.Uint64(b) >= c.phase {
			return b[phaseBytes:], tag, true, nil
		}
	}
}

func (c *Comm) probeRecvAny(q, i int) (b []byte, tag C.int, ok bool, err error) {
	var flag, count C.int
	mu.Lock()
	defer mu.Unlock()
	if e := C.mg_iprobe(c.comm, C.int(q), &flag, &count, &tag); e != C.MPI_SUCCESS {
		return nil, 0, false, c.errorf("MPI_Iprobe for rank %d: %s", q, errString(e))
	}
	if flag == 0 {
		return nil, 0, false, nil
	}
	if cap(c.rbufs[i]) < int(count) {
		c.rbufs[i] = make([]byte, count)
	}
	b = c.rbufs[i][:count]
	var p unsafe.Pointer
	if count > 0 {
		p = unsafe.Pointer(&b[0])
	}
	if e := C.mg_recv(c.comm, p, count, C.int(q), tag); e != C.MPI_SUCCESS {
		return nil, 0, false, c.errorf("MPI_Recv from rank %d: %s", q, errString(e))
	}
	return b, tag, true, nil
}

// dropSends gives up the first k sends: each still pending is cancelled,
// and one that MPI cannot stop keeps its buffer as an orphan.
func (c *Comm) dropSends(k int) {
	for i := range k {
		if c.sdone[i] {
			continue
		}
		c.sdone[i] = true
		if !c.cancel(&c.sreq[i]) {
			c.orphans = append(c.orphans, orphan{req: c.sreq[i], bufs: []unsafe.Pointer{c.sbufs[i]}, what: "send"})
			c.sbufs[i], c.scap[i] = nil, 0
		}
	}
}

// Abort sends each peer a message with its own tag and the error's text,
// which fails the peer's next Exchange with mis.ErrAborted, and waits a
// short while for the sends to leave.
func (c *Comm) Abort(ctx context.Context, peers []int, err error) {
	if c.closed {
		return
	}
	msg := err.Error()
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	type pending struct {
		req C.MPI_Request
		buf unsafe.Pointer
	}
	var ps []pending
	for _, q := range peers {
		if q < 0 || q >= c.size || q == c.rank {
			continue
		}
		b := cmalloc(phaseBytes + len(msg))
		c.putPhase(b, []byte(msg))
		var req C.MPI_Request
		mu.Lock()
		e := C.mg_isend(c.comm, b, C.int(phaseBytes+len(msg)), C.int(q), C.mgTagAbort, &req)
		mu.Unlock()
		if e != C.MPI_SUCCESS {
			cfree(b)
			continue
		}
		ps = append(ps, pending{req, b})
	}
	deadline := time.Now().Add(min(c.timeout, 2*time.Second))
	idle := 0
	for len(ps) > 0 {
		keep := ps[:0]
		for _, p := range ps {
			flag, e := test(&p.req)
			if e != C.MPI_SUCCESS || flag {
				cfree(p.buf)
				continue
			}
			keep = append(keep, p)
		}
		ps = keep
		if len(ps) > 0 && c.idle(ctx, &idle, false, deadline) != nil {
			for _, p := range ps {
				if !c.cancel(&p.req) {
					c.orphans = append(c.orphans, orphan{req: p.req, bufs: []unsafe.Pointer{p.buf}, what: "abort message"})
				} else {
					cfree(p.buf)
				}
			}
			return
		}
	}
}
