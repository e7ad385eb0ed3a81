package cuda

import (
	"fmt"
	"testing"
	"time"
)

// stageBenchBytes is about the size of hex27 160³'s CSR (offsets and
// columns, 453 MB).
const stageBenchBytes = 453 << 20

// BenchmarkGPUStage times StageToDevice of a CSR-sized Go slice until the
// transfers have completed, for a few Stager shapes, beside the floor of
// the same bytes at the bus's rate from pinned memory (best of five
// 256 MiB copies, same run) and the rate of the packing alone (the ring
// sent nowhere), which bounds what staging can reach on this host.
func BenchmarkGPUStage(b *testing.B) {
	ctx := primaryForTest(b)
	s, err := ctx.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	src := make([]byte, stageBenchBytes)
	for i := range src {
		src[i] = byte(i * 7)
	}
	dst, err := ctx.Alloc(stageBenchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	bus := pinnedRate(b, ctx, s, dst)
	floor := stageBenchBytes / bus
	for _, c := range []struct {
		o     StagerOptions
		piece int64
	}{
		{StagerOptions{ChunkBytes: 64 << 20, Chunks: 3, Workers: 32}, 1 << 20},
		{StagerOptions{ChunkBytes: 16 << 20, Chunks: 12, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 16 << 20, Chunks: 6, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 16 << 20, Chunks: 4, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 8, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 8}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 12}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 24}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 32}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 16}, 512 << 10},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 4, Workers: 16}, 2 << 20},
		{StagerOptions{ChunkBytes: 4 << 20, Chunks: 8, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 4 << 20, Chunks: 4, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 8 << 20, Chunks: 2, Workers: 16}, 1 << 20},
		{StagerOptions{ChunkBytes: 2 << 20, Chunks: 8, Workers: 16}, 1 << 20},
	} {
		name := fmt.Sprintf("%dx%dMiB/w%d/p%dKiB", c.o.Chunks, c.o.ChunkBytes>>20, c.o.Workers, c.piece>>10)
		b.Run(name, func(b *testing.B) {
			st, err := ctx.NewStager(s, c.o)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			st.ring = newStageRing(st.buf.Bytes(), c.o.ChunkBytes, c.piece, stagerMarks, c.o.Workers)
			pack := time.Hour
			for range 3 {
				t0 := time.Now()
				if err := st.ring.stage(0, src, nowhere{}); err != nil {
					b.Fatal(err)
				}
				pack = min(pack, time.Since(t0))
			}
			for b.Loop() {
				if err := StageToDevice(st, dst, 0, src); err != nil {
					b.Fatal(err)
				}
				if err := st.Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
			per := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(per*1e3, "ms/op")
			b.ReportMetric(stageBenchBytes/per/1e9, "GB/s")
			b.ReportMetric(floor*1e3, "floor-ms")
			b.ReportMetric(stageBenchBytes/pack.Seconds()/1e9, "pack-GB/s")
		})
	}
}

// nowhere is a sink whose transfers are done at once.
type nowhere struct{}

func (nowhere) send(int, int64, int64, int64) error { return nil }
func (nowhere) done(int) (bool, error)              { return true, nil }
func (nowhere) wait(int) error                      { return nil }

// pinnedRate is the host-to-device rate from pinned memory: the best of
// five 256 MiB copies.
func pinnedRate(b *testing.B, ctx *Context, s *Stream, dst *Buffer) float64 {
	const size = 256 << 20
	h, err := ctx.AllocHost(size)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Free()
	best := time.Hour
	for range 5 {
		t0 := time.Now()
		if err := dst.CopyFromHostAsync(0, h, 0, size, s); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	b.Logf("pinned host-to-device: %.1f GB/s", size/best.Seconds()/1e9)
	return size / best.Seconds()
}
