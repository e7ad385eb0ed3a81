package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Chunks cover the copy in whole pieces, at most one transfer's worth,
// one piece at both ends of a copy of several pieces.
func TestStageRingChunks(t *testing.T) {
	const piece = 1 << 10
	for _, chunk := range []int64{piece, 3*piece + 100, 16 * piece} {
		r := newStageRing(nil, chunk, piece, 4, 1)
		for _, n := range []int64{1, piece - 1, piece, piece + 1, 5*piece + 3, 100 * piece, 1000*piece + 7} {
			var sizes []int64
			for pos := int64(0); pos < n; pos += sizes[len(sizes)-1] {
				sizes = append(sizes, r.nextChunk(pos, n))
			}
			sum := int64(0)
			for i, s := range sizes {
				sum += s
				if s <= 0 || s > chunk || (sum < n && s%piece != 0) {
					t.Fatalf("chunk %d, copy of %d: chunk %d of %d bytes, sizes %v", chunk, n, i, s, sizes)
				}
			}
			if sum != n {
				t.Fatalf("chunk %d: chunks of a copy of %d bytes add up to %d", chunk, n, sum)
			}
			if n >= 2*piece && (sizes[0] != piece || sizes[len(sizes)-1] > piece) {
				t.Fatalf("chunk %d, copy of %d: ends of %d and %d bytes, want one piece", chunk, n, sizes[0], sizes[len(sizes)-1])
			}
		}
	}
}

// lazySink reads the ring only when a mark is asked after (done, at
// random, or wait), as late as a device may: ring memory packed again
// too early shows as wrong bytes at the destination.
type lazySink struct {
	t        *testing.T
	rng      *rand.Rand
	ring     []byte
	dst      []byte
	pend     []*[3]int64 // per slot: ring offset, destination offset, bytes
	sends    int
	failAt   int // the send that fails (0: none)
	reusedAt int // sends into a ring position below a former one
	lastRing int64
}

var errSend = errors.New("send failed")

func (s *lazySink) send(slot int, ringOff, dstOff, n int64) error {
	s.sends++
	if s.sends == s.failAt {
		return errSend
	}
	if s.pend[slot] != nil {
		s.t.Fatalf("slot %d marked again before its mark was reached", slot)
	}
	if ringOff < 0 || ringOff+n > int64(len(s.ring)) {
		s.t.Fatalf("transfer of [%d, %d) outside a ring of %d bytes", ringOff, ringOff+n, len(s.ring))
	}
	if s.sends > 1 && ringOff <= s.lastRing {
		s.reusedAt++
	}
	s.lastRing = ringOff
	s.pend[slot] = &[3]int64{ringOff, dstOff, n}
	return nil
}

func (s *lazySink) complete(slot int) {
	p := s.pend[slot]
	if p == nil {
		s.t.Fatalf("slot %d asked without a transfer before it", slot)
	}
	copy(s.dst[p[1]:p[1]+p[2]], s.ring[p[0]:p[0]+p[2]])
	s.pend[slot] = nil
}

func (s *lazySink) done(slot int) (bool, error) {
	if s.rng.IntN(3) > 0 {
		return false, nil
	}
	s.complete(slot)
	return true, nil
}

func (s *lazySink) wait(slot int) error {
	s.complete(slot)
	return nil
}

// Copies of many sizes, one after another through one ring, land intact
// at their offsets, whatever the ring's, chunks' and pieces' sizes and
// the number of workers; the ring is packed again many times over.
func TestStageRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct {
		chunk, piece int64
		chunks       int
		marks        int
		workers      int
	}{
		{4096, 1024, 2, 64, 1}, {4096, 1024, 2, 64, 4}, {4096, 4096, 1, 3, 3},
		{8192, 1000, 3, 5, 8}, {3000, 512, 4, 2, 2}, {1 << 16, 1 << 12, 3, 64, 16},
	} {
		t.Run(fmt.Sprintf("%dx%d/%d/w%d", c.chunks, c.chunk, c.piece, c.workers), func(t *testing.T) {
			ring := make([]byte, int64(c.chunks)*c.chunk)
			dst := make([]byte, 1<<20)
			s := &lazySink{t: t, rng: rng, ring: ring, dst: dst, pend: make([]*[3]int64, c.marks)}
			r := newStageRing(ring, c.chunk, c.piece, c.marks, c.workers)
			want := make([]byte, len(dst))
			total := 0
			for range 60 {
				n := rng.IntN(len(dst)/8) + 1
				if rng.IntN(4) == 0 {
					n = rng.IntN(int(c.piece)) + 1
				}
				off := rng.IntN(len(dst) - n + 1)
				src := make([]byte, n)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				copy(want[off:], src)
				if err := r.stage(int64(off), src, s); err != nil {
					t.Fatal(err)
				}
				clear(src) // packed already
				total += n
			}
			if err := r.drain(s); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst, want) {
				t.Fatal("destination differs from the copies")
			}
			if s.reusedAt < 10 {
				t.Fatalf("%d bytes through a ring of %d: the ring came round only %d times", total, len(ring), s.reusedAt)
			}
		})
	}
}

// A failed send leaves the ring usable, whether it failed with all of
// the ring reserved or midway: the next copies land intact.
func TestStageRingAfterError(t *testing.T) {
	for _, failAt := range []int{1, 7} {
		rng := rand.New(rand.NewPCG(5, 5))
		ring := make([]byte, 3*4096)
		dst := make([]byte, 1<<16)
		s := &lazySink{t: t, rng: rng, ring: ring, dst: dst, pend: make([]*[3]int64, 8), failAt: failAt}
		r := newStageRing(ring, 4096, 1024, 8, 4)
		src := make([]byte, 40000)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		if err := r.stage(0, src, s); !errors.Is(err, errSend) {
			t.Fatalf("send %d failing: got %v, want the sink's error", failAt, err)
		}
		for _, off := range []int64{0, 20000} {
			if err := r.stage(off, src, s); err != nil {
				t.Fatalf("send %d failing: %v", failAt, err)
			}
		}
		if err := r.drain(s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst[:20000], src[:20000]) || !bytes.Equal(dst[20000:60000], src) {
			t.Fatalf("send %d failing: copies after it differ", failAt)
		}
	}
}

// unpack copies exactly, alone or with workers, around piece sizes.
func TestStageRingUnpack(t *testing.T) {
	const piece = 1 << 10
	rng := rand.New(rand.NewPCG(3, 3))
	src := make([]byte, 20*piece)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for _, workers := range []int{1, 3, 8} {
		r := newStageRing(nil, 16*piece, piece, 4, workers)
		for _, n := range []int{0, 1, piece - 1, piece, piece + 1, 7*piece + 5, 16 * piece} {
			dst := bytes.Repeat([]byte{0xee}, n+1)
			r.unpack(dst[:n], src)
			if !bytes.Equal(dst[:n], src[:n]) || dst[n] != 0xee {
				t.Errorf("%d workers, %d bytes: copy differs or runs past the end", workers, n)
			}
		}
	}
}
