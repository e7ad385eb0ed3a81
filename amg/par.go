package amg

import (
	"runtime"
	"sync"
)

// pool runs loops over index ranges on a fixed number of goroutines.
// Every parallel loop in the package writes disjoint outputs per index, and
// every reduction is summed over chunks of fixed size in chunk order
// (sumChunk), so results are bitwise the same for any worker count.
type pool struct {
	workers int
}

func newPool(workers int) pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return pool{workers: workers}
}

// minParallel is the work (in scalar operations) below which a loop runs
// on the calling goroutine: spawning goroutines costs a few microseconds.
const minParallel = 1 << 15

// forRange calls fn on consecutive sub-ranges of [0,n) covering it once.
// work estimates the operations of the whole loop, to skip goroutines for
// small loops.
func (p pool) forRange(n int, work int, fn func(lo, hi int)) {
	w := p.workers
	if w > n {
		w = n
	}
	if w <= 1 || work < minParallel {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	wg.Add(w)
	for t := 0; t < w; t++ {
		lo, hi := n*t/w, n*(t+1)/w
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// forRows splits the rows of a by their nonzero count, so that each
// goroutine gets about the same share of an SpMV-like loop.
func (p pool) forRows(a *csr, fn func(lo, hi int)) {
	n := a.rows
	nnz := a.ptr[n]
	w := p.workers
	if w > n {
		w = n
	}
	if w <= 1 || nnz+n < minParallel {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	wg.Add(w)
	lo := 0
	for t := 0; t < w; t++ {
		hi := n
		if t < w-1 {
			target := nnz * (t + 1) / w
			hi = searchPtr(a.ptr, lo, target)
		}
		go func(lo, hi int) {
			defer wg.Done()
			if hi > lo {
				fn(lo, hi)
			}
		}(lo, hi)
		lo = hi
	}
	wg.Wait()
}

// searchPtr returns the first row r ≥ lo with ptr[r] ≥ target.
func searchPtr(ptr []int, lo, target int) int {
	hi := len(ptr) - 1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ptr[m] < target {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// chunk is the fixed block length of reductions. Partial sums are formed
// per chunk and added in chunk order, whoever computed them.
const chunk = 2048

// sumChunks evaluates part(lo, hi) on every chunk of [0,n) and returns the
// partial results added in chunk order.
func (p pool) sumChunks(n int, part func(lo, hi int) float64) float64 {
	nc := (n + chunk - 1) / chunk
	if nc <= 1 {
		if n == 0 {
			return 0
		}
		return part(0, n)
	}
	var buf [64]float64
	parts := buf[:0]
	if nc <= len(buf) {
		parts = buf[:nc]
	} else {
		parts = make([]float64, nc)
	}
	p.forRange(nc, n, func(clo, chi int) {
		for c := clo; c < chi; c++ {
			lo := c * chunk
			parts[c] = part(lo, min(lo+chunk, n))
		}
	})
	s := 0.0
	for _, v := range parts {
		s += v
	}
	return s
}

func (p pool) dot(x, y []float64) float64 {
	y = y[:len(x)]
	return p.sumChunks(len(x), func(lo, hi int) float64 {
		a, b := x[lo:hi], y[lo:hi]
		b = b[:len(a)]
		var s0, s1, s2, s3 float64
		k := 0
		for ; k+4 <= len(a); k += 4 {
			s0 += a[k] * b[k]
			s1 += a[k+1] * b[k+1]
			s2 += a[k+2] * b[k+2]
			s3 += a[k+3] * b[k+3]
		}
		for ; k < len(a); k++ {
			s0 += a[k] * b[k]
		}
		return (s0 + s1) + (s2 + s3)
	})
}
