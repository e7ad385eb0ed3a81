package main

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// A long array is copied in pieces side by side: the copy is exact, the
// first entry that is not finite is the first in order whichever piece
// holds it, and a count past the array's mapping is an error before
// anything of its size is allocated, not a crash.
func TestCopyArrayParallel(t *testing.T) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	const n = 3<<20 + 12345 // 24 MB: past parallelCopy, pieces of 1M
	src := make([]float64, n)
	for i := range src {
		src[i] = float64(i) * 0.25
	}
	p := unsafe.Pointer(&src[0])
	got, bad, err := copyArray("values", p, n, notFinite[float64])
	if err != nil || bad != -1 || !slices.Equal(got, src) {
		t.Fatalf("copy: err %v, bad %d, equal %v", err, bad, slices.Equal(got, src))
	}
	src[3<<20+7], src[2<<20+3], src[n-1] = math.Inf(1), math.NaN(), math.NaN()
	if _, bad, err = copyArray("values", p, n, notFinite[float64]); err != nil || bad != 2<<20+3 {
		t.Fatalf("first non-finite entry: %d (err %v), want %d", bad, err, 2<<20+3)
	}
	if _, err := readValues[float64]("values", p, n); err == nil || !strings.Contains(err.Error(), "values[2097155] = NaN is not finite") {
		t.Fatalf("readValues: %v", err)
	}

	// Two readable pages of 24 MB's worth: the probe faults on the third.
	const page = 4096
	m, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(m)
	if err := syscall.Mprotect(m[2*page:], syscall.PROT_NONE); err != nil {
		t.Skip(err)
	}
	if _, _, err := copyArray("values", unsafe.Pointer(&m[0]), n, notFinite[float64]); err == nil || !strings.Contains(err.Error(), "faulted") {
		t.Fatalf("a count past the mapping: %v", err)
	}
}

// Long id arrays are converted in pieces side by side, with the error of
// the first id out of range in order, as one reading in order reports.
func TestReadIDsParallel(t *testing.T) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	const n, limit = 5<<20 + 77, 1000 // 20 MB of int32: past 16 MB
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i%limit) + 1 // base 1
	}
	p := unsafe.Pointer(&ids[0])
	got, err := readIDs("colind", p, indexInt32, 1, n, limit)
	if err != nil || len(got) != n || got[n-1] != int32((n-1)%limit) {
		t.Fatalf("readIDs: %v (%d ids)", err, len(got))
	}
	ids[4<<20+5], ids[1<<20+9] = limit+1, 0
	_, err = readIDs("colind", p, indexInt32, 1, n, limit)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("colind[%d] = 0 is out of range [1, %d]", 1<<20+9, limit)) {
		t.Fatalf("first id out of range: %v", err)
	}
}

// BenchmarkCopyArray reads a matrix's values of 27M doubles (Q1
// Poisson 101³, 216 MB), checked for finiteness, as every update does:
// in pieces side by side, and one chunk after another (GOMAXPROCS 1).
func BenchmarkCopyArray(b *testing.B) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	src := make([]float64, 27<<20)
	for i := range src {
		src[i] = float64(i)
	}
	for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			b.SetBytes(int64(8 * len(src)))
			for range b.N {
				if _, _, err := copyArray("values", unsafe.Pointer(&src[0]), int64(len(src)), notFinite[float64]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
