package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// stageRing is a Stager apart from the driver: a ring of pinned memory
// that workers pack piece by piece and that leaves chunk by chunk through
// a sink (the device's stream, or a host model in the tests).
//
// Positions are byte counts since the ring was made (they only grow); a
// position p lies at p mod len(buf). Bytes in [rd, wr) are reserved:
// packed or being packed, or on their way out. A chunk takes a
// contiguous range (it skips to the ring's start where it would not
// fit), is packed by the workers, then sent with a mark that tells when
// the sink has read it; chunks leave in reservation order and their
// space is retired in that order, once their mark is reached.
type stageRing struct {
	buf     []byte
	chunk   int64 // the most one transfer carries
	piece   int64 // what one worker packs at a time
	workers int

	wr, rd  int64
	head    int64   // the end of the last chunk sent
	ends    []int64 // per mark slot: the end of the chunk it follows
	sent    int64   // chunks sent; chunk k is marked in slot k mod len(ends)
	retired int64   // chunks whose marks have been reached
}

// sink takes a ring's chunks: send queues the copy of n bytes from the
// ring at ringOff to dstOff and marks slot after it; done and wait ask
// whether, and wait until, the copy before a mark has read the ring.
type sink interface {
	send(slot int, ringOff, dstOff, n int64) error
	done(slot int) (bool, error)
	wait(slot int) error
}

// pieceBytes is what one worker packs at a time: enough that handing
// pieces out costs nothing beside copying them, little enough that fast
// workers take over from slow ones and the first transfer starts early
// (512 KiB and 2 MiB measured the same, BenchmarkGPUStage).
const pieceBytes = 1 << 20

// ringAlign aligns every chunk in the ring, so that pieces start on cache
// lines and runtime.memmove may take REP MOVS, which wants a 16-byte
// aligned destination: on the 32-core Xeon host of an H200 a ring 8 bytes
// off, which memmove copies with non-temporal AVX stores instead, staged
// 453 MiB in 14.9 ms against 12.9 ms.
const ringAlign = 64

func newStageRing(buf []byte, chunk, piece int64, marks, workers int) *stageRing {
	return &stageRing{buf: buf, chunk: chunk, piece: min(piece, chunk), workers: max(workers, 1), ends: make([]int64, marks)}
}

// nextChunk is the size of the chunk at pos of an n-byte copy: whole
// pieces, doubling from one piece at the start so that the first
// transfer starts early, halving towards one piece at the end so that
// the last transfer, which no packing overlaps, is short; r.chunk at
// most in between.
func (r *stageRing) nextChunk(pos, n int64) int64 {
	s := min(r.chunk, max(r.piece, pos), max(r.piece, (n-pos+1)/2))
	return min(max(r.piece, s/r.piece*r.piece), n-pos)
}

// retire moves rd past the oldest chunk sent if its mark has been
// reached (waiting for it when block), and reports whether it did.
func (r *stageRing) retire(s sink, block bool) (bool, error) {
	if r.retired == r.sent {
		return false, nil
	}
	slot := int(r.retired % int64(len(r.ends)))
	if block {
		if err := s.wait(slot); err != nil {
			return false, err
		}
	} else if ok, err := s.done(slot); !ok || err != nil {
		return false, err
	}
	r.rd = max(r.rd, r.ends[slot])
	r.retired++
	return true, nil
}

// reserve takes n contiguous bytes of the ring and returns their
// position, or false where the sink has not read enough of the ring yet
// and !block. A blocking reserve must find every reserved chunk sent
// (wr == head): it then waits for the oldest until the space is free.
func (r *stageRing) reserve(n int64, s sink, block bool) (int64, bool, error) {
	size := int64(len(r.buf))
	o := r.wr % size
	start := r.wr + (-o)&(ringAlign-1)
	if o := start % size; o+n > size {
		start += size - o
	}
	for {
		if r.rd == r.wr {
			r.rd = start // nothing in the ring: the skipped end is free too
		}
		if start+n-r.rd <= size {
			r.wr = start + n
			return start, true, nil
		}
		ok, err := r.retire(s, block)
		if err != nil || !ok {
			return 0, false, err
		}
	}
}

// send queues chunk c and marks it.
func (r *stageRing) send(s sink, c *ringChunk, dstOff int64) error {
	for r.sent-r.retired >= int64(len(r.ends)) {
		if _, err := r.retire(s, true); err != nil {
			return err
		}
	}
	slot := int(r.sent % int64(len(r.ends)))
	size := int64(len(r.buf))
	if err := s.send(slot, c.at%size, dstOff+c.src, c.n); err != nil {
		return err
	}
	r.ends[slot] = c.at + c.n
	r.head = c.at + c.n
	r.sent++
	return nil
}

// drain waits until the sink has read every chunk sent.
func (r *stageRing) drain(s sink) error {
	for r.retired < r.sent {
		if _, err := r.retire(s, true); err != nil {
			return err
		}
	}
	return nil
}

type ringChunk struct {
	src, n int64 // the chunk's bytes of the source
	at     int64 // its ring position
	left   atomic.Int32
}

type ringPiece struct {
	chunk      int
	src, at, n int64
}

// stage packs src into the ring and sends it to dstOff onwards. It
// returns once every byte of src has been packed (or on the first
// error): the last chunks may still be on their way.
func (r *stageRing) stage(dstOff int64, src []byte, s sink) error {
	n := int64(len(src))
	var cs []*ringChunk
	pieces := 0
	for pos := int64(0); pos < n; {
		c := &ringChunk{src: pos, n: r.nextChunk(pos, n)}
		k := (c.n + r.piece - 1) / r.piece
		c.left.Store(int32(k))
		pieces += int(k)
		cs = append(cs, c)
		pos += c.n
	}
	workers := min(r.workers, pieces)
	var (
		work  chan ringPiece
		ready = make(chan int, len(cs))
		wg    sync.WaitGroup
	)
	if workers > 1 {
		work = make(chan ringPiece, pieces)
		for range workers {
			wg.Go(func() {
				for p := range work {
					copy(r.buf[p.at:p.at+p.n], src[p.src:p.src+p.n])
					if cs[p.chunk].left.Add(-1) == 0 {
						ready <- p.chunk
					}
				}
			})
		}
	}
	err := r.pump(cs, dstOff, src, s, work, ready)
	if work != nil {
		close(work)
		wg.Wait()
	}
	if err != nil {
		r.wr = r.head // what was reserved and not sent is free again
	}
	return err
}

// pump reserves, hands out and sends the chunks cs in order. With no
// workers (work nil) it packs each chunk itself and sends it before
// reserving the next.
func (r *stageRing) pump(cs []*ringChunk, dstOff int64, src []byte, s sink, work chan<- ringPiece, ready <-chan int) error {
	size := int64(len(r.buf))
	packed := make([]bool, len(cs))
	issued, sent := 0, 0
	for sent < len(cs) {
		for issued < len(cs) && (work != nil || issued == sent) {
			c := cs[issued]
			at, ok, err := r.reserve(c.n, s, issued == sent)
			if err != nil {
				return err
			}
			if !ok && issued == sent {
				return fmt.Errorf("stager: no room for %d bytes in a ring of %d with nothing on its way", c.n, size)
			}
			if !ok {
				break
			}
			c.at = at
			o := at % size
			if work == nil {
				copy(r.buf[o:o+c.n], src[c.src:c.src+c.n])
				packed[issued] = true
			}
			for p := int64(0); work != nil && p < c.n; p += r.piece {
				work <- ringPiece{chunk: issued, src: c.src + p, at: o + p, n: min(r.piece, c.n-p)}
			}
			issued++
		}
		if !packed[sent] {
			packed[<-ready] = true
			continue
		}
		for ; sent < issued && packed[sent]; sent++ {
			if err := r.send(s, cs[sent], dstOff); err != nil {
				return err
			}
		}
	}
	return nil
}

// unpack copies the start of ring memory src into dst, a piece per
// worker at a time.
func (r *stageRing) unpack(dst, src []byte) {
	n := int64(len(dst))
	pieces := (n + r.piece - 1) / r.piece
	if pieces <= 1 || r.workers == 1 {
		copy(dst, src)
		return
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(int64(r.workers), pieces) {
		wg.Go(func() {
			for p := next.Add(1) - 1; p < pieces; p = next.Add(1) - 1 {
				o := p * r.piece
				e := min(o+r.piece, n)
				copy(dst[o:e], src[o:e])
			}
		})
	}
	wg.Wait()
}
