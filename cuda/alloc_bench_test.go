package cuda_test

import (
	"fmt"
	"testing"
)

// BenchmarkGPUAllocFree is what one device allocation of a setup's
// transients costs: cuMemAlloc, a zeroing memset queued on a stream, and
// cuMemFree after the stream has drained (which returns the pages).
func BenchmarkGPUAllocFree(b *testing.B) {
	ctx := gpu(b)
	s, err := ctx.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, size := range []int64{64 << 10, 4 << 20, 64 << 20, 256 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			for range b.N {
				buf, err := ctx.Alloc(size)
				if err != nil {
					b.Fatal(err)
				}
				if err := buf.MemsetAsync32(0, s); err != nil {
					b.Fatal(err)
				}
				if err := s.Synchronize(); err != nil {
					b.Fatal(err)
				}
				if err := buf.Free(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
