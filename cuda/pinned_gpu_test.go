package cuda_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/misgrid/misgrid/cuda"
)

// Staged copies of every size around the chunk boundaries land intact
// at their offsets, reusing the ring many times over; with chunks of
// several megabyte pieces too, packed by several workers.
func TestStageToDevice(t *testing.T) {
	ctx := gpu(t)
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const chunk = 4096
	dev, err := ctx.Alloc(32 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		o     cuda.StagerOptions
		sizes []int
	}{
		{cuda.StagerOptions{ChunkBytes: chunk, Chunks: 2, Workers: 3},
			[]int{0, 1, chunk/4 - 1, chunk / 4, chunk/4 + 1, 3 * chunk, 10*chunk + 5, 60000}},
		{cuda.StagerOptions{ChunkBytes: 4 << 20, Chunks: 2, Workers: 8},
			[]int{1, 1<<18 + 3, 3<<20 + 5, 6 << 20}},
	} {
		st, err := ctx.NewStager(s, c.o)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, n := range c.sizes {
			for _, off := range []int64{0, 4, 4 * 1001} {
				src := make([]int32, n)
				for i := range src {
					src[i] = int32(rng.Uint32())
				}
				want := slices.Clone(src)
				if err := cuda.StageToDevice(st, dev, off, src); err != nil {
					t.Fatal(err)
				}
				clear(src) // the stager must have read src already
				if err := st.Synchronize(); err != nil {
					t.Fatal(err)
				}
				got := make([]int32, n)
				if err := cuda.CopyToHost(got, dev, off); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%+v: %d words at %d: device copy differs", c.o, n, off)
				}
			}
		}
		if err := cuda.StageToDevice(st, dev, 32<<20-4, []int32{1, 2}); !errors.Is(err, cuda.ErrorInvalidValue) {
			t.Fatalf("copy past the end: got %v, want an invalid-value error", err)
		}
	}
}

// Memory registered in place goes up by asynchronous copies from any
// offset, aliases the caller's slice, and unregisters once; an empty
// slice is an error, not a registration.
func TestRegisterHost(t *testing.T) {
	ctx := gpu(t)
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := make([]float64, 3<<20+7) // not a whole number of pages
	for i := range src {
		src[i] = float64(i) + 0.5
	}
	hb, err := cuda.RegisterHost(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if b := hb.Bytes(); len(b) != 8*len(src) || &b[0] != (*byte)(unsafe.Pointer(&src[0])) {
		t.Fatalf("Bytes is %d bytes at %p, want the caller's %d at %p", len(b), &b[0], 8*len(src), &src[0])
	}
	dev, err := ctx.Alloc(int64(8 * len(src)))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free()
	const off = 8 * 12345
	if err := errors.Join(dev.CopyFromHostAsync(0, hb, off, int64(8*len(src))-off, s), s.Synchronize()); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(src)-12345)
	if err := cuda.CopyToHost(got, dev, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, src[12345:]) {
		t.Fatal("the copy from registered memory differs from the source")
	}
	if err := errors.Join(hb.Free(), hb.Free()); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if err := dev.CopyFromHostAsync(0, hb, 0, 8, s); err == nil {
		t.Fatal("a copy from an unregistered buffer was queued")
	}
	if _, err := cuda.RegisterHost(ctx, []float64{}); err == nil {
		t.Fatal("an empty slice was registered")
	}
}

// StageToHost brings back every size around the chunk boundaries from
// any offset intact, through rings of one and of several chunks, between
// uploads that reuse the same ring; a copy past the buffer's end is an
// error that leaves dst alone.
func TestStageToHost(t *testing.T) {
	ctx := gpu(t)
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const words = 4 << 20
	dev, err := ctx.Alloc(4 * words)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free()
	rng := rand.New(rand.NewPCG(8, 8))
	all := make([]uint32, words)
	for i := range all {
		all[i] = rng.Uint32()
	}
	if err := cuda.CopyToDevice(dev, 0, all); err != nil {
		t.Fatal(err)
	}
	const chunk = 4096
	for _, o := range []cuda.StagerOptions{
		{ChunkBytes: chunk, Chunks: 1, Workers: 1},
		{ChunkBytes: chunk, Chunks: 3, Workers: 4},
		{ChunkBytes: 2 << 20, Chunks: 4, Workers: 8},
	} {
		st, err := ctx.NewStager(s, o)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, n := range []int{0, 1, chunk/4 - 1, chunk / 4, chunk/4 + 1, 7*chunk + 3, 1<<20 + 5, words - 1001} {
			for _, at := range []int{0, 1, 1000} {
				n := min(n, words-at)
				// An upload into the ring first, so that the copy back
				// lands where a transfer may just have read.
				if err := cuda.StageToDevice(st, dev, 4*int64(at), all[at:at+min(n, 3000)]); err != nil {
					t.Fatal(err)
				}
				got := make([]uint32, n)
				if err := cuda.StageToHost(st, got, dev, 4*int64(at)); err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got, all[at:at+n]); i >= 0 {
					t.Fatalf("%+v: %d words from word %d: word %d is %#x, want %#x", o, n, at, i, got[i], all[at+i])
				}
			}
		}
	}
	st, err := ctx.NewStager(s, cuda.StagerOptions{ChunkBytes: chunk, Chunks: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := []uint32{7, 7}
	if err := cuda.StageToHost(st, got, dev, 4*words-4); err == nil || got[0] != 7 || got[1] != 7 {
		t.Errorf("copy past the end: error %v, dst %v; want an error and dst untouched", err, got)
	}
	st.Close()
	if err := cuda.StageToHost(st, got, dev, 0); err == nil {
		t.Error("StageToHost on a closed stager: no error")
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
