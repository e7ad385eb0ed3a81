package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Stager copies host memory to the device at the bus's speed. An ordinary
// Go slice is pageable memory: the driver copies it through a small
// pinned buffer of its own, one piece after another, at a fraction of
// what the bus carries. A Stager instead packs the source into a ring of
// page-locked memory, megabyte by megabyte, with several goroutines
// (one core's memory copy carries perhaps a fifth of what the bus does),
// and queues each chunk's transfer on its stream as soon as its pieces
// are packed, so that packing the rest overlaps the transfers. Chunks are
// short at both ends of a copy, so that the first transfer starts early
// and the last one, which nothing overlaps, ends soon after the packing.
// Ring memory is packed again only after the transfer that read it has
// completed. StageToHost runs the ring the other way, for copies back.
//
// A Stager is safe for use by one goroutine at a time.
type Stager struct {
	ctx    *Context
	stream *Stream
	buf    *HostBuffer
	evs    []*Event // the ring's marks
	ring   *stageRing
}

// StagerOptions sizes a Stager: a ring of Chunks × ChunkBytes of pinned
// memory, transfers of up to ChunkBytes, packed by up to Workers
// goroutines a megabyte at a time. The zero value is four 8 MiB chunks
// and 8 goroutines; internal/gpu says which shapes measured best.
type StagerOptions struct {
	ChunkBytes int64
	Chunks     int
	Workers    int
}

// stagerMarks is the number of transfers a Stager may have queued at
// once; more wait for the oldest.
const stagerMarks = 64

// NewStager allocates the pinned ring of a Stager whose transfers run on
// stream s (nil: the legacy default stream).
func (c *Context) NewStager(s *Stream, o StagerOptions) (*Stager, error) {
	if o.ChunkBytes == 0 {
		o.ChunkBytes = 8 << 20
	}
	if o.Chunks == 0 {
		o.Chunks = 4
	}
	if o.Workers == 0 {
		o.Workers = min(8, runtime.GOMAXPROCS(0))
	}
	if o.ChunkBytes < 0 || o.Chunks < 0 || o.Workers < 0 || o.ChunkBytes > 1<<34 || o.Chunks > 64 {
		return nil, &Error{Op: "NewStager", Code: ErrorInvalidValue,
			Detail: fmt.Sprintf("%d chunks of %d bytes, %d workers: want up to 64 chunks of up to 16 GiB", o.Chunks, o.ChunkBytes, o.Workers)}
	}
	st := &Stager{ctx: c, stream: s}
	b, err := c.AllocHost(int64(o.Chunks) * o.ChunkBytes)
	if err != nil {
		return nil, err
	}
	st.buf = b
	for range stagerMarks {
		e, err := c.NewEvent()
		if err != nil {
			st.Close()
			return nil, err
		}
		st.evs = append(st.evs, e)
	}
	st.ring = newStageRing(b.Bytes(), o.ChunkBytes, pieceBytes, stagerMarks, o.Workers)
	return st, nil
}

// StageToDevice queues a copy of src into dst at byte offset off on the
// stager's stream. It returns once src has been read into pinned memory,
// so src may change right away; the transfer itself completes in stream
// order (Synchronize, or any later work on the stream, waits for it).
func StageToDevice[T Word](st *Stager, dst *Buffer, off int64, src []T) error {
	n := byteLen(src)
	if n == 0 {
		return dst.span("StageToDevice", off, 0)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), n)
	err := st.stage(dst, off, b)
	runtime.KeepAlive(src)
	return err
}

func (st *Stager) stage(dst *Buffer, off int64, src []byte) error {
	if st.ring == nil {
		return &Error{Op: "StageToDevice", Code: resultClosed, Detail: "stager was closed"}
	}
	if _, err := dst.live("StageToDevice"); err != nil {
		return err
	}
	if err := dst.span("StageToDevice", off, int64(len(src))); err != nil {
		return err
	}
	return st.ring.stage(off, src, toDevice{st, dst})
}

// StageToHost copies len(dst) elements of src from byte offset off into
// dst through the stager's ring, after the stream's earlier work: the
// device writes a chunk of pinned memory while the workers copy the
// chunk before it out, so that the copy runs near the bus's speed where
// the driver's own copy into pageable memory reaches a fraction of it.
// It returns once dst holds the elements (or on the first error).
func StageToHost[T Word](st *Stager, dst []T, src *Buffer, off int64) error {
	n := byteLen(dst)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), n)
	err := st.unstage(b, src, off)
	runtime.KeepAlive(dst)
	return err
}

func (st *Stager) unstage(dst []byte, src *Buffer, off int64) error {
	const op = "StageToHost"
	if st.ring == nil {
		return &Error{Op: op, Code: resultClosed, Detail: "stager was closed"}
	}
	if _, err := src.live(op); err != nil {
		return err
	}
	n := int64(len(dst))
	if err := src.span(op, off, n); err != nil {
		return err
	}
	// The ring is the landing place: the uploads still reading it finish
	// first (they are ahead in the stream anyway).
	if err := st.Synchronize(); err != nil {
		return err
	}
	if err := st.land(dst, src, off); err != nil {
		// No copy may still be writing into the ring when it is packed
		// again.
		_ = st.ctx.Synchronize()
		return err
	}
	return nil
}

// land copies src from off into dst chunk by chunk through the ring.
func (st *Stager) land(dst []byte, src *Buffer, off int64) error {
	n := int64(len(dst))
	r := st.ring
	slots := max(int64(len(r.buf))/r.chunk, 1)
	chunks := (n + r.chunk - 1) / r.chunk
	issue := func(k int64) error {
		o := k * r.chunk
		if err := src.CopyToHostAsync(st.buf, k%slots*r.chunk, off+o, min(r.chunk, n-o), st.stream); err != nil {
			return err
		}
		return st.evs[k%int64(len(st.evs))].Record(st.stream)
	}
	ahead := min(slots, chunks, int64(len(st.evs)))
	for k := range ahead {
		if err := issue(k); err != nil {
			return err
		}
	}
	for k := range chunks {
		if err := st.evs[k%int64(len(st.evs))].Synchronize(); err != nil {
			return err
		}
		o, at := k*r.chunk, k%slots*r.chunk
		r.unpack(dst[o:o+min(r.chunk, n-o)], r.buf[at:])
		if k+ahead < chunks {
			if err := issue(k + ahead); err != nil {
				return err
			}
		}
	}
	return nil
}

// toDevice is the sink of a Stager's ring: transfers on its stream into
// dst, marked by its events.
type toDevice struct {
	st  *Stager
	dst *Buffer
}

func (d toDevice) send(slot int, ringOff, dstOff, n int64) error {
	if err := d.dst.CopyFromHostAsync(dstOff, d.st.buf, ringOff, n, d.st.stream); err != nil {
		return err
	}
	return d.st.evs[slot].Record(d.st.stream)
}

func (d toDevice) done(slot int) (bool, error) { return d.st.evs[slot].Done() }
func (d toDevice) wait(slot int) error         { return d.st.evs[slot].Synchronize() }

// Context returns the context the stager's memory belongs to.
func (st *Stager) Context() *Context { return st.ctx }

// Stream returns the stream the stager's transfers run on.
func (st *Stager) Stream() *Stream { return st.stream }

// SetStream moves the stager's next transfers to stream s (nil: the
// legacy default stream), for a Stager that serves several streams in
// turn. It does not wait: a chunk is packed again only after its last
// transfer, on whichever stream, has completed.
func (st *Stager) SetStream(s *Stream) { st.stream = s }

// Synchronize waits until every transfer queued so far has completed.
func (st *Stager) Synchronize() error {
	if st.ring == nil {
		return nil
	}
	return st.ring.drain(toDevice{st: st})
}

// Close waits for the queued transfers and frees the pinned ring; it is
// idempotent.
func (st *Stager) Close() error {
	if st == nil {
		return nil
	}
	err := st.Synchronize()
	if e := st.buf.Free(); err == nil {
		err = e
	}
	for _, ev := range st.evs {
		if e := ev.Close(); err == nil {
			err = e
		}
	}
	st.buf, st.evs, st.ring = nil, nil, nil
	return err
}
