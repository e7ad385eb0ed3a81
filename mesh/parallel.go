package mesh

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// workSpan is a half-open index range [lo, hi).
type workSpan struct{ lo, hi int }

// splitRange cuts [0,n) into about four spans per available CPU, each of
// at least minSize indices, for load balance. Callers' results never
// depend on where the cuts fall.
func splitRange(n, minSize int) []workSpan {
	if n <= 0 {
		return nil
	}
	k := 4 * runtime.GOMAXPROCS(0)
	if minSize < 1 {
		minSize = 1
	}
	k = max(1, min(k, n/minSize))
	out := make([]workSpan, k)
	for i := range out {
		out[i] = workSpan{lo: int(int64(n) * int64(i) / int64(k)), hi: int(int64(n) * int64(i+1) / int64(k))}
	}
	return out
}

// runSpans calls fn for every span, on up to GOMAXPROCS goroutines.
func runSpans(spans []workSpan, fn func(i int, s workSpan)) {
	if len(spans) == 1 {
		fn(0, spans[0])
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(spans)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(spans) {
					return
				}
				fn(i, spans[i])
			}
		})
	}
	wg.Wait()
}
