package cuda

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestParallelCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 1 << 20, 3<<20 + 17, 9<<20 - 1} {
		for _, w := range []int{1, 2, 3, 8} {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			dst := make([]byte, n+1)
			dst[n] = 0xa5
			parallelCopy(dst[:n], src, w)
			if !bytes.Equal(dst[:n], src) || dst[n] != 0xa5 {
				t.Fatalf("n=%d workers=%d: copy differs or wrote past the end", n, w)
			}
		}
	}
}
